"""Units of a joint's coordinate, velocity, acceleration and effort, by joint type.

Revolute and continuous joints: rad, rad/s, rad/s², N·m; prismatic joints: m, m/s, m/s², N.
Plots, summaries and log lines ask here (with the joint type from ``model.joint_types``, and
:mod:`robot_dynamics.multibody.joints` deciding what the type means) instead of writing ``[rad]``.
"""
from __future__ import annotations

from typing import NamedTuple

from robot_dynamics.multibody import joints as jt


class JointUnits(NamedTuple):
    position: str
    velocity: str
    acceleration: str
    effort: str


REVOLUTE_UNITS = JointUnits("rad", "rad/s", "rad/s²", "N·m")
PRISMATIC_UNITS = JointUnits("m", "m/s", "m/s²", "N")


def units_of(joint_type: str) -> JointUnits:
    """Units of one movable joint from its URDF type (``'revolute'``, ``'prismatic'``, ...)."""
    return PRISMATIC_UNITS if jt.is_prismatic(jt.kind_of(joint_type)) else REVOLUTE_UNITS


def joint_units(model) -> list[JointUnits]:
    """Units of every joint of ``model``, in q order."""
    return [units_of(t) for t in model.joint_types]


def common_unit(units, field: str) -> str:
    """``field``'s unit if all joints share it (``'rad'``), else both (``'rad | m'``):
    for a one-line summary over mixed joints."""
    seen = []
    for u in units:
        value = getattr(u, field)
        if value not in seen:
            seen.append(value)
    return " | ".join(seen)


def format_quantity(value: float, unit: str, fmt: str = ".2e") -> str:
    """``format_quantity(1.5e-3, 'rad') == '1.50e-03 rad'``."""
    return f"{value:{fmt}} {unit}"
