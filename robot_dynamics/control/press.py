"""A tool pressing on a plane and sliding along it (issue 32): the joint reference of
``robot-dynamics sim --scenario press`` (no ROS).

The contact point of a :class:`~robot_dynamics.simulation.contact.PlaneContact` follows a
Cartesian path: down onto the plane, into it to the depth at which the plane pushes back with
the level's force, along the plane and back at that depth (sliding: the joints move, so their
friction is the law's, seed 004 §2.5, not the indeterminate friction of joints at rest), for
each force level in turn, then up again. The joint reference is the inverse kinematics of that
path (least-norm Newton steps from the previous sample, :func:`inverse_position`) plus, while
pressing, the offset that makes the controller press (below), sampled every ``sample`` seconds:
rest-to-rest minimum-jerk timing on each piece (the force blended as the position).

Reference of a level. The controller does not model the contact: its computed torque (seed
004 §2.7, ``τ = ID(q, q̇, q̈_d + K_d ė + K_p e)``, docs/method.md §2.7) holds the joints around the
reference like a spring ``M(q) K_p`` (M its mass matrix with the rotors). At rest, the surface
pushes with F when the point is at depth ``δ = F/k`` (pose q*, the inverse kinematics of that
point); the push is an external effort on the tool's body (docs/method.md §1b) whose joint
torque is ``J(q*)ᵀ n F`` (J the point's Jacobian, n the surface's normal, out of it), and the
arm stays at q* when the controller's spring balances it, ``M(q*) K_p (q_d − q*) = −J(q*)ᵀ n F``::

    q_d = q* − K_p⁻¹ M(q*)⁻¹ J(q*)ᵀ n F                               (:func:`press_offset`)

exact at rest without friction (``test/test_press_reference.py``). The friction of the joints at
rest, the controller's friction compensation and, while sliding, the surface's own friction
shift the force actually reached by some newtons: the scenario measures it (the contact's own
F_n), it does not assume it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.errors import InputError


def _point_and_jacobian(model, data, q, contact):
    """World position (3,) of ``contact``'s point at ``q`` and its Jacobian (3, nv) (``data``
    left at q's placements)."""
    from robot_dynamics.algorithm.kinematics import body_point_jacobian, forward_kinematics

    forward_kinematics(model, data, np.asarray(q, dtype=float))
    return body_point_jacobian(model, data, contact.body, contact.point_body)


def contact_point(model, data, q, contact) -> np.ndarray:
    """World position of ``contact``'s point at ``q`` (``data`` left at q's placements)."""
    return _point_and_jacobian(model, data, q, contact)[0]


def point_jacobian(model, data, q, contact) -> np.ndarray:
    """(3, nv) Jacobian of the contact point's world position at ``q``
    (:func:`~robot_dynamics.algorithm.kinematics.body_point_jacobian`)."""
    return _point_and_jacobian(model, data, q, contact)[1]


def inverse_position(model, data, q0, contact, target, *, tol=1e-10, iterations=50):
    """Joint positions near ``q0`` that put the contact point at ``target`` (world): Newton
    steps of least norm, ``Δq = Jᵀ (J Jᵀ)⁻¹ (target − x)`` (damped by 1e-12 m²: a redundant arm
    keeps its posture as far as the point allows). InputError when it does not get within
    ``tol`` metres (the target out of reach)."""
    q = np.array(q0, dtype=float)
    target = np.asarray(target, dtype=float)
    for _ in range(iterations):
        x, J = _point_and_jacobian(model, data, q, contact)
        err = target - x
        if float(np.linalg.norm(err)) < tol:
            return q
        q += J.T @ np.linalg.solve(J @ J.T + 1e-12 * np.eye(3), err)
    raise InputError(f"press: the point on {contact.link!r} cannot reach {target.tolist()} "
                     f"(still {np.linalg.norm(err):.3g} m off): out of reach")


def press_offset(model, data, q, contact, kp, force) -> np.ndarray:
    """``q_d − q* = −K_p⁻¹ M(q*)⁻¹ J(q*)ᵀ n F``: how far the computed-torque controller's
    reference must lie beyond the pose ``q`` (= q*) for the arm to press there with ``force``
    [N] along the surface's normal (module docstring)."""
    from robot_dynamics.algorithm.crba import mass_matrix

    q = np.asarray(q, dtype=float)
    tau = point_jacobian(model, data, q, contact).T @ contact.normal * float(force)
    return -np.linalg.solve(mass_matrix(model, data, q), tau) / np.asarray(kp, dtype=float)


