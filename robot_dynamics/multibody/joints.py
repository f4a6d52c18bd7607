"""The one place that knows joint types.

A URDF joint is either *movable* (one degree of freedom: revolute, continuous, prismatic) or
*fixed* (merged into its parent body by :mod:`robot_dynamics.multibody.model`). Every algorithm asks this
module, never the type string, how a joint moves, which spatial direction its actuator acts
along (J∥, seed 004 §2.4) and which five components are its constraint reaction (J⊥).

Kinds are small integers so that compiled kernels can branch on them:
``REVOLUTE = 0`` (revolute and continuous — one angle), ``PRISMATIC = 1``.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.errors import ModelError
from robot_dynamics.spatial.algebra import rodrigues

REVOLUTE = 0
PRISMATIC = 1

#: URDF type string → kind, for the movable joints this package models.
MOVABLE_TYPES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
FIXED_TYPE = "fixed"
#: URDF types we refuse, with the reason given to the user.
UNSUPPORTED_TYPES = {
    "floating": "a floating joint (free-flyer base) is not supported: robot_dynamics models "
                "fixed-base manipulators; fix the base or remove the floating joint",
    "planar": "a planar joint (3 dof) is not supported: replace it by two prismatic and one "
              "revolute joint",
}


def kind_of(joint_type: str, joint_name: str = "?", source: str = "") -> int | None:
    """Kind of a URDF joint type: ``REVOLUTE``/``PRISMATIC``, or ``None`` for a fixed joint."""
    if joint_type == FIXED_TYPE:
        return None
    if joint_type in MOVABLE_TYPES:
        return MOVABLE_TYPES[joint_type]
    where = f"{source}: " if source else ""
    reason = UNSUPPORTED_TYPES.get(joint_type, f"unknown joint type {joint_type!r}")
    raise ModelError(f"{where}joint {joint_name!r}: {reason}")


def is_prismatic(kind: int) -> bool:
    return kind == PRISMATIC


def joint_motion(kind: int, axis, q: float):
    """Relative motion of a joint at coordinate ``q``: rotation and translation (in joint frame)."""
    if kind == PRISMATIC:
        return np.eye(3), np.asarray(axis) * q
    return rodrigues(axis, q), np.zeros(3)


def motion_subspace(kind: int, axis) -> np.ndarray:
    """Motion subspace ``S`` (6,): the joint frame's spatial velocity for ``q̇ = 1``.

    Revolute ``[0; e]``, prismatic ``[e; 0]``. The actuator effort ``(0, τ e)`` or ``(τ e, 0)``
    spans J∥ (seed 004 §2.4), and ``Sᵀ fn`` is the axial (J∥) component of a joint wrench.
    """
    S = np.zeros(6)
    if kind == PRISMATIC:
        S[:3] = axis
    else:
        S[3:] = axis
    return S


def normal_basis(kind: int, axis) -> np.ndarray:
    """Orthonormal basis (5, 6) of J⊥ for one joint: the reaction components a perfect joint
    exchanges without doing work (seed 004 §2.4). Rows are spatial force directions:
    revolute — the three force directions and the two torque directions normal to ``e``;
    prismatic — the two force directions normal to ``e`` and the three torque directions."""
    e = np.asarray(axis, dtype=float)
    helper = np.eye(3)[np.argmin(np.abs(e))]
    u = np.cross(e, helper)
    u /= np.linalg.norm(u)
    w = np.cross(e, u)
    B = np.zeros((5, 6))
    if kind == PRISMATIC:
        B[0, :3], B[1, :3] = u, w
        B[2:, 3:] = np.eye(3)
    else:
        B[:3, :3] = np.eye(3)
        B[3, 3:], B[4, 3:] = u, w
    return B
