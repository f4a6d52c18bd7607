"""Forward dynamics with reaction-dependent joint friction — seed 004 §2.8 (simulation).

Given (q, q̇) and the motor efforts, find q̈. Without friction: ``q̈ = M⁻¹ (τ − b)``. With
friction the friction efforts depend on the joint reactions, which depend on q̈ (eq. 2.3.7), so
the seed iterates: perfect reactions from the motor efforts, friction from those reactions,
reactions again from motor + friction, … until it converges. :mod:`robot_dynamics.stiction`
implements that iteration, a Newton fallback when it does not converge, and what the seed leaves
open — joints at rest that stick or break away. ``data.fd_report`` says which method answered,
in how many iterations, with what residual, and which joints are stuck.
"""
from __future__ import annotations

import numpy as np

from .crba import bias_forces, mass_matrix
from . import mimic
from .directors import wrench_directors
from .errors import as_vector
from .kernels.fd import fd_entry
from .model import Data
from .stiction import FrictionSolveError, FrictionSolveReport, solve_with_friction


_COMPILED = Data.compiled_report


def forward_dynamics(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                     velocity_tolerance=1e-9, on_failure="raise") -> np.ndarray:
    """Joint accelerations q̈ (nv,) under motor efforts ``tau``, gravity and friction.

    Joints with ``|q̇_i| ≤ velocity_tolerance`` are at rest: they stick while friction can hold
    them. Sets ``data.tau_friction`` (τf, stuck joints' holding effort included) and
    ``data.fd_report`` (:class:`~robot_dynamics.stiction.FrictionSolveReport`). When the solve
    fails it raises :class:`~robot_dynamics.stiction.FrictionSolveError`, or, with
    ``on_failure="report"``, returns its best estimate with ``data.fd_report.converged == False``.

    Friction made of built-in laws (or none) runs as one compiled call (:mod:`.kernels.fd`);
    other laws run the steps below in Python, which state the same computation.
    """
    if model.coupling is not None:  # mimic joints (robot_dynamics/mimic.py)
        return mimic.forward_dynamics(model, data, q, v, tau, friction, tol=tol, max_iter=max_iter,
                                      velocity_tolerance=velocity_tolerance,
                                      on_failure=on_failure)
    packed = model._no_friction if friction is None else friction._packed
    if packed is not None:
        try:
            status = fd_entry(model._mb, packed[2], q, v, tau, velocity_tolerance, tol, max_iter,
                              data._work)
        except TypeError:  # not float64 vectors: converted (or reported) below
            status = 1
        if status == 1:
            q = as_vector("q", q, model.nq, where="forward_dynamics")
            v = as_vector("v", v, model.nv, where="forward_dynamics")
            tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
            status = fd_entry(model._mb, packed[2], q, v, tau, float(velocity_tolerance),
                              float(tol), int(max_iter), data._work)
        data._report = _COMPILED  # built when read (Data.fd_report)
        if status == 2 and on_failure == "raise":
            raise FrictionSolveError(data.fd_report)
        return data._acc.copy()
    return forward_dynamics_reference(model, data, q, v, tau, friction, tol=tol,
                                      max_iter=max_iter, velocity_tolerance=velocity_tolerance,
                                      on_failure=on_failure, reference_solver=False)


def forward_dynamics_reference(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                               velocity_tolerance=1e-9, on_failure="raise",
                               reference_solver=True) -> np.ndarray:
    """:func:`forward_dynamics` step by step: b and fn(q, q̇, 0), M, the directors, the friction
    solve (in Python with ``reference_solver``) — the specification of the fused kernel."""
    if model.coupling is not None:  # mimic joints (robot_dynamics/mimic.py)
        return mimic.forward_dynamics(model, data, q, v, tau, friction, tol=tol, max_iter=max_iter,
                                      velocity_tolerance=velocity_tolerance,
                                      on_failure=on_failure)
    q = as_vector("q", q, model.nq, where="forward_dynamics")
    v = as_vector("v", v, model.nv, where="forward_dynamics")
    tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
    bias = bias_forces(model, data, q, v)
    W0 = data.f.copy()  # fn(q, q̇, 0)
    M = mass_matrix(model, data, q)
    if friction is None or not friction.active.any():
        a = np.linalg.solve(M, tau - bias)
        data.tau_friction[:] = 0.0
        data.fd_report = FrictionSolveReport()
        return a
    D = wrench_directors(model, data)  # uses the composite inertias mass_matrix left in data
    a, tauf, report = solve_with_friction(model, friction, q, v, tau, M, bias, W0, D, h=0.0,
                                          v_tol=velocity_tolerance, tol=tol, max_iter=max_iter,
                                          reference=reference_solver)
    data.tau_friction[:] = tauf
    data.fd_report = report
    if not report.converged and on_failure == "raise":
        raise FrictionSolveError(report)
    return a
