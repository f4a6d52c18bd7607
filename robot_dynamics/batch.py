"""Dynamics over whole trajectories: N samples at once, in parallel over samples.

Shapes: ``Q, V, A`` are (N, nv); results (N, nv), joint wrenches (N, nv, 6). Same numbers as
calling :func:`~robot_dynamics.rnea.rnea` / :func:`~robot_dynamics.inverse_dynamics.inverse_dynamics`
sample by sample (tested), without the per-call Python overhead — for identification,
trajectory checks and plots.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .errors import InputError
from .kernels.dynamics import rnea_kernel
from .kernels.friction import id_friction_kernel
from .kernels.layout import _v, laws_views, model_gravity, model_views, unowned


def _as_batch(name, X, nv):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != nv:
        raise InputError(f"{name}: expected shape (N, {nv}), got {X.shape}")
    if not np.isfinite(X).all():
        rows = np.flatnonzero(~np.isfinite(X).all(axis=1))
        raise InputError(f"{name}: non-finite values in row(s) {rows[:10].tolist()}")
    return X


_CHUNKS = 64  # work units of the parallel loop (each reuses one scratch block)


@njit(parallel=True, cache=True)
def _id_batch(mb, fr, Q, V, A, tol, with_friction, scratch, TAU, F, TAUF):
    """RNEA (and, with friction, seed 004 §2.7 steps 2–4) for every sample, in parallel over
    chunks of samples; every array is viewed without reference counts (see layout.unowned)."""
    N = Q.shape[0]
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    gravity = model_gravity(mb)
    codes, params = laws_views(fr, n)
    Q, V, A, TAU, F, TAUF = (unowned(Q), unowned(V), unowned(A), unowned(TAU), unowned(F),
                             unowned(TAUF))
    scratch = unowned(scratch)
    chunks = scratch.shape[0]
    for c in prange(chunks):
        block = scratch[c]
        R = _v(block, 0, (n, 3, 3))
        p = _v(block, 9 * n, (n, 3))
        vel = _v(block, 12 * n, (n, 6))
        acc = _v(block, 18 * n, (n, 6))
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            rnea_kernel(kinds, parents, axes, R0, p0, I6, S, gravity, Q[k], V[k], A[k], R, p, vel,
                        acc, F[k], TAU[k])
            if with_friction:  # τ = fn∥ − τf in place
                id_friction_kernel(codes, params, kinds, axes, F[k], Q[k], V[k], A[k], TAU[k], tol,
                                   TAUF[k], TAU[k])


def _run(model, Q, V, A, friction=None, tol=1e-6):
    Q = _as_batch("Q", Q, model.nv)
    V = _as_batch("V", V, model.nv)
    A = _as_batch("A", A, model.nv)
    if not (Q.shape == V.shape == A.shape):
        raise InputError(f"Q, V, A must have the same shape, got {Q.shape}, {V.shape}, {A.shape}")
    N, n = Q.shape
    TAU = np.empty_like(Q)
    TAUF = np.zeros_like(Q)
    F = np.empty((N, n, 6))
    packed = friction._packed if friction is not None else None
    scratch = np.empty((max(1, min(N, _CHUNKS)), 24 * n))
    _id_batch(model._mb, (packed or model._no_friction)[2], Q, V, A, float(tol),
              packed is not None, scratch, TAU, F, TAUF)
    return Q, V, A, TAU, F, TAUF


def rnea_batch(model, Q, V, A) -> np.ndarray:
    """Frictionless inverse dynamics for every sample: (N, nv)."""
    return _run(model, Q, V, A)[3]


def joint_wrenches_batch(model, Q, V, A) -> np.ndarray:
    """Joint wrenches fn (seed 004) for every sample: (N, nv, 6), joint frames."""
    return _run(model, Q, V, A)[4]


def inverse_dynamics_batch(model, Q, V, A, friction=None, *, velocity_tolerance=1e-6,
                           return_friction=False):
    """Friction-aware inverse dynamics (seed 004 §2.7) for every sample: (N, nv) motor efforts.

    Same convention as :func:`~robot_dynamics.inverse_dynamics.inverse_dynamics` at q̇ = 0 (the
    commanded acceleration's direction). With ``return_friction`` also returns τf (N, nv).
    """
    Q, V, A, TAU, F, TAUF = _run(model, Q, V, A, friction, velocity_tolerance)
    if friction is not None and friction._packed is None:
        # Python laws: sample by sample through the reference path
        for k in range(Q.shape[0]):
            d = np.where(np.abs(V[k]) > velocity_tolerance, np.sign(V[k]), np.sign(A[k]))
            TAUF[k] = -friction.magnitudes(model, F[k], Q[k], V[k], d) * d
        TAU = TAU - TAUF
    return (TAU, TAUF) if return_friction else TAU
