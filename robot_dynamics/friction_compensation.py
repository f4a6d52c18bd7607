"""Friction compensation for a tracking controller: which way the friction it cancels points.

Inverse dynamics (seed 004 §2.7, eq. 2.7.5) gives the motor effort ``fn∥ − τf`` with the signed
friction ``τf = −|fn∥_vin| · d``, ``d`` the direction of motion. In a controller ``d`` has to come
from somewhere. Taken from the *measured* velocity (``sign(q̇)``) it is exact while the joint
slides, but at rest the measured velocity dithers around zero: the compensation then flips
between ±|fn∥_vin| every step, and the effort chatters by twice the friction magnitude (on a real
arm: vibration and noise; in the seed's reaction-dependent model, up to tens of N·m on the
shoulder). The standard engineering answer, used here:

* the direction comes from the **reference velocity** ``q̇_d``, which is smooth, known ahead and
  exactly zero when the arm is told to stay put, **blended** with the measured one:
  ``w = (1 − β) q̇_d + β q̇`` (``β`` = ``friction_velocity_blend``; β = 1 is the measured-velocity
  law, β = 0 pure feed-forward);
* it is **smoothed**: ``d = tanh(w / ε)`` (``ε`` = ``friction_smoothing_velocity``), so below ε
  the compensation fades out continuously instead of switching. At rest the PD terms and the
  joint's own stiction hold the arm; what friction the controller leaves uncompensated there is
  a small static error, bounded by (breakaway effort)/(K_p · M) per joint.

``β = 1, ε = 0`` reproduces :func:`~robot_dynamics.inverse_dynamics.inverse_dynamics` exactly
(including its commanded-acceleration direction at rest).
"""
from __future__ import annotations

import numpy as np

from .inverse_dynamics import inverse_dynamics


def direction_velocity(v_ref, v, blend: float) -> np.ndarray:
    """``w = (1 − β) q̇_d + β q̇``: the velocity whose sign friction opposes."""
    if blend == 0.0:
        return v_ref
    return (1.0 - blend) * v_ref + blend * v


def compensated_inverse_dynamics(model, data, q, v, a, friction, v_ref, *, blend=0.0,
                                 smoothing_velocity=0.0) -> np.ndarray:
    """Motor effort for (q, q̇, q̈_cmd) with friction compensated along ``direction_velocity``.

    ``data.tau_friction`` holds the friction effort assumed (signed τf); ``data.f`` the joint
    wrenches the friction magnitudes were taken from (RNEA at (q, q̇, q̈_cmd)).
    """
    if friction is None:
        return inverse_dynamics(model, data, q, v, a)
    if blend == 1.0:  # measured velocity: the plain inverse dynamics law
        return inverse_dynamics(model, data, q, v, a, friction=friction,
                                smoothing_velocity=smoothing_velocity)
    fn_axial = inverse_dynamics(model, data, q, v, a)  # fills data.f: the joint wrenches fn
    w = direction_velocity(v_ref, v, blend)
    d = np.tanh(w / smoothing_velocity) if smoothing_velocity > 0 else np.sign(w)
    magnitude = friction.magnitudes(model, data.f, q, w, np.sign(d))
    data.tau_friction[:] = -magnitude * d
    return fn_axial + magnitude * d  # eq. 2.7.5: fn∥ − τf
