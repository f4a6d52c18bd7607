"""Classic velocity-only friction: Coulomb + viscous + optional Stribeck, optionally asymmetric.

    |τf| = Fc + (Fs − Fc) exp(−(q̇ / vs)²) + Fv |q̇|

with ``Fc`` the Coulomb level (``coulomb``, or ``coulomb_positive``/``coulomb_negative`` for the
two directions of motion), ``Fv`` the viscous coefficient, ``Fs`` the static (breakaway) level and
``vs`` the Stribeck velocity (``stribeck: {static, velocity}``). Units: N·m (revolute) or N
(prismatic); viscous per rad/s or per m/s.
"""
from __future__ import annotations

import math

from robot_dynamics.friction.base import FrictionLaw, direction_of


class ClassicFriction(FrictionLaw):
    name = "classic"

    def __init__(self, coulomb=0.0, viscous=0.0, stribeck=None, coulomb_positive=None,
                 coulomb_negative=None):
        self.coulomb = float(coulomb)
        self.viscous = float(viscous)
        self.coulomb_positive = self.coulomb if coulomb_positive is None else float(coulomb_positive)
        self.coulomb_negative = self.coulomb if coulomb_negative is None else float(coulomb_negative)
        self.asymmetric = coulomb_positive is not None or coulomb_negative is not None
        self.stribeck = None if stribeck is None else (float(stribeck["static"]),
                                                       float(stribeck["velocity"]))

    def coulomb_level(self, direction: float) -> float:
        if direction > 0:
            return self.coulomb_positive
        if direction < 0:
            return self.coulomb_negative
        return min(self.coulomb_positive, self.coulomb_negative) if self.asymmetric else self.coulomb

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        fc = self.coulomb_level(direction_of(qd, direction))
        level = fc
        if self.stribeck is not None:
            fs, vs = self.stribeck
            static = fs if not self.asymmetric else fs * fc / max(self.coulomb, 1e-300)
            level = fc + (static - fc) * math.exp(-(qd / vs) ** 2)
        return level + self.viscous * abs(qd)

    def to_config(self) -> dict:
        out = {"model": "classic", "coulomb": self.coulomb, "viscous": self.viscous}
        if self.asymmetric:
            out["coulomb_positive"] = self.coulomb_positive
            out["coulomb_negative"] = self.coulomb_negative
        if self.stribeck is not None:
            out["stribeck"] = {"static": self.stribeck[0], "velocity": self.stribeck[1]}
        return out
