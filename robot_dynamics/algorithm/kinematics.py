"""Forward kinematics: joint placements at the current q, body poses, frame poses.

Fills ``data.liMi_R``, ``data.liMi_p`` (parent body ← body i), ``data.X`` (the 6×6 motion
transform parent → body i), ``data.S`` and ``data.oMi`` (world ← body i). Every recursion
starts here.
"""
from __future__ import annotations

from functools import singledispatch

import numpy as np

from robot_dynamics.multibody import joints as jt
from robot_dynamics.errors import ModelError, as_vector, check_data
from robot_dynamics.spatial.algebra import motion_transform


@singledispatch
def forward_kinematics(model, data, q) -> None:
    """Place every body at configuration ``q`` (nq,): ``data.liMi_R/liMi_p`` and ``data.oMi``.

    Runs the compiled kernels; :func:`_placements` is the readable version (used by the
    reference recursions). Parents come first, so one loop suffices.
    """
    from robot_dynamics.kernels.dynamics import placements_kernel, world_kernel

    if getattr(data, "_model", None) is not model:
        check_data(model, data, "forward_kinematics")
    q = as_vector("q", q, model.nq, where="forward_kinematics")
    k = model._kargs
    placements_kernel(k[0], k[2], k[3], k[4], q, data.liMi_R, data.liMi_p)
    world_kernel(k[1], data.liMi_R, data.liMi_p, data.oMi)


def _placements(model, data, q) -> None:
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


def frame_placement(model, data, name: str) -> np.ndarray:
    """World pose (4×4) of a URDF link ``name`` after :func:`forward_kinematics`."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "frame_placement")
    try:
        body, T = model.frames[name]
    except KeyError:
        raise ModelError(f"robot {model.name!r} has no link {name!r}") from None
    return T.copy() if body < 0 else data.oMi[body] @ T
