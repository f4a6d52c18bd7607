"""Where each recorded row's friction "lives": the states the regressor is evaluated at.

Two ways to turn a log (t, q, q̇, τ) into samples of the friction balance (seed 004 eq. 2.7.5,
``τ = fn∥ − τf`` with ``fn`` from Newton–Euler at (q, q̇, q̈)):

``step`` (default) — the log as a sequence of control periods: row k carries the effort τ_k
    applied over (t_{k−1}, t_k] and the state reached at its end (what the simulator node
    publishes). q̈ = (q̇_k − q̇_{k−1})/Δt_k is the exact mean acceleration of the period (no
    filter, no lag); :mod:`.step_model` replays the simulator's step to find the state its
    friction balance used. Needs the logged velocities at the control rate: differencing
    amplifies velocity noise by √2/Δt, so for noisy, differentiated velocities use ``savgol``.

``savgol`` — zero-phase Savitzky–Golay differentiation of q̇ (polynomial of ``order`` over a
    centred window of ``window`` samples; uniform sampling): the row's own state, q̈ smoothed.
    Biased where q̈ changes within the window (friction jumps at reversals), and the first and
    last ``window`` rows are marked invalid (the filter extrapolates there).

docs/identification.md measures what each choice costs on simulator logs.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import savgol_filter

from robot_dynamics.errors import InputError

METHODS = ("step", "savgol")


def _check_times(t, n_min):
    t = np.asarray(t, dtype=float)
    if t.ndim != 1:
        raise InputError(f"time stamps: expected a 1-D array, got shape {t.shape}")
    if len(t) < n_min:
        raise InputError(f"need at least {n_min} samples to differentiate, got {len(t)}")
    dt = np.diff(t)
    if np.any(dt <= 0):
        k = int(np.flatnonzero(dt <= 0)[0])
        raise InputError(f"time stamps must be strictly increasing (row {k + 1}: "
                         f"t={float(t[k + 1])!r} after t={float(t[k])!r})")
    return t, dt


def accelerations(t, V, window: int = 21, order: int = 3) -> np.ndarray:
    """q̈ (N, nv) from time stamps ``t`` (N,) and velocities ``V`` (N, nv) (Savitzky–Golay)."""
    t, dt = _check_times(t, window)
    h = float(np.median(dt))
    if np.abs(dt - h).max() > 0.05 * h:
        raise InputError(f"samples are not uniformly spaced (step {dt.min():.3g}…{dt.max():.3g} s)"
                         "; resample the log before identification, or use the step method")
    return savgol_filter(np.asarray(V, float), window, order, deriv=1, delta=h, axis=0)


def step_lengths(t) -> np.ndarray:
    """Δt (N−1,) of a log whose rows are control periods; stamps uniform up to their resolution
    (ROS time is integer nanoseconds) give one Δt — the jitter is rounding, not timing, and
    Δq̇/Δt would turn it into 1e-6-relative acceleration errors."""
    t, dt = _check_times(t, 2)
    h = (t[-1] - t[0]) / (len(t) - 1)
    if np.abs(dt - h).max() <= 2e-9 + 1e-9 * abs(t[-1]):
        dt = np.full_like(dt, h)
    return dt


def savgol_states(t, Q, V, window=21):
    """``savgol`` regressor states (Q, V, A, valid), each (N, nv): the row's own state with q̈
    from :func:`accelerations`; the filter's edges invalid."""
    V = np.asarray(V, float)
    A = accelerations(t, V, window=window)
    valid = np.ones(V.shape, dtype=bool)
    valid[:window] = valid[-window:] = False
    return np.asarray(Q, float), V, A, valid
