"""Forward dynamics with friction and the simulator's time step, each fused into one compiled call.

Both run on the packed model and the Data work arrays (:mod:`.layout`): placements, RNEA at zero
acceleration (b and fn(q, q̇, 0)), CRBA (M and the composite inertias), the wrench directors pl_α
and the stick/slip friction solve (:mod:`.stiction`), with no Python in between. The Python
modules :mod:`robot_dynamics.algorithm.forward_dynamics` and :mod:`robot_dynamics.simulation.simulator` state the
same computations step by step; the tests hold the two together.

Status codes returned: 0 solved, 1 an input is not finite or has the wrong length (nothing
computed), 2 the friction solve did not converge (``info`` says how far it got), 3 (simulation
step) the new state is not finite — an overflow; the caller keeps the old state.
"""
from __future__ import annotations

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import (F1, F2, add_armature, all_finite, all_finite_array,
    composite_inertias,
    directors_core, mass_from_composite, mass_from_directors, placements_kernel,
    rnea_passes_ext, world_kernel)
from robot_dynamics.kernels.layout import (laws_views, model_armature, model_damping,
    model_gravity, model_relations, model_views, scratch_views, work_views)
from robot_dynamics.kernels.friction import loads_matter
from robot_dynamics.kernels.articulated import solve_instant
from robot_dynamics.kernels.articulated_step import (ARTICULATED_LOADED_MIN, ARTICULATED_MIN,
    step_pass)
from robot_dynamics.kernels.friction_solve import (LOWER, STUCK, TAU_LIMIT, UHI, ULO, UPPER,
    solve_friction)

# rows of the ``vecs`` scratch used here (rows 0–15 belong to the friction solve and its bounds)
ACC, BIAS, Q_HALF, V_EVAL, Q_NEW, V_NEW, ZERO = 16, 17, 18, 19, 20, 21, 22
#: fd_core's damped motor efforts τ − d∘q̇: the row friction.ID_OUT, which inverse dynamics
#: copies out as soon as it has written it (nothing reads it across calls)
TAU_DAMPED = 23

@njit(cache=True)
def _mass_and_directors(loaded, parents, I6, S, R, p, X, Ic, M, D, rel, motion):
    """M, and the directors pl_α when a joint's friction reads its reaction (``loaded``, see
    :func:`.friction.loads_matter`; M then comes from them: M = S A)."""
    composite_inertias(parents, I6, R, p, X, Ic)
    if loaded:
        directors_core(parents, S, R, p, X, Ic, D, motion, rel)
        mass_from_directors(S, D, rel, M)
    else:
        mass_from_composite(parents, S, X, Ic, M)


_SIG = "int64({F1}, {F1}, {extra}{F1}, {F1}, {F1}, {h}float64, float64, int64, {F1}{damped})"


