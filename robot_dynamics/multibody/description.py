"""A neutral robot description: what a URDF (or a DH table) says, before it becomes a Model.

Readers (the URDF adapter :mod:`robot_dynamics.parsers.urdf`, the DH reader of
:mod:`robot_dynamics.formulations.dh`) produce a :class:`RobotDescription`;
:func:`robot_dynamics.multibody.build.build_model` turns it into the constant :class:`~robot_dynamics.multibody.model.Model`.
Nothing here touches XML.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class LinkSpec:
    """One link. ``com`` and ``inertia_rotation`` place the inertial frame in the link frame;
    ``inertia`` is the inertia tensor about the CoM in the inertial frame (URDF ``ixx..izz``)."""

    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia_rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    has_inertial: bool = False


@dataclass
class JointSpec:
    """One joint: ``origin`` (4×4) places the joint frame in the parent link frame at q = 0."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray = field(default_factory=lambda: np.eye(4))
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    #: ``<mimic joint= multiplier= offset=>``: (leader joint name, multiplier, offset), or None
    mimic: tuple | None = None


@dataclass
class RobotDescription:
    name: str
    links: list[LinkSpec]
    joints: list[JointSpec]
    source: str = "<description>"  # file name, or '<string>', used in error messages
    #: joint name → ``mechanicalReduction`` of the one ``<transmission>`` that drives it alone
    transmissions: dict[str, float] = field(default_factory=dict)
