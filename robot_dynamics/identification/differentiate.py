"""Where each recorded row's friction "lives": the states the regressor is evaluated at.

Two ways to turn a log (t, q, q̇, τ) into samples of the friction balance (seed 004 eq. 2.7.5,
``τ = fn∥ − τf`` with ``fn`` from Newton–Euler at (q, q̇, q̈)):

``step`` (default) — the log as a sequence of control periods: row k carries the effort τ_k
    applied over (t_{k−1}, t_k] and the state reached at its end (what the simulator node
    publishes). q̈ = (q̇_k − q̇_{k−1})/Δt_k is the exact mean acceleration of the period (no
    filter, no lag); :mod:`.step_model` replays the simulator's step to find the state its
    friction balance used. Needs the logged velocities at the control rate: differencing
    amplifies velocity noise by √2/Δt, so for noisy, differentiated velocities use ``savgol``.

``filter`` — the default for every log that is not this project's simulator written at every step
    (``auto`` picks ``step`` for those, :func:`simulator_step_log`): a zero-phase Savitzky–Golay
    fit over :data:`FILTER_WINDOW` seconds gives q, q̇ and q̈ (from q alone when no velocities
    are logged) — noise averaged, no delay (the window is centred); rows within half a window of
    the log's ends or of the joint's reversal are left out (:func:`filtered_states`).

``savgol`` — zero-phase Savitzky–Golay differentiation of q̇ (polynomial of ``order`` over a
    centred window of ``window`` samples; uniform sampling): the row's own state, q̈ smoothed.
    Biased where q̈ changes within the window (friction jumps at reversals), and the first and
    last ``window`` rows are marked invalid (the filter extrapolates there).

docs/identification.md measures what each choice costs on simulator logs.
"""
from __future__ import annotations

from math import factorial

import numpy as np
from scipy.ndimage import correlate1d
from scipy.signal import savgol_filter

from robot_dynamics.errors import InputError

METHODS = ("auto", "filter", "step", "savgol")
#: the ``filter`` method's window [s] and polynomial order (docs/identification.md measures them)
FILTER_WINDOW = 0.2
FILTER_ORDER = 4
#: the order of the second, independent reconstruction that measures the first's error in the
#: fitted coefficients (fit step 4): the next one that changes the states — on a centred window a
#: degree-5 fit gives degree 4's q, q̇ and q̈ (odd and even terms separate), degree 6 does not
CHECK_ORDER = FILTER_ORDER + 2


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


def filter_window(t, window=FILTER_WINDOW, order=FILTER_ORDER):
    """Odd window length (samples) of about ``window`` seconds at the log's rate (≥ order + 3)."""
    t, dt = _check_times(t, 2)
    h = float(np.median(dt))
    w = max(int(round(window / h)) | 1, (order + 3) | 1)
    return w, h


def _savgol(x, w, order, deriv, h):
    """``savgol_filter(x, w, order, deriv=deriv, delta=h, axis=0)`` with the coefficients of the
    window's rows computed on offsets scaled to [−1, 1]: scipy's least squares on raw sample
    offsets loses digits as (w/2)^order grows — degree 6 over 201 samples gives a q̈ filter
    whose sum is 2e-8 instead of 0, i.e. 0.02 rad/s² per rad of q at 1 kHz. The edges (half a
    window, the fit leaves them out) are scipy's polynomial fits."""
    out = savgol_filter(x, w, order, deriv=deriv, delta=h, axis=0)
    half = w // 2
    offsets = np.arange(-half, half + 1) / half
    weights = np.linalg.pinv(np.vander(offsets, order + 1, increasing=True))[deriv]
    weights = weights * factorial(deriv) / (half * h) ** deriv
    out[half:len(x) - half] = correlate1d(x, weights, axis=0, mode="nearest")[half:len(x) - half]
    return out


