"""The simulator's time step (step 2 of robot_dynamics.simulation.simulator) by articulated-body
recursions: O(n) per Newton iteration, no mass matrix, no directors (issue 35).

Step 2 solves, at (q½, the mid-step velocity q̇_e of the velocity products) for the end-of-step
velocity q̇⁺ = q̇' + h q̈, ``Meff q̈ + b = τ + τf + τl`` with ``Meff = M + diag(armature) +
h diag(d)`` and ``b = b(q½, q̇_e) + d∘q̇'`` (kernels/fd.py ``_step``, d the URDF damping).
Joint i's equation is that of :mod:`.articulated` (seed 004 §2.8) with the damping as a
further armature and its explicit part on the right:

    S_iᵀ fn_i + (armature_i + h d_i) q̈_i = τ_i − d_i q̇'_i + τf_i,

fn_i the link wrenches at (q½, q̇_e, q̈) (eq. 2.3.7). Three differences from the instant's
solve (:func:`.articulated.solve_instant`):

* a sliding joint's law reads the end-of-step velocity, u_i = |q̇'_i + h q̈_i|·s_i (s_i its
  direction), so its linearisation φ_i ≈ φ̄_i + g_iᵀ (fn_i − f̄_i) + k_i (q̈_i − q̄̈_i) with
  k_i = ∂φ_i/∂u · (±h) (robot_dynamics.kernels.friction_solve ``_newton_matrix``) adds s_i k_i
  to the joint's pivot and s_i k_i q̄̈_i to its right-hand side:
  ``T_iᵀ fn_i + (armature_i + h d_i + s_i k_i) q̈_i = μ_i``, T_i = S_i + s_i g_i,
  μ_i = τ_i − d_i q̇'_i − s_i φ̄_i + s_i g_iᵀ f̄_i + s_i k_i q̄̈_i;
* a joint that is not free (stuck, or on a stop) has a PRESCRIBED acceleration
  target_i = (u_i − q̇'_i)/h (u_i 0 when stuck, the stop's velocity bound ulo/uhi on a
  stop), not zero: the backward and forward passes of :mod:`.articulated` treat it as rigid
  with S_i target_i added to its velocity product c_i (a_i = a_parent + c_i + S_i q̈_i), and
  q̈_i = target_i;
* the stick/slip/stop rules are those of the step (robot_dynamics.algorithm.friction_solve
  with h > 0, kernels/friction_solve.py ``solve_friction``, rules 1–4: against the direction
  sticks, past a stop lands on it, a stuck joint over its bound breaks away — onto a stop when
  it has no room —, a stop may only push and friction takes its share of holding a joint on a
  stop first), in the same order, in bulk until PREMATURE premature releases, then one at a
  time.

An assignment with no free joint (every joint stuck or on a stop: every q̈_i prescribed) needs
no recursion: one RNEA at the targets gives its wrenches (the rest and stop classes of
bench/bench_motion_classes.py). The laws' value and derivatives at a linearisation point are
evaluated side by side (:func:`_linearize` with ``evaluate``), the stick/slip rules evaluate the
laws inlined.

:func:`step_pass` is one pass of step 2 (velocity products at q̇_e, then the solve); it
returns −1 where it cannot answer as the general solve would (a law that can self-lock, a pivot
that is not positive, no convergence, the assignments or the work cap running out): kernels/fd.py
``_step`` then runs the dense step from the start of step 2 (the general solve is the
specification). Everything is in the world frame at its origin, as in :mod:`.articulated`;
:mod:`robot_dynamics.reference.articulated` states the recursions (``articulated_step_motion``),
test/test_articulated_step.py holds the compiled step to the dense one.
"""
from __future__ import annotations

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.articulated import (_ACC, _BETA, _C, _DD, _FN, _MU, _PA, _PHI, _SW,
    _T, _U, _VEL, _VT, _Y, CHORD, _joint_effort, add_force_row, articulated_pass, external_world,
    joint_frame, world_setup, wrenches_at)
from robot_dynamics.kernels.dynamics import finite_or_zero
from robot_dynamics.kernels.friction import (can_self_lock, friction_gradient_inline,
    friction_one_inline, law_inputs)
