"""Newton–Euler equations of one rigid body, in the two forms of seed 002 (docs/method.md §1).

All vectors in one frame (e.g. the body frame); accelerations are classical (the acceleration
of a material point), not spatial. These are the body-level primitive of the recursions; the
recursions use the equivalent spatial form ``I a_sp + v ×* I v`` (see
:func:`spatial_effort_about_point` and the tests that tie the three together).
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.spatial.algebra import force_cross, skew, spatial_inertia


def newton_euler_com(mass, inertia_com, a_com, omega, alpha):
    """About the centre of mass C: ``F = m a_C``, ``τ_C = I_C α + ω × (I_C ω)``. Returns (F, τ_C)."""
    inertia_com = np.asarray(inertia_com, dtype=float)
    F = mass * np.asarray(a_com, dtype=float)
    tau = inertia_com @ alpha + np.cross(omega, inertia_com @ omega)
    return F, tau


def newton_euler_point(mass, com, inertia_com, a_point, omega, alpha):
    """About a body point P, with ``c`` = vector P→C (seed 002, "any reference frame")::

        [F  ]   [ m 1     −m[c]×            ] [a_P]   [ m[ω]×[ω]× c                 ]
        [τ_P] = [ m[c]×   I_C − m[c]×[c]×   ] [α  ] + [ [ω]×(I_C − m[c]×[c]×) ω     ]

    Returns (F, τ_P).
    """
    c = skew(com)
    w = skew(omega)
    lhs = spatial_inertia(mass, com, inertia_com) @ np.concatenate([a_point, alpha])
    inertia_p = np.asarray(inertia_com) - mass * (c @ c)
    bias = np.concatenate([mass * (w @ w @ np.asarray(com)), w @ inertia_p @ omega])
    out = lhs + bias
    return out[:3], out[3:]


def spatial_effort_about_point(mass, com, inertia_com, v_point, omega, a_spatial, alpha):
    """The recursions' form: ``I a + v ×* I v`` with the *spatial* acceleration ``a_spatial``
    (``= a_P − ω × v_P``). Returns the 6-vector ``[F; τ_P]``."""
    inertia = spatial_inertia(mass, com, inertia_com)
    v = np.concatenate([v_point, omega])
    a = np.concatenate([a_spatial, alpha])
    return inertia @ a + force_cross(v) @ (inertia @ v)