@njit(cache=True)
def fd_core(mb, fr, q, v, tau, v_tol, tol, max_iter, w, fext, damped):
    """q̈ under motor efforts τ, gravity and friction (seed 004 §2.8 + stiction) into vecs[ACC].

    ``damped`` (issue 33): the joints also feel the URDF damping −d∘q̇ (:func:`.layout.
    model_damping`), explicit at the given q̇: the solve runs on τ − d∘q̇ (vecs[TAU_DAMPED]),
    the inverse of inverse dynamics' τ = … + d∘q̇ (:func:`.dynamics.add_joint_damping`).
    Where d is 0 the efforts are τ to the bit.

    Joints with |q̇| ≤ v_tol are at rest. The articulated recursions answer where they can
    (:func:`.articulated.solve_instant`: O(n) per iteration, no mass matrix); else the general
    solve on M and the directors. Either fills Data's f (= fn(q, q̇, 0)), oMi, tau_friction and
    the solver's report fields (stuck, at_rest, info); the general solve also M, Ic and X.

    ``fext`` (n, 6; 0 rows: none): external wrenches on the bodies (body frames, about their
    origins). They enter b and fn(q, q̇, 0), which the friction laws read; M and the directors
    do not depend on them.
    """
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if q.shape[0] != n or v.shape[0] != n or tau.shape[0] != n or not all_finite(q, v, tau):
        return 1
    if fext.shape[0] > 0 and (fext.shape[0] != n or fext.shape[1] != 6
                              or not all_finite_array(fext)):
        return 1
    if damped:
        d = model_damping(mb)
        td = scratch_views(mb, w)[6][TAU_DAMPED]
        for i in range(n):
            td[i] = tau[i] - d[i] * v[i]
        tau = td
    if solve_instant(mb, fr, q, v, tau, v_tol, tol, max_iter, w, fext):
        return 0
    R, p, vel, acc, f, tau_, tauf, X, Ic, oMi, M = work_views(mb, w)
    codes, params = laws_views(fr, n)
    rel = model_relations(mb)
    gravity = model_gravity(mb)
    W0, D, Meff, L, W, motion, vecs, sums, stuck, at_rest, idx, info = scratch_views(mb, w)
    zero, bias = vecs[ZERO], vecs[BIAS]
    for i in range(n):
        zero[i] = 0.0
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes_ext(parents, I6, S, gravity, v, zero, R, p, vel, acc, f, bias, fext)
    loaded = loads_matter(codes, params)
    _mass_and_directors(loaded, parents, I6, S, R, p, X, Ic, M, D, rel, motion)
    add_armature(model_armature(mb), M)  # rotors: M + diag(armature); D (link wrenches) as is
    world_kernel(parents, R, p, oMi)
    ulo, uhi = vecs[ULO], vecs[UHI]
    for i in range(n):
        ulo[i] = -np.inf  # no stops at an instant
        uhi[i] = np.inf
        for k in range(6):
            W0[i, k] = f[i, k]
    res = solve_friction(M, bias, tau, W0, D, rel, codes, params, kinds, axes, v, 0.0, v_tol, tol,
                         max_iter, ulo, uhi, vecs[ACC], tauf, stuck, at_rest, info, L, W, vecs,
                         idx, 0, loaded)
    if not np.isfinite(res):
        for i in range(n):
            tauf[i] = 0.0
        return 2
    sums[0] = res
    return 0


@njit(_SIG.format(F1=F1, extra="", h="", damped=", boolean"), cache=True)
def fd_entry(mb, fr, q, v, tau, v_tol, tol, max_iter, w, damped):
    """:func:`fd_core` without external efforts."""
    return fd_core(mb, fr, q, v, tau, v_tol, tol, max_iter, w, work_views(mb, w)[4][:0], damped)


@njit(cache=True)
def stop_impulse(kinds, parents, axes, R0, p0, I6, S, q, v, lower, upper, h, R, p, X, Ic, M, vp,
                 q_half, arm):
    """The stops' inelastic impulse at the start of a step (see robot_dynamics.simulation.simulator):
    joints whose half drift would cross a stop get the velocity that ends it on the stop,
    ``min(2(lower − q)/h, 0)`` (upper alike), by impulses P on those joints only
    (``q̇' = q̇ + M(q)⁻¹ P``, every joint feels them). Writes q̇' to ``vp`` and the drift
    ``q½ = q + (h/2) q̇'`` (exactly on the stop for those joints) to ``q_half``; returns
    (kinetic energy lost, P). A rare path: it allocates."""
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    composite_inertias(parents, I6, R, p, X, Ic)
    mass_from_composite(parents, S, X, Ic, M)
    add_armature(arm, M)
    return _impulse(M, q, v, lower, upper, h, vp, q_half)


@njit(cache=True)
def _impulse(M, q, v, lower, upper, h, vp, q_half):
    """:func:`stop_impulse` given M(q) (mimic coordinates: Gᵀ M_full G + diag(armature))."""
    n = q.shape[0]
    Minv = np.linalg.inv(M)
    side = np.zeros(n)
    P = np.zeros(n)
    for i in range(n):
        vp[i] = v[i]
    for it in range(n):
        new = False
        for i in range(n):
            if side[i] == 0.0:
                x = q[i] + 0.5 * h * vp[i]
                if x < lower[i]:
                    side[i] = -1.0
                    new = True
                elif x > upper[i]:
                    side[i] = 1.0
                    new = True
        if not new:
            break
        C = np.flatnonzero(side != 0.0)
        m = C.shape[0]
        A = np.empty((m, m))
        rhs = np.empty(m)
        for r in range(m):
            i = C[r]
            if side[i] < 0:
                target = min(2.0 * (lower[i] - q[i]) / h, 0.0)
            else:
                target = max(2.0 * (upper[i] - q[i]) / h, 0.0)
            rhs[r] = target - v[i]
            for c in range(m):
                A[r, c] = Minv[i, C[c]]
        Pc = np.linalg.solve(A, rhs)
        for i in range(n):
            P[i] = 0.0
        for r in range(m):
            P[C[r]] = Pc[r]
        for i in range(n):
            s = v[i]
            for r in range(m):
                s += Minv[i, C[r]] * Pc[r]
            vp[i] = s
    lost = 0.0
    for i in range(n):
        for k in range(n):
            lost += 0.5 * M[i, k] * (v[i] * v[k] - vp[i] * vp[k])
    for i in range(n):
        q_half[i] = q[i] + 0.5 * h * vp[i]
        if side[i] < 0:
            q_half[i] = lower[i]
        elif side[i] > 0:
            q_half[i] = upper[i]
    return lost, P