from robot_dynamics.kernels.friction_solve import (FREE, LOWER, NOISE, PREMATURE, ROUNDOFF, STUCK,
    TAU_LIMIT, UPPER, WORK, leave_stop)
from robot_dynamics.kernels.layout import (articulated_views, laws_views, model_armature,
    model_gravity, model_views, scratch_views, work_views)

#: models with at least this many joints step by the articulated recursions (kernels/fd.py
#: sim_params' default). Measured on bench_cliff's chains (mean ms per step from 50 random
#: states, dense / articulated): 6 joints 0.021 / 0.017, 10 joints 0.020 / 0.019 (a draw),
#: 16 joints 0.053 / 0.038, 25 joints 0.11 / 0.05, 50 joints 0.53 / 0.11. Branched robots
#: of that size factor M on its tree pattern (cheaper than a chain's dense one), so the switch
#: is placed past the draw: with the classic laws the bundled arms (≤ 9 joints) keep the dense
#: step, bit for bit
ARTICULATED_MIN = 12
#: ... and models with at least this many joints where some law reads its reactions
#: (:func:`.friction.loads_matter`): the dense step then forms the wrench directors besides M
#: (O(n²) of them, each a 6-vector) and evaluates the laws on them, the recursions need
#: neither. Measured (test's chains of n joints with the load-dependent law and URDF
#: damping, 10 random states × 20 steps, the mean µs of a Simulator step, dense /
#: articulated): n = 2 3.91 / 3.90 (a draw), 3 4.72 / 4.55, 4 4.99 / 4.84, 5 5.89 / 5.82,
#: 6 7.25 / 6.80, 7 7.71 / 7.16; panda and ur5 in every class of bench_motion_classes
#: (docs/measurements.md). The classic laws keep the dense step below ARTICULATED_MIN (their
#: dense step needs no directors and one Newton step: 8-24 % faster on panda and ur5)
ARTICULATED_LOADED_MIN = 3
# rows of the ``vecs`` scratch (24, n) used here: those of the friction solve, which does not
# run in the same pass (kernels/friction_solve.py rows 0–12); the direction row is its own
_TARGET, _DIRECTION, _HOLD, _BOUNDS, _RELEASE, _NOISE_ROW = 0, 1, 2, 3, 4, 5
_ARMP, _ARME, _TAUP = 6, 7, 8  # armature + h d; that + s k (pivots); τ − d q̇'


@njit(cache=True)
def _prescribe(state, target, ab, qdd):
    """c_i = c0_i + S_i target_i (c0: the velocity products, kept in ab[_VEL]) and
    q̈_i = target_i for the joints that are not free; c_i = c0_i for the free ones."""
    n = state.shape[0]
    Sw, c, c0 = ab[_SW], ab[_C], ab[_VEL]
    for i in range(n):
        if state[i] == FREE:
            for k in range(6):
                c[i, k] = c0[i, k]
        else:
            x = target[i]
            qdd[i] = x
            for k in range(6):
                c[i, k] = c0[i, k] + Sw[i, k] * x


