"""Compiled kernels (numba, ``cache=True``): every numba function of the package lives here.

They compute on raw arrays (layout.py packs a Model, its work arrays and the friction laws) what
the algorithms in :mod:`robot_dynamics.algorithm` state readably; :mod:`robot_dynamics.reference`
holds their NumPy twins, tested against them. The guard below keeps numba's on-disk cache
consistent with these sources.
"""
from robot_dynamics.kernels.cache_guard import guard as _guard

_guard()  # before any compiled module loads its cache (see cache_guard)
