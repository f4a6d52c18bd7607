"""Mimic joints: the algorithms on a :class:`~robot_dynamics.multibody.coupling.MimicModel`.

Every body still moves with its own joint, so the algorithms run on the full tree
(``model.full``) at the expanded state and the principle of virtual power maps efforts back with
``Gᵀ`` (docs/method.md, "coupled joints"):

* inverse dynamics (§2.7): ``τ_motor = Gᵀ (fn∥_full − τf_full + d_full∘q̇_full) + armature ∘ q̈``
  (the URDF damping unless ``damping=False``: Gᵀ diag(d_full) G = diag(``model.damping``));
* mass matrix and bias: ``M = Gᵀ M_full G + diag(armature)``, ``b = Gᵀ b_full(G q + o, G q̇)``;
* forward dynamics (§2.8): ``M q̈ = τ − b + Gᵀ τf_full`` with the friction of
  :class:`~robot_dynamics.friction.coupled.CoupledFriction` (a follower sticks with its leader).

External efforts (``fext``) on a mimic model are given per body of the full tree:
shape ``(n_full, 6)``, row i the wrench on the body of ``model.full_joint_names[i]`` (its frame,
about its origin; batch: ``FEXT`` (N, n_full, 6)) — a follower's body is a body of its own even
though it has no coordinate. They enter the full tree's recursions and map back with ``Gᵀ``.

This module is the coupling layer: it imports the algorithms and registers its versions with
them (``multibody.dispatch.by_model`` on the model's class); no algorithm imports it. Importing
:mod:`robot_dynamics.algorithm` registers them.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm import aggregated, batch, crba, directors, kinematics
from robot_dynamics.algorithm import forward_dynamics as forward_dynamics_mod
from robot_dynamics.algorithm import inverse_dynamics as inverse_dynamics_mod
from robot_dynamics.algorithm import rnea as rnea_mod
from robot_dynamics.algorithm.friction_solve import (FrictionSolveError, FrictionSolveReport,
                                                     _solve_compiled, solve_with_friction)
from robot_dynamics.errors import ModelError, as_batch, as_vector, check_data
from robot_dynamics.friction.coupled import coupled_friction
from robot_dynamics.multibody.coupling import MimicModel, _Packable


def _expand(model, q, v=None, a=None, where=""):
    out = [model.coupling @ as_vector("q", q, model.nq, where=where) + model.coupling_offset]
    for name, x in (("v", v), ("a", a)):
        if x is not None:
            out.append(model.coupling @ as_vector(name, x, model.nv, where=where))
    return out


def rnea(model, data, q, v, a, fext=None, full=rnea_mod.rnea) -> np.ndarray:
    """τ = Gᵀ τ_full(G q + o, G q̇, G q̈, fext) + armature ∘ q̈; fills ``data.f`` (every full
    joint's wrench). ``fext``: (n_full, 6), per body of the full tree."""
    qf, vf, af = _expand(model, q, v, a, where="rnea")
    tau_full = (full(model.full, data.full, qf, vf, af) if fext is None
                else full(model.full, data.full, qf, vf, af, fext))
    data.tau[:] = model.coupling.T @ tau_full
    _add_rotor_effort(model, data, a)
    return data.tau.copy()


def _add_rotor_effort(model, data, a) -> None:
    """data.tau += armature ∘ q̈ of the coordinates (``a`` already validated by _expand)."""
    if model.armature.any():
        data.tau += model.armature * np.asarray(a, dtype=float)


def mass_matrix(model, data, q, full=crba.mass_matrix) -> np.ndarray:
    """M = Gᵀ M_full(G q + o) G + diag(armature); fills the full tree's composite inertias in
    ``data.full``."""
    (qf,) = _expand(model, q, where="mass_matrix")
    G = model.coupling
    data.M[:] = G.T @ full(model.full, data.full, qf) @ G
    data.M[np.diag_indices(model.nv)] += model.armature
    return data.M.copy()


def efforts_at(model, data, q, v, which) -> np.ndarray:
    """Gᵀ of the full model's bias / gravity / Coriolis efforts at the expanded state."""
    if which == "gravity_torques":
        (qf,) = _expand(model, q, where=which)
        return model.coupling.T @ crba.gravity_torques(model.full, data.full, qf)
    qf, vf = _expand(model, q, v, where=which)
    return model.coupling.T @ getattr(crba, which)(model.full, data.full, qf, vf)


def wrench_directors(model, data, q=None, full=directors.wrench_directors,
                     full_mass_matrix=crba.mass_matrix) -> np.ndarray:
    """Coordinate directors ``D̃`` (nv, n_full, 6): ``D̃[β, i] = Σ_α G_αβ pl_α[i]`` — the wrench
    of full joint i for a unit q̈_β (eq. 2.3.7 through the coupling)."""
    if q is not None:
        mass_matrix(model, data, q, full=full_mass_matrix)
    D = full(model.full, data.full)
    return np.tensordot(model.coupling.T, D, axes=(1, 0))


def forward_kinematics(model, data, q) -> None:
    (qf,) = _expand(model, q, where="forward_kinematics")
    kinematics.forward_kinematics(model.full, data.full, qf)


def inverse_dynamics(model, data, q, v, a, friction=None, *,
                     full=inverse_dynamics_mod.inverse_dynamics, **options) -> np.ndarray:
    """Seed 004 §2.7 through the coupling: ``τ_motor = Gᵀ (fn∥_full − τf_full + d_full∘q̇_full)
    + armature ∘ q̈`` with every full joint's friction from its own wrench at the expanded state
    (options as the full model's
    :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics`; ``damping=True``: the
    full joints' URDF damping, whose Gᵀ·G image is ``model.damping∘q̇``, what the Simulator
    applies to the coordinates)."""
    qf, vf, af = _expand(model, q, v, a, where="inverse_dynamics")
    fr = coupled_friction(friction, model)
    out = full(model.full, data.full, qf, vf, af, None if fr is None else fr.full, **options)
    G = model.coupling
    data.tau_friction[:] = G.T @ data.full.tau_friction
    data.tau[:] = G.T @ out
    _add_rotor_effort(model, data, a)
    return data.tau.copy()


def forward_dynamics(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                     velocity_tolerance=1e-9, on_failure="raise", fext=None, damping=True,
                     **_ignored) -> np.ndarray:
    """Seed 004 §2.8 in the independent coordinates: ``M q̈ = τ − d∘q̇ − b + Gᵀ τf_full`` (the
    damping term with ``damping=True``: ``model.damping``, the Gᵀ·G image of the full joints'
    URDF damping, as inverse dynamics adds it; False: none) with the
    reference stick/slip solver over :class:`CoupledFriction` (a follower sticks with its
    leader) — or, when no follower has friction of its own (``step_pack``), the compiled solve
    on the leaders' loads, equal to it (tested to 1e-10) and faster. Sets
    ``data.tau_friction`` (coordinates) and ``data.fd_report``. ``fext`` (n_full, 6), per body
    of the full tree, enters b and fn_full(q, q̇, 0)."""
    if model.mass_matrix_problem is not None:  # no inverse of M: the reason, from build_model
        raise ModelError(model.mass_matrix_problem)
    q = as_vector("q", q, model.nq, where="forward_dynamics")
    v = as_vector("v", v, model.nv, where="forward_dynamics")
    tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
    if inverse_dynamics_mod.check_damping(damping, "forward_dynamics"):  # the coordinates feel −d∘q̇ (issue 33)
        tau = tau - inverse_dynamics_mod.damping_effort(model, v)
    if fext is None:
        bias = efforts_at(model, data, q, v, "bias_forces")
    else:  # b = Gᵀ rnea_full(q, q̇, 0, fext), and the joint wrenches that carry fext
        qf, vf = _expand(model, q, v, where="forward_dynamics")
        bias = model.coupling.T @ rnea_mod.rnea(model.full, data.full, qf, vf,
                                                np.zeros(model.full.nv), fext)
    W0 = data.full.f.copy()  # fn_full(q, q̇, 0) at the expanded state
    M = mass_matrix(model, data, q)
    fr = coupled_friction(friction, model)
    if fr is None or not fr.active.any():
        a = np.linalg.solve(M, tau - bias)
        data.tau_friction[:] = 0.0
        data.fd_report = FrictionSolveReport()
        return a
    D = wrench_directors(model, data)
    if fr.step_pack is not None:  # no follower with friction: the compiled solve, in the
        # coordinates with the leaders' loads (as the Simulator's compiled step)
        lead = model.independent
        a, tauf, report = _solve_compiled(
            model._solve_view, _Packable(_packed=fr.step_pack), q, v, tau, M, bias, W0[lead],
            D[:, lead], 0.0, velocity_tolerance, tol, max_iter, np.full(model.nv, -np.inf),
            np.full(model.nv, np.inf))
        if report.converged:
            report.wrenches = W0 + np.tensordot(a, D, axes=(0, 0))  # every full joint's
    else:
        a, tauf, report = solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=0.0,
                                              v_tol=velocity_tolerance, tol=tol,
                                              max_iter=max_iter, reference=True)
    data.tau_friction[:] = tauf
    data.fd_report = report
    if not report.converged and on_failure == "raise":
        raise FrictionSolveError(report)
    return a