# -- mimic coordinates (robot_dynamics/multibody/coupling.py): q_full = G q + o ------------------------------
# The coupling, packed by robot_dynamics.multibody.coupling.pack_coupling as floats: [n_full, nv, then per
# full joint its coordinate (−1: none) and its G entry, the offsets o, then per coordinate the
# full index of its own (leader) joint]. The full tree's kernels run on the full model's packed
# arrays (mbf, wf) at the expanded state, and the step's coordinates get
#   M = Gᵀ M_full G,  b = Gᵀ b_full,  W0_k = fn_full[leader k],
#   D[β, k] = Σ_{α∈β} G_αβ pl_α[leader k]
# — the leaders' loads: the compiled path is taken only when no follower has friction, and
# when M keeps the pattern of the coordinates' tree (coupling.reduced_tree).


@njit(cache=True)
def _coupling_views(cp):
    nf, nv = int(cp[0]), int(cp[1])
    return (nf, nv, cp[2:2 + nf], cp[2 + nf:2 + 2 * nf], cp[2 + 2 * nf:2 + 3 * nf],
            cp[2 + 3 * nf:2 + 3 * nf + nv])


@njit(cache=True)
def _expand(cp, x, out, offset):
    """out = G x (+ o)."""
    nf, _, col, g, o, _ = _coupling_views(cp)
    for i in range(nf):
        c = int(col[i])
        out[i] = (g[i] * x[c] if c >= 0 else 0.0) + (o[i] if offset else 0.0)


@njit(cache=True)
def _coupled_mass(mbf, wf, cp, q, loaded, M, D):
    """Placements of the full tree at G q + o, then M = Gᵀ M_full G (full armature included)
    and, when ``loaded``, the coordinates' directors at the leaders' joints (see above)."""
    nf, kinds, parents, axes, R0, p0, I6, S = model_views(mbf)
    R, p, _, _, _, _, _, X, Ic, _, Mf = work_views(mbf, wf)
    _, Df, _, _, _, motion, vecs, _, _, _, _, _ = scratch_views(mbf, wf)
    relf = model_relations(mbf)
    _, nv, col, g, _, lead = _coupling_views(cp)
    qf = vecs[Q_HALF]
    _expand(cp, q, qf, True)
    placements_kernel(kinds, axes, R0, p0, qf, R, p)
    _mass_and_directors(loaded, parents, I6, S, R, p, X, Ic, Mf, Df, relf, motion)
    add_armature(model_armature(mbf), Mf)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    for i in range(nf):
        ci = int(col[i])
        if ci < 0:
            continue
        for j in range(nf):
            cj = int(col[j])
            if cj >= 0:
                M[ci, cj] += g[i] * g[j] * Mf[i, j]
    if not loaded:
        return
    ptr, idx = relf[0], relf[1]
    for k in range(nv):
        for b in range(nv):
            for e in range(6):
                D[b, k, e] = 0.0
        i = int(lead[k])
        for m in range(ptr[i], ptr[i + 1]):  # the joints α with pl_α non-zero at joint i
            al = idx[m]
            b = int(col[al])
            if b >= 0:
                for e in range(6):
                    D[b, k, e] += g[al] * Df[al, i, e]


