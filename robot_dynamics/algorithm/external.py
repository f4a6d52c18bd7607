"""External efforts: build the ``fext`` array the algorithms take from what users have.

``fext`` (nv, 6) holds one spatial force per body, row i ``[force; torque]`` applied **on** body i
by the environment, expressed in body i's frame (the joint frame, as ``data.f``), the torque
about that frame's origin — Pinocchio's ``fext`` convention (seed 004 §1.3.4: FN_ext ∈ E). Every
algorithm takes it: ``rnea(…, fext)``, ``inverse_dynamics(…, fext=…)``,
``forward_dynamics(…, fext=…)`` and the batch calls (``FEXT``, (N, nv, 6)).

Users rarely have a wrench at a body origin. They have

* a force (and maybe a torque) at a point of a link — a tool pressing on a surface, a hand
  pushing the arm, a payload's weight at its centre of mass: :func:`point_force`, given in
  world coordinates (after forward kinematics at ``q``) or in the link's own frame;
* the reading of a force/torque sensor mounted in a URDF frame: :func:`sensor_wrench`.

A link (any URDF link, fixed ones included: ``model.frames`` maps it to the body that carries it
and its placement in that body) is named, never a body index. Several contributions add up:
pass the array to extend as ``fext``. A link rigidly attached to the fixed base carries its load
into the ground: no joint feels it, so it adds nothing. Mimic models: the rows are the bodies of
the full tree, ``(model.full.nv, 6)`` (see :mod:`robot_dynamics.algorithm.coupled`).
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.errors import InputError, _float_array, as_wrenches, check_data


def _triple(name, x, where) -> np.ndarray:
    arr = _float_array(name, x, f" in {where}", "vector")
    if arr.shape != (3,):
        raise InputError(f"{name} in {where}: expected 3 numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} in {where}: non-finite value(s): {arr.tolist()}")
    return arr


def _frame(model, link, where):
    try:
        return model.frames[link]
    except (KeyError, TypeError):
        known = sorted(model.frames)
        more = f", … ({len(known)} in all)" if len(known) > 8 else ""
        raise InputError(f"link in {where}: robot {model.name!r} has no link or frame {link!r} "
                         f"(links: {', '.join(known[:8])}{more})") from None


def _target(model, fext, where) -> np.ndarray:
    n = model.full.nv
    if fext is None:
        return np.zeros((n, 6))
    if not (isinstance(fext, np.ndarray) and fext.dtype == np.float64 and fext.shape == (n, 6)
            and fext.flags.writeable):
        as_wrenches("fext", fext, n, where=where, names=model.full.link_names)  # names the fault
        raise InputError(f"fext in {where}: expected a writable float64 array of shape ({n}, 6) "
                         "to add to (as returned by a previous call)")
    return fext


def _add(fext, body, f, t) -> np.ndarray:
    if body >= 0:
        fext[body, :3] += f
        fext[body, 3:] += t
    return fext


def point_force(model, data, q, link, force, point=None, torque=None, *, local=False,
                fext=None) -> np.ndarray:
    """Add to ``fext`` (a new zero array when None) the wrench of a ``force`` (3,) applied at a
    ``point`` of ``link``, with an optional pure ``torque`` (3,); return ``fext`` (nv, 6).

    ``local=False``: force, torque and point are in world coordinates (the base frame), read
    with the link's pose at ``q`` (forward kinematics is run, filling ``data.oMi``).
    ``local=True``: they are in the link's own frame (its URDF frame), the point relative to its
    origin — the pose does not matter then. ``point=None``: the link frame's origin.

    The result is the same force seen from body i (the body carrying the link): force R f,
    torque about body i's origin R t + c × R f, c the point in body i's frame.
    """
    where = "point_force"
    if getattr(data, "_model", None) is not model:
        check_data(model, data, where)
    body, T = _frame(model, link, where)
    f = _triple("force", force, where)
    t = np.zeros(3) if torque is None else _triple("torque", torque, where)
    c = np.zeros(3) if point is None else _triple("point", point, where)
    out = _target(model, fext, where)
    if local:  # link frame → body frame: (R_l, p_l) = T
        R, origin = T[:3, :3], T[:3, 3]
        f_b, t_b = R @ f, R @ t
        c_b = R @ c + origin
        if point is None:
            c_b = origin
    else:
        from robot_dynamics.algorithm.kinematics import forward_kinematics

        forward_kinematics(model, data, q)
        oMi = data.oMi  # a mimic model's Data views its full tree's poses
        if body < 0:
            return out
        R, p = oMi[body, :3, :3], oMi[body, :3, 3]
        if point is None:  # the link frame's origin, in world coordinates
            c = p + R @ T[:3, 3]
        f_b, t_b = R.T @ f, R.T @ t
        c_b = R.T @ (c - p)
    return _add(out, body, f_b, t_b + np.cross(c_b, f_b))


def sensor_wrench(model, frame, wrench, *, fext=None) -> np.ndarray:
    """Add to ``fext`` (a new zero array when None) the wrench a force/torque sensor mounted in
    URDF frame ``frame`` measures, and return ``fext`` (nv, 6).

    ``wrench`` (6,) = [force; torque] expressed in the sensor frame, torque about its origin:
    the wrench the environment (the tool, the contact, the hand beyond the sensor) applies **on**
    the robot through the sensor. (A sensor that reports the opposite — what it applies on the
    tool — gives ``-wrench``.) The sensor frame is fixed in the body that carries it, so no
    configuration is needed: the result is that wrench carried to the body's frame and origin,
    equal to :func:`point_force` with ``local=True`` at the sensor origin.
    """
    where = "sensor_wrench"
    body, T = _frame(model, frame, where)
    w = _float_array("wrench", wrench, f" in {where}", "vector")
    if w.shape != (6,):
        raise InputError(f"wrench in {where}: expected 6 numbers [force; torque], got shape "
                         f"{w.shape}")
    if not np.isfinite(w).all():
        raise InputError(f"wrench in {where}: non-finite value(s): {w.tolist()}")
    out = _target(model, fext, where)
    R, origin = T[:3, :3], T[:3, 3]
    f_b = R @ w[:3]
    return _add(out, body, f_b, R @ w[3:] + np.cross(origin, f_b))
