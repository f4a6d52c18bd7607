"""Errors raised by robot_dynamics, and the validation of state vectors.

Every message names what is wrong: the file, link, joint or argument, and the offending value.
"""
from __future__ import annotations

import math

import numpy as np


class ModelError(ValueError):
    """A robot description (URDF, DH table, loop-closure file) cannot make a valid model."""


class InputError(ValueError):
    """A state or effort vector given to an algorithm is malformed (size, NaN, Inf)."""


def as_vector(name: str, x, n: int, *, where: str = "") -> np.ndarray:
    """Return ``x`` as a float64 vector of length ``n``, or raise :class:`InputError`.

    ``name`` is the argument's name as the user wrote it (``q``, ``v``, ``a``, ``tau``), and
    ``where`` the calling algorithm, so the message says which input of which call is wrong.
    """
    if (type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,)
            and math.isfinite(x.sum())):
        return x  # fast path: already a finite float64 vector (a NaN or Inf makes the sum non-finite)
    ctx = f" in {where}" if where else ""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}{ctx}: cannot be read as a float vector ({exc})") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"{name}{ctx}: expected shape ({n},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr)).tolist()
        raise InputError(f"{name}{ctx}: non-finite value(s) at index {bad}: {arr[bad].tolist()}")
    return arr