@njit(cache=True)
def _coupled_bias(mbf, wf, cp, v, bias, W0, fext):
    """RNEA of the full tree at zero acceleration and velocity G q̇ (placements from
    :func:`_coupled_mass`): b = Gᵀ b_full, and W0 = fn_full(q, q̇, 0) of the leaders; ``fext``
    the external wrenches on the full tree's bodies (0 rows: none)."""
    _, _, parents, _, _, _, I6, S = model_views(mbf)
    R, p, vel, acc, f, _, _, _, _, _, _ = work_views(mbf, wf)
    vecs = scratch_views(mbf, wf)[6]
    nf, nv, col, g, _, lead = _coupling_views(cp)
    vf, zero, bf = vecs[V_EVAL], vecs[ZERO], vecs[BIAS]
    _expand(cp, v, vf, False)
    for i in range(nf):
        zero[i] = 0.0
    rnea_passes_ext(parents, I6, S, model_gravity(mbf), vf, zero, R, p, vel, acc, f, bf, fext)
    for k in range(nv):
        bias[k] = 0.0
        for e in range(6):
            W0[k, e] = f[int(lead[k]), e]
    for i in range(nf):
        c = int(col[i])
        if c >= 0:
            bias[c] += g[i] * bf[i]


#: largest number of mid-step evaluations of the velocity products before the explicit fallback
PASSES = 4
#: the simulator's parameter array ``sp`` (owned by the Simulator, one per instance):
#: [damping, lower, upper, effort limit] (4n; ∓inf: no stop, inf: no limit), then these scalars
SP_H, SP_VTOL, SP_TOL, SP_MAXITER = 0, 1, 2, 3  # step length, rest velocity, tolerance, iterations
#: the joint count from which step 2 runs on the articulated recursions
#: (:mod:`.articulated_step`; default ARTICULATED_MIN, inf: always the dense solve, 0: always
#: the recursions). Where some law reads its reactions (:func:`.friction.loads_matter`), from
#: ARTICULATED_LOADED_MIN joints already unless the slot is inf
SP_ARTICULATED = 4
SP_MOTOR, SP_FRICTION, SP_DAMPING, SP_LIMIT = 5, 6, 7, 8  # energy-audit sums, accumulated
SP_SATURATED, SP_LIMIT_STEPS = 9, 10  # steps with a saturated joint / with a stop acting
SP_GROSS = 11  # Σ |a step's motor work|: the energy through the motors (the audit's scale)
#: 0 after reset (no step to extrapolate from), 1 after a step whose active set changed (or
#: whose stop impulse acted), 2 and 3 after one and two steps in a row that kept the previous
#: step's set: the answers below then lie on one smooth motion
SP_HISTORY = 12
SP_SCALARS = 13
#: after the scalars, n entries: the last step's q̈, n entries: its joint states as codes
#: 4·state + sign(direction) + 1, n entries: the q̈ of the step before (2 q̈_k − q̈_{k−1} places
#: the next step's mid-step velocity and is its solve's first guess). Zeroed with the audit
#: sums by Simulator.reset: a run is reproducible to the bit
SP_GUESS = SP_SCALARS
#: After those 3n entries (from SP_GUESS + 3n), n entries: the applied efforts of the last step
#: that succeeded, n entries: its friction efforts τf — written only by a step that succeeds (a
#: failed one leaves them; the work array's copies are overwritten then), so that the Simulator
#: copies them when they are read instead of after every step (issue 35)
#: flags added to status 0 of a step: some joint saturated, some stop acted
SATURATED, ACTED = 4, 8


def sim_params(damping, lower, upper, effort, h, v_tol, tol, max_iter,
               articulated=ARTICULATED_MIN):
    """The flat ``sp`` array of :func:`sim_step_entry` / :func:`sim_run_entry`
    (``articulated``: the SP_ARTICULATED threshold)."""
    tail = np.zeros(SP_SCALARS + 5 * len(damping))
    tail[SP_H], tail[SP_VTOL], tail[SP_TOL], tail[SP_MAXITER] = h, v_tol, tol, max_iter
    tail[SP_ARTICULATED] = articulated
    return np.concatenate([damping, lower, upper, effort, tail]).astype(np.float64)


@njit(cache=True)
def _state_code(state, direction):
    """A joint's entry in the active set: 4·state + sign(direction) + 1 (report.state's)."""
    return state * 4 + (1 if direction > 0 else (-1 if direction < 0 else 0)) + 1


