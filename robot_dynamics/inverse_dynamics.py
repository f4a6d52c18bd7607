"""Inverse dynamics with reaction-dependent joint friction — seed 004 §2.7 (control).

Closed form, one Newton–Euler pass plus the friction map:

1. ``fn(q, q̇, q̈)`` by RNEA (forward and backward passes) — every joint's whole wrench;
2. split each into its axial part ``fn∥`` (J∥) and its reaction ``fn⊥`` (J⊥);
3. the friction map gives the friction magnitude from the reaction (and q_i, q̇_i);
4. the motor effort is ``fn_mot = fn∥ − fn∥_vin``                          (eq. 2.7.5)

where ``fn∥_vin = τf`` is the *signed* friction effort, opposite to the joint velocity. (The
seed's step-by-step summary prints a plus sign in step 4; eq. 2.7.5 and the sign convention say
minus: the motor supplies more effort in the direction of motion. See DESIGN.md §2.)

At ``q̇_i = 0`` friction has no direction of its own. Here it takes the direction of the
commanded acceleration ``q̈_i`` — the motion the controller asks for — with the breakaway
(static) magnitude; with ``q̈_i = 0`` too, the joint is meant to stay at rest and friction
(stiction) holds whatever it needs, so τf_i = 0 and the motor supplies fn∥. ``velocity_tolerance``
says what counts as rest. With ``smoothing_velocity = ε > 0`` the direction is instead
``tanh(q̇_i / ε)`` (continuous; a common choice against chattering in control).
"""
from __future__ import annotations

import numpy as np

from .errors import as_vector
from . import mimic
from .kernels.friction import id_entry, id_friction_kernel
from .rnea import _rnea_fast


def friction_directions(v, a, velocity_tolerance=1e-6, smoothing_velocity=0.0) -> np.ndarray:
    """The direction (−1, 0, 1, or in between when smoothed) friction opposes, per joint."""
    if smoothing_velocity > 0:
        return np.tanh(v / smoothing_velocity)
    return np.where(np.abs(v) > velocity_tolerance, np.sign(v), np.sign(a))


def inverse_dynamics(model, data, q, v, a, friction=None, *, velocity_tolerance=1e-6,
                     smoothing_velocity=0.0) -> np.ndarray:
    """Motor efforts (nv,) that produce the motion (q, q̇, q̈) against gravity and friction.

    Fills ``data.f`` (joint wrenches fn) and ``data.tau_friction`` (signed τf, q̇_i τf_i ≤ 0).
    """
    if model.coupling is not None:  # mimic joints (robot_dynamics/mimic.py)
        return mimic.inverse_dynamics(model, data, q, v, a, friction,
                                      velocity_tolerance=velocity_tolerance,
                                      smoothing_velocity=smoothing_velocity)
    if friction is not None and friction._packed is not None and smoothing_velocity == 0:
        try:  # one compiled call: RNEA + friction map
            if id_entry(model._mb, friction._packed[2], q, v, a, velocity_tolerance, data._work):
                return data._id_out.copy()
        except TypeError:  # not float64 vectors (or a non-float tolerance): convert below
            pass
    q = as_vector("q", q, model.nq, where="inverse_dynamics")
    v = as_vector("v", v, model.nv, where="inverse_dynamics")
    a = as_vector("a", a, model.nv, where="inverse_dynamics")
    fn_axial = _rnea_fast(model, data, q, v, a)  # step 1; fn∥ = Sᵀ fn per joint
    if friction is None:
        data.tau_friction[:] = 0.0
        return fn_axial
    if friction._packed is not None and smoothing_velocity == 0:  # compiled steps 2–4
        out = np.empty(model.nv)
        id_friction_kernel(*friction._packed[:2], model._kargs[0], model._kargs[2], data.f, q, v, a,
                           fn_axial, float(velocity_tolerance), data.tau_friction, out)
        return out
    d = friction_directions(v, a, velocity_tolerance, smoothing_velocity)
    magnitude = friction.magnitudes(model, data.f, q, v, np.sign(d))  # steps 2–3
    data.tau_friction[:] = -magnitude * d
    return fn_axial - data.tau_friction  # step 4, eq. 2.7.5
