"""Seed 004's load-dependent joint friction (eq. 2.5.5–2.5.7): friction grows with the loads the
joint's bearings carry, i.e. with the reaction components of its joint wrench.

    revolute  (2.5.6):  |n∥| = c + v|q̇| + k1 |n⊥| + k2 |f⊥| + k3 |f∥|
    revolute  (2.5.5):  |n∥| = c + v|q̇| + k1 |n⊥| + k2 |f|            (form: "2.5.5")
    prismatic (2.5.7):  |f∥| = c + v|q̇| + k1 |f⊥| + k2 |n⊥| + k3 |n∥|

``c`` (``coulomb``) and ``v`` (``viscous``) are the load-free part. Any coefficient may be a
Python function of (q_i, q̇_i) — the seed allows it — through the API (not YAML). Units of the
k's: dimensionless for like-for-like terms (k1 revolute, k1 prismatic), metres for a force
giving a torque (k2, k3 revolute), 1/m for a torque giving a force (k2, k3 prismatic).
"""
from __future__ import annotations

import math

from robot_dynamics.friction.base import FrictionLaw, coefficient
from robot_dynamics.friction.components import load_components

FORMS = ("2.5.6", "2.5.5")


class LoadDependentFriction(FrictionLaw):
    name = "load_dependent"

    def __init__(self, coulomb=0.0, viscous=0.0, k1=0.0, k2=0.0, k3=0.0, form="2.5.6"):
        if str(form) not in FORMS:
            raise ValueError(f"form must be one of {FORMS}, got {form!r}")
        self.coulomb, self.viscous, self.k1, self.k2, self.k3 = coulomb, viscous, k1, k2, k3
        self.form = str(form)

    def load_terms(self, wrench, axis, prismatic):
        """(X1, X2, X3): the reaction components the k's multiply."""
        c = load_components(wrench, axis, prismatic)
        if prismatic:
            return c.f_perp, c.n_perp, abs(c.n_par)
        if self.form == "2.5.5":
            return c.n_perp, math.hypot(c.f_perp, c.f_par), 0.0
        return c.n_perp, c.f_perp, abs(c.f_par)

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        x1, x2, x3 = self.load_terms(wrench, axis, prismatic)
        return (coefficient(self.coulomb, q, qd) + coefficient(self.viscous, q, qd) * abs(qd)
                + coefficient(self.k1, q, qd) * x1 + coefficient(self.k2, q, qd) * x2
                + coefficient(self.k3, q, qd) * x3)

    @property
    def constant(self) -> bool:
        return not any(callable(c) for c in (self.coulomb, self.viscous, self.k1, self.k2, self.k3))

    def to_config(self) -> dict:
        if not self.constant:
            raise ValueError("a load_dependent law with function coefficients has no YAML form")
        out = {"model": "load_dependent", "coulomb": float(self.coulomb),
               "viscous": float(self.viscous), "k1": float(self.k1), "k2": float(self.k2),
               "k3": float(self.k3)}
        if self.form != "2.5.6":
            out["form"] = self.form
        return out
