"""A tool pressing on a plane and sliding along it (issue 32): the joint reference of
``robot-dynamics sim --scenario press`` (no ROS).

The contact point of a :class:`~robot_dynamics.simulation.contact.PlaneContact` follows a
Cartesian path: down onto the plane, into it to the depth at which the plane pushes back with
the level's force, along the plane and back at that depth (sliding: the joints move, so their
friction is the law's, seed 004 §2.5, not the indeterminate friction of joints at rest), for
each force level in turn, then up again. The joint reference is the inverse kinematics of that
path (least-norm Newton steps from the previous sample, :func:`inverse_position`), sampled
every ``sample`` seconds: rest-to-rest minimum-jerk timing on each piece.

Depth of a level. The controller does not model the contact: its computed torque (seed 004
§2.7, ``τ = ID(q, q̇, q̈_d + K_d ė + K_p e)``, docs/method.md §2.7) holds the joints around the
reference like a spring ``M K_p`` (M its mass matrix with the rotors), which seen at the tool
along the plane normal n is the compliance ``c = nᵀ J (M K_p)⁻¹ Jᵀ n`` (J the point's
Jacobian); the plane is a spring k in series with it (docs/method.md §1b: the contact's force
is an external effort on the tool's body, its joint torque Jᵀ F). At rest, a reference δ_d
below the surface leaves the tool at depth δ with ``k δ = F`` and ``δ_d − δ = c F``, so::

    δ_d = F (1/k + c)                                                  (:func:`press_depth`)

The friction of the joints at rest and the controller's friction compensation shift the force
actually reached by a few newtons: the scenario measures it (the contact's own F_n), it does
not assume it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.errors import InputError


def contact_point(model, data, q, contact) -> np.ndarray:
    """World position of ``contact``'s point at ``q`` (``data`` left at q's placements)."""
    from robot_dynamics.algorithm.kinematics import forward_kinematics

    forward_kinematics(model, data, np.asarray(q, dtype=float))
    T = data.oMi[contact.body]
    return T[:3, :3] @ contact.point_body + T[:3, 3]


def point_jacobian(model, data, q, contact) -> np.ndarray:
    """(3, nv) Jacobian of the contact point's world position at ``q``: for each joint moving
    the body, ``e × (x − o)`` (revolute; e, o the axis and origin in the world) or ``e``
    (prismatic)."""
    from robot_dynamics.multibody import joints as jt

    x = contact_point(model, data, q, contact)
    J = np.zeros((3, model.nv))
    j = contact.body
    while j >= 0:
        R, o = data.oMi[j][:3, :3], data.oMi[j][:3, 3]
        e = R @ model.axes[j]
        J[:, j] = e if jt.is_prismatic(jt.kind_of(model.joint_types[j])) else np.cross(e, x - o)
        j = int(model.parents[j])
    return J


def inverse_position(model, data, q0, contact, target, *, tol=1e-10, iterations=50):
    """Joint positions near ``q0`` that put the contact point at ``target`` (world): Newton
    steps of least norm, ``Δq = Jᵀ (J Jᵀ)⁻¹ (target − x)`` (damped by 1e-12 m²: a redundant arm
    keeps its posture as far as the point allows). InputError when it does not get within
    ``tol`` metres (the target out of reach)."""
    q = np.array(q0, dtype=float)
    target = np.asarray(target, dtype=float)
    for _ in range(iterations):
        J = point_jacobian(model, data, q, contact)
        err = target - contact_point(model, data, q, contact)
        if float(np.linalg.norm(err)) < tol:
            return q
        q += J.T @ np.linalg.solve(J @ J.T + 1e-12 * np.eye(3), err)
    raise InputError(f"press: the point on {contact.link!r} cannot reach {target.tolist()} "
                     f"(still {np.linalg.norm(err):.3g} m off): out of reach")


def normal_compliance(model, data, q, contact, kp) -> float:
    """``c = nᵀ J (M K_p)⁻¹ Jᵀ n`` [m/N]: the computed-torque controller's compliance at the
    contact point along the plane's normal, at ``q`` (module docstring)."""
    from robot_dynamics.algorithm.crba import mass_matrix

    J = point_jacobian(model, data, q, contact)
    Jn = J.T @ contact.normal
    M = mass_matrix(model, data, np.asarray(q, dtype=float))
    return float(Jn @ np.linalg.solve(M * np.asarray(kp, dtype=float)[:, None], Jn))