@njit(cache=True)
def _step(mb, fr, sp, q, v, tau_cmd, w, mbf, cp, wf, fext):
    """One step of :class:`robot_dynamics.simulation.simulator.Simulator` (see its module docstring).

    ``fext``: external wrenches on the bodies, held over the step (body frames, about their
    origins; the full tree's bodies with mimic joints), entering b and fn(q, q̇, 0) at every
    pass; 0 rows: none. (Their work is booked by the Simulator: ``τ_ext(q½)·(q⁺ − q)``.)

    Mimic joints: ``cp`` the packed coupling (empty: none), ``mbf``/``wf`` the full tree's
    packed model and work; ``mb``/``w`` are then the coordinates' (:func:`_coupled_mass`).

    Step 2 runs on the articulated recursions (:func:`.articulated_step.step_pass`: O(n) per
    iteration, no M, no directors) on models with at least sp's SP_ARTICULATED joints — at
    least ARTICULATED_LOADED_MIN where some law reads its reactions, unless the slot is inf —
    and no mimic coupling, on the dense solve (M, the directors, :func:`.friction_solve.solve_friction`)
    otherwise and wherever the recursions cannot answer (they return −1: the dense solve then
    runs step 2 from its start).

    ``sp``: :func:`sim_params` (step length h; joints with |q̇| ≤ v_tol are at rest). The motor
    efforts are saturated at the effort limits first (the applied efforts go to Data's ``tau``).
    Leaves q⁺, q̇⁺ in vecs[Q_NEW], vecs[V_NEW], τf in tau_friction, the stops' reactions in
    vecs[TAU_LIMIT] (impulses included, as P/h), the joint states in ``stuck``, the joint wrenches
    of the answer in Wt (when a law reads them: info[6]), q̈ in vecs[ACC]; q̈ and the joint
    states also in sp's SP_GUESS slots, SP_HISTORY set (the next step's mid-step velocity and
    first guess), the applied efforts and τf in sp's published slots; adds the energy-audit
    increments (motor work, friction, damping and stop dissipation) and the step counters to
    the tail of ``sp``, sums[1:7]. Returns 0
    (+ SATURATED, + ACTED), or 1 a bad input, 2 the friction solve failed, 3 an overflow (the
    caller keeps its state, and sp's slots but the step counters, in all three).
    """
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if (q.shape[0] != n or v.shape[0] != n or tau_cmd.shape[0] != n
            or sp.shape[0] != 9 * n + SP_SCALARS or not all_finite(q, v, tau_cmd)):
        return 1
    damping, lower, upper, effort = sp[:n], sp[n:2 * n], sp[2 * n:3 * n], sp[3 * n:4 * n]
    acc_sums = sp[4 * n:]
    h, v_tol, tol = acc_sums[SP_H], acc_sums[SP_VTOL], acc_sums[SP_TOL]
    max_iter = int(acc_sums[SP_MAXITER])
    R, p, vel, acc, f, tau, tauf, X, Ic, oMi, M = work_views(mb, w)
    n_sat = 0
    for i in range(n):  # 0. saturation: what the drive applies
        x = tau_cmd[i]
        if abs(x) >= effort[i]:
            n_sat += 1
            x = effort[i] if x > 0 else -effort[i]
        tau[i] = x
    codes, params = laws_views(fr, n)
    rel = model_relations(mb)
    gravity = model_gravity(mb)
    arm = model_armature(mb)
    W0, D, Meff, L, W, motion, vecs, sums, stuck, at_rest, idx, info = scratch_views(mb, w)
    zero, bias, a = vecs[ZERO], vecs[BIAS], vecs[ACC]
    q_half, v_eval, q_new, v_new = vecs[Q_HALF], vecs[V_EVAL], vecs[Q_NEW], vecs[V_NEW]
    ulo, uhi, tlim = vecs[ULO], vecs[UHI], vecs[TAU_LIMIT]
    vp = v_new  # the step's start velocity after the stops' impulse, then q̇⁺
    seen = idx[2]  # the active set of the previous pass
    last = acc_sums[SP_GUESS:SP_GUESS + n]  # the last step's q̈, its states, the q̈ before
    last_states = acc_sums[SP_GUESS + n:SP_GUESS + 2 * n]
    before = acc_sums[SP_GUESS + 2 * n:SP_GUESS + 3 * n]
    two = acc_sums[SP_HISTORY] >= 3.0
    crossing = False
    for i in range(n):
        zero[i] = 0.0
        vp[i] = v[i]
        q_half[i] = q[i] + 0.5 * h * v[i]  # 1. drift half a step
        crossing = crossing or q_half[i] < lower[i] or q_half[i] > upper[i]
    lost = 0.0
    P = zero
    coupled = cp.shape[0] > 0
    if crossing and coupled:  # 0. ... unless a stop is in the way: it takes the approach
        _coupled_mass(mbf, wf, cp, q, False, M, D)  # velocity first
        add_armature(arm, M)
        lost, P = _impulse(M, q, v, lower, upper, h, vp, q_half)
    elif crossing:
        lost, P = stop_impulse(kinds, parents, axes, R0, p0, I6, S, q, v, lower, upper, h, R, p,
                               X, Ic, M, vp, q_half, arm)
    for i in range(n):  # the stops bound the end-of-step velocity: q⁺ stays in [lower, upper]
        ulo[i] = min(2.0 * (lower[i] - q_half[i]) / h, 0.0)
        uhi[i] = max(2.0 * (upper[i] - q_half[i]) / h, 0.0)
        v_eval[i] = vp[i]
    loaded = loads_matter(codes, params)
    info[6] = 1 if loaded else 0  # Wt holds the answer's joint wrenches (else Python computes them)
    # long chains, and laws that read their reactions from ARTICULATED_LOADED_MIN joints on
    # (issue 35): step 2 by the articulated recursions, O(n) per iteration, no M nor directors
    # (kernels/articulated_step.py; a stop's impulse above formed M for itself alone); not in
    # mimic coordinates. Where they cannot answer, the dense solve below, from the start of
    # step 2
    thr = acc_sums[SP_ARTICULATED]
    art = not coupled and (n >= thr or (loaded and n >= ARTICULATED_LOADED_MIN and thr < np.inf))
    # 2. velocity-product terms at the mid-step velocity q̇' + (h/2) q̈: after a step, the last
    # steps' q̈ extrapolated places it, and the answer stands if its active set is the last
    # step's; otherwise (and after a reset or a stop's impulse) a first solve with q̇ predicts
    # q̈. The next passes evaluate b and fn(q, q̇, 0) at q̇' + (h/2) q̈ of the previous pass,
    # until the active set repeats; if it does not (a step too long for the motion), at the
    # start velocity (explicit). Each pass after the first starts from the previous pass's
    # joint states and accelerations
    res = np.inf
    first = 1 if acc_sums[SP_HISTORY] >= 1.0 and not crossing else 0
    smooth = False  # the extrapolated pass stands: the set is the last step's
    for attempt in range(2):  # the articulated recursions, or the dense solve
        if not art:
            if coupled:
                _coupled_mass(mbf, wf, cp, q_half, loaded, M, D)
            else:
                placements_kernel(kinds, axes, R0, p0, q_half, R, p)
                _mass_and_directors(loaded, parents, I6, S, R, p, X, Ic, M, D, rel, motion)
            add_armature(arm, M)  # rotors: M + diag(armature); D (link wrenches) as is
            for r in range(n):  # implicit damping: −d∘(q̇ + h q̈)
                for c in range(n):
                    Meff[r, c] = M[r, c]
                Meff[r, r] += h * damping[r]
        for i in range(n):  # the first pass iterates from the last steps' q̈, extrapolated
            a[i] = 2.0 * last[i] - before[i] if two else last[i]
            v_eval[i] = vp[i]
        info[5] = 0
        if first:
            for i in range(n):
                v_eval[i] = vp[i] + 0.5 * h * a[i]  # (a: the extrapolated q̈)
                seen[i] = int(last_states[i])
        smooth = False
        for ps in range(first, PASSES + 1):
            if ps == PASSES:
                info[5] = 1
                for i in range(n):
                    v_eval[i] = vp[i]
            warm = 3 if ps == 0 else (2 if ps == first else 1)
            if art:
                res = step_pass(mb, fr, q_half, v_eval, vp, tau, damping, h, v_tol, tol,
                                max_iter, ulo, uhi, a, w, fext, warm)
                if res < 0.0:
                    break  # the dense solve answers
            else:
                if coupled:
                    _coupled_bias(mbf, wf, cp, v_eval, bias, W0, fext)
                else:
                    rnea_passes_ext(parents, I6, S, gravity, v_eval, zero, R, p, vel, acc, f,
                                    bias, fext)
                    for i in range(n):
                        for k in range(6):
                            W0[i, k] = f[i, k]
                for i in range(n):
                    bias[i] += damping[i] * vp[i]
                res = solve_friction(Meff, bias, tau, W0, D, rel, codes, params, kinds, axes, vp,
                                     h, v_tol, tol, max_iter, ulo, uhi, a, tauf, stuck, at_rest,
                                     info, L, W, vecs, idx, warm, loaded)
            if not np.isfinite(res):
                for i in range(n):
                    tauf[i] = 0.0
                return 2
            if ps == PASSES:
                break
            same = ps > 0
            direction = vecs[1]
            for i in range(n):
                code = _state_code(stuck[i], direction[i])
                same = same and seen[i] == code
                seen[i] = code
            if same:
                smooth = ps == 1 and first == 1
                break
            for i in range(n):
                v_eval[i] = vp[i] + 0.5 * h * a[i]
        if not (art and res < 0.0):
            break
        art = False
    motor = 0.0
    fric = 0.0
    damp = 0.0
    stop = 0.0
    acted = crossing
    for i in range(n):
        st = stuck[i]
        u = vp[i] + h * a[i]
        if st == LOWER:
            u = ulo[i]
        elif st == UPPER:
            u = uhi[i]
        elif st == STUCK or abs(u) < v_tol * 1e-3:
            u = 0.0  # exact zeros from the stick solve
        acted = acted or st >= LOWER
        mid = 0.5 * (vp[i] + u)
        motor += tau[i] * mid
        fric += tauf[i] * mid
        damp += damping[i] * u * mid
        stop += tlim[i] * mid
        x = q_half[i] + 0.5 * h * u  # 3. drift the other half
        if st == LOWER:
            x = lower[i]  # where ulo takes it (exactly: q½ + (h/2) ulo would round)
        elif st == UPPER:
            x = upper[i]
        if not (np.isfinite(x) and np.isfinite(u)):
            return 3
        q_new[i] = min(max(x, lower[i]), upper[i])  # roundoff only: u respects the stops
        v_new[i] = u
        tlim[i] += P[i] / h
    direction = vecs[1]
    published = acc_sums[SP_GUESS + 3 * n:SP_GUESS + 5 * n]
    for i in range(n):  # the answer, for the next step; its efforts, for the Simulator
        before[i] = last[i]
        last[i] = a[i]
        last_states[i] = _state_code(stuck[i], direction[i])
        published[i] = tau[i]
        published[n + i] = tauf[i]
    acc_sums[SP_HISTORY] = min(acc_sums[SP_HISTORY] + 1.0, 3.0) if smooth else 1.0
    sums[0] = res
    sums[1] = h * motor
    sums[2] = -h * fric
    sums[3] = h * damp
    sums[4] = lost - h * stop
    sums[5] = 1.0 if acted else 0.0
    sums[6] = n_sat
    acc_sums[SP_MOTOR] += sums[1]
    acc_sums[SP_GROSS] += abs(sums[1])
    acc_sums[SP_FRICTION] += sums[2]
    acc_sums[SP_DAMPING] += sums[3]
    status = 0
    if acted:
        acc_sums[SP_LIMIT] += sums[4]
        acc_sums[SP_LIMIT_STEPS] += 1.0
        status += ACTED
    if n_sat:
        acc_sums[SP_SATURATED] += 1.0
        status += SATURATED
    return status


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, float64[:], {F1})", cache=True)
def sim_step_entry(mb, fr, sp, q, v, tau_cmd, w):
    """:func:`_step` behind an explicit signature (one compiled call per step). ``tau_cmd`` may
    be strided: it is copied into Data's ``tau``, where the step saturates it in place (status
    1 for another length), so that :data:`sim_step_raw` needs no layout test."""
    views = work_views(mb, w)
    tau = views[5]
    if tau_cmd.shape[0] != tau.shape[0]:
        return 1
    for i in range(tau.shape[0]):
        tau[i] = tau_cmd[i]
    return _step(mb, fr, sp, q, v, tau, w, mb, sp[:0], w, views[4][:0])


