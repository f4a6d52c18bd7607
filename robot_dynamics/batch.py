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
from .kernels.friction import friction_kernel


def _as_batch(name, X, nv):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != nv:
        raise InputError(f"{name}: expected shape (N, {nv}), got {X.shape}")
    if not np.isfinite(X).all():
        rows = np.flatnonzero(~np.isfinite(X).all(axis=1))
        raise InputError(f"{name}: non-finite values in row(s) {rows[:10].tolist()}")
    return X


@njit(parallel=True, cache=True)
def _rnea_batch(kinds, parents, axes, R0, p0, I6, S, gravity, Q, V, A, TAU, F):
    N, n = Q.shape
    for k in prange(N):
        R = np.empty((n, 3, 3))
        p = np.empty((n, 3))
        vel = np.empty((n, 6))
        acc = np.empty((n, 6))
        tau = np.empty(n)
        rnea_kernel(kinds, parents, axes, R0, p0, I6, S, gravity, Q[k], V[k], A[k], R, p, vel,
                    acc, F[k], tau)
        TAU[k] = tau


@njit(parallel=True, cache=True)
def _friction_batch(codes, params, kinds, axes, F, Q, V, A, tol, TAUF):
    N, n = Q.shape
    for k in prange(N):
        d = np.empty(n)
        mag = np.empty(n)
        for i in range(n):
            vi = V[k, i]
            src = vi if abs(vi) > tol else A[k, i]
            d[i] = 1.0 if src > 0 else (-1.0 if src < 0 else 0.0)
        friction_kernel(codes, params, kinds, axes, F[k], Q[k], V[k], d, mag)
        for i in range(n):
            TAUF[k, i] = -mag[i] * d[i]


def _run_rnea(model, Q, V, A):
    Q = _as_batch("Q", Q, model.nv)
    V = _as_batch("V", V, model.nv)
    A = _as_batch("A", A, model.nv)
    if not (Q.shape == V.shape == A.shape):
        raise InputError(f"Q, V, A must have the same shape, got {Q.shape}, {V.shape}, {A.shape}")
    TAU = np.empty_like(Q)
    F = np.empty((Q.shape[0], model.nv, 6))
    _rnea_batch(model.kinds, model.parents, model.axes, model.joint_rotations,
                model.joint_translations, model.spatial_inertias, model.motion_subspaces,
                np.asarray(model.gravity, float), Q, V, A, TAU, F)
    return Q, V, A, TAU, F


def rnea_batch(model, Q, V, A) -> np.ndarray:
    """Frictionless inverse dynamics for every sample: (N, nv)."""
    return _run_rnea(model, Q, V, A)[3]


def joint_wrenches_batch(model, Q, V, A) -> np.ndarray:
    """Joint wrenches fn (seed 004) for every sample: (N, nv, 6), joint frames."""
    return _run_rnea(model, Q, V, A)[4]


def inverse_dynamics_batch(model, Q, V, A, friction=None, *, velocity_tolerance=1e-6,
                           return_friction=False):
    """Friction-aware inverse dynamics (seed 004 §2.7) for every sample: (N, nv) motor efforts.

    Same convention as :func:`~robot_dynamics.inverse_dynamics.inverse_dynamics` at q̇ = 0 (the
    commanded acceleration's direction). With ``return_friction`` also returns τf (N, nv).
    """
    Q, V, A, TAU, F = _run_rnea(model, Q, V, A)
    TAUF = np.zeros_like(TAU)
    if friction is not None:
        if friction._packed is not None:
            codes, params = friction._packed
            _friction_batch(codes, params, model.kinds, model.axes, F, Q, V, A,
                            float(velocity_tolerance), TAUF)
        else:  # Python laws: sample by sample through the reference path
            for k in range(Q.shape[0]):
                d = np.where(np.abs(V[k]) > velocity_tolerance, np.sign(V[k]), np.sign(A[k]))
                TAUF[k] = -friction.magnitudes(model, F[k], Q[k], V[k], d) * d
    out = TAU - TAUF
    return (out, TAUF) if return_friction else out
