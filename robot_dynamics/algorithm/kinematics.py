"""Forward kinematics: joint placements at the current q, body poses, frame poses.

Fills ``data.liMi_R``, ``data.liMi_p`` (parent body ← body i), ``data.X`` (the 6×6 motion
transform parent → body i), ``data.S`` and ``data.oMi`` (world ← body i). Every recursion
starts here.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import ModelError, as_vector, check_data


@by_model
def forward_kinematics(model, data, q) -> None:
    """Place every body at configuration ``q`` (nq,): ``data.liMi_R/liMi_p`` and ``data.oMi``.

    Runs the compiled kernels; :func:`robot_dynamics.reference.kinematics.placements` is the
    readable statement. Parents come first, so one loop suffices.
    """
    from robot_dynamics.kernels.dynamics import placements_kernel, world_kernel

    if getattr(data, "_model", None) is not model:
        check_data(model, data, "forward_kinematics")
    q = as_vector("q", q, model.nq, where="forward_kinematics")
    k = model._kargs
    placements_kernel(k[0], k[2], k[3], k[4], q, data.liMi_R, data.liMi_p)
    world_kernel(k[1], data.liMi_R, data.liMi_p, data.oMi)


def frame_placement(model, data, name: str) -> np.ndarray:
    """World pose (4×4) of a URDF link ``name`` after :func:`forward_kinematics`."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "frame_placement")
    try:
        body, T = model.frames[name]
    except KeyError:
        raise ModelError(f"robot {model.name!r} has no link {name!r}") from None
    return T.copy() if body < 0 else data.oMi[body] @ T


def body_point_jacobian(model, data, body: int, point):
    """World position (3,) and Jacobian (3, nv) of a point fixed on body ``body`` (``point``:
    its coordinates in the body's frame; body −1, the root: fixed, J = 0), from ``data``'s
    placements (after :func:`forward_kinematics`): for each joint moving the body, ``e × (x − o)``
    (revolute; e, o the joint's axis and origin in the world) or ``e`` (prismatic)."""
    from robot_dynamics.multibody import joints as jt

    point = np.asarray(point, dtype=float)
    J = np.zeros((3, model.nv))
    if body < 0:
        return point.copy(), J
    x = data.oMi[body, :3, :3] @ point + data.oMi[body, :3, 3]
    j = body
    while j >= 0:
        e = data.oMi[j, :3, :3] @ model.axes[j]
        J[:, j] = e if model.kinds[j] == jt.PRISMATIC else np.cross(e, x - data.oMi[j, :3, 3])
        j = int(model.parents[j])
    return x, J
