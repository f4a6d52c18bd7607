"""Compiled kernels (numba, ``cache=True``) behind the public algorithms.

The readable implementations in :mod:`robot_dynamics.rnea`, :mod:`robot_dynamics.crba`,
:mod:`robot_dynamics.directors` and :mod:`robot_dynamics.friction` are the specification; these
kernels compute the same numbers on raw arrays without Python-level per-joint work, and the
tests compare the two. The first call compiles (or loads the on-disk cache of a previous run);
:func:`warmup` does that up front so a node's first message is not slow.
"""
from .cache_guard import guard as _guard

_guard()  # before any compiled module loads its cache (see cache_guard)

from .dynamics import (  # noqa: E402
    crba_kernel, directors_kernel, placements_kernel, rnea_kernel, world_kernel)
from .friction import friction_kernel, pack_friction  # noqa: E402


def warmup(model=None) -> None:
    """Compile (or load from cache) every kernel once, on ``model`` or a one-joint stand-in."""
    import numpy as np

    from ..crba import mass_matrix
    from ..directors import wrench_directors
    from ..rnea import rnea

    if model is None:
        from ..urdf import load_urdf

        model = load_urdf(
            '<robot name="w"><link name="b"/><link name="l"><inertial><mass value="1"/>'
            '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<joint name="j" type="revolute"><parent link="b"/><child link="l"/>'
            '<axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint></robot>')
    data = model.create_data()
    z = np.zeros(model.nv)
    rnea(model, data, z, z, z)
    mass_matrix(model, data, z)
    wrench_directors(model, data)
    friction_kernel(np.zeros(model.nv, np.int64), np.zeros((model.nv, 8)), model.kinds,
                    model.axes, data.f, z, z, z, np.zeros(model.nv))


__all__ = ["crba_kernel", "directors_kernel", "placements_kernel", "rnea_kernel",
           "friction_kernel", "pack_friction", "warmup"]
