"""Compile (or load from numba's on-disk cache) the kernels up front, so that a node's or a
script's first call is not the slow one."""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.crba import mass_matrix
from robot_dynamics.algorithm.directors import wrench_directors
from robot_dynamics.algorithm.forward_dynamics import forward_dynamics
from robot_dynamics.algorithm.rnea import rnea
from robot_dynamics.parsers.urdf import load_urdf

_ONE_JOINT = (
    '<robot name="w"><link name="b"/><link name="l"><inertial><mass value="1"/>'
    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="j" type="revolute"><parent link="b"/><child link="l"/>'
    '<axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint></robot>')


def warmup(model=None) -> None:
    """Run rnea, the mass matrix, the wrench directors and forward dynamics once on ``model``
    (default: a one-joint stand-in), which compiles or loads every kernel they use."""
    if model is None:
        model = load_urdf(_ONE_JOINT)
    data = model.create_data()
    z = np.zeros(model.nv)
    rnea(model, data, z, z, z)
    mass_matrix(model, data, z)
    wrench_directors(model, data)
    forward_dynamics(model, data, z, z, z)
