"""Lagrange–Euler equations of motion (seed 003; docs/method.md §3) on the core Model.

With ``⁰T_i`` the world transform of body i and ``Q_j`` the generator of joint j
(``∂(ᵖT_j)/∂q_j = ᵖT_j Q_j``; revolute about e: ``[[e]×, 0]``, prismatic along e: ``[0, e]``),
define the world-frame generator ``G_j = ⁰T_j Q_j ⁰T_j⁻¹``. Then

    U_ij  = ∂⁰T_i/∂q_j = G_j ⁰T_i                          (j supports i, else 0)
    U_ijk = ∂U_ij/∂q_k = G_a G_b ⁰T_i, (a, b) = (j, k) ordered base-first (0 unless both support i)
    J_i   = ∫ r rᵀ dm  (4×4 pseudo-inertia in body frame: [[½tr(I_O)1 − I_O, m c], [m cᵀ, m]])
    M_ik  = Σ_j Tr(U_jk J_j U_jiᵀ)
    V_i   = Σ_j Tr((Σ_k Σ_m U_jkm q̇_k q̇_m) J_j U_jiᵀ)
    G_i   = Σ_j −m_j gᵀ U_ji ʲc̄_j
    τ = M(q) q̈ + V(q, q̇) + G(q),      q̈ = M⁻¹ (τ − V − G)

The sums over j run over the bodies supported by the joints involved, so branched trees work.
Seed slip (docs/method.md §3): J_i's off-diagonal entries are +∫xy dm — the negatives of the inertia
tensor's products (URDF ``ixy``). Cost grows as n⁴ (V): meant for cross-checks and small arms.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.multibody import joints as jt
from robot_dynamics.errors import as_vector
from robot_dynamics.algorithm.kinematics import forward_kinematics
from robot_dynamics.spatial.algebra import skew


def pseudo_inertia(mass, com, inertia_com) -> np.ndarray:
    """J = ∫ [r; 1][r; 1]ᵀ dm in the body frame, from mass, CoM and inertia about the CoM."""
    c = np.asarray(com, dtype=float)
    I_o = np.asarray(inertia_com) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o  # ∫ r rᵀ dm: products of inertia flip sign
    J[:3, 3] = J[3, :3] = mass * c
    J[3, 3] = mass
    return J


def _support(model) -> np.ndarray:
    """``S[j, i]``: joint j supports body i (j is i or an ancestor of i)."""
    n = model.nv
    S = np.eye(n, dtype=bool)
    for i in range(n):
        p = model.parents[i]
        if p >= 0:
            S[:, i] |= S[:, p]
    return S


def _terms(model, q):
    data = model.create_data()
    forward_kinematics(model, data, q)
    T = data.oMi
    G = np.zeros((model.nv, 4, 4))
    for j in range(model.nv):
        Q = np.zeros((4, 4))
        if model.kinds[j] == jt.PRISMATIC:
            Q[:3, 3] = model.axes[j]
        else:
            Q[:3, :3] = skew(model.axes[j])
        G[j] = T[j] @ Q @ np.linalg.inv(T[j])
    S = _support(model)
    U = np.zeros((model.nv, model.nv, 4, 4))  # U[i, j] = ∂T_i/∂q_j
    for i in range(model.nv):
        for j in np.flatnonzero(S[:, i]):
            U[i, j] = G[j] @ T[i]
    J = np.array([pseudo_inertia(m, c, I) for m, c, I in
                  zip(model.masses, model.coms, model.inertias)])
    return T, G, S, U, J


def mass_matrix(model, q) -> np.ndarray:
    """M_ik = Σ_j Tr(U_jk J_j U_jiᵀ), plus the rotors' diag(armature) (``model.armature``)."""
    q = as_vector("q", q, model.nq, where="lagrange_euler.mass_matrix")
    _, _, _, U, J = _terms(model, q)
    return np.einsum("jkab,jbc,jiac->ik", U, J, U) + np.diag(model.armature)


def coriolis(model, q, v) -> np.ndarray:
    """V_i = Σ_j Tr(Ü_j J_j U_jiᵀ) with Ü_j = Σ_k Σ_m U_jkm q̇_k q̇_m (centrifugal + Coriolis)."""
    q = as_vector("q", q, model.nq, where="lagrange_euler.coriolis")
    v = as_vector("v", v, model.nv, where="lagrange_euler.coriolis")
    T, G, S, U, J = _terms(model, q)
    n = model.nv
    V = np.zeros(n)
    for j in range(n):
        sup = np.flatnonzero(S[:, j])
        Udd = np.zeros((4, 4))
        for k in sup:
            for m in sup:
                a, b = (k, m) if S[k, m] else (m, k)  # base-first order along the chain
                Udd += v[k] * v[m] * (G[a] @ G[b] @ T[j])
        V += np.einsum("ab,bc,iac->i", Udd, J[j], U[j])
    return V


def gravity(model, q) -> np.ndarray:
    """G_i = Σ_j −m_j gᵀ U_ji ʲc̄_j."""
    q = as_vector("q", q, model.nq, where="lagrange_euler.gravity")
    _, _, _, U, _ = _terms(model, q)
    g = np.append(model.gravity, 0.0)
    cbar = np.hstack([model.coms, np.ones((model.nv, 1))])
    return -np.einsum("j,a,jiab,jb->i", model.masses, g, U, cbar)


def inverse_dynamics(model, q, v, a) -> np.ndarray:
    """τ = M(q) q̈ + V(q, q̇) + G(q)."""
    a = as_vector("a", a, model.nv, where="lagrange_euler.inverse_dynamics")
    return mass_matrix(model, q) @ a + coriolis(model, q, v) + gravity(model, q)


def forward_dynamics(model, q, v, tau) -> np.ndarray:
    """The state-space model q̈ = M⁻¹ (τ − V − G)."""
    tau = as_vector("tau", tau, model.nv, where="lagrange_euler.forward_dynamics")
    return np.linalg.solve(mass_matrix(model, q), tau - coriolis(model, q, v) - gravity(model, q))