def _expand_batch(model, Q, V, A, where):
    """Samples of the coordinates (N, nv) → of every full joint (N, n_full), and A itself."""
    G = model.coupling
    Q = as_batch("Q", Q, model.nq, where=where)
    V = as_batch("V", V, model.nv, where=where)
    A = as_batch("A", A, model.nv, where=where)
    return Q @ G.T + model.coupling_offset, V @ G.T, A @ G.T, A


def rnea_batch(model, Q, V, A, FEXT=None) -> np.ndarray:
    """τ = Gᵀ τ_full + armature ∘ q̈ for every sample: (N, nv); ``FEXT`` (N, n_full, 6)."""
    Qf, Vf, Af, A = _expand_batch(model, Q, V, A, "rnea_batch")
    return batch.rnea_batch(model.full, Qf, Vf, Af, FEXT) @ model.coupling + A * model.armature


def joint_wrenches_batch(model, Q, V, A, FEXT=None) -> np.ndarray:
    """Every full joint's wrench for every sample: (N, n_full, 6) (as ``data.f`` of a mimic
    model holds every full joint's); ``FEXT`` (N, n_full, 6)."""
    return batch.joint_wrenches_batch(model.full, *_expand_batch(model, Q, V, A,
                                                                  "joint_wrenches_batch")[:3],
                                      FEXT)


