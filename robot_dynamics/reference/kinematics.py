"""Placements written out in NumPy: the statement of kernels/dynamics.py ``placements_kernel``
and ``world_kernel`` (:func:`robot_dynamics.algorithm.kinematics.forward_kinematics` runs them)."""
from __future__ import annotations

import numpy as np

from robot_dynamics.multibody import joints as jt
from robot_dynamics.spatial.algebra import motion_transform


def placements(model, data, q) -> None:
    """Joint placements ``data.liMi_R/liMi_p``, transforms ``data.X``, motion subspaces ``data.S``
    and world poses ``data.oMi`` at ``q``, parents first."""
    for i in range(model.nv):
        Rj, pj = jt.joint_motion(model.kinds[i], model.axes[i], q[i])
        R0, p0 = model.joint_rotations[i], model.joint_translations[i]
        R = R0 @ Rj
        p = p0 + R0 @ pj
        data.liMi_R[i], data.liMi_p[i] = R, p
        data.X[i] = motion_transform(R, p)
        data.S[i] = model.motion_subspaces[i]
        parent = model.parents[i]
        local = np.eye(4)
        local[:3, :3], local[:3, 3] = R, p
        data.oMi[i] = local if parent < 0 else data.oMi[parent] @ local