def press_depth(force, stiffness, compliance) -> float:
    """The reference's depth below the surface [m] for ``force`` [N]: ``F (1/k + c)``."""
    return float(force) * (1.0 / stiffness + compliance)


@dataclass
class PressLevel:
    """One force level of the press reference: ``force`` [N] asked, the reference's ``depth``
    [m] below the surface, and the two slides (out and back), ``slides`` [(t0, t1), ...] in
    the reference's time."""
    force: float
    depth: float
    slides: list


def _blend(s):
    return 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5


def press_reference(model, contact, q_start, forces, kp, *, slide, move_time=1.0,
                    sample=0.01):
    """The press path's joint reference from ``q_start`` (module docstring): (JointTrajectory,
    [PressLevel]). ``slide`` (3,): the slide's displacement along the plane [m] (its normal
    part is removed); ``move_time``: seconds of each slide and of the approach (pressing to a
    level takes half, dwelling at a level a quarter, before and after its slides); ``kp``:
    the controller's position gains (per joint), for :func:`press_depth`."""
    from robot_dynamics.control.trajectory import JointTrajectory

    forces = [float(f) for f in forces]
    if not forces or not all(np.isfinite(f) and f >= 0 for f in forces):
        raise InputError(f"press: forces must be numbers ≥ 0 [N], got {forces}")
    data = model.create_data()
    n = contact.normal
    slide = np.asarray(slide, dtype=float)
    slide = slide - (slide @ n) * n
    x0 = contact_point(model, data, q_start, contact)
    height = float((x0 - contact.plane_point) @ n)
    if height < 0:
        raise InputError(f"press: the point on {contact.link!r} starts {-height:.3g} m inside "
                         "the plane")
    surface = x0 - height * n  # the point right below the start, on the plane
    T = float(move_time)
    # pieces: (duration, start offset, end offset) of the point, offset = (along, depth)
    pieces, levels = [(T, (0.0, -height), (0.0, 0.0))], []
    t, depth = T, 0.0
    q_surface = inverse_position(model, data, q_start, contact, surface)
    for f in forces:
        c = normal_compliance(model, data, q_surface, contact, kp)
        d = press_depth(f, contact.stiffness, c)
        pieces += [(0.5 * T, (0.0, depth), (0.0, d)), (0.25 * T, (0.0, d), (0.0, d)),
                   (T, (0.0, d), (1.0, d)), (T, (1.0, d), (0.0, d)),
                   (0.25 * T, (0.0, d), (0.0, d))]
        t0 = t + 0.75 * T
        levels.append(PressLevel(f, d, [(t0, t0 + T), (t0 + T, t0 + 2 * T)]))
        t, depth = t + 3.0 * T, d
    pieces.append((T, (0.0, depth), (0.0, -height)))
    times, points = [0.0], [x0]
    t = 0.0
    for duration, (a0, d0), (a1, d1) in pieces:
        steps = max(2, int(round(duration / sample)))
        for k in range(1, steps + 1):
            b = _blend(k / steps)
            along, dep = a0 + b * (a1 - a0), d0 + b * (d1 - d0)
            times.append(t + duration * k / steps)
            points.append(surface + along * slide - dep * n)
        t += duration
    Q = np.empty((len(points), model.nv))
    q = np.array(q_start, dtype=float)
    for k, x in enumerate(points):
        q = Q[k] = inverse_position(model, data, q, contact, x)
    times = np.asarray(times)
    V = np.gradient(Q, times, axis=0)
    A = np.gradient(V, times, axis=0)
    V[0] = V[-1] = A[0] = A[-1] = 0.0
    return JointTrajectory(times, Q, V, A), levels
