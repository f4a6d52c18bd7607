"""The computed-torque law, stated once.

    q̈_c = q̈_d + Kd∘(q̇_d − q̇) + Kp∘(q_d − q)
    τ   = ID(q, q̇, q̈_c)

ID is the friction-aware inverse dynamics (seed 004 §2.7) with the controller's friction model
(None: rigid body only); its motor effort includes the URDF's joint damping d∘q̇ that the plant
applies (``damping=True``; issue 33: the term is stated in inverse dynamics alone) or not
(``damping=False``).
The direction of the friction compensated is either the measured velocity's (ID's own rule,
with its rest velocity ``velocity_tolerance``) or, with a :class:`ReferenceDirection`, taken
from the reference (:mod:`.friction_compensation`: no chatter at rest).

Used by the id_controller node (:mod:`robot_dynamics.ros.id_controller`, reference direction)
and by :class:`~robot_dynamics.control.controllers.ComputedTorque` (measured direction), whose
compiled form (:func:`robot_dynamics.kernels.rollout.controller_kernel`) the tests compare with
this one.
"""
from __future__ import annotations

from dataclasses import dataclass

from robot_dynamics.algorithm.inverse_dynamics import inverse_dynamics
from robot_dynamics.control.friction_compensation import (compensated_inverse_dynamics,
    direction_velocity)


@dataclass(frozen=True)
class ReferenceDirection:
    """Friction compensated along ``d = tanh(w/ε)``, ``w = (1 − β)(q̇_d + Λ e) + β q̇``
    (:func:`~robot_dynamics.control.friction_compensation.direction_velocity`): Λ
    ``error_gain``, β ``blend``, ε ``smoothing_velocity``."""
    error_gain: float = 0.0
    blend: float = 0.0
    smoothing_velocity: float = 0.0


def commanded_acceleration(q, v, q_d, v_d, a_d, kp, kd):
    """``q̈_c = q̈_d + Kd∘(q̇_d − q̇) + Kp∘(q_d − q)`` (summed in this order, the node's since
    it was written: its runs and bags stay the same to the last bit; the compiled rollout sums
    Kp before Kd, which differs in the last bit at most)."""
    return a_d + kd * (v_d - v) + kp * (q_d - q)


def computed_torque(model, data, q, v, q_d, v_d, a_d, kp, kd, friction=None, *, damping=True,
                    direction=None, velocity_tolerance=1e-6):
    """``τ = ID(q, q̇, q̈_c)`` (module docstring). ``direction``: None, the measured
    velocity's (with ``velocity_tolerance``); a :class:`ReferenceDirection`, the reference's.
    ``damping``: whether the effort includes the URDF damping d∘q̇ (inverse dynamics'
    ``damping``). Fills ``data.tau_friction`` (the friction assumed)."""
    a = commanded_acceleration(q, v, q_d, v_d, a_d, kp, kd)
    if direction is None:
        return inverse_dynamics(model, data, q, v, a, friction,
                                velocity_tolerance=velocity_tolerance, damping=damping)
    w = direction_velocity(v_d, q_d - q, v, error_gain=direction.error_gain,
                           blend=direction.blend)
    return compensated_inverse_dynamics(model, data, q, v, a, friction, w, blend=direction.blend,
                                        smoothing_velocity=direction.smoothing_velocity,
                                        damping=damping)