def _entry_point(dispatcher):
    """The compiled function behind a dispatcher of one explicit signature, called without
    the dispatcher's type resolution (0.04–0.1 µs of a 3–6 µs step; issue 35); the dispatcher
    itself where numba is disabled. Its caller guarantees the types: numba's unboxing checks
    only that an argument is an ndarray of 8-byte items — an array of another dimension
    would overwrite memory, one of int64 would be read as floats."""
    overloads = getattr(dispatcher, "overloads", None)
    return next(iter(overloads.values())).entry_point if overloads else dispatcher


#: :func:`sim_step_entry` without the dispatcher: for float64 vectors only (q and q̇ C-contiguous;
#: τ of any stride), see :func:`_entry_point`
sim_step_raw = _entry_point(sim_step_entry)


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F2}, {F1})", cache=True)
def sim_step_fext_entry(mb, fr, sp, q, v, tau_cmd, fext, w):
    """:func:`sim_step_entry` with external wrenches ``fext`` (n, 6; body frames, about the
    body origins) held over the step (status 1 also for another shape or a NaN/Inf in it).
    The Simulator books their work in its energy audit."""
    if fext.shape[0] != q.shape[0] or fext.shape[1] != 6 or not all_finite_array(fext):
        return 1
    return _step(mb, fr, sp, q, v, tau_cmd, w, mb, sp[:0], w, fext)


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F1})", cache=True)
def sim_step_mimic_entry(mb, fr, sp, q, v, tau_cmd, w, mbf, cp, wf):
    """:func:`_step` in mimic coordinates (``mb``/``w`` the coordinates', ``mbf``/``wf`` the full
    tree's, ``cp`` the coupling)."""
    return _step(mb, fr, sp, q, v, tau_cmd, w, mbf, cp, wf, work_views(mbf, wf)[4][:0])


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, {F1}, {F2}, {F1}, {F1}, {F1}, {F1})", cache=True)
def sim_step_mimic_fext_entry(mb, fr, sp, q, v, tau_cmd, fext, w, mbf, cp, wf):
    """:func:`sim_step_mimic_entry` with external wrenches ``fext`` (n_full, 6; one row per body
    of the full tree, body frames, about the body origins) held over the step (status 1 also
    for another shape or a NaN/Inf in it)."""
    if fext.shape[0] != model_views(mbf)[0] or fext.shape[1] != 6 or not all_finite_array(fext):
        return 1
    return _step(mb, fr, sp, q, v, tau_cmd, w, mbf, cp, wf, fext)


