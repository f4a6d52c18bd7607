"""Forward dynamics with reaction-dependent joint friction — seed 004 §2.8 (simulation).

Given (q, q̇) and the motor efforts, find q̈. Without friction: ``q̈ = M⁻¹ (τ − b)``. With
friction the friction efforts depend on the joint reactions, which depend on q̈ (eq. 2.3.7), so
the seed iterates: perfect reactions from the motor efforts, friction from those reactions,
reactions again from motor + friction, … until it converges. :mod:`robot_dynamics.algorithm.friction_solve`
implements that iteration, a Newton fallback when it does not converge, and what the seed leaves
open — joints at rest that stick or break away. ``data.fd_report`` says which method answered,
in how many iterations, with what residual, and which joints are stuck.

Joint damping (issue 33, docs/identification.md "What a joint effort contains"): ``tau`` is the
motor effort as :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics` states it,
``fn∥ + armature∘q̈ − τf + d∘q̇`` with d the URDF ``<dynamics damping>`` (``model.damping``).
With ``damping=True`` (the default) the joints feel −d∘q̇ as well, so forward dynamics inverts
inverse dynamics (``forward_dynamics(…, inverse_dynamics(q, q̇, q̈, …)) == q̈``, both with their
default). The term is explicit, taken at the given q̇: ``M q̈ = τ − d∘q̇ − b + τf``.
``damping=False`` applies none (Pinocchio's ``aba``; the numbers of the package before, to the
bit). :class:`~robot_dynamics.simulation.simulator.Simulator` (``damping=True``) applies the same
term implicitly in its step, −d∘(q̇ + h q̈) = −d∘q̇⁺ (kernels/fd.py ``_step``): a property of
the time step, which differs from the explicit −d∘q̇ here by h d∘q̈, O(h).

External efforts (``fext``, (nv, 6), Pinocchio's convention: see
:mod:`robot_dynamics.algorithm.rnea`) enter the bias b and the joint wrenches fn(q, q̇, 0) that
the friction laws read (the stick/slip solve and the articulated solve included); the mass
matrix and the wrench directors pl_α do not depend on them.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import ModelError

from robot_dynamics.algorithm.crba import bias_forces, mass_matrix
from robot_dynamics.algorithm.directors import wrench_directors
from robot_dynamics.errors import (InputError, as_vector, check_data, check_friction,
    raise_overflow, real_array)
from robot_dynamics.kernels.fd import OVERFLOW, fd_checked, fd_fext_checked
from robot_dynamics.algorithm.rnea import check_fext, rnea
from robot_dynamics.algorithm.inverse_dynamics import check_damping, damping_effort
from robot_dynamics.algorithm.friction_solve import (FrictionSolveError, FrictionSolveReport,
                                                     report_from_work,
    solve_with_friction)


@by_model
def forward_dynamics(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                     velocity_tolerance=1e-9, on_failure="raise", fext=None,
                     damping=True) -> np.ndarray:
    """Joint accelerations q̈ (nv,) under motor efforts ``tau``, gravity, friction and (with
    ``damping=True``, the default) the URDF joint damping −d∘q̇ at the given q̇.

    Joints with ``|q̇_i| ≤ velocity_tolerance`` are at rest: they stick while friction can hold
    them. Sets ``data.tau_friction`` (τf, stuck joints' holding effort included) and
    ``data.fd_report`` (:class:`~robot_dynamics.algorithm.friction_solve.FrictionSolveReport`). When the solve
    fails it raises :class:`~robot_dynamics.algorithm.friction_solve.FrictionSolveError`, or, with
    ``on_failure="report"``, returns its best estimate with ``data.fd_report.converged == False``.
    Inputs too large for a finite result raise :class:`~robot_dynamics.errors.InputError`
    (``overflow: …``, naming them).

    Friction made of built-in laws (or none) runs as one compiled call (:mod:`.kernels.fd`);
    other laws run the steps below in Python, which state the same computation.

    ``fext`` (nv, 6), optional: the external wrench on each body, body frame, about its origin
    (Pinocchio's ``fext``, as ``pin.aba(…, fext)``).

    ``damping``: ``tau`` contains d∘q̇ (``model.damping``, the URDF ``<dynamics damping>``), as
    inverse dynamics' default states it: the solve runs on ``tau − d∘q̇``, so that
    ``forward_dynamics(inverse_dynamics(q, q̇, q̈)) == q̈``. ``False``: no damping (as
    ``pin.aba``; the numbers of before issue 33 to the bit).
    """
    if damping is not True and damping is not False:
        damping = check_damping(damping, "forward_dynamics")
    if getattr(model, "mass_matrix_problem", None):  # no inverse of M: the reason (build_model)
        raise ModelError(model.mass_matrix_problem)
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "forward_dynamics")
    if friction is None:
        packed = model._no_friction
    else:
        if getattr(friction, "_model", None) is not model:
            check_friction(model, friction, "forward_dynamics")
        packed = friction._packed
    if fext is not None:
        if packed is None:
            return forward_dynamics_steps(model, data, q, v, tau, friction, tol=tol,
                                          max_iter=max_iter, velocity_tolerance=velocity_tolerance,
                                          on_failure=on_failure, reference_solver=False, fext=fext,
                                          damping=damping)
        try:  # as below; the kernel checks fext's shape and finiteness too
            status = fd_fext_checked(model._mb, packed[2], q, v, tau, fext, velocity_tolerance,
                                     tol, max_iter, data._work, damping)
        except TypeError:
            status = 1
        except np.linalg.LinAlgError:
            status = OVERFLOW
        if status == 1 or status == OVERFLOW:
            status = _fd_converted(model, data, packed[2], q, v, tau, float(velocity_tolerance),
                                   float(tol), int(max_iter), damping,
                                   check_fext(model, fext, "forward_dynamics"))
        data._report = report_from_work
        if status == 2 and on_failure == "raise":
            raise FrictionSolveError(data.fd_report)
        return data._acc.copy()
    if packed is not None:
        try:  # numba's explicit signature takes float64 C vectors only (it converts the
            # scalars as float() / int() do); the kernel checks their length and finiteness
            status = fd_checked(model._mb, packed[2], q, v, tau, velocity_tolerance, tol,
                                max_iter, data._work, damping)
        except TypeError:  # lists, other dtypes or layouts, objects that are not arrays
            status = 1
        except np.linalg.LinAlgError:  # non-finite matrices in the solve: name the culprit below
            status = OVERFLOW
        if status == 1 or status == OVERFLOW:
            status = _fd_converted(model, data, packed[2], q, v, tau, float(velocity_tolerance),
                                   float(tol), int(max_iter), damping)
        data._report = report_from_work  # built when read (Data.fd_report)
        if status == 2 and on_failure == "raise":
            raise FrictionSolveError(data.fd_report)
        return data._acc.copy()
    return forward_dynamics_steps(model, data, q, v, tau, friction, tol=tol,
                                  max_iter=max_iter, velocity_tolerance=velocity_tolerance,
                                  on_failure=on_failure, reference_solver=False, damping=damping)


def _fd_converted(model, data, fr, q, v, tau, v_tol, tol, max_iter, damped,
                  fext=None) -> int:
    """The compiled forward dynamics on inputs converted to float64 C vectors (as
    :func:`~robot_dynamics.errors.run_converted`: the kernel checks them; only when it refuses
    are they examined, or the culprit of an overflow named)."""

    def run(q, v, tau):
        try:
            if fext is not None:
                return fd_fext_checked(model._mb, fr, q, v, tau, fext, v_tol, tol, max_iter,
                                       data._work, damped)
            return fd_checked(model._mb, fr, q, v, tau, v_tol, tol, max_iter, data._work,
                              damped)
        except np.linalg.LinAlgError:  # non-finite matrices in the solve (huge inputs)
            return OVERFLOW

    try:
        status = run(*(real_array(x) for x in (q, v, tau)))
    except (TypeError, ValueError):  # ragged, 2-D (no kernel signature), not numbers
        status = 1
    if status == 0 or status == 2:
        return status
    q = as_vector("q", q, model.nq, where="forward_dynamics")
    v = as_vector("v", v, model.nv, where="forward_dynamics")
    tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
    status = run(q, v, tau)
    if status == OVERFLOW:
        raise_overflow("forward_dynamics", [("q", q), ("v", v), ("tau", tau)],
                       lambda q, v, tau: run(q, v, tau) != OVERFLOW)
    return status


@by_model
def forward_dynamics_steps(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                           velocity_tolerance=1e-9, on_failure="raise",
                           reference_solver=True, fext=None, damping=True) -> np.ndarray:
    """:func:`forward_dynamics` step by step in Python: the damped efforts τ − d∘q̇ (with
    ``damping``), b and fn(q, q̇, 0), M, the directors, the friction solve (its Python statement with ``reference_solver``, else the compiled solve when
    the laws allow). The path of friction laws the kernels do not know;
    :func:`robot_dynamics.reference.forward_dynamics.forward_dynamics` is it with the Python
    solve, the statement of the fused kernel."""
    if getattr(model, "mass_matrix_problem", None):  # no inverse of M: the reason (build_model)
        raise ModelError(model.mass_matrix_problem)
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "forward_dynamics")
    check_friction(model, friction, "forward_dynamics")
    q = as_vector("q", q, model.nq, where="forward_dynamics")
    v = as_vector("v", v, model.nv, where="forward_dynamics")
    tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
    if fext is not None:
        fext = check_fext(model, fext, "forward_dynamics")
    args = (model, data, friction, tol, max_iter, velocity_tolerance, reference_solver, fext,
            check_damping(damping, "forward_dynamics"))
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below
            a, report = _fd_steps(q, v, tau, *args)
    except InputError as exc:  # b or M overflowed: name the input as forward_dynamics' own
        if not str(exc).startswith("overflow:"):
            raise
        a = None
    except np.linalg.LinAlgError:  # a non-finite matrix in the friction solve: named below
        a = None
    if a is None or not (np.isfinite(a).all() and np.isfinite(data.tau_friction).all()):
        raise_overflow("forward_dynamics", [("q", q), ("v", v), ("tau", tau)],
                       lambda q, v, tau: _fd_finite(q, v, tau, *args))
    if not report.converged and on_failure == "raise":
        raise FrictionSolveError(report)
    return a


def _fd_steps(q, v, tau, model, data, friction, tol, max_iter, velocity_tolerance,
              reference_solver, fext=None, damping=False):
    if damping:  # the joints feel −d∘q̇ (kernels/fd.py fd_core's ``damped``)
        tau = tau - damping_effort(model, v)
    if fext is None:
        bias = bias_forces(model, data, q, v)
    else:  # b and fn(q, q̇, 0) carry the external wrenches (rnea at q̈ = 0)
        bias = rnea(model, data, q, v, np.zeros(model.nv), fext)
    W0 = data.f.copy()  # fn(q, q̇, 0)
    M = mass_matrix(model, data, q)
    if friction is None or not friction.active.any():
        data.tau_friction[:] = 0.0
        data.fd_report = FrictionSolveReport()
        return np.linalg.solve(M, tau - bias), data.fd_report
    D = wrench_directors(model, data)  # uses the composite inertias mass_matrix left in data
    a, tauf, report = solve_with_friction(model, friction, q, v, tau, M, bias, W0, D, h=0.0,
                                          v_tol=velocity_tolerance, tol=tol, max_iter=max_iter,
                                          reference=reference_solver)
    data.tau_friction[:] = tauf
    data.fd_report = report
    return a, report


def _fd_finite(q, v, tau, *args) -> bool:
    """Whether :func:`_fd_steps` gives finite q̈ and τf (the culprit search's test)."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            a, _ = _fd_steps(q, v, tau, *args)
    except (InputError, np.linalg.LinAlgError):
        return False
    return bool(np.isfinite(a).all() and np.isfinite(args[1].tau_friction).all())