@njit(cache=True)
def _forward_evaluate(codes, params, kinds, axes, parents, gravity, oMi, vp, h, state, IA, ab,
                      abv, vecs, W, qdd):
    """:func:`.articulated.forward_pass` (q̈ of the free joints, the body accelerations and
    the joint wrenches), the prescribed q̈ of the others, and at each sliding joint, as soon as
    its wrench is final, its law's magnitude φ_i(fn_i, u_i), u_i = |q̇'_i + h q̈_i|·s_i (into
    abv[_PHI]) and its residual, in one sweep. Returns (the largest change of q̈, the largest
    |q̈|, the worst residual |Sᵀ fn + (armature + h d) q̈ − τ + d q̇' + s φ|, the largest applied
    effort, the largest inertial effort |Sᵀ fn + …|) over the sliding joints."""
    n = parents.shape[0]
    Sw, c, pA, Vt, T, a, fn = ab[_SW], ab[_C], ab[_PA], ab[_VT], ab[_T], ab[_ACC], ab[_FN]
    Dd, mu, phi = abv[_DD], abv[_MU], abv[_PHI]
    target, direction, armp, taup = vecs[_TARGET], vecs[_DIRECTION], vecs[_ARMP], vecs[_TAUP]
    step = 0.0
    big = 0.0
    worst = 0.0
    applied = 0.0
    inertial = 0.0
    for i in range(n):
        par = parents[i]
        if par >= 0:
            a0, a1, a2 = a[par, 0] + c[i, 0], a[par, 1] + c[i, 1], a[par, 2] + c[i, 2]
            a3, a4, a5 = a[par, 3] + c[i, 3], a[par, 4] + c[i, 4], a[par, 5] + c[i, 5]
        else:
            a0, a1, a2 = c[i, 0] - gravity[0], c[i, 1] - gravity[1], c[i, 2] - gravity[2]
            a3, a4, a5 = c[i, 3], c[i, 4], c[i, 5]
        free = state[i] == FREE
        x = target[i]
        if free:
            x = (mu[i] - (T[i, 0] * pA[i, 0] + T[i, 1] * pA[i, 1] + T[i, 2] * pA[i, 2]
                          + T[i, 3] * pA[i, 3] + T[i, 4] * pA[i, 4] + T[i, 5] * pA[i, 5])
                 - (Vt[i, 0] * a0 + Vt[i, 1] * a1 + Vt[i, 2] * a2 + Vt[i, 3] * a3
                    + Vt[i, 4] * a4 + Vt[i, 5] * a5)) / Dd[i]
            a0 += Sw[i, 0] * x
            a1 += Sw[i, 1] * x
            a2 += Sw[i, 2] * x
            a3 += Sw[i, 3] * x
            a4 += Sw[i, 4] * x
            a5 += Sw[i, 5] * x
        step = max(step, abs(x - qdd[i]))
        big = max(big, abs(x))
        qdd[i] = x
        a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5] = a0, a1, a2, a3, a4, a5
        for r in range(6):
            fn[i, r] = pA[i, r] + (IA[i, r, 0] * a0 + IA[i, r, 1] * a1 + IA[i, r, 2] * a2
                                   + IA[i, r, 3] * a3 + IA[i, r, 4] * a4 + IA[i, r, 5] * a5)
        if not free or codes[i] == 0:
            continue
        joint_frame(oMi, fn, i, W)
        d = direction[i]
        u = abs(vp[i] + h * x) * d
        pr, e, Wi = law_inputs(params, axes, W, i)
        m = friction_one_inline(codes[i], pr, kinds[i], e, Wi, u, d)
        phi[i] = m
        s = _joint_effort(Sw, fn, armp, qdd, i)
        worst = max(worst, abs(s - taup[i] + d * m))
        applied = max(applied, abs(taup[i]), m)
        inertial = max(inertial, abs(s))
    return step, big, worst, applied, inertial


@njit(cache=True)
def _linearize(codes, params, kinds, axes, oMi, vp, h, state, ab, abv, vecs, W, qdd, evaluate):
    """Projections T, pivots' armatures (vecs[_ARME]) and right-hand sides μ of the sliding
    joints' laws linearised at the last wrenches and accelerations (the module docstring):
    T_i = S_i + s_i g_i, armature_i + h d_i + s_i k_i, μ_i = τ_i − d_i q̇'_i − s_i φ_i
    + s_i g_iᵀ fn_i + s_i k_i q̈_i. ``evaluate``: first the law magnitudes φ_i there, at
    u_i = |q̇'_i + h q̈_i|·s_i (the law's value and derivatives side by side on the same inputs,
    their common terms computed once); else the φ_i the last forward pass evaluated
    (:func:`_forward_evaluate`) at those wrenches."""
    n = codes.shape[0]
    Sw, fn, T = ab[_SW], ab[_FN], ab[_T]
    phi, mu = abv[_PHI], abv[_MU]
    direction, armp, arme, taup = vecs[_DIRECTION], vecs[_ARMP], vecs[_ARME], vecs[_TAUP]
    for i in range(n):
        for k in range(6):
            T[i, k] = Sw[i, k]
        mu[i] = taup[i]
        arme[i] = armp[i]
        if state[i] != FREE or codes[i] == 0:
            continue
        if evaluate:
            joint_frame(oMi, fn, i, W)
        d = direction[i]
        u = vp[i] + h * qdd[i]
        du = h if u * d >= 0 else -h  # u = |q̇' + h q̈|·s
        u = abs(u) * d
        pr, e, Wi = law_inputs(params, axes, W, i)
        if evaluate:
            phi[i] = friction_one_inline(codes[i], pr, kinds[i], e, Wi, u, d)
        mu[i] = taup[i] - d * phi[i]
        mv, g = friction_gradient_inline(codes[i], pr, kinds[i], e, Wi, u, d)
        kv = finite_or_zero(d * mv * du)
        arme[i] += kv
        mu[i] += kv * qdd[i]
        add_force_row(oMi, fn, T, mu, i, d, g)


