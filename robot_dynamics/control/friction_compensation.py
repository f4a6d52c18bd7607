"""Friction compensation for a tracking controller: which way the friction it cancels points.

Inverse dynamics (seed 004 §2.7, eq. 2.7.5) gives the motor effort ``fn∥ − τf`` with the signed
friction ``τf = −|fn∥_vin| · d``, ``d`` the direction of motion. In a controller ``d`` has to come
from somewhere. Taken from the *measured* velocity (``sign(q̇)``) it is exact while the joint
slides, but at rest the measured velocity dithers around zero: the compensation then flips
between ±|fn∥_vin| every step, and the effort chatters by twice the friction magnitude (on a real
arm: vibration and noise; in the seed's reaction-dependent model, up to tens of N·m on the
shoulder). The standard engineering answer, used here:

* the direction comes from the **reference**: the reference velocity ``q̇_d`` — smooth, known
  ahead, exactly zero when the arm is told to stay put — plus the position error seen through a
  gain, ``q̇_d + Λ (q_d − q)`` (the error is a position: it changes smoothly, unlike a measured
  velocity dithering around zero, and it says which way the joint has to go to reach its
  reference). It can be **blended** with the measured velocity:
  ``w = (1 − β)(q̇_d + Λ e) + β q̇`` (``β`` = ``friction_velocity_blend``, ``Λ`` =
  ``friction_error_gain``; β = 1 is the measured-velocity law);
* it is **smoothed**: ``d = tanh(w / ε)`` (``ε`` = ``friction_smoothing_velocity``): at rest the
  compensation fades out continuously inside |e| < ε/Λ instead of switching; outside it the
  joint's breakaway friction is compensated in full, so the arm does not stick short of its
  reference. ε/Λ sets the band: on a real arm choose it above the position noise (the
  defaults, Λ = 500 1/s and ε = 0.01 rad/s, give 20 µrad). A larger Λ/ε tracks tighter at rest
  but, like any high-gain switching term, it is less tolerant of loop delay: with a permanent
  one-step command delay the demo's peak error was 0.9 mrad at Λ/ε = 5·10⁴ and 6.4 mrad at
  2·10⁵ (1.05 mrad with the measured-velocity law).
* the magnitude is the friction law's at the *measured* velocity (at rest: its breakaway value).

Measured on the bundled demo (arm7, lock-step, default gains), hold phase (after 6.2 s): effort
total variation 2313 N·m/s on joint_a1 (1409 on joint_a3, 171 on joint_a2) with the
measured-velocity law, 0 with this one (the effort is constant); peak tracking error while
moving 5.38e-4 rad with both; residual error at rest 0 before (the chatter pushes the joint
through its stiction), ≤ 1e-4 rad after.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.inverse_dynamics import damping_effort, inverse_dynamics


def direction_velocity(v_d, e, v, *, error_gain=0.0, blend=0.0) -> np.ndarray:
    """``w = (1 − β)(q̇_d + Λ e) + β q̇``, e = q_d − q: the velocity whose sign friction opposes."""
    w = v_d + error_gain * e if error_gain else v_d
    if blend == 0.0:
        return w
    return (1.0 - blend) * w + blend * v


def compensated_inverse_dynamics(model, data, q, v, a, friction, w, *, blend=0.0,
                                 smoothing_velocity=0.0, damping=True) -> np.ndarray:
    """Motor effort for (q, q̇, q̈_cmd) with friction compensated along ``d = tanh(w/ε)``
    (``w`` from :func:`direction_velocity`; ``blend`` = 1 means the measured velocity: the
    plain inverse dynamics law), plus the URDF damping d∘q̇ with ``damping`` (inverse
    dynamics' motor effort, issue 33).

    ``data.tau_friction`` holds the friction effort assumed (signed τf); ``data.f`` the joint
    wrenches the friction magnitudes were taken from (RNEA at (q, q̇, q̈_cmd)).
    """
    if friction is None:
        return inverse_dynamics(model, data, q, v, a, damping=damping)
    if blend == 1.0:  # measured velocity: the plain inverse dynamics law
        return inverse_dynamics(model, data, q, v, a, friction=friction,
                                smoothing_velocity=smoothing_velocity, damping=damping)
    # fills data.f: the joint wrenches fn
    fn_axial = inverse_dynamics(model, data, q, v, a, damping=False)
    d = np.tanh(w / smoothing_velocity) if smoothing_velocity > 0 else np.sign(w)
    # the magnitude depends on whether and how fast the joint slides: the measured velocity
    # (at rest, the breakaway value); only its direction comes from w
    magnitude = friction.magnitudes(model, data.f, q, v, np.sign(d))
    data.tau_friction[:] = -magnitude * d
    tau = fn_axial + magnitude * d  # eq. 2.7.5: fn∥ − τf
    if damping:  # then the URDF damping, as inverse_dynamics adds it
        tau += damping_effort(model, v)
    return tau
