"""Dynamics over whole trajectories: N samples at once, in parallel over samples.

Shapes: ``Q, V, A`` are (N, nv); results (N, nv), joint wrenches (N, nv, 6). Same numbers as
calling :func:`~robot_dynamics.algorithm.rnea.rnea` / :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics`
sample by sample (tested), without the per-call Python overhead — for identification,
trajectory checks and plots.

External efforts: ``FEXT`` (N, nv, 6), each sample's wrench on each body (body frame, about its
origin; the convention of :func:`~robot_dynamics.algorithm.rnea.rnea`'s ``fext``); None: none.
"""
from __future__ import annotations

import math

from robot_dynamics.multibody.dispatch import by_model

import numpy as np
from robot_dynamics.errors import (InputError, as_batch, as_wrenches, check_friction,
                                   raise_overflow)
from robot_dynamics.kernels.batch import CHUNKS, id_batch
from robot_dynamics.algorithm.inverse_dynamics import check_damping, damping_effort


def _run(model, Q, V, A, friction=None, tol=1e-6, where="rnea_batch", FEXT=None, damped=False):
    """Convert the samples once (any layout, :func:`~robot_dynamics.errors.as_batch`), run the
    compiled loop, check the results are finite (one sum; the culprit is looked for only when
    that fails)."""
    check_friction(model, friction, where)
    Q = as_batch("Q", Q, model.nq, where=where)
    V = as_batch("V", V, model.nv, where=where)
    A = as_batch("A", A, model.nv, where=where)
    if not (Q.shape == V.shape == A.shape):
        raise InputError(f"Q, V, A must have the same shape, got {Q.shape}, {V.shape}, {A.shape}")
    N, n = Q.shape
    if FEXT is None:
        FEXT = np.empty((0, n, 6))
    else:
        FEXT = as_wrenches("FEXT", FEXT, n, where=where, names=model.link_names, batch=True)
        if FEXT.shape[0] != N:
            raise InputError(f"FEXT in {where}: expected shape ({N}, {n}, 6) (one (nv, 6) fext "
                             f"per sample of Q), got {FEXT.shape}")
    TAU = np.empty_like(Q)
    TAUF = np.zeros_like(Q)
    F = np.empty((N, n, 6))
    packed = friction._packed if friction is not None else None
    scratch = np.empty((max(1, min(N, CHUNKS)), 24 * n))
    id_batch(model._mb, (packed or model._no_friction)[2], Q, V, A, float(tol),
             packed is not None, bool(damped), scratch, TAU, F, TAUF, FEXT)
    with np.errstate(over="ignore", invalid="ignore"):  # the check itself may overflow
        total = TAU.sum() + F.sum() + TAUF.sum()
    if not math.isfinite(total):
        _overflow(model, Q, V, A, friction, tol, where, TAU, F, TAUF, FEXT=FEXT, damping=damped)
    return Q, V, A, TAU, F, TAUF


def _overflow(model, Q, V, A, friction, tol, where, *outputs, FEXT=None, damping=False):
    """After a non-finite sum: find the first sample with a non-finite result and name the
    entries responsible (the single-sample entry point's search), or return (the sum itself
    overflowed, every entry is finite)."""
    bad = ~np.isfinite(outputs[0]).all(axis=1)
    for X in outputs[1:]:
        bad |= ~np.isfinite(X.reshape(len(X), -1)).all(axis=1)
    rows = np.flatnonzero(bad)
    if not len(rows):
        return
    from robot_dynamics.algorithm.inverse_dynamics import inverse_dynamics

    k = int(rows[0])
    data = model.create_data()

    def finite(q, v, a):
        try:
            inverse_dynamics(model, data, q, v, a, friction, velocity_tolerance=tol,
                             fext=FEXT[k] if FEXT is not None and len(FEXT) else None,
                             damping=damping)
        except InputError:
            return False
        return True

    raise_overflow(f"{where} (the first of {len(rows)} sample(s) with non-finite results)",
                   [("Q", Q[k]), ("V", V[k]), ("A", A[k])], finite, batch_row=k)


@by_model
def rnea_batch(model, Q, V, A, FEXT=None) -> np.ndarray:
    """Frictionless inverse dynamics for every sample: (N, nv); ``FEXT`` (N, nv, 6) the
    external wrenches (see the module docstring)."""
    return _run(model, Q, V, A, where="rnea_batch", FEXT=FEXT)[3]


@by_model
def joint_wrenches_batch(model, Q, V, A, FEXT=None) -> np.ndarray:
    """Joint wrenches fn (seed 004) for every sample: (N, nv, 6), joint frames; ``FEXT``
    (N, nv, 6) the external wrenches (see the module docstring)."""
    return _run(model, Q, V, A, where="joint_wrenches_batch", FEXT=FEXT)[4]


@by_model
def inverse_dynamics_batch(model, Q, V, A, friction=None, *, velocity_tolerance=1e-6,
                           return_friction=False, FEXT=None, damping=True):
    """Friction-aware inverse dynamics (seed 004 §2.7) for every sample: (N, nv) motor efforts,
    with the URDF damping d∘q̇ unless ``damping=False`` (the motor effort of
    :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics`, issue 33).
    ``FEXT`` (N, nv, 6): the external wrenches (see the module docstring).

    Same convention as :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics` at q̇ = 0 (the
    commanded acceleration's direction). With ``return_friction`` also returns τf (N, nv).
    """
    if damping is not True and damping is not False:
        damping = check_damping(damping, "inverse_dynamics_batch")
    python_laws = friction is not None and friction._packed is None
    Q, V, A, TAU, F, TAUF = _run(model, Q, V, A, friction, velocity_tolerance,
                                 "inverse_dynamics_batch", FEXT, damping and not python_laws)
    if python_laws:
        # Python laws: sample by sample through the reference path
        for k in range(Q.shape[0]):
            d = np.where(np.abs(V[k]) > velocity_tolerance, np.sign(V[k]), np.sign(A[k]))
            TAUF[k] = -friction.magnitudes(model, F[k], Q[k], V[k], d) * d
        TAU = TAU - TAUF
        if damping:  # after the friction, as inverse_dynamics' statement
            TAU += damping_effort(model, V)
        with np.errstate(over="ignore", invalid="ignore"):
            total = TAU.sum() + TAUF.sum()
        if not math.isfinite(total):
            _overflow(model, Q, V, A, friction, velocity_tolerance, "inverse_dynamics_batch",
                      TAU, TAUF, FEXT=None if FEXT is None else np.asarray(FEXT, dtype=float),
                      damping=damping)
    return (TAU, TAUF) if return_friction else TAU