@njit(cache=True)
def _chord_bias(parents, codes, state, ab, abv, vecs, qdd):
    """A chord step's right-hand sides for the kept projections and pivots at the last
    evaluated wrenches, μ_i = τ_i − d_i q̇'_i − s_i φ_i + (T_i − S_i)ᵀ fn_i + s_i k_i q̈_i, and
    :func:`.articulated.bias_pass` on them, in one backward sweep: each μ_i just before its pᴬ_i
    is used."""
    n = parents.shape[0]
    Sw, fn, T, beta, pA, U, y = ab[_SW], ab[_FN], ab[_T], ab[_BETA], ab[_PA], ab[_U], ab[_Y]
    phi, mu, Dd = abv[_PHI], abv[_MU], abv[_DD]
    direction, armp, arme, taup = vecs[_DIRECTION], vecs[_ARMP], vecs[_ARME], vecs[_TAUP]
    for i in range(n):
        for k in range(6):
            pA[i, k] = beta[i, k]
    for i in range(n - 1, -1, -1):
        free = state[i] == FREE
        if free and codes[i] != 0:
            x = 0.0
            for k in range(6):
                x += (T[i, k] - Sw[i, k]) * fn[i, k]
            mu[i] = taup[i] - direction[i] * phi[i] + x + (arme[i] - armp[i]) * qdd[i]
        par = parents[i]
        if par < 0:
            continue
        if free:
            x = (mu[i] - (T[i, 0] * pA[i, 0] + T[i, 1] * pA[i, 1] + T[i, 2] * pA[i, 2]
                          + T[i, 3] * pA[i, 3] + T[i, 4] * pA[i, 4] + T[i, 5] * pA[i, 5])) / Dd[i]
            for r in range(6):
                pA[par, r] += pA[i, r] + U[i, r] * x + y[i, r]
        else:
            for r in range(6):
                pA[par, r] += pA[i, r] + y[i, r]


@njit(cache=True)
def _solve_assignment(codes, params, kinds, axes, parents, gravity, oMi, Iw, vp, h, tol,
                      max_iter, state, IA, ab, abv, vecs, W, qdd, info):
    """Newton's method on the articulated recursion for the joint states ``state`` (targets in
    vecs[_TARGET]), linearised first at the accelerations in ``qdd`` (free joints: the last
    answer or the caller's guess). True when the residual is within tol of the applied efforts
    and the steps of q̈ have converged (robot_dynamics.algorithm.friction_solve.converged_step);
    False when the recursions cannot answer (a pivot that is not positive, no convergence)."""
    n = codes.shape[0]
    target = vecs[_TARGET]
    _prescribe(state, target, ab, qdd)
    wrenches_at(parents, gravity, Iw, state, ab, qdd)
    free = False
    for i in range(n):
        free = free or state[i] == FREE
    if not free:  # every acceleration prescribed: the wrenches above are the answer's
        return True
    _linearize(codes, params, kinds, axes, oMi, vp, h, state, ab, abv, vecs, W, qdd, True)
    if not articulated_pass(parents, Iw, vecs[_ARME], state, IA, ab, abv):
        return False
    prev_res = np.inf
    prev = np.inf
    step = np.inf
    for it in range(max_iter):
        prev = step
        step, big, res, applied, inertial = _forward_evaluate(
            codes, params, kinds, axes, parents, gravity, oMi, vp, h, state, IA, ab, abv, vecs,
            W, qdd)
        info[2] += 1
        if not step < np.inf:
            return False
        bound = tol * (1.0 + big)
        if res <= tol * (1.0 + applied) + ROUNDOFF * inertial and (
                step <= bound or (it >= 1 and step < prev and step * step <= bound * (prev - step))):
            return True
        if res < CHORD * prev_res:  # the last linearisation serves
            _chord_bias(parents, codes, state, ab, abv, vecs, qdd)
        else:
            _linearize(codes, params, kinds, axes, oMi, vp, h, state, ab, abv, vecs, W, qdd,
                       False)
            if not articulated_pass(parents, Iw, vecs[_ARME], state, IA, ab, abv):
                return False
        prev_res = res
    return False