@njit(cache=True)
def _checked(mb, w, status):
    """fd_checked's verdict on a status of :func:`fd_core` (see there)."""
    if status == 1:
        return 1
    vecs = scratch_views(mb, w)[6]
    if status == 0:
        tauf = work_views(mb, w)[6]
        ok = all_finite(vecs[ACC], tauf, tauf)
    else:
        ok = (all_finite(vecs[BIAS], vecs[BIAS], vecs[BIAS])
              and all_finite_array(work_views(mb, w)[10]))
    return status if ok else OVERFLOW


OVERFLOW = 3  # status of fd_checked: solved, but q̈ or τf is not finite


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, float64, float64, int64, {F1}, boolean)", cache=True)
def fd_checked(mb, fr, q, v, tau, v_tol, tol, max_iter, w, damped):
    """:func:`~robot_dynamics.kernels.fd.fd_entry`, then the finiteness of its outputs (q̈, τf;
    status OVERFLOW when not): finite inputs so large that the dynamics leave the float64 range.
    A friction solve that failed (status 2) on a non-finite M or bias is an overflow too."""
    status = fd_entry(mb, fr, q, v, tau, v_tol, tol, max_iter, w, damped)
    return _checked(mb, w, status)


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, {F2}, float64, float64, int64, {F1}, boolean)",
      cache=True)
def fd_fext_checked(mb, fr, q, v, tau, fext, v_tol, tol, max_iter, w, damped):
    """:func:`fd_checked` with external wrenches ``fext`` (n, 6) on the bodies (status 1 also
    for another shape or a NaN/Inf in it)."""
    if fext.shape[0] != q.shape[0]:
        return 1
    status = fd_core(mb, fr, q, v, tau, v_tol, tol, max_iter, w, fext, damped)
    return _checked(mb, w, status)