def filtered_states(t, Q, V=None, window=FILTER_WINDOW, order=FILTER_ORDER):
    """``filter`` regressor states (Q, V, A, valid, w), each (N, nv) but w: a zero-phase
    (centred, so no delay to compensate) Savitzky–Golay fit of degree ``order`` over ``window``
    seconds, from the positions alone (q̇ and q̈ its first and second derivatives) when ``V`` is
    None, else q̇ smoothed and q̈ its derivative. Noise on q (and q̇) is averaged over the
    window; the window's half-width at the edges and around a joint's reversal (q̈ jumps there
    when friction flips) is invalid for that joint. ``w``: the window in samples (the span of
    the residuals' correlation that the filter itself creates)."""
    w, h = filter_window(t, window, order)
    t, dt = _check_times(t, w + 1)
    if np.abs(dt - h).max() > 0.05 * h:
        raise InputError(f"samples are not uniformly spaced (step {dt.min():.3g}…{dt.max():.3g} s)"
                         "; resample the log to a uniform rate before identification")
    Q = np.asarray(Q, float)
    Qf = _savgol(Q, w, order, 0, h)
    if V is None:
        Vf, A = _savgol(Q, w, order, 1, h), _savgol(Q, w, order, 2, h)
    else:
        V = np.asarray(V, float)
        Vf, A = _savgol(V, w, order - 1, 0, h), _savgol(V, w, order - 1, 1, h)
    half = w // 2
    valid = np.ones(Qf.shape, dtype=bool)
    valid[:half] = valid[len(valid) - half:] = False
    sign = np.sign(Vf)
    flip = np.zeros(Qf.shape, dtype=bool)
    flip[1:] = sign[1:] != sign[:-1]
    # a reversal within half a window of the row: dilate the flips by the half-width
    c = np.cumsum(np.vstack([np.zeros((1, flip.shape[1])), flip]), axis=0)
    idx = np.arange(len(flip))
    hi = np.minimum(idx + half + 1, len(flip))
    lo = np.maximum(idx - half, 0)
    valid &= (c[hi] - c[lo]) == 0
    return Qf, Vf, A, valid, w


def check_states(t, Q, V, Qf, Vf, A):
    """Two other readings [(Q, V, A), …] of the log's states beside :func:`filtered_states`'
    (Qf, Vf, A), each as defensible, that the fit repeats to measure the reconstruction's error
    in its coefficients (docs/identification.md, "Errors in the regressors"):

    * the next-order fit (:data:`CHECK_ORDER`): the filter's truncation where q changes faster
      than its polynomial follows;
    * q̇ as the mean over the sample interval ending at the row, q̇(t_k − h/2), instead of at the
      row: which a sampled velocity is depends on its source (a semi-implicit Euler step such as
      MuJoCo's, q_k = q_{k−1} + h q̇_k, or a differencing encoder: the mean; a trapezoidal step
      such as this project's simulator: the instant's) and the log does not say."""
    Qc, Vc, Ac = filtered_states(t, Q, V, order=CHECK_ORDER)[:3]
    h = filter_window(t)[1]
    return [(Qc, Vc, Ac), (Qf, Vf - 0.5 * h * A, A)]


def simulator_step_log(t, Q, V, share=0.99):
    """Whether the log is one of this project's simulator, written at every step: its rows
    satisfy the step's integration q_k − q_{k−1} = (Δt/2)(q̇_{k−1} + q̇_k) to roundoff (a
    subsampled log, noise on q, a log of another simulator or of a robot does not)."""
    if V is None or len(t) < 8:
        return False
    Q, V = np.asarray(Q, float), np.asarray(V, float)
    dt = step_lengths(t)
    err = np.abs(np.diff(Q, axis=0) - 0.5 * dt[:, None] * (V[1:] + V[:-1]))
    tol = 1e-9 * (1.0 + np.abs(Q[1:])) + 1e-9 * dt[:, None] * (1.0 + np.abs(V[1:]))
    return bool(np.mean(np.all(err <= tol, axis=1)) >= share)