@dataclass
class PressLevel:
    """One force level of the press reference: ``force`` [N] asked, the point's ``depth`` [m]
    in the surface at which it pushes with that force (F/k), and the two slides (out and
    back), ``slides`` [(t0, t1), ...] in the reference's time."""
    force: float
    depth: float
    slides: list


def _blend(s):
    return 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5


def press_duration(forces: int, move_time: float = 1.0) -> float:
    """Seconds of :func:`press_reference`'s path for ``forces`` pressing levels: the approach
    and the retreat (``move_time`` each) and, per level, pressing to it (half), dwelling (a
    quarter), the slide there and back (``move_time`` each) and dwelling again (a quarter)."""
    return (2.0 + 3.0 * forces) * float(move_time)


def press_reference(model, contact, q_start, forces, kp, *, slide, move_time=1.0,
                    sample=0.01):
    """The press path's joint reference from ``q_start`` (module docstring): (JointTrajectory,
    [PressLevel]). ``slide`` (3,): the slide's displacement along the surface [m] (its normal
    part is removed); ``move_time``: seconds of each slide and of the approach and the retreat
    (pressing to a level takes half, dwelling at a level a quarter, before and after its
    slides); ``kp``: the controller's position gains (per joint), for :func:`press_offset`."""
    from robot_dynamics.control.trajectory import JointTrajectory

    forces = [float(f) for f in forces]
    if not forces or not all(np.isfinite(f) and f >= 0 for f in forces):
        raise InputError(f"press: forces must be numbers ≥ 0 [N], got {forces}")
    data = model.create_data()
    n, k = contact.normal, contact.stiffness
    slide = np.asarray(slide, dtype=float)
    slide = slide - (slide @ n) * n
    x0 = contact_point(model, data, q_start, contact)
    height = float((x0 - contact.plane_point) @ n)
    if height < 0:
        raise InputError(f"press: the point on {contact.link!r} starts {-height:.3g} m inside "
                         "the surface")
    surface = x0 - height * n  # the point's foot on the surface
    T = float(move_time)
    # pieces: (duration, start, end) of (along the slide, beyond the surface [m], force [N])
    pieces, levels = [(T, (0.0, -height, 0.0), (0.0, 0.0, 0.0))], []
    t, f0 = T, 0.0
    for f in forces:
        here, out = (0.0, 0.0, f), (1.0, 0.0, f)
        pieces += [(0.5 * T, (0.0, 0.0, f0), here), (0.25 * T, here, here), (T, here, out),
                   (T, out, here), (0.25 * T, here, here)]
        t0 = t + 0.75 * T
        levels.append(PressLevel(f, f / k, [(t0, t0 + T), (t0 + T, t0 + 2 * T)]))
        t, f0 = t + 3.0 * T, f
    pieces.append((T, (0.0, 0.0, f0), (0.0, -height, 0.0)))
    times, path = [0.0], [(0.0, -height, 0.0)]
    t = 0.0
    for duration, start, end in pieces:
        steps = max(2, int(round(duration / sample)))
        for i in range(1, steps + 1):
            b = _blend(i / steps)
            times.append(t + duration * i / steps)
            path.append(tuple(s0 + b * (s1 - s0) for s0, s1 in zip(start, end)))
        t += duration
    Q = np.empty((len(path), model.nv))
    q = np.array(q_start, dtype=float)
    for i, (along, beyond, f) in enumerate(path):
        try:
            q = inverse_position(model, data, q, contact, surface + along * slide
                                 - (beyond + f / k) * n)  # q*: the point where it pushes with f
        except InputError as exc:
            if f <= 0:
                raise
            # a force of 1e6 N said only "cannot reach [0.43, 0.0, 2.14] (still 1.32 m off)"
            top = max(forces)
            raise InputError(f"forces: a force of {top:g} N puts the point {top / k:.3g} m into "
                             f"the surface (its stiffness is {k:g} N/m): out of reach from "
                             f"{f:.4g} N on; {str(exc).partition(': ')[2]}") from None
        Q[i] = q + press_offset(model, data, q, contact, kp, f) if f > 0 else q
    times = np.asarray(times)
    V = np.gradient(Q, times, axis=0)
    A = np.gradient(V, times, axis=0)
    V[0] = V[-1] = A[0] = A[-1] = 0.0
    return JointTrajectory(times, Q, V, A), levels
