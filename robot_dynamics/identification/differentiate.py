"""Where each recorded row's friction "lives": the states the regressor is evaluated at.

Two ways to turn a log (t, q, q̇, τ) into samples of the friction balance (seed 004 eq. 2.7.5,
``τ = fn∥ − τf`` with ``fn`` from Newton–Euler at (q, q̇, q̈)):

``step`` (default) — the log as a sequence of control periods. Row k carries the effort τ_k that
    was applied over (t_{k−1}, t_k] and the state reached at its end (this is what the simulator
    node publishes: the state after a step and the effort of that step). Over that interval

    * q̈ = (q̇_k − q̇_{k−1}) / Δt_k — the exact mean acceleration of the period (no filter, no lag);
    * the joint wrench is evaluated at the mid-period state q½ = q_k − (Δt_k/2) q̇_k,
      q̇½ = (q̇_{k−1} + q̇_k)/2 — where :class:`~robot_dynamics.simulation.Simulator`'s Störmer–
      Verlet / velocity-level step evaluates it;
    * friction belongs to the end-of-period velocity q̇_k (the velocity-level step solves τf at
      q̇⁺), so sign and viscous term use q̇_k;
    * a row whose velocity changed sign (or left/entered rest) during the period is a stick/slip
      transition and is marked invalid.

    Needs the logged velocities at the control rate. Differencing amplifies velocity noise by
    √2/Δt: for noisy, differentiated velocities use ``savgol``.

``savgol`` — zero-phase Savitzky–Golay differentiation of q̇ (polynomial of ``order`` over a
    centred window of ``window`` samples; uniform sampling): the row's own state, q̈ smoothed.
    Biased where q̈ changes within the window (friction jumps at reversals), and the first and
    last ``window`` rows are marked invalid (the filter extrapolates there).

docs/identification.md measures what each choice costs on simulator logs.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import savgol_filter

from ..errors import InputError

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
        raise InputError(f"time stamps must be strictly increasing (row {k + 1}: {t[k + 1]!r} "
                         f"after {t[k]!r})")
    return t, dt


def accelerations(t, V, window: int = 21, order: int = 3) -> np.ndarray:
    """q̈ (N, nv) from time stamps ``t`` (N,) and velocities ``V`` (N, nv) (Savitzky–Golay)."""
    t, dt = _check_times(t, window)
    h = float(np.median(dt))
    if np.abs(dt - h).max() > 0.05 * h:
        raise InputError(f"samples are not uniformly spaced (step {dt.min():.3g}…{dt.max():.3g} s)"
                         "; resample the log before identification, or use the step method")
    return savgol_filter(np.asarray(V, float), window, order, deriv=1, delta=h, axis=0)


def step_states(t, Q, V, *, method="step", window=21):
    """Regressor states for each row: (Qw, Vw, A, valid), each (N, nv) except ``valid``.

    ``Qw, Vw, A`` is where Newton–Euler evaluates the joint wrench; friction is taken at ``V``
    (the row's velocity). ``valid`` (N, nv) is False for rows the method cannot describe (the
    first row of ``step``, transitions, the filter edges of ``savgol``).
    """
    if method not in METHODS:
        raise InputError(f"acceleration method must be one of {METHODS}, got {method!r}")
    Q, V = np.asarray(Q, float), np.asarray(V, float)
    valid = np.ones(V.shape, dtype=bool)
    if method == "savgol":
        A = accelerations(t, V, window=window)
        valid[:window] = valid[-window:] = False
        return Q, V, A, valid
    t, dt = _check_times(t, 2)
    h = (t[-1] - t[0]) / (len(t) - 1)
    if np.abs(dt - h).max() <= 2e-9 + 1e-9 * abs(t[-1]):
        # uniform up to the stamps' resolution (ROS time is integer nanoseconds): the jitter is
        # rounding, not timing, and Δq̇/Δt would turn it into 1e-6-relative acceleration errors
        dt = np.full_like(dt, h)
    A = np.zeros_like(V)
    A[1:] = (V[1:] - V[:-1]) / dt[:, None]
    Vw = V.copy()
    Vw[1:] = 0.5 * (V[1:] + V[:-1])
    Qw = Q.copy()
    Qw[1:] = Q[1:] - 0.5 * dt[:, None] * V[1:]
    valid[0] = False
    valid[1:] &= np.sign(V[1:]) == np.sign(V[:-1])  # stick/slip transitions
    return Qw, Vw, A, valid
