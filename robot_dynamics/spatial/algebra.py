"""Spatial (6-D) algebra in Pinocchio's ordering: motion ``[v; ω]``, force ``[f; n]``.

``v`` is the velocity of the point at the frame origin and ``n`` the torque about the frame
origin, both in the frame's own axes. These are the building blocks of every recursion; the
seed-002 single-body equations (:mod:`robot_dynamics.spatial.rigid_body`) are written with them.
"""
from __future__ import annotations

import numpy as np


def skew(x) -> np.ndarray:
    """``[x]×``, the 3×3 matrix with ``skew(x) @ y == cross(x, y)``."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rodrigues(axis, angle: float) -> np.ndarray:
    """Rotation matrix of ``angle`` about the unit vector ``axis``."""
    k = skew(axis)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def rpy_matrix(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed axes x, y, z) to a rotation matrix: ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def motion_transform(R, p) -> np.ndarray:
    """6×6 ``X`` mapping a motion vector from a parent frame into a child frame.

    The child frame has orientation ``R`` (parent ← child) and origin ``p`` (in parent axes):
    ``v_child = Rᵀ (v_p + ω_p × p)``, ``ω_child = Rᵀ ω_p``. Its transpose maps a force from
    the child frame to the parent frame (``f_p = R f``, ``n_p = R n + p × R f``).
    """
    Rt = R.T
    X = np.zeros((6, 6))
    X[:3, :3] = Rt
    X[:3, 3:] = -Rt @ skew(p)
    X[3:, 3:] = Rt
    return X


def motion_cross(v) -> np.ndarray:
    """6×6 ``v×`` acting on motion vectors: ``[ω×u + v×u_ω ; ω×u_ω]``."""
    X = np.zeros((6, 6))
    w = skew(v[3:])
    X[:3, :3] = w
    X[:3, 3:] = skew(v[:3])
    X[3:, 3:] = w
    return X


def force_cross(v) -> np.ndarray:
    """6×6 ``v×*`` acting on force vectors (``= −(v×)ᵀ``): ``[ω×f ; ω×n + v×f]``."""
    return -motion_cross(v).T


def spatial_inertia(mass: float, com, inertia_com) -> np.ndarray:
    """Spatial inertia about the frame origin (seed 002, second form; docs/method.md §1).

    ``[[m 1, −m[c]×], [m[c]×, I_C − m[c]×[c]×]]`` with ``c`` the CoM and ``I_C`` the inertia
    about the CoM, both in the frame's axes.
    """
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * c
    out[3:, :3] = mass * c
    out[3:, 3:] = np.asarray(inertia_com) - mass * (c @ c)
    return out


def homogeneous(R, p) -> np.ndarray:
    """4×4 homogeneous transform from rotation ``R`` and translation ``p``."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T
