"""Bearing friction in the form multibody codes use (e.g. MSC Adams' joint friction):

    revolute:   |τf| = preload + μ(q̇) · ( R_pin |F_radial| + R_arm |F_axial| + |M_bend| R_pin / R_bend )
    prismatic:  |Ff| = preload + μ(q̇) · ( |F_normal| + |M_bend| / R_bend + |M_torsion| / R_pin )

``F_radial = f⊥``, ``F_axial = f∥``, ``M_bend = n⊥``, ``M_torsion = n∥`` from the joint wrench.
``pin_radius`` R_pin [m], ``friction_arm`` R_arm [m] (thrust face), ``bending_arm`` R_bend [m]
(the distance between the bearings that turn a bending moment into a pair of radial loads).
μ(q̇) = μ_d + (μ_s − μ_d) exp(−(q̇/v_s)²) with ``mu`` μ_d, ``stribeck: {static: μ_s, velocity: v_s}``.
"""
from __future__ import annotations

import math

from robot_dynamics.friction.base import FrictionLaw
from robot_dynamics.friction.components import load_components


class BearingFriction(FrictionLaw):
    name = "bearing"

    def __init__(self, mu, pin_radius, friction_arm=0.0, bending_arm=None, preload=0.0,
                 stribeck=None):
        self.mu, self.pin_radius, self.friction_arm = float(mu), float(pin_radius), float(friction_arm)
        self.bending_arm = None if bending_arm is None else float(bending_arm)
        self.preload = float(preload)
        self.stribeck = None if stribeck is None else (float(stribeck["static"]),
                                                       float(stribeck["velocity"]))

    def coefficient(self, qd: float) -> float:
        if self.stribeck is None:
            return self.mu
        mu_s, vs = self.stribeck
        return self.mu + (mu_s - self.mu) * math.exp(-(qd / vs) ** 2)

    def load(self, wrench, axis, prismatic) -> float:
        c = load_components(wrench, axis, prismatic)
        bend = 0.0 if self.bending_arm is None else c.n_perp / self.bending_arm
        if prismatic:
            torsion = abs(c.n_par) / self.pin_radius if self.pin_radius > 0 else 0.0
            return c.f_perp + bend + torsion
        return self.pin_radius * (c.f_perp + bend) + self.friction_arm * abs(c.f_par)

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        return self.preload + self.coefficient(qd) * self.load(wrench, axis, prismatic)

    def to_config(self) -> dict:
        out = {"model": "bearing", "mu": self.mu, "pin_radius": self.pin_radius,
               "friction_arm": self.friction_arm, "preload": self.preload}
        if self.bending_arm is not None:
            out["bending_arm"] = self.bending_arm
        if self.stribeck is not None:
            out["stribeck"] = {"static": self.stribeck[0], "velocity": self.stribeck[1]}
        return out
