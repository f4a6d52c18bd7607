"""Any friction law written as a Python function (seed 004 §2.5: "any law of (n⊥, f, q_i, q̇_i)").

``fn(normal, other, q, qd) → magnitude ≥ 0`` where, in the joint frame,

* revolute:  ``normal = n − (n·e) e`` (the bending torque vector n⊥) and ``other = f`` (the whole force);
* prismatic: ``normal = f − (f·e) e`` (f⊥) and ``other = n`` (the whole torque).

A negative or non-finite return value is an error naming the joint, never silently used.
"""
from __future__ import annotations

import math

import numpy as np

from robot_dynamics.friction.base import FrictionLaw
from robot_dynamics.friction.components import normal_vectors


class CallableFriction(FrictionLaw):
    name = "callable"

    def __init__(self, fn, joint: str = "?"):
        if not callable(fn):
            raise TypeError(f"joint {joint!r}: callable friction law needs a function, got {fn!r}")
        self.fn, self.joint = fn, joint

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        f_perp, n_perp = normal_vectors(wrench, axis)
        if prismatic:
            value = self.fn(f_perp, np.asarray(wrench[3:], float), q, qd)
        else:
            value = self.fn(n_perp, np.asarray(wrench[:3], float), q, qd)
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"joint {self.joint!r}: friction function returned {value}; it must "
                             "return a finite magnitude >= 0 (the sign is applied by the dynamics)")
        return value

    def to_config(self) -> dict:
        raise ValueError(f"joint {self.joint!r}: a Python-function friction law has no YAML form")
