"""Mechanical energy of the arm and the energy audit of a simulation run.

Audit: over a run, the change of kinetic plus potential energy must equal the work of the
motors minus what friction (and URDF viscous damping) dissipated:

    ΔT + ΔV = W_motor − D_friction − D_damping − D_limit

(``D_limit``: what the simulator's hard joint stops dissipate, their inelastic impulses and the
work of their reactions, ≥ 0.)

``residual`` is the left side minus the right; ``relative_residual`` divides it by the largest
energy flow of the run, so it is comparable across runs and robots.

T is ``½ q̇ᵀ M q̇`` with the mass matrix of :func:`~robot_dynamics.crba.mass_matrix`, which
includes the actuators' rotors (``model.armature``): T holds their ``½ Σ armature_i q̇_i²``, the
motor work is the work of the motor efforts (rotors included) and the audit closes with them.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    friction_dissipation: float = 0.0  # −∫ τf·q̇ dt ≥ 0 [J]
    damping_dissipation: float = 0.0  # ∫ d q̇² dt ≥ 0 [J]
    limit_dissipation: float = 0.0  # taken by the joint stops: impulses, −∫ τl·q̇ dt; ≥ 0 [J]

    @property
    def residual(self) -> float:
        return (self.kinetic + self.potential - self.motor_work + self.friction_dissipation
                + self.damping_dissipation + self.limit_dissipation)

    @property
    def relative_residual(self) -> float:
        scale = max(abs(self.kinetic) + abs(self.potential), abs(self.motor_work),
                    self.friction_dissipation + self.damping_dissipation
                    + abs(self.limit_dissipation), 1e-12)
        return self.residual / scale

    def __str__(self) -> str:
        return (f"ΔT {self.kinetic:+.6g} J, ΔV {self.potential:+.6g} J, motor work "
                f"{self.motor_work:+.6g} J, friction dissipation {self.friction_dissipation:.6g} J"
                f", damping dissipation {self.damping_dissipation:.6g} J, limit dissipation "
                f"{self.limit_dissipation:.6g} J, residual "
                f"{self.residual:+.3e} J ({self.relative_residual:+.2e} relative)")