@njit(cache=True)
def step_pass(mb, fr, q_half, v_eval, vp, tau, damping, h, v_tol, tol, max_iter, ulo, uhi, a,
              w, fext, warm):
    """One pass of the simulator's step 2 by the articulated recursions: velocity products and
    bias forces at ``v_eval`` (``fext``, n × 6 or 0 rows: external wrenches on the bodies),
    then the stick/slip/stop solve for q̈ (into ``a``) — the outputs of kernels/friction_solve.py
    ``solve_friction`` with h > 0: τf (tau_friction), the joint states (``stuck``), directions
    (vecs[1]), at_rest, info, the stops' reactions vecs[TAU_LIMIT], and the joint wrenches of
    the answer in Wt. ``warm`` 1: from the joint states, directions and q̈ of the previous pass;
    else every joint at rest stuck, the others sliding along q̇', ``a`` the first guess (the
    predictor of warm 3 is solved to tol here: its answer only places the next pass's q̇_e).
    Returns the residual ‖Meff q̈ + b − τ − τf − τl‖∞, or −1 where the general solve must
    answer (the module docstring). Unlike the dense step it never forms fn(q½, q̇_e, 0): Data's
    f is left as it was (nothing reads it after a step; the wrenches are Wt's)."""
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    codes, params = laws_views(fr, n)
    R, p, _, _, _, _, tauf, _, _, oMi, _ = work_views(mb, w)
    _, _, _, _, W, _, vecs, _, stuck, at_rest, _, info = scratch_views(mb, w)
    Iw, IA, ab, abv = articulated_views(mb, w)
    gravity = model_gravity(mb)
    arm = model_armature(mb)
    for i in range(n):
        if can_self_lock(codes[i], params[i]):
            return -1.0  # Newton can reach a root against the assumed direction there
    world_setup(kinds, parents, axes, R0, p0, I6, S, gravity, q_half, v_eval, R, p, oMi, Iw, ab)
    if fext.shape[0] > 0:
        external_world(oMi, fext, ab[_BETA])
    Sw, fn, c, c0 = ab[_SW], ab[_FN], ab[_C], ab[_VEL]
    target, direction, hold, bounds = vecs[_TARGET], vecs[_DIRECTION], vecs[_HOLD], vecs[_BOUNDS]
    release, noise, tlim = vecs[_RELEASE], vecs[_NOISE_ROW], vecs[TAU_LIMIT]
    armp, taup = vecs[_ARMP], vecs[_TAUP]
    for i in range(n):
        for k in range(6):
            c0[i, k] = c[i, k]  # the velocity products (ab[_VEL]: world_setup's velocities)
        armp[i] = arm[i] + h * damping[i]
        taup[i] = tau[i] - damping[i] * vp[i]
    for i in range(n):
        rest = abs(vp[i]) <= v_tol
        at_rest[i] = 1 if (rest and codes[i] != 0) else 0
        if warm != 1:
            stuck[i] = STUCK if at_rest[i] else FREE
            direction[i] = 0.0 if rest else (1.0 if vp[i] > 0 else -1.0)
    for k in range(5):
        info[k] = 0
    info[7] = 0  # no factored matrix for the general solve to reuse
    info[1] = 2  # Newton
    bulk = True
    premature = 0
    for change in range(12 * n + 21):
        if info[2] > WORK * (n + 2) * max_iter:
            return -1.0
        for i in range(n):
            st = stuck[i]
            u = 0.0 if st == STUCK else (ulo[i] if st == LOWER else uhi[i])
            target[i] = (u - vp[i]) / h
        if not _solve_assignment(codes, params, kinds, axes, parents, gravity, oMi, Iw, vp, h,
                                 tol, max_iter, stuck, IA, ab, abv, vecs, W, a, info):
            return -1.0
        for i in range(n):  # the friction (and stop) effort each joint needs for this motion
            s = _joint_effort(Sw, fn, armp, a, i)
            hold[i] = s - taup[i]
            noise[i] = NOISE * (1.0 + abs(taup[i]) + abs(s))
            if stuck[i] != FREE or codes[i] == 0:  # every joint's wrench (the bounds, Wt);
                joint_frame(oMi, fn, i, W)  # a sliding one's: the last evaluation's
        # 1) a sliding/breaking joint moving against its assumed direction must stick
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if stuck[i] != FREE or codes[i] == 0:
                continue
            sp = vp[i] + h * a[i]
            val = -direction[i] * sp
            if val > tol * (1 + abs(sp)) and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            for i in range(n):
                if i != worst:
                    if not bulk or stuck[i] != FREE or codes[i] == 0:
                        continue
                    sp = vp[i] + h * a[i]
                    if not -direction[i] * sp > tol * (1 + abs(sp)):
                        continue
                stuck[i] = STUCK
                direction[i] = 0.0
            info[3] += 1
            premature += 1
            bulk = premature < PREMATURE
            continue
        # 2) a free joint past a stop lands on it
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if stuck[i] != FREE:
                continue
            sp = vp[i] + h * a[i]
            val = max(ulo[i] - sp, sp - uhi[i])
            if val > tol * (1 + abs(sp)) and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            sp = vp[worst] + h * a[worst]
            stuck[worst] = LOWER if sp < ulo[worst] else UPPER
            info[3] += 1
            continue
        # 3) a stuck joint whose holding effort exceeds its bound breaks away (onto a stop
        #    when it has no room to move that way)
        worst = -1
        worst_val = 0.0
        for i in range(n):
            release[i] = -1.0 if hold[i] > 0 else (1.0 if hold[i] < 0 else 0.0)
            if stuck[i] != STUCK:
                continue
            pr, e, Wi = law_inputs(params, axes, W, i)
            bounds[i] = friction_one_inline(codes[i], pr, kinds[i], e, Wi, 0.0, release[i])
            excess = abs(hold[i]) - bounds[i] * (1 + 1e-9) - noise[i]
            if excess > 0 and excess / (1.0 + bounds[i]) > worst_val:
                worst, worst_val = i, excess / (1.0 + bounds[i])
        if worst >= 0:
            for i in range(n):
                if i != worst and not (bulk and stuck[i] == STUCK and abs(hold[i])
                                       - bounds[i] * (1 + 1e-9) - noise[i] > 0):
                    continue
                if release[i] < 0 and ulo[i] >= 0:
                    stuck[i] = LOWER
                elif release[i] > 0 and uhi[i] <= 0:
                    stuck[i] = UPPER
                else:
                    stuck[i] = FREE
                    direction[i] = release[i]
            info[3] += 1
            continue
        # 4) a stop may only push: one that would pull lets its joint go; friction of a joint
        #    on a stop takes its share of the holding effort first
        worst = -1
        worst_val = 0.0
        for i in range(n):
            tlim[i] = 0.0
            if stuck[i] < LOWER:
                continue
            push = 1.0 if stuck[i] == LOWER else -1.0
            u = ulo[i] if stuck[i] == LOWER else uhi[i]
            tf = 0.0
            if codes[i] != 0:
                pr, e, Wi = law_inputs(params, axes, W, i)
                if u != 0.0:
                    tf = push * friction_one_inline(codes[i], pr, kinds[i], e, Wi, u, -push)
                else:
                    mag = friction_one_inline(codes[i], pr, kinds[i], e, Wi, 0.0, release[i])
                    tf = min(max(hold[i], -mag), mag)
            tauf[i] = tf
            tlim[i] = hold[i] - tf
            val = -push * tlim[i] - noise[i]
            if val > 0 and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            leave_stop(worst, stuck, direction, ulo, uhi, codes, vp)
            info[3] += 1
            continue
        res = 0.0
        phi = abv[_PHI]
        for i in range(n):
            st = stuck[i]
            if st == STUCK:  # at most the bound, whatever the roundoff of the holding
                tauf[i] = min(max(hold[i], -bounds[i]), bounds[i])
            elif st == FREE:
                tauf[i] = -direction[i] * phi[i] if codes[i] != 0 else 0.0
            res = max(res, abs(hold[i] - tauf[i] - tlim[i]))
        info[0] = 1
        return res
    return -1.0
