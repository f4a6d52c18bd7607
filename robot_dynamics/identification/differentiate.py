"""Joint accelerations from recorded velocities: zero-phase Savitzky–Golay differentiation.

A Savitzky–Golay filter fits a polynomial (order ``order``) to a centred window of ``window``
samples and differentiates it: symmetric in time, so it adds no phase lag (the acceleration is
not delayed against the torques), and it smooths noise at the same time. Needs uniform sampling.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import savgol_filter

from ..errors import InputError


def accelerations(t, V, window: int = 21, order: int = 3) -> np.ndarray:
    """q̈ (N, nv) from time stamps ``t`` (N,) and velocities ``V`` (N, nv)."""
    t = np.asarray(t, dtype=float)
    dt = np.diff(t)
    if len(t) < window:
        raise InputError(f"need at least {window} samples to differentiate, got {len(t)}")
    if np.any(dt <= 0):
        raise InputError("time stamps must be strictly increasing")
    h = float(np.median(dt))
    if np.abs(dt - h).max() > 0.05 * h:
        raise InputError(f"samples are not uniformly spaced (step {dt.min():.3g}…{dt.max():.3g} s)"
                         "; resample the log before identification")
    return savgol_filter(np.asarray(V, float), window, order, deriv=1, delta=h, axis=0)
