"""Mechanical energy of the arm and the energy audit of a simulation run.

Audit: over a run, the change of kinetic plus potential energy must equal the work of the
motors minus what friction (and URDF viscous damping) dissipated:

    ΔT + ΔV = W_motor + W_external − D_friction − D_damping − D_limit

(``D_limit``: what the simulator's hard joint stops dissipate, their inelastic impulses and the
work of their reactions, ≥ 0. ``W_external``: the work of the external efforts on the bodies —
``fext``, a contact —, each step's ``h τ_ext·q̇_mid`` with ``τ_ext = Σ_i J_iᵀ fext_i``, the
body-frame power ``fext_i·v_i``, paired with the step's velocity as the motor work is.)

``residual`` is the left side minus the right; ``relative_residual`` divides it by the largest
energy flow of the run, so it is comparable across runs and robots — the net terms, or the
energy that flowed through the motors either way (``motor_gross``, Σ over steps of |the step's
motor work|): a motion that ends where it started, at rest and without friction, has net
terms near zero however much energy it moved.

``friction_parts`` splits ``D_friction`` by the named parts of the joints' friction laws
(``gear_mesh``, ``bearing``, ``motor``: :class:`~robot_dynamics.friction.composite.CompositeFriction`,
:mod:`robot_dynamics.friction.actuators`): each joint's dissipation of a step, ``−h τf_i q̇_mid,i``, is
shared among its parts in proportion to their magnitudes at the step's answer
(:func:`split_friction_dissipation`), so the parts sum to ``D_friction``.

T is ``½ q̇ᵀ M q̇`` with the mass matrix of :func:`~robot_dynamics.algorithm.crba.mass_matrix`, which
includes the actuators' rotors (``model.armature``): T holds their ``½ Σ armature_i q̇_i²``, the
motor work is the work of the motor efforts (rotors included) and the audit closes with them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def kinetic_energy(M, v) -> float:
    """½ q̇ᵀ M q̇; with M from ``mass_matrix`` it includes the rotors' ½ Σ armature_i q̇_i²."""
    return 0.5 * float(v @ M @ v)


def potential_energy(model, data) -> float:
    """Gravity potential, after forward kinematics: ``−Σ m_i g·c_i`` (CoMs in world)."""
    model = getattr(model, "full", model)  # mimic joints: the bodies are the full tree's
    R = data.oMi[:, :3, :3]
    c = data.oMi[:, :3, 3] + np.einsum("nij,nj->ni", R, model.coms)
    return -float(model.masses @ (c @ model.gravity))


@dataclass
class EnergyAudit:
    kinetic: float = 0.0  # ΔT since reset [J]
    potential: float = 0.0  # ΔV since reset [J]
    motor_work: float = 0.0  # ∫ τ·q̇ dt [J]
    motor_gross: float = 0.0  # Σ_steps |∫_step τ·q̇ dt|: energy through the motors, either way [J]
    friction_dissipation: float = 0.0  # −∫ τf·q̇ dt ≥ 0 [J]
    damping_dissipation: float = 0.0  # ∫ d q̇² dt ≥ 0 [J]
    limit_dissipation: float = 0.0  # taken by the joint stops: impulses, −∫ τl·q̇ dt; ≥ 0 [J]
    external_work: float = 0.0  # ∫ Σ fext_i·v_i dt: work of the external efforts on the bodies [J]
    friction_parts: dict = field(default_factory=dict)  # part name → its share of friction [J]

    @property
    def residual(self) -> float:
        return (self.kinetic + self.potential - self.motor_work - self.external_work
                + self.friction_dissipation
                + self.damping_dissipation + self.limit_dissipation)

    @property
    def relative_residual(self) -> float:
        return self.residual / max(self.scale, 1e-12)

    @property
    def scale(self) -> float:
        """The run's largest energy flow [J]: |ΔT| + |ΔV|, the motor work (net or gross), or the
        dissipation — what ``relative_residual`` divides by."""
        return max(abs(self.kinetic) + abs(self.potential), abs(self.motor_work),
                   self.motor_gross, abs(self.external_work), self.friction_dissipation + self.damping_dissipation
                   + abs(self.limit_dissipation))

    def __str__(self) -> str:
        return (f"ΔT {self.kinetic:+.6g} J, ΔV {self.potential:+.6g} J, motor work "
                f"{self.motor_work:+.6g} J, "
                + (f"external work {self.external_work:+.6g} J, " if self.external_work else "")
                + f"friction dissipation {self.friction_dissipation:.6g} J"
                f", damping dissipation {self.damping_dissipation:.6g} J, limit dissipation "
                f"{self.limit_dissipation:.6g} J, "
                + "".join(f"{k} {v:.6g} J, " for k, v in sorted(self.friction_parts.items()))
                + "residual "
                f"{self.residual:+.3e} J ({self.relative_residual:+.2e} relative)")


def split_friction_dissipation(friction, model, wrenches, q, v_end, tauf, v_mid, h, parts,
                               total=None):
    """Add one step's friction dissipation, split by law part, to ``parts`` (name → J).

    Joint i dissipates ``e_i = −h τf_i q̇_mid,i``; its parts' magnitudes at the step's answer
    (``wrenches``, ``v_end``, motion against τf) give the shares. A joint whose parts are all
    zero (no friction) contributes nothing. ``total``: the step's dissipation as the audit
    booked it, when ``v_mid`` is only an estimate (a stop's impulse changed the velocity the
    step started from): the ``e_i`` are scaled to it.
    """
    return friction.split_dissipation(model, wrenches, q, v_end, tauf, v_mid, h, parts, total)
