"""Forward dynamics with friction and the simulator's time step, each fused into one compiled call.

Both run on the packed model and the Data work arrays (:mod:`.layout`): placements, RNEA at zero
acceleration (b and fn(q, q̇, 0)), CRBA (M and the composite inertias), the wrench directors pl_α
and the stick/slip friction solve (:mod:`.stiction`), with no Python in between. The Python
modules :mod:`robot_dynamics.forward_dynamics` and :mod:`robot_dynamics.simulation` state the
same computations step by step; the tests hold the two together.

Status codes returned: 0 solved, 1 an input is not finite or has the wrong length (nothing
computed), 2 the friction solve did not converge (``info`` says how far it got).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .dynamics import (F1, all_finite, composite_inertias, directors_core,
                       mass_from_composite, mass_from_directors, placements_kernel, rnea_passes,
                       world_kernel)
from .layout import (laws_views, model_gravity, model_relations, model_views, scratch_views,
                     work_views)
from .stiction import solve_friction

# rows of the ``vecs`` scratch used here (rows 0–12 belong to the friction solve)
ACC, BIAS, Q_HALF, V_EVAL, Q_NEW, V_NEW, ZERO = 16, 17, 18, 19, 20, 21, 22

@njit(cache=True)
def _any_active(codes):
    for i in range(codes.shape[0]):
        if codes[i] != 0:
            return True
    return False


@njit(cache=True)
def _mass_and_directors(codes, parents, I6, S, R, p, X, Ic, M, D, rel, motion):
    """M, and the directors pl_α when a joint has friction (M then comes from them: M = S A)."""
    composite_inertias(parents, I6, R, p, X, Ic)
    if _any_active(codes):
        directors_core(parents, S, R, p, X, Ic, D, motion, rel)
        mass_from_directors(S, D, rel, M)
    else:
        mass_from_composite(parents, S, X, Ic, M)


_SIG = "int64({F1}, {F1}, {extra}{F1}, {F1}, {F1}, {h}float64, float64, int64, {F1})"


@njit(_SIG.format(F1=F1, extra="", h=""), cache=True)
def fd_entry(mb, fr, q, v, tau, v_tol, tol, max_iter, w):
    """q̈ under motor efforts τ, gravity and friction (seed 004 §2.8 + stiction) into vecs[ACC].

    Joints with |q̇| ≤ v_tol are at rest. Fills Data's f (= fn(q, q̇, 0)), M, Ic, X,
    oMi, tau_friction and the solver's report fields (stuck, at_rest, info).
    """
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if q.shape[0] != n or v.shape[0] != n or tau.shape[0] != n or not all_finite(q, v, tau):
        return 1
    R, p, vel, acc, f, tau_, tauf, X, Ic, oMi, M = work_views(mb, w)
    codes, params = laws_views(fr, n)
    rel = model_relations(mb)
    gravity = model_gravity(mb)
    W0, D, Meff, L, W, motion, vecs, sums, stuck, at_rest, idx, info = scratch_views(mb, w)
    zero, bias = vecs[ZERO], vecs[BIAS]
    for i in range(n):
        zero[i] = 0.0
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes(parents, I6, S, gravity, v, zero, R, p, vel, acc, f, bias)
    _mass_and_directors(codes, parents, I6, S, R, p, X, Ic, M, D, rel, motion)
    world_kernel(parents, R, p, oMi)
    for i in range(n):
        for k in range(6):
            W0[i, k] = f[i, k]
    res = solve_friction(M, bias, tau, W0, D, rel, codes, params, kinds, axes, v, 0.0, v_tol, tol,
                         max_iter, vecs[ACC], tauf, stuck, at_rest, info, L, W, vecs, idx)
    if not np.isfinite(res):
        for i in range(n):
            tauf[i] = 0.0
        return 2
    sums[0] = res
    return 0


@njit(_SIG.format(F1=F1, extra=F1 + ", ", h="float64, "), cache=True)
def sim_step_entry(mb, fr, damping, q, v, tau, h, v_tol, tol, max_iter, w):
    """One step of :class:`robot_dynamics.simulation.Simulator` (see its module docstring).

    Step length h; joints with |q̇| ≤ v_tol are at rest. Leaves q⁺, q̇⁺ in vecs[Q_NEW], vecs[V_NEW],
    τf in tau_friction, and the energy-audit increments (motor work, friction dissipation,
    damping dissipation) in sums[1:4].
    """
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if (q.shape[0] != n or v.shape[0] != n or tau.shape[0] != n or damping.shape[0] != n
            or not all_finite(q, v, tau)):
        return 1
    R, p, vel, acc, f, tau_, tauf, X, Ic, oMi, M = work_views(mb, w)
    codes, params = laws_views(fr, n)
    rel = model_relations(mb)
    gravity = model_gravity(mb)
    W0, D, Meff, L, W, motion, vecs, sums, stuck, at_rest, idx, info = scratch_views(mb, w)
    zero, bias, a = vecs[ZERO], vecs[BIAS], vecs[ACC]
    q_half, v_eval, q_new, v_new = vecs[Q_HALF], vecs[V_EVAL], vecs[Q_NEW], vecs[V_NEW]
    for i in range(n):
        zero[i] = 0.0
        q_half[i] = q[i] + 0.5 * h * v[i]  # 1. drift half a step
        v_eval[i] = v[i]
    placements_kernel(kinds, axes, R0, p0, q_half, R, p)
    _mass_and_directors(codes, parents, I6, S, R, p, X, Ic, M, D, rel, motion)
    for r in range(n):  # implicit damping: −d∘(q̇ + h q̈)
        for c in range(n):
            Meff[r, c] = M[r, c]
        Meff[r, r] += h * damping[r]
    # 2. velocity-product terms at the mid-step velocity: a first solve with q̇ predicts q̇⁺,
    # the second evaluates b and fn(q, q̇, 0) at the mean
    for _ in range(2):
        rnea_passes(parents, I6, S, gravity, v_eval, zero, R, p, vel, acc, f, bias)
        for i in range(n):
            bias[i] += damping[i] * v[i]
            for k in range(6):
                W0[i, k] = f[i, k]
        res = solve_friction(Meff, bias, tau, W0, D, rel, codes, params, kinds, axes, v, h, v_tol,
                             tol, max_iter, a, tauf, stuck, at_rest, info, L, W, vecs, idx)
        if not np.isfinite(res):
            for i in range(n):
                tauf[i] = 0.0
            return 2
        for i in range(n):
            v_eval[i] = v[i] + 0.5 * h * a[i]
    motor = 0.0
    fric = 0.0
    damp = 0.0
    for i in range(n):
        u = v[i] + h * a[i]
        if abs(u) < v_tol * 1e-3:
            u = 0.0  # exact zeros from the stick solve
        v_new[i] = u
        mid = 0.5 * (v[i] + u)
        motor += tau[i] * mid
        fric += tauf[i] * mid
        damp += damping[i] * u * mid
        q_new[i] = q_half[i] + 0.5 * h * u  # 3. drift the other half
    sums[0] = res
    sums[1] = h * motor
    sums[2] = -h * fric
    sums[3] = h * damp
    return 0

