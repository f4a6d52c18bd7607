"""The interface every joint friction law implements (seed 004 §2.5: the friction map J⊥ → J∥).

A law gives the *magnitude* ``|fn∥_vin| ≥ 0`` of one joint's friction effort from the joint's
reaction wrench and state; the recursions give it its sign (it opposes the joint's relative
velocity, eq. 2.5.1), so no law can make friction do positive work. ``direction`` is the sign
of the joint's motion, also when ``qd == 0`` (the direction it is about to move: asymmetric
laws and the breakaway bound of a joint at rest use it; ``0`` = unknown).
"""
from __future__ import annotations

from abc import ABC, abstractmethod


class FrictionLaw(ABC):
    name = "?"

    @abstractmethod
    def magnitude(self, wrench, axis, prismatic: bool, q: float, qd: float,
                  direction: float = 0.0) -> float:
        """Friction magnitude for joint wrench ``wrench`` (6,) [f; n] in the joint frame."""

    def breakaway(self, wrench, axis, prismatic: bool, q: float, direction: float = 0.0) -> float:
        """The largest friction effort the joint can hold at rest (stiction bound)."""
        return self.magnitude(wrench, axis, prismatic, q, 0.0, direction)

    @abstractmethod
    def to_config(self) -> dict:
        """The config entry (same structure as the YAML) that rebuilds this law."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_config()})"


def direction_of(qd: float, direction: float) -> float:
    """Sign of motion: of ``qd`` when it is non-zero, else the given ``direction``."""
    if qd > 0.0:
        return 1.0
    if qd < 0.0:
        return -1.0
    return 1.0 if direction > 0 else (-1.0 if direction < 0 else 0.0)


def coefficient(value, q: float, qd: float) -> float:
    """A coefficient that may be a number or a function of (q_i, q̇_i) (seed 004 §2.5)."""
    return float(value(q, qd)) if callable(value) else float(value)