def inverse_dynamics_batch(model, Q, V, A, friction=None, *, velocity_tolerance=1e-6,
                           return_friction=False, FEXT=None, damping=True):
    """:func:`inverse_dynamics` for every sample: ``Gᵀ (fn∥_full − τf_full + d_full∘q̇_full)
    + armature ∘ q̈``; ``FEXT`` (N, n_full, 6)."""
    Qf, Vf, Af, A = _expand_batch(model, Q, V, A, "inverse_dynamics_batch")
    fr = coupled_friction(friction, model)
    tau, tauf = batch.inverse_dynamics_batch(model.full, Qf, Vf, Af,
                                             None if fr is None else fr.full,
                                             velocity_tolerance=velocity_tolerance,
                                             return_friction=True, FEXT=FEXT, damping=damping)
    G = model.coupling
    tau = tau @ G + A * model.armature
    return (tau, tauf @ G) if return_friction else tau


def aggregate(model, data, q, v, fext=None):
    raise ModelError(
        f"aggregate: robot {model.name!r} has mimic joints, and seed 004's aggregated vectors are "
        "per body of a tree of independent joints: use the full tree, "
        "aggregate(model.full, model.full.create_data(), model.expand(q), "
        "model.expand_velocity(v))")


# -- registration: the public algorithms call these for a MimicModel ------------------------
def _register(public, impl, where):
    def checked(model, data, *args, **kwargs):
        if getattr(data, "_model", None) is not model:
            check_data(model, data, where)
        return impl(model, data, *args, **kwargs)

    public.register(MimicModel, checked)


_register(rnea_mod.rnea, rnea, "rnea")
_register(crba.mass_matrix, mass_matrix, "mass_matrix")
_register(crba.bias_forces, lambda m, d, q, v: efforts_at(m, d, q, v, "bias_forces"),
          "bias_forces")
_register(crba.gravity_torques, lambda m, d, q: efforts_at(m, d, q, None, "gravity_torques"),
          "gravity_torques")
_register(crba.coriolis_torques, lambda m, d, q, v: efforts_at(m, d, q, v, "coriolis_torques"),
          "coriolis_torques")
_register(directors.wrench_directors, wrench_directors, "wrench_directors")
_register(kinematics.forward_kinematics, forward_kinematics, "forward_kinematics")
_register(inverse_dynamics_mod.inverse_dynamics, inverse_dynamics, "inverse_dynamics")
_register(forward_dynamics_mod.forward_dynamics, forward_dynamics, "forward_dynamics")
_register(forward_dynamics_mod.forward_dynamics_steps,
          lambda m, d, q, v, tau, friction=None, *, reference_solver=True, **kw:
          forward_dynamics(m, d, q, v, tau, friction, **kw), "forward_dynamics")
for _public, _impl in ((batch.rnea_batch, rnea_batch),
                       (batch.joint_wrenches_batch, joint_wrenches_batch),
                       (batch.inverse_dynamics_batch, inverse_dynamics_batch),
                       (aggregated.aggregate, aggregate)):
    _public.register(MimicModel, _impl)
