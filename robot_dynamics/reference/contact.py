"""Compliant point–plane contact written out in NumPy: the statement of
:func:`robot_dynamics.kernels.contact.plane_contact` (same name, same signature; see that
module for the law: spring–damper normal force that only pushes, regularised Coulomb friction)."""
from __future__ import annotations

import numpy as np


def plane_contact(oMi, vel, body, point, plane_point, normal, stiffness, damping, friction, eps,
                  fext, out):
    R, p = oMi[body, :3, :3], oMi[body, :3, 3]
    c = np.asarray(point, dtype=float)
    twist = vel[body]
    x = R @ c + p  # the point, world
    xdot = R @ (twist[:3] + np.cross(twist[3:], c))  # its velocity, world
    depth = float((plane_point - x) @ normal)  # penetration δ
    rate = -float(xdot @ normal)  # δ̇
    out[:] = (0.0, depth, 0.0)
    if depth <= 0.0:
        return 0.0
    fn = stiffness * depth + damping * rate
    if fn <= 0.0:  # leaving faster than the spring relaxes: no pull
        return 0.0
    slip = xdot + rate * normal  # tangential slip velocity u_t = ẋ − (ẋ·n) n
    f_t = -friction * fn * slip / np.sqrt(slip @ slip + eps * eps)
    F_body = R.T @ (fn * normal + f_t)
    fext[body, :3] += F_body
    fext[body, 3:] += np.cross(c, F_body)
    out[0], out[2] = fn, float(np.linalg.norm(f_t))
    return fn
