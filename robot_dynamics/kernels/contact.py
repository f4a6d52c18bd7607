"""Compiled compliant contact: a point of a body against a plane (readable twin:
:mod:`robot_dynamics.reference.contact`, same name and signature, NumPy).

The point ``c`` (body frame) of body ``b`` is at ``x = R_b c + p_b`` (world) and moves at
``ẋ = R_b (v_b + ω_b × c)`` (the body twist [v; ω] in its own frame, as ``Data.v``). Against the
plane through ``o`` with unit normal ``n`` (pointing out of the surface, into the free side):

* penetration ``δ = (o − x)·n`` (> 0: in contact), its rate ``δ̇ = −ẋ·n``;
* normal force ``F_n = max(0, k δ + c δ̇)`` when ``δ > 0``, else 0 — a spring–damper that only
  pushes (never pulls the point back when it leaves faster than the spring relaxes);
* friction ``f_t = −μ F_n u_t / sqrt(|u_t|² + ε²)``, ``u_t = ẋ − (ẋ·n) n`` the tangential slip
  velocity: opposite to the slip, ``|f_t| < μ F_n``, tending to Coulomb's ``μ F_n`` once
  ``|u_t| ≫ ε``, continuous through zero slip (a regularised Coulomb law: a tangential load
  below ``μ F_n`` is held by a slow creep of the order of ε instead of true sticking).

The force ``F = F_n n + f_t`` acts at ``x``; its wrench is added to row ``b`` of ``fext``
(body frame, torque about the body origin: ``[Rᵀ F; c × Rᵀ F]``), the simulator's convention.
"""
from __future__ import annotations

import math

from robot_dynamics.kernels.jit import njit


@njit(cache=True)
def plane_contact(oMi, vel, body, point, plane_point, normal, stiffness, damping, friction, eps,
                  fext, out):
    """Add the contact's wrench on ``body`` to ``fext`` (nb, 6) from the body poses ``oMi``
    (nb, 4, 4) and twists ``vel`` (nb, 6); ``out`` (3,) receives (F_n, δ, |f_t|). Returns F_n."""
    R = oMi[body]
    c0, c1, c2 = point[0], point[1], point[2]
    w = vel[body]
    # velocity of the point in the body frame: v + ω × c
    b0 = w[0] + w[4] * c2 - w[5] * c1
    b1 = w[1] + w[5] * c0 - w[3] * c2
    b2 = w[2] + w[3] * c1 - w[4] * c0
    depth = 0.0
    rate = 0.0
    x = [0.0, 0.0, 0.0]
    u = [0.0, 0.0, 0.0]
    for r in range(3):
        x[r] = R[r, 0] * c0 + R[r, 1] * c1 + R[r, 2] * c2 + R[r, 3]
        u[r] = R[r, 0] * b0 + R[r, 1] * b1 + R[r, 2] * b2
        depth += (plane_point[r] - x[r]) * normal[r]
        rate -= u[r] * normal[r]
    out[0] = 0.0
    out[1] = depth
    out[2] = 0.0
    if depth <= 0.0:
        return 0.0
    fn = stiffness * depth + damping * rate
    if fn <= 0.0:
        return 0.0
    un = -rate
    slip2 = 0.0
    for r in range(3):
        u[r] -= un * normal[r]
        slip2 += u[r] * u[r]
    scale = friction * fn / math.sqrt(slip2 + eps * eps)
    F = [0.0, 0.0, 0.0]
    for r in range(3):
        F[r] = fn * normal[r] - scale * u[r]
    fb0 = R[0, 0] * F[0] + R[1, 0] * F[1] + R[2, 0] * F[2]
    fb1 = R[0, 1] * F[0] + R[1, 1] * F[1] + R[2, 1] * F[2]
    fb2 = R[0, 2] * F[0] + R[1, 2] * F[1] + R[2, 2] * F[2]
    fext[body, 0] += fb0
    fext[body, 1] += fb1
    fext[body, 2] += fb2
    fext[body, 3] += c1 * fb2 - c2 * fb1
    fext[body, 4] += c2 * fb0 - c0 * fb2
    fext[body, 5] += c0 * fb1 - c1 * fb0
    out[0] = fn
    out[2] = scale * math.sqrt(slip2)
    return fn
