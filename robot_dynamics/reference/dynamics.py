"""The dynamics kernels written out in NumPy, joint by joint: the statements of
kernels/dynamics.py (``rnea_kernel``, ``crba_kernel``, ``directors_kernel``) and of
kernels/friction.py's ``id_entry`` (inverse dynamics with friction and the URDF damping) that
the public algorithms run compiled. Same signatures as the public functions; tested against
them.

A mimic model goes through the coupling as the public functions do
(:mod:`robot_dynamics.algorithm.coupled`), with these statements on the full tree.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.algorithm import coupled
from robot_dynamics.errors import as_vector, as_wrenches, check_data
from robot_dynamics.multibody.coupling import MimicModel
from robot_dynamics.reference.kinematics import placements
from robot_dynamics.spatial.algebra import force_cross, motion_cross


@by_model
def rnea(model, data, q, v, a, fext=None) -> np.ndarray:
    """:func:`robot_dynamics.algorithm.rnea.rnea` written out in NumPy, joint by joint (seed 004
    §2.2–2.3: forward pass of velocities and accelerations, body efforts, backward pass E → J).
    ``fext`` (nv, 6): the external wrench on each body (body frame, about its origin), taken
    off the body's balance: f_i = I a_i + v_i ×* I v_i − f_i^ext (docs/method.md §1b)."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "reference rnea")
    q = as_vector("q", q, model.nq, where="rnea")
    v = as_vector("v", v, model.nv, where="rnea")
    a = as_vector("a", a, model.nv, where="rnea")
    if fext is not None:
        fext = as_wrenches("fext", fext, model.nv, where="rnea", names=model.link_names)
    return _rnea(model, data, q, v, a, model.gravity, fext)


def _rnea(model, data, q, v, a, gravity, fext=None) -> np.ndarray:
    placements(model, data, q)
    a0 = np.concatenate([-gravity, np.zeros(3)])
    for i in range(model.nv):
        p = model.parents[i]
        S = data.S[i]
        vp = data.v[p] if p >= 0 else np.zeros(6)
        ap = data.a[p] if p >= 0 else a0
        X = data.X[i]
        data.v[i] = X @ vp + S * v[i]
        data.a[i] = X @ ap + S * a[i] + motion_cross(data.v[i]) @ (S * v[i])
        inertia = model.spatial_inertias[i]
        data.f[i] = inertia @ data.a[i] + force_cross(data.v[i]) @ (inertia @ data.v[i])
        if fext is not None:
            data.f[i] -= fext[i]  # the environment's wrench on body i
    for i in range(model.nv - 1, -1, -1):
        data.tau[i] = data.S[i] @ data.f[i]
        p = model.parents[i]
        if p >= 0:
            data.f[p] += data.X[i].T @ data.f[i]
    data.tau += model.armature * a  # the rotors: τ = fn∥ + armature ∘ q̈ (fn excludes them)
    return data.tau.copy()


@by_model
def inverse_dynamics(model, data, q, v, a, friction=None, *, velocity_tolerance=1e-6, fext=None,
                     damping=True) -> np.ndarray:
    """:func:`robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics` written out: the
    motor effort of seed 004 §2.7 (eq. 2.7.5) plus the URDF damping (issue 33),

        τ = fn∥ + armature∘q̈ − τf + d∘q̇,

    fn∥ + armature∘q̈ from :func:`rnea` (its joint wrenches ``data.f`` feed the friction laws),
    τf = −|τf|·dir signed against q̇ (against q̈ at rest: |q̇| ≤ ``velocity_tolerance``),
    d = ``model.damping`` when ``damping``. Fills ``data.tau_friction``."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "reference inverse_dynamics")
    q = as_vector("q", q, model.nq, where="inverse_dynamics")
    v = as_vector("v", v, model.nv, where="inverse_dynamics")
    a = as_vector("a", a, model.nv, where="inverse_dynamics")
    tau = rnea(model, data, q, v, a, fext)  # step 1: fn∥ + armature∘q̈, and the wrenches fn
    data.tau_friction[:] = 0.0
    if friction is not None:  # steps 2–4: the friction map on the reactions, against the motion
        direction = np.where(np.abs(v) > velocity_tolerance, np.sign(v), np.sign(a))
        data.tau_friction[:] = -friction.magnitudes(model, data.f, q, v, direction) * direction
        tau = tau - data.tau_friction
    if damping:  # the URDF damping the motor works against
        tau = tau + model.damping * v
    return tau


@by_model
def mass_matrix(model, data, q) -> np.ndarray:
    """The composite rigid body algorithm written out in NumPy: the statement of
    :func:`robot_dynamics.algorithm.crba.mass_matrix`."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "reference mass_matrix")
    q = as_vector("q", q, model.nq, where="mass_matrix")
    placements(model, data, q)
    n = model.nv
    data.Ic[:] = model.spatial_inertias
    for i in range(n - 1, -1, -1):
        p = model.parents[i]
        if p >= 0:
            data.Ic[p] += data.X[i].T @ data.Ic[i] @ data.X[i]
    M = data.M
    M[:] = np.diag(model.armature)  # the rotors (reflected inertia) on the diagonal
    for i in range(n):
        F = data.Ic[i] @ data.S[i]
        M[i, i] += data.S[i] @ F
        j = i
        while model.parents[j] >= 0:
            F = data.X[j].T @ F
            j = model.parents[j]
            M[i, j] = M[j, i] = data.S[j] @ F
    return M.copy()


@by_model
def wrench_directors(model, data, q=None) -> np.ndarray:
    """:func:`robot_dynamics.algorithm.directors.wrench_directors` written out in NumPy: the wrench
    of every joint for a unit q̈_α (eq. 2.3.7), with the composite inertias of
    :func:`mass_matrix` (run first when ``q`` is given)."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "reference wrench_directors")
    if q is not None:
        mass_matrix(model, data, q)
    n = model.nv
    D = np.zeros((n, n, 6))
    motion = np.zeros((n, 6))
    for alpha in range(n):
        F = data.Ic[alpha] @ data.S[alpha]
        D[alpha, alpha] = F
        j = alpha
        while model.parents[j] >= 0:
            F = data.X[j].T @ F
            j = model.parents[j]
            D[alpha, j] = F
        inside = np.zeros(n, dtype=bool)
        inside[alpha] = True
        motion[alpha] = data.S[alpha]
        for i in range(alpha + 1, n):
            p = model.parents[i]
            if p >= 0 and inside[p]:
                inside[i] = True
                motion[i] = data.X[i] @ motion[p]
                D[alpha, i] = data.Ic[i] @ motion[i]
    return D


@rnea.register(MimicModel)
def _(model, data, q, v, a, fext=None):
    return coupled.rnea(model, data, q, v, a, fext, full=rnea)


@inverse_dynamics.register(MimicModel)
def _(model, data, q, v, a, friction=None, *, velocity_tolerance=1e-6, fext=None, damping=True):
    return coupled.inverse_dynamics(model, data, q, v, a, friction, full=inverse_dynamics,
                                    velocity_tolerance=velocity_tolerance, fext=fext,
                                    damping=damping)


@mass_matrix.register(MimicModel)
def _(model, data, q):
    return coupled.mass_matrix(model, data, q, full=mass_matrix)


@wrench_directors.register(MimicModel)
def _(model, data, q=None):
    return coupled.wrench_directors(model, data, q, full=wrench_directors,
                                    full_mass_matrix=mass_matrix)
