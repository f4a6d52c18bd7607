"""Forward dynamics with friction at an instant by articulated-body recursions: O(n) per Newton
iteration, no mass matrix, no directors.

Joint i's equation (seed 004 §2.8, the rotors' armature on top of the link wrench fn_i):

    S_iᵀ fn_i + armature_i q̈_i = τ_i + τf_i,      τf_i = −d_i φ_i(fn_i)

for a sliding joint (d_i the sign of its motion, φ_i ≥ 0 its law's magnitude, which reads the
joint's own reaction wrench fn_i, eq. 2.3.7), q̈_i = 0 for a stuck one. Linearised at wrenches
f̄_i, φ_i(fn_i) ≈ φ̄_i + g_iᵀ (fn_i − f̄_i) (g_i = ∂φ_i/∂fn, the laws' analytic derivatives), the
equation keeps its form with the projection S_i replaced by T_i = S_i + d_i g_i on the force side:

    T_iᵀ fn_i + armature_i q̈_i = μ_i,      μ_i = τ_i − d_i φ̄_i + d_i g_iᵀ f̄_i.

Featherstone's articulated-body algorithm (RBDA §7.3) solves that system exactly with T in
place of S where the joint equation projects the force (``U = Iᴬ S``, ``Vᵀ = Tᵀ Iᴬ``,
``D = Tᵀ Iᴬ S + armature``: the articulated inertias are no longer symmetric); a stuck joint
passes its whole articulated inertia to its parent. Its forward pass gives q̈ and every joint's
wrench fn_i = Iᴬ_i a_i + pᴬ_i, where the friction laws are evaluated again — Newton's method on
the seed's equations, one backward pass per matrix (the linearisation), and a cheaper pass of
the bias forces alone when the last matrix serves (chord).

Everything is expressed in the world frame at its origin (as Pinocchio's ABA): the link
inertias are carried to the world once per call, and the backward passes add the children's
inertias without a transform. The law reads fn_i in joint i's frame.

The stick/slip rules are those of robot_dynamics.algorithm.friction_solve at an instant (no
stops): joints at rest start stuck, a stuck joint whose holding effort exceeds its bound breaks
away, a breaking joint that would move against its release direction sticks. Unlike that solve,
which sticks first and then releases, one at a time, here both change in the same step (every
joint at once) until a release proves premature, then one at a time, sticking first. The
first assignment is predicted before any pass (:func:`predict_release`: the friction problem of
the joints at rest with the laws frozen at fn(q, q̇, 0), a convex one, on M's Schur
complement); the rules then correct what the laws' load dependence moves (issue 35: on mixed
stick/slip states 0.1 set changes a state on talos_reduced where the bulk release from the
all-stuck answer took 2.6, docs/measurements.md). :func:`solve_instant` returns False where it cannot answer as the general
solve would (a law that can self-lock, a pivot that is not positive, no convergence): the
caller then takes that solve (kernels/fd.py ``fd_entry``), which is the specification
(robot_dynamics.algorithm.friction_solve). :mod:`robot_dynamics.reference.articulated` states the recursions in
NumPy (body frames, 6×6 matrices); test/test_articulated.py holds the three together.
"""
from __future__ import annotations

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import (_inertia_times, finite_or_zero, placements_kernel,
    transformed_inertia, world_kernel)
from robot_dynamics.kernels.friction import (can_self_lock, friction_gradient_inline,
    friction_one_inline, law_inputs)
from robot_dynamics.kernels.layout import (articulated_views, laws_views, model_armature,
    model_gravity, model_views, scratch_views, work_views)
from robot_dynamics.kernels.friction_solve import FREE, NOISE, PREMATURE, ROUNDOFF, SCREEN, STUCK

#: rows of the ``ab`` (k, n, 6) scratch: world motion subspaces, velocity products c = v ×m S q̇,
#: bias forces β = v ×* I v, wrenches fn, articulated bias pᴬ, U = Iᴬ S, Vᵀ = Tᵀ Iᴬ, the
#: children's share Iᵃ c, T, body accelerations, the wrenches in joint frames and velocities
_SW, _C, _BETA, _FN, _PA, _U, _VT, _Y, _T, _ACC, _WL, _VEL = range(12)
#: rows of the ``abv`` (k, n) scratch: pivots D, right-hand sides μ, law magnitudes φ, directions,
#: holding efforts, last q̈, each joint's excess over its stick/slip rule
_DD, _MU, _PHI, _DIR, _HOLD, _LAST, _EXCESS = range(7)
#: a chord step (the last linearisation kept) while the residual shrinks at least this much
CHORD = 0.1
#: a stuck joint whose holding effort exceeds its bound by this fraction (of 1 + bound) after an
#: assignment's first pass breaks away at once (:func:`_clear_release`)
EARLY = 0.01


@njit(cache=True, inline="always")
def _world_inertia(oMi, i, I6, Iw):
    """Iw[i] = body i's spatial inertia [[m1, −ĝ], [ĝ, Ī']] in the world frame (at its origin),
    from its pose oMi[i] and its link inertia I6[i]
    (:func:`~robot_dynamics.kernels.dynamics.transformed_inertia`). Returns (m, g0, g1, g2,
    Ī'00, Ī'01, Ī'02, Ī'11, Ī'12, Ī'22) for the products on values."""
    m, g0, g1, g2, v00, v01, v02, v11, v12, v22 = transformed_inertia(
        oMi, i, oMi[i, 0, 3], oMi[i, 1, 3], oMi[i, 2, 3], I6, i)
    Iw[i, 3, 3], Iw[i, 3, 4], Iw[i, 3, 5] = v00, v01, v02
    Iw[i, 4, 3], Iw[i, 4, 4], Iw[i, 4, 5] = v01, v11, v12
    Iw[i, 5, 3], Iw[i, 5, 4], Iw[i, 5, 5] = v02, v12, v22
    Iw[i, 0, 0] = Iw[i, 1, 1] = Iw[i, 2, 2] = m
    Iw[i, 0, 1] = Iw[i, 0, 2] = Iw[i, 1, 0] = Iw[i, 1, 2] = Iw[i, 2, 0] = Iw[i, 2, 1] = 0.0
    Iw[i, 0, 3] = Iw[i, 1, 4] = Iw[i, 2, 5] = Iw[i, 3, 0] = Iw[i, 4, 1] = Iw[i, 5, 2] = 0.0
    Iw[i, 0, 4] = Iw[i, 4, 0] = g2  # [[m1, −ĝ], [ĝ, Ī']]
    Iw[i, 0, 5] = Iw[i, 5, 0] = -g1
    Iw[i, 1, 3] = Iw[i, 3, 1] = -g2
    Iw[i, 1, 5] = Iw[i, 5, 1] = g0
    Iw[i, 2, 3] = Iw[i, 3, 2] = g1
    Iw[i, 2, 4] = Iw[i, 4, 2] = -g0
    return m, g0, g1, g2, v00, v01, v02, v11, v12, v22


@njit(cache=True)
def world_setup(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, R, p, oMi, Iw, ab):
    """Placements, world poses, and in the world frame: link inertias, motion subspaces, the
    body velocities v_i (into ab[_VEL]), the velocity products c_i = v_i ×m S_i q̇_i and the
    bias forces β_i = v_i ×* I_i v_i (:func:`wrenches_at` at q̈ = 0 then gives fn(q, q̇, 0)). One sweep
    over the joints after the placements and poses (each its own loop: a sine and cosine in
    the sweep cost more than a second pass), I_i v_i on the inertia's values, not read back."""
    n = q.shape[0]
    Sw, c, beta, vel = ab[_SW], ab[_C], ab[_BETA], ab[_VEL]
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    world_kernel(parents, R, p, oMi)
    for i in range(n):
        m, g0, g1, g2, v00, v01, v02, v11, v12, v22 = _world_inertia(oMi, i, I6, Iw)
        px, py, pz = oMi[i, 0, 3], oMi[i, 1, 3], oMi[i, 2, 3]
        s0, s1, s2, s3, s4, s5 = S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5]
        w0 = oMi[i, 0, 0] * s3 + oMi[i, 0, 1] * s4 + oMi[i, 0, 2] * s5
        w1 = oMi[i, 1, 0] * s3 + oMi[i, 1, 1] * s4 + oMi[i, 1, 2] * s5
        w2 = oMi[i, 2, 0] * s3 + oMi[i, 2, 1] * s4 + oMi[i, 2, 2] * s5
        l0 = oMi[i, 0, 0] * s0 + oMi[i, 0, 1] * s1 + oMi[i, 0, 2] * s2 + py * w2 - pz * w1
        l1 = oMi[i, 1, 0] * s0 + oMi[i, 1, 1] * s1 + oMi[i, 1, 2] * s2 + pz * w0 - px * w2
        l2 = oMi[i, 2, 0] * s0 + oMi[i, 2, 1] * s1 + oMi[i, 2, 2] * s2 + px * w1 - py * w0
        Sw[i, 0], Sw[i, 1], Sw[i, 2], Sw[i, 3], Sw[i, 4], Sw[i, 5] = l0, l1, l2, w0, w1, w2
        par = parents[i]
        qd = v[i]
        u0, u1, u2, u3, u4, u5 = l0 * qd, l1 * qd, l2 * qd, w0 * qd, w1 * qd, w2 * qd
        if par >= 0:  # v_i = v_parent + S_i q̇_i (world frame: no transform)
            a0, a1, a2 = vel[par, 0] + u0, vel[par, 1] + u1, vel[par, 2] + u2
            o0, o1, o2 = vel[par, 3] + u3, vel[par, 4] + u4, vel[par, 5] + u5
        else:
            a0, a1, a2, o0, o1, o2 = u0, u1, u2, u3, u4, u5
        vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5] = a0, a1, a2, o0, o1, o2
        # c = v ×m (S q̇),  [v; ω] ×m [u; w] = [ω × u + v × w; ω × w]
        c[i, 0] = o1 * u2 - o2 * u1 + a1 * u5 - a2 * u4
        c[i, 1] = o2 * u0 - o0 * u2 + a2 * u3 - a0 * u5
        c[i, 2] = o0 * u1 - o1 * u0 + a0 * u4 - a1 * u3
        c[i, 3] = o1 * u5 - o2 * u4
        c[i, 4] = o2 * u3 - o0 * u5
        c[i, 5] = o0 * u4 - o1 * u3
        # h = I v = [m a − g × o; g × a + Ī' o] (the order of _inertia_times' sums)
        h0 = m * a0 + g2 * o1 - g1 * o2
        h1 = m * a1 - g2 * o0 + g0 * o2
        h2 = m * a2 + g1 * o0 - g0 * o1
        h3 = -g2 * a1 + g1 * a2 + v00 * o0 + v01 * o1 + v02 * o2
        h4 = g2 * a0 - g0 * a2 + v01 * o0 + v11 * o1 + v12 * o2
        h5 = -g1 * a0 + g0 * a1 + v02 * o0 + v12 * o1 + v22 * o2
        # β = v ×* (I v),  [v; ω] ×* [f; n] = [ω × f; ω × n + v × f]
        beta[i, 0] = o1 * h2 - o2 * h1
        beta[i, 1] = o2 * h0 - o0 * h2
        beta[i, 2] = o0 * h1 - o1 * h0
        beta[i, 3] = o1 * h5 - o2 * h4 + a1 * h2 - a2 * h1
        beta[i, 4] = o2 * h3 - o0 * h5 + a2 * h0 - a0 * h2
        beta[i, 5] = o0 * h4 - o1 * h3 + a0 * h1 - a1 * h0


@njit(cache=True)
def wrenches_at(parents, gravity, Iw, state, ab, qdd):
    """RNEA at the accelerations ``qdd`` of the free joints (the step's prescribed ones are in c:
    kernels/articulated_step.py ``_prescribe``), the base accelerating at −g, from
    :func:`world_setup`'s velocity products and bias forces: the body accelerations
    a_i = a_parent + c_i + S_i q̈_i into ab[_ACC] and the joint wrenches fn_i = Σ_subtree (I a + β)
    into ab[_FN] — fn(q, q̇, 0) when qdd is zero, else a linearisation point."""
    n = parents.shape[0]
    Sw, c, beta, fn, a = ab[_SW], ab[_C], ab[_BETA], ab[_FN], ab[_ACC]
    for i in range(n):
        par = parents[i]
        if par >= 0:
            x0, x1, x2 = a[par, 0], a[par, 1], a[par, 2]
            x3, x4, x5 = a[par, 3], a[par, 4], a[par, 5]
        else:
            x0, x1, x2, x3, x4, x5 = -gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0
        y = qdd[i] if state[i] == FREE else 0.0
        x0 += c[i, 0] + Sw[i, 0] * y
        x1 += c[i, 1] + Sw[i, 1] * y
        x2 += c[i, 2] + Sw[i, 2] * y
        x3 += c[i, 3] + Sw[i, 3] * y
        x4 += c[i, 4] + Sw[i, 4] * y
        x5 += c[i, 5] + Sw[i, 5] * y
        a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5] = x0, x1, x2, x3, x4, x5
        h0, h1, h2, h3, h4, h5 = _inertia_times(Iw[i], x0, x1, x2, x3, x4, x5)
        fn[i, 0], fn[i, 1], fn[i, 2] = beta[i, 0] + h0, beta[i, 1] + h1, beta[i, 2] + h2
        fn[i, 3], fn[i, 4], fn[i, 5] = beta[i, 3] + h3, beta[i, 4] + h4, beta[i, 5] + h5
    for i in range(n - 1, -1, -1):
        par = parents[i]
        if par >= 0:
            for k in range(6):
                fn[par, k] += fn[i, k]


@njit(cache=True)
def external_world(oMi, fext, beta):
    """The external wrenches fext (n, 6; body frames, about the body origins) in the world
    frame at its origin, [R f; R n + p × R f] with (R, p) = oMi[i], taken off each body's bias
    β_i (its balance: I a + β − f^ext): every wrench formed from β after it (:func:`wrenches_at`,
    the passes) carries them."""
    n = fext.shape[0]
    for i in range(n):
        e0, e1, e2 = fext[i, 0], fext[i, 1], fext[i, 2]
        e3, e4, e5 = fext[i, 3], fext[i, 4], fext[i, 5]
        f0 = oMi[i, 0, 0] * e0 + oMi[i, 0, 1] * e1 + oMi[i, 0, 2] * e2
        f1 = oMi[i, 1, 0] * e0 + oMi[i, 1, 1] * e1 + oMi[i, 1, 2] * e2
        f2 = oMi[i, 2, 0] * e0 + oMi[i, 2, 1] * e1 + oMi[i, 2, 2] * e2
        px, py, pz = oMi[i, 0, 3], oMi[i, 1, 3], oMi[i, 2, 3]
        beta[i, 0] -= f0
        beta[i, 1] -= f1
        beta[i, 2] -= f2
        beta[i, 3] -= oMi[i, 0, 0] * e3 + oMi[i, 0, 1] * e4 + oMi[i, 0, 2] * e5 + py * f2 - pz * f1
        beta[i, 4] -= oMi[i, 1, 0] * e3 + oMi[i, 1, 1] * e4 + oMi[i, 1, 2] * e5 + pz * f0 - px * f2
        beta[i, 5] -= oMi[i, 2, 0] * e3 + oMi[i, 2, 1] * e4 + oMi[i, 2, 2] * e5 + px * f1 - py * f0


@njit(cache=True, inline="always")
def _joint_effort(Sw, fn, arm, qdd, i):
    """Joint i's effort S_iᵀ fn_i + armature_i q̈_i (what the motor and friction supply)."""
    return (Sw[i, 0] * fn[i, 0] + Sw[i, 1] * fn[i, 1] + Sw[i, 2] * fn[i, 2] + Sw[i, 3] * fn[i, 3]
            + Sw[i, 4] * fn[i, 4] + Sw[i, 5] * fn[i, 5] + arm[i] * qdd[i])


@njit(cache=True)
def articulated_pass(parents, Iw, arm, state, IA, ab, abv):
    """The backward pass for projections T (ab[_T]): articulated inertias Iᴬ (IA, before each
    joint's own projection), U = Iᴬ S, Vᵀ = Tᵀ Iᴬ, pivots D = Vᵀ S + armature, the share
    Iᵃ c_i each child passes on, then :func:`bias_pass`. False when a pivot is not positive
    (a law falling with the load faster than inertia rises: the general solve handles it)."""
    n = parents.shape[0]
    Sw, c, U, Vt, y, T = ab[_SW], ab[_C], ab[_U], ab[_VT], ab[_Y], ab[_T]
    Dd = abv[_DD]
    for i in range(n):
        for r in range(6):
            for k in range(6):
                IA[i, r, k] = Iw[i, r, k]
    for i in range(n - 1, -1, -1):
        par = parents[i]
        c0, c1, c2, c3, c4, c5 = c[i, 0], c[i, 1], c[i, 2], c[i, 3], c[i, 4], c[i, 5]
        if state[i] == FREE:
            s0, s1, s2, s3, s4, s5 = Sw[i, 0], Sw[i, 1], Sw[i, 2], Sw[i, 3], Sw[i, 4], Sw[i, 5]
            t0, t1, t2, t3, t4, t5 = T[i, 0], T[i, 1], T[i, 2], T[i, 3], T[i, 4], T[i, 5]
            d = arm[i]
            for r in range(6):
                U[i, r] = (IA[i, r, 0] * s0 + IA[i, r, 1] * s1 + IA[i, r, 2] * s2
                           + IA[i, r, 3] * s3 + IA[i, r, 4] * s4 + IA[i, r, 5] * s5)
                x = (IA[i, 0, r] * t0 + IA[i, 1, r] * t1 + IA[i, 2, r] * t2 + IA[i, 3, r] * t3
                     + IA[i, 4, r] * t4 + IA[i, 5, r] * t5)
                Vt[i, r] = x
                d += x * Sw[i, r]
            if not 0.0 < d < np.inf:
                return False
            Dd[i] = d
            if par < 0:
                continue
            inv = 1.0 / d
            v0, v1, v2, v3, v4, v5 = Vt[i, 0], Vt[i, 1], Vt[i, 2], Vt[i, 3], Vt[i, 4], Vt[i, 5]
            vc = (v0 * c0 + v1 * c1 + v2 * c2 + v3 * c3 + v4 * c4 + v5 * c5) * inv
            for r in range(6):  # Iᵃ = Iᴬ − U Vᵀ / D to the parent, and Iᵃ c
                ur = U[i, r]
                y[i, r] = (IA[i, r, 0] * c0 + IA[i, r, 1] * c1 + IA[i, r, 2] * c2
                           + IA[i, r, 3] * c3 + IA[i, r, 4] * c4 + IA[i, r, 5] * c5) - ur * vc
                ur *= inv
                IA[par, r, 0] += IA[i, r, 0] - ur * v0
                IA[par, r, 1] += IA[i, r, 1] - ur * v1
                IA[par, r, 2] += IA[i, r, 2] - ur * v2
                IA[par, r, 3] += IA[i, r, 3] - ur * v3
                IA[par, r, 4] += IA[i, r, 4] - ur * v4
                IA[par, r, 5] += IA[i, r, 5] - ur * v5
        elif par >= 0:  # stuck: the joint is rigid, its whole articulated inertia passes on
            for r in range(6):
                y[i, r] = (IA[i, r, 0] * c0 + IA[i, r, 1] * c1 + IA[i, r, 2] * c2
                           + IA[i, r, 3] * c3 + IA[i, r, 4] * c4 + IA[i, r, 5] * c5)
                for k in range(6):
                    IA[par, r, k] += IA[i, r, k]
    bias_pass(parents, state, ab, abv)
    return True


@njit(cache=True)
def bias_pass(parents, state, ab, abv):
    """The articulated bias forces pᴬ for right-hand sides μ (abv[_MU]) on the last
    :func:`articulated_pass`'s inertias: pᴬ_parent += pᴬ_i + U_i (μ_i − T_iᵀ pᴬ_i)/D_i + Iᵃ_i c_i
    (a stuck joint: pᴬ_i + Iᴬ_i c_i)."""
    n = parents.shape[0]
    beta, pA, U, y, T = ab[_BETA], ab[_PA], ab[_U], ab[_Y], ab[_T]
    Dd, mu = abv[_DD], abv[_MU]
    for i in range(n):
        for k in range(6):
            pA[i, k] = beta[i, k]
    for i in range(n - 1, -1, -1):
        par = parents[i]
        if par < 0:
            continue
        if state[i] == FREE:
            x = (mu[i] - (T[i, 0] * pA[i, 0] + T[i, 1] * pA[i, 1] + T[i, 2] * pA[i, 2]
                          + T[i, 3] * pA[i, 3] + T[i, 4] * pA[i, 4] + T[i, 5] * pA[i, 5])) / Dd[i]
            for r in range(6):
                pA[par, r] += pA[i, r] + U[i, r] * x + y[i, r]
        else:
            for r in range(6):
                pA[par, r] += pA[i, r] + y[i, r]


@njit(cache=True)
def forward_pass(parents, gravity, state, ab, abv, IA, qdd):
    """q̈_i = (μ_i − T_iᵀ pᴬ_i − V_iᵀ a'_i)/D_i (0 when stuck), the body accelerations
    a_i = a_parent + c_i + S_i q̈_i and the joint wrenches fn_i = Iᴬ_i a_i + pᴬ_i."""
    n = parents.shape[0]
    Sw, c, pA, Vt, T, a, fn = ab[_SW], ab[_C], ab[_PA], ab[_VT], ab[_T], ab[_ACC], ab[_FN]
    Dd, mu = abv[_DD], abv[_MU]
    for i in range(n):
        par = parents[i]
        if par >= 0:
            a0, a1, a2 = a[par, 0] + c[i, 0], a[par, 1] + c[i, 1], a[par, 2] + c[i, 2]
            a3, a4, a5 = a[par, 3] + c[i, 3], a[par, 4] + c[i, 4], a[par, 5] + c[i, 5]
        else:
            a0, a1, a2 = c[i, 0] - gravity[0], c[i, 1] - gravity[1], c[i, 2] - gravity[2]
            a3, a4, a5 = c[i, 3], c[i, 4], c[i, 5]
        x = 0.0
        if state[i] == FREE:
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
        qdd[i] = x
        a[i, 0], a[i, 1], a[i, 2], a[i, 3], a[i, 4], a[i, 5] = a0, a1, a2, a3, a4, a5
        for r in range(6):
            fn[i, r] = pA[i, r] + (IA[i, r, 0] * a0 + IA[i, r, 1] * a1 + IA[i, r, 2] * a2
                                   + IA[i, r, 3] * a3 + IA[i, r, 4] * a4 + IA[i, r, 5] * a5)


@njit(cache=True)
def joint_frame(oMi, fn, i, W):
    """W[i] = joint i's wrench fn_i (world frame, at its origin) in the joint's frame:
    [Rᵀ f; Rᵀ (n − p × f)] with (R, p) = oMi[i]."""
    f0, f1, f2 = fn[i, 0], fn[i, 1], fn[i, 2]
    px, py, pz = oMi[i, 0, 3], oMi[i, 1, 3], oMi[i, 2, 3]
    m0 = fn[i, 3] - (py * f2 - pz * f1)
    m1 = fn[i, 4] - (pz * f0 - px * f2)
    m2 = fn[i, 5] - (px * f1 - py * f0)
    for r in range(3):
        W[i, r] = oMi[i, 0, r] * f0 + oMi[i, 1, r] * f1 + oMi[i, 2, r] * f2
        W[i, 3 + r] = oMi[i, 0, r] * m0 + oMi[i, 1, r] * m1 + oMi[i, 2, r] * m2


@njit(cache=True)
def evaluate(codes, params, kinds, axes, oMi, arm, v, tau, state, ab, abv, qdd):
    """The sliding joints' law magnitudes φ_i(fn_i) at the wrenches of the last forward pass,
    and (worst residual |Sᵀ fn + armature q̈ − τ − τf|, largest applied effort, largest
    inertial effort |Sᵀ fn|) over them."""
    n = codes.shape[0]
    Sw, fn, W = ab[_SW], ab[_FN], ab[_WL]
    phi, direction = abv[_PHI], abv[_DIR]
    worst = 0.0
    applied = 0.0
    inertial = 0.0
    for i in range(n):
        if state[i] != FREE or codes[i] == 0:
            continue
        joint_frame(oMi, fn, i, W)
        d = direction[i]
        pr, e, Wi = law_inputs(params, axes, W, i)
        m = friction_one_inline(codes[i], pr, kinds[i], e, Wi, abs(v[i]) * d, d)
        phi[i] = m
        s = _joint_effort(Sw, fn, arm, qdd, i)
        worst = max(worst, abs(s - tau[i] + d * m))
        applied = max(applied, abs(tau[i]), m)
        inertial = max(inertial, abs(s))
    return worst, applied, inertial


@njit(cache=True, inline="always")
def add_force_row(oMi, fn, T, mu, i, d, g):
    """T_i += d ĝ_i and μ_i += d ĝ_iᵀ fn_i: a law's force-side row g = ∂φ_i/∂fn_i (joint i's
    frame; entries that are not finite count 0) as a world-frame one ĝ, gᵀ X* fn = (X*ᵀ g)ᵀ fn
    (the linearisation's T_i = S_i + d_i g_i and its share of μ_i)."""
    g0, g1, g2 = finite_or_zero(g[0]), finite_or_zero(g[1]), finite_or_zero(g[2])
    g3, g4, g5 = finite_or_zero(g[3]), finite_or_zero(g[4]), finite_or_zero(g[5])
    n0 = oMi[i, 0, 0] * g3 + oMi[i, 0, 1] * g4 + oMi[i, 0, 2] * g5
    n1 = oMi[i, 1, 0] * g3 + oMi[i, 1, 1] * g4 + oMi[i, 1, 2] * g5
    n2 = oMi[i, 2, 0] * g3 + oMi[i, 2, 1] * g4 + oMi[i, 2, 2] * g5
    px, py, pz = oMi[i, 0, 3], oMi[i, 1, 3], oMi[i, 2, 3]
    e0 = oMi[i, 0, 0] * g0 + oMi[i, 0, 1] * g1 + oMi[i, 0, 2] * g2 + py * n2 - pz * n1
    e1 = oMi[i, 1, 0] * g0 + oMi[i, 1, 1] * g1 + oMi[i, 1, 2] * g2 + pz * n0 - px * n2
    e2 = oMi[i, 2, 0] * g0 + oMi[i, 2, 1] * g1 + oMi[i, 2, 2] * g2 + px * n1 - py * n0
    T[i, 0] += d * e0
    T[i, 1] += d * e1
    T[i, 2] += d * e2
    T[i, 3] += d * n0
    T[i, 4] += d * n1
    T[i, 5] += d * n2
    mu[i] += d * (e0 * fn[i, 0] + e1 * fn[i, 1] + e2 * fn[i, 2] + n0 * fn[i, 3]
                  + n1 * fn[i, 4] + n2 * fn[i, 5])


@njit(cache=True)
def linearize(codes, params, kinds, axes, oMi, v, tau, state, ab, abv, newton):
    """Projections T and right-hand sides μ of the sliding joints' laws linearised at the last
    evaluated wrenches (φ, W from :func:`evaluate`): T_i = S_i + d_i g_i, g_i = ∂φ_i/∂fn_i carried
    to the world frame, μ_i = τ_i − d_i φ_i + d_i g_iᵀ fn_i; ``newton`` False: the plain step
    (T = S, friction frozen at φ)."""
    n = codes.shape[0]
    Sw, fn, W, T = ab[_SW], ab[_FN], ab[_WL], ab[_T]
    phi, direction, mu = abv[_PHI], abv[_DIR], abv[_MU]
    for i in range(n):
        for k in range(6):
            T[i, k] = Sw[i, k]
        mu[i] = tau[i]
        if state[i] != FREE or codes[i] == 0:
            continue
        d = direction[i]
        mu[i] = tau[i] - d * phi[i]
        if not newton:
            continue
        pr, e, Wi = law_inputs(params, axes, W, i)
        _, g = friction_gradient_inline(codes[i], pr, kinds[i], e, Wi, abs(v[i]) * d, d)
        add_force_row(oMi, fn, T, mu, i, d, g)


@njit(cache=True)
def chord_rhs(codes, tau, state, ab, abv):
    """μ for the kept projections T at the last evaluated wrenches (a chord step):
    μ_i = τ_i − d_i φ_i + (T_i − S_i)ᵀ fn_i."""
    n = codes.shape[0]
    Sw, fn, T = ab[_SW], ab[_FN], ab[_T]
    phi, direction, mu = abv[_PHI], abv[_DIR], abv[_MU]
    for i in range(n):
        if state[i] != FREE or codes[i] == 0:
            continue
        s = 0.0
        for k in range(6):
            s += (T[i, k] - Sw[i, k]) * fn[i, k]
        mu[i] = tau[i] - direction[i] * phi[i] + s


@njit(cache=True)
def _clear_release(codes, params, kinds, axes, oMi, arm, tau, state, ab, abv, qdd, margin, res):
    """After a first pass: True when some stuck joint's holding effort exceeds its bound by more
    than ``margin``·(1 + bound) plus twice the sliding joints' residual ``res`` — it will break
    away whatever the iteration still changes; the rules then need no converged motion."""
    n = codes.shape[0]
    Sw, fn, W = ab[_SW], ab[_FN], ab[_WL]
    for i in range(n):
        if state[i] != STUCK:
            continue
        hold = _joint_effort(Sw, fn, arm, qdd, i) - tau[i]
        joint_frame(oMi, fn, i, W)
        release = -1.0 if hold > 0 else 1.0
        pr, e, Wi = law_inputs(params, axes, W, i)  # values: no reference counts (issue 35)
        bound = friction_one_inline(codes[i], pr, kinds[i], e, Wi, 0.0, release)
        if abs(hold) - bound > margin * (1.0 + bound) + 2.0 * res:
            return True
    return False


#: the release prediction's coordinate descent (:func:`predict_release`): sweeps at most per
#: root subtree, and the relative change of the predicted accelerations in a sweep that ends it
PREDICT_SWEEPS = 30
PREDICT_TOL = 1e-4
#: the prediction only where the joints' mean depth (ancestors) is at most this: the elimination
#: of a deep chain fills its rows with every ancestor (its cost grows as n·depth²); issue 35
#: measured forward dynamics on serial chains, new/old: 10 joints 0.87, 25 1.05, 50 1.71,
#: 200 3.84 without this bound (panda's mean depth is 4, talos_reduced's 4.4)
PREDICT_DEPTH = 8
#: consecutive calls on one Data that held every joint at rest, after which the instant's solve
#: stops predicting releases (until a call releases one)
HELD_CALLS = 2.0


@njit(cache=True)
def _support_solve(Sf, r, lo, hi, h, bd, xs, work):
    """:func:`predict_release`'s exact step: with the signs s of the current x on its support P
    (the joints lo ≤ a < hi of one root subtree, S row-major r × r in Sf), solve
    S_PP z = −h_P − β_P s by Cholesky (in ``work``) and keep z when it is optimal — the same
    signs, and every joint off P within its bound, |h_a + S_aP z| ≤ β_a. Returns whether it
    was kept (x then holds z)."""
    p = 0
    for a in range(lo, hi):
        if xs[a] != 0.0:
            p += 1
    if p == 0 or p * p + 2 * p > work.shape[0]:
        return False
    P = work[p * p + p:p * p + 2 * p]  # the support's indices (as floats), then A, z
    k = 0
    for a in range(lo, hi):
        if xs[a] != 0.0:
            P[k] = a
            k += 1
    for i in range(p):
        ai = int(P[i])
        for j in range(i + 1):
            work[i * p + j] = Sf[ai * r + int(P[j])]
        work[p * p + i] = -h[ai] - (bd[ai] if xs[ai] > 0 else -bd[ai])
    for j in range(p):  # A = L Lᵀ in the lower triangle
        t = work[j * p + j]
        for k in range(j):
            t -= work[j * p + k] * work[j * p + k]
        if not t > 0.0:
            return False
        t = np.sqrt(t)
        work[j * p + j] = t
        for i in range(j + 1, p):
            u = work[i * p + j]
            for k in range(j):
                u -= work[i * p + k] * work[j * p + k]
            work[i * p + j] = u / t
    z = work[p * p:p * p + p]
    for i in range(p):
        t = z[i]
        for k in range(i):
            t -= work[i * p + k] * z[k]
        z[i] = t / work[i * p + i]
    for i in range(p - 1, -1, -1):
        t = z[i]
        for k in range(i + 1, p):
            t -= work[k * p + i] * z[k]
        z[i] = t / work[i * p + i]
    for i in range(p):
        if (z[i] > 0.0) != (xs[int(P[i])] > 0.0) or z[i] == 0.0:
            return False
    for a in range(lo, hi):
        if xs[a] != 0.0:
            continue
        g = h[a]
        for i in range(p):
            g += Sf[a * r + int(P[i])] * z[i]
        if abs(g) > bd[a]:
            return False
    for i in range(p):
        xs[int(P[i])] = z[i]
    return True


@njit(cache=True)
def predict_release(codes, params, kinds, axes, parents, Iw, arm, state, y, Sw, W, IA, M, L,
                    lists, hold, x, qp):
    """The first stick/slip assignment, predicted before any pass: x_i ≠ 0 (its sign the
    direction) for the stuck joints that will move. At q̈ = 0 each joint needs
    y = τ − b − d φ (b = Sᵀ fn(q, q̇, 0), φ the sliding joints' laws there; y for the stuck
    ones without friction); with the stuck joints R held and the others F free (their friction
    frozen), R's holding efforts are h = −(y_R − M_RF M_FF⁻¹ y_F) and their bounds β (the laws
    at fn(q, q̇, 0), released against h). Releasing some of them adds accelerations x that make

        min_x ½ xᵀ S x + hᵀ x + Σ β_i |x_i|,     S = M_RR − M_RF M_FF⁻¹ M_FR,

    stationary: S x = τf − h, τf_i = −β_i sgn(x_i) (|τf_i| ≤ β_i where x_i = 0) — the joints'
    equations with frozen laws. Solved by coordinate descent, each root subtree alone (S has no
    coupling between them), with :func:`_support_solve`'s exact steps (in IA's storage after
    its first 3n entries). M by
    the CRBA in the world frame (composite inertias in IA), then F eliminated from it, leaves
    first (in place: the fill stays within each eliminated joint's ancestors and stuck
    descendants); y and M are overwritten. False when M_FF is not positive definite, or the
    joints' mean depth exceeds PREDICT_DEPTH."""
    n = parents.shape[0]
    root, end, depth = lists[3], lists[4], lists[0]  # each joint's root subtree: [root, end)
    total = 0                                         # (depth-first numbering), its depth
    for i in range(n):
        if parents[i] < 0:
            root[i], depth[i] = i, 0
        else:
            root[i], depth[i] = root[parents[i]], depth[parents[i]] + 1
        total += depth[i]
    if total > PREDICT_DEPTH * n:
        return False  # deep chains: the elimination's fill costs more than it saves
    e = n
    for i in range(n - 1, -1, -1):
        end[i] = e
        if parents[i] < 0:
            e = i
    for i in range(n):
        if not i < end[root[i]]:
            return False  # root subtrees not contiguous (a numbering that is not depth-first)
    IAf, Iwf = IA.reshape(36 * n), Iw.reshape(36 * n)
    for j in range(36 * n):
        IAf[j] = Iwf[j]
    for i in range(n):  # M is zero between root subtrees: only its diagonal blocks are read
        if parents[i] < 0:
            for a in range(i, end[i]):
                for b in range(i, end[i]):
                    M[a, b] = 0.0
    for i in range(n - 1, -1, -1):
        par = parents[i]
        if par >= 0:
            a, b = 36 * par, 36 * i
            for j in range(36):
                IAf[a + j] += IAf[b + j]
    for j in range(n):  # M_kj = S_kᵀ Ic_j S_j, k = j and j's ancestors (world frame)
        s0, s1, s2, s3, s4, s5 = Sw[j, 0], Sw[j, 1], Sw[j, 2], Sw[j, 3], Sw[j, 4], Sw[j, 5]
        F0, F1, F2, F3, F4, F5 = _inertia_times(IA[j], s0, s1, s2, s3, s4, s5)
        M[j, j] = s0 * F0 + s1 * F1 + s2 * F2 + s3 * F3 + s4 * F4 + s5 * F5 + arm[j]
        k = parents[j]
        while k >= 0:
            val = (Sw[k, 0] * F0 + Sw[k, 1] * F1 + Sw[k, 2] * F2 + Sw[k, 3] * F3
                   + Sw[k, 4] * F4 + Sw[k, 5] * F5)
            M[k, j] = val
            M[j, k] = val
            k = parents[k]
    nb = lists[0]
    for k in range(n - 1, -1, -1):  # eliminate F, leaves first
        if state[k] == STUCK:
            continue
        p = M[k, k]
        if not 0.0 < p < np.inf:
            return False
        m = 0
        for j in range(root[k], end[k]):
            if j != k and (j < k or state[j] == STUCK) and M[k, j] != 0.0:
                nb[m] = j
                m += 1
        yk = y[k] / p
        for a in range(m):
            ja = nb[a]
            fa = M[ja, k] / p
            y[ja] -= M[ja, k] * yk
            for b in range(m):
                jb = nb[b]
                M[ja, jb] -= fa * M[k, jb]
    Rl = lists[1]
    r = 0
    for i in range(n):
        if state[i] == STUCK:
            Rl[r] = i
            r += 1
    Lf = L.reshape(n * n)  # S compact (r × r, row-major; r ≤ n); h, β, x and the exact steps'
    h, bd, xs = IAf[0:r], IAf[r:2 * r], IAf[2 * r:3 * r]  # scratch in IA (spent: M is built)
    for a in range(r):
        i = Rl[a]
        for b in range(r):
            if root[Rl[b]] == root[i]:
                Lf[a * r + b] = M[i, Rl[b]]
        h[a] = -y[i]
        hold[i] = h[a]
        release = -1.0 if h[a] > 0 else 1.0
        pr, e, Wi = law_inputs(params, axes, W, i)
        bd[a] = friction_one_inline(codes[i], pr, kinds[i], e, Wi, 0.0, release)
        xs[a] = 0.0
    lo = 0
    while lo < r:  # each root subtree's stuck joints: a contiguous run (depth-first numbering)
        hi = lo + 1
        while hi < r and root[Rl[hi]] == root[Rl[lo]]:
            hi += 1
        for sweep in range(PREDICT_SWEEPS):
            delta = 0.0
            big = 0.0
            flipped = False
            for a in range(lo, hi):
                row = a * r
                g = h[a]
                for b in range(lo, hi):
                    g += Lf[row + b] * xs[b]
                saa = Lf[row + a]
                g -= saa * xs[a]
                bnd = bd[a]
                new = 0.0
                if abs(g) > bnd:
                    new = -(g - bnd) / saa if g > 0 else -(g + bnd) / saa
                flipped = flipped or (new > 0.0) != (xs[a] > 0.0) or (new < 0.0) != (xs[a] < 0.0)
                delta = max(delta, abs(new - xs[a]))
                big = max(big, abs(new))
                xs[a] = new
            if delta <= PREDICT_TOL * (1.0 + big):
                break
            if not flipped and _support_solve(Lf, r, lo, hi, h, bd, xs, IAf[3 * n:]):
                break  # the signs held a sweep: their exact answer passes the optimality test
        lo = hi
    for i in range(n):
        x[i] = 0.0
    for a in range(r):
        x[Rl[a]] = xs[a]
    for k in range(n):  # the plain step's q̈: x on R, then F from the eliminated rows, parents
        qp[k] = x[k]    # first
    for k in range(n):
        if state[k] == STUCK:
            continue
        t = y[k]
        for j in range(root[k], end[k]):
            if j != k and (j < k or state[j] == STUCK) and M[k, j] != 0.0:
                t -= M[k, j] * qp[j]
        qp[k] = t / M[k, k]
    return True


@njit(cache=True)
def _solve_assignment(codes, params, kinds, axes, parents, gravity, oMi, Iw, arm, v, tau, tol,
                      max_iter, state, IA, ab, abv, qdd, newton, resume, once, early, info):
    """Newton's method on the articulated recursion for the stick/slip assignment ``state``,
    linearised first at the wrenches in ab[_FN] (``newton`` False: the plain step there), or
    (``resume``) continuing a solve of the same assignment to a tighter tolerance with its last
    linearisation (a chord step: no backward pass of the inertias). Returns 1 when the residual
    is within tol of the applied efforts and the steps of q̈ have converged (the rule of
    robot_dynamics.algorithm.friction_solve.converged_step), or (``once``, a screened
    assignment) when the first pass's residual alone is within tol; 2 when
    ``early`` > 0 and after the first pass a stuck joint clearly breaks away
    (:func:`_clear_release`); 0 when the recursions cannot answer (a pivot that is not positive,
    no convergence)."""
    n = codes.shape[0]
    last = abv[_LAST]
    # φ and W hold every sliding joint's law at the wrenches in ab[_FN] (the caller evaluates
    # them at fn(q, q̇, 0), each pass after it, the rules where they release a joint)
    if resume:  # a chord step from there
        chord_rhs(codes, tau, state, ab, abv)
        bias_pass(parents, state, ab, abv)
    else:
        linearize(codes, params, kinds, axes, oMi, v, tau, state, ab, abv, newton)
        if not articulated_pass(parents, Iw, arm, state, IA, ab, abv):
            return 0
    prev_res = np.inf
    prev = np.inf
    step = np.inf
    for it in range(max_iter):
        for i in range(n):
            last[i] = qdd[i]
        forward_pass(parents, gravity, state, ab, abv, IA, qdd)
        info[2] += 1
        prev = step
        step = 0.0
        big = 0.0
        for i in range(n):
            step = max(step, abs(qdd[i] - last[i]))
            big = max(big, abs(qdd[i]))
        if not step < np.inf:
            return 0
        res, applied, inertial = evaluate(codes, params, kinds, axes, oMi, arm, v, tau, state,
                                          ab, abv, qdd)
        if it == 0 and early > 0.0 and _clear_release(codes, params, kinds, axes, oMi, arm, tau,
                                                       state, ab, abv, qdd, early, res):
            return 2
        if once and res <= tol * (1.0 + applied) + ROUNDOFF * inertial:
            return 1  # a screen: the laws hold within tol at this motion, the rules judge it
        bound = tol * (1.0 + big)
        if res <= tol * (1.0 + applied) + ROUNDOFF * inertial and (
                step <= bound or (it >= 1 and step < prev and step * step <= bound * (prev - step))):
            return 1
        if newton and res < CHORD * prev_res:  # the last linearisation serves
            chord_rhs(codes, tau, state, ab, abv)
            bias_pass(parents, state, ab, abv)
        else:
            newton = True
            linearize(codes, params, kinds, axes, oMi, v, tau, state, ab, abv, True)
            if not articulated_pass(parents, Iw, arm, state, IA, ab, abv):
                return 0
        prev_res = res
    return 0


@njit(cache=True)
def solve_instant(mb, fr, q, v, tau, v_tol, tol, max_iter, w, fext):
    """q̈ (vecs[ACC] of kernels/fd.py is the caller's ``qdd``) with friction at an instant by
    the articulated recursions; fills Data's placements, world poses, f = fn(q, q̇, 0) (joint
    frames), tau_friction and the report fields (stuck, at_rest, info, residual). False when
    the general solve must answer (see the module docstring); nothing it reads is left
    inconsistent then (it recomputes from q, q̇, τ). ``fext`` (n, 6, or 0 rows: none): the
    external wrenches on the bodies (:func:`external_world`)."""
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    codes, params = laws_views(fr, n)
    R, p, _, _, f, _, tauf, _, _, oMi, _ = work_views(mb, w)
    _, _, Mp, Lp, _, _, vecs, sums, state, at_rest, lists, info = scratch_views(mb, w)
    Iw, IA, ab, abv = articulated_views(mb, w)
    gravity = model_gravity(mb)
    arm = model_armature(mb)
    for i in range(n):
        if can_self_lock(codes[i], params[i]):
            return False  # Newton can reach a root against the assumed direction there
    qdd = vecs[16]  # kernels/fd.py ACC
    world_setup(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, R, p, oMi, Iw, ab)
    if fext.shape[0] > 0:
        external_world(oMi, fext, ab[_BETA])
    for i in range(n):
        qdd[i] = 0.0
    wrenches_at(parents, gravity, Iw, state, ab, qdd)  # fn(q, q̇, 0)
    Sw, fn, W = ab[_SW], ab[_FN], ab[_WL]
    direction, hold, phi, excess = abv[_DIR], abv[_HOLD], abv[_PHI], abv[_EXCESS]
    for i in range(n):  # Data's f: fn(q, q̇, 0) in the joint frames
        joint_frame(oMi, fn, i, W)
        for k in range(6):
            f[i, k] = W[i, k]
    any_active = False
    any_stuck = False
    for i in range(n):  # (q̈ = 0 already: the wrenches above)
        rest = abs(v[i]) <= v_tol
        at_rest[i] = 1 if (rest and codes[i] != 0) else 0
        state[i] = STUCK if at_rest[i] else FREE
        direction[i] = 0.0 if rest else (1.0 if v[i] > 0 else -1.0)
        any_active = any_active or codes[i] != 0
        any_stuck = any_stuck or at_rest[i] == 1
    for k in range(5):
        info[k] = 0
    info[7] = 0  # no factored matrix for the general solve to reuse
    if not any_active:  # no friction: the articulated-body algorithm, once
        for i in range(n):
            abv[_MU, i] = tau[i]
            for k in range(6):
                ab[_T, i, k] = Sw[i, k]
            tauf[i] = 0.0
        if not articulated_pass(parents, Iw, arm, state, IA, ab, abv):
            return False
        forward_pass(parents, gravity, state, ab, abv, IA, qdd)
        info[0] = 1
        sums[0] = 0.0
        return True
    info[1] = 2  # Newton
    evaluate(codes, params, kinds, axes, oMi, arm, v, tau, state, ab, abv, qdd)
    predicted = False
    y, x = abv[_LAST], abv[_EXCESS]
    if any_stuck and sums[7] < HELD_CALLS:
        for i in range(n):
            y[i] = tau[i] - _joint_effort(Sw, fn, arm, qdd, i)
            if state[i] == FREE and codes[i] != 0:
                y[i] -= direction[i] * phi[i]
    # the last HELD_CALLS calls on this Data held every joint at rest (sums[7] counts them):
    # no prediction (its cost buys nothing there); else predict (docs/measurements.md)
    if any_stuck and sums[7] < HELD_CALLS and predict_release(
            codes, params, kinds, axes, parents, Iw, arm, state, y, Sw, W, IA, Mp, Lp, lists,
            hold, x, qdd):
        for i in range(n):
            if state[i] == STUCK and x[i] != 0.0:
                state[i] = FREE
                direction[i] = 1.0 if x[i] > 0 else -1.0
        # the plain step of the predicted assignment is its q̈ (qdd): the solve goes on with
        # Newton from the wrenches there (no pass of the inertias for the plain step)
        wrenches_at(parents, gravity, Iw, state, ab, qdd)
        evaluate(codes, params, kinds, axes, oMi, arm, v, tau, state, ab, abv, qdd)
        predicted = True
    bulk = True
    premature = 0
    newton = predicted  # the first linearisation at fn(q, q̇, 0): the plain step (predicted: done)
    # (the rules of robot_dynamics.algorithm.friction_solve at an instant, changed in bulk: the
    # module docstring) once the assignment has changed, each new one is
    # solved to SCREEN only (its rules need no more): one pass, linearised at the last answer's
    # wrenches, when its laws' residual is within SCREEN there (issue 35: one forward pass per
    # screen, not two). The one that passes the rules is then solved on to tol from there with
    # that linearisation (chord steps: a backward pass of the inertias costs more than the
    # forward passes it would save) and checked again: the answer passes the same rules
    screen = False
    resume = False
    for change in range(12 * n + 21):
        tol_k = max(tol, SCREEN) if screen else tol
        done = _solve_assignment(codes, params, kinds, axes, parents, gravity, oMi, Iw, arm, v,
                                 tau, tol_k, max_iter, state, IA, ab, abv, qdd, newton,
                                 resume, screen, EARLY, info)
        if done == 0:
            return False
        newton = True  # from the last answer on
        resume = False
        for i in range(n):  # the friction (and stop) effort each joint needs for this motion
            hold[i] = _joint_effort(Sw, fn, arm, qdd, i) - tau[i]
        # the rules at this motion, each joint's excess over its own in excess (> 0: it breaks
        # it): 1) a breaking joint moving against its release direction sticks (not judged on
        # an early answer to tol: a clear release comes first; a screen's early answer is one
        # pass, as its others), 3) a stuck joint whose holding effort exceeds its bound breaks
        # away. In bulk both change at once, every joint that breaks its rule (issue 35: 3.0 →
        # 2.6 changes per mixed state on talos); then one joint alone, rule 1's worst first
        worst1, worst3 = -1, -1
        worst1_val, worst3_val = 0.0, 0.0
        rel_noise = tol_k if screen else NOISE  # a screened motion: within tol_k
        for i in range(n):
            excess[i] = 0.0
            if state[i] == STUCK:
                joint_frame(oMi, fn, i, W)
                release = -1.0 if hold[i] > 0 else (1.0 if hold[i] < 0 else 0.0)
                pr, e, Wi = law_inputs(params, axes, W, i)  # values, as evaluate's
                bound = friction_one_inline(codes[i], pr, kinds[i], e, Wi, 0.0, release)
                phi[i] = bound
                noise = rel_noise * (1.0 + abs(tau[i]) + abs(hold[i] + tau[i]))  # roundoff
                excess[i] = abs(hold[i]) - bound * (1 + 1e-9) - noise
                if excess[i] > 0 and excess[i] / (1.0 + bound) > worst3_val:
                    worst3, worst3_val = i, excess[i] / (1.0 + bound)
            elif (done != 2 or screen) and at_rest[i]:
                val = -direction[i] * qdd[i]
                if val > tol_k * (1 + abs(qdd[i])):
                    excess[i] = val
                    if val > worst1_val:
                        worst1, worst1_val = i, val
        if worst1 >= 0 or worst3 >= 0:
            for i in range(n):
                if not excess[i] > 0:
                    continue
                if state[i] == STUCK:
                    if not (bulk or (worst1 < 0 and i == worst3)):
                        continue
                    state[i] = FREE
                    d = -1.0 if hold[i] > 0 else 1.0
                    direction[i] = d
                    # its law where it starts to slide (W: this rule's joint frames), as evaluate
                    pr, e, Wi = law_inputs(params, axes, W, i)
                    phi[i] = friction_one_inline(codes[i], pr, kinds[i], e, Wi, abs(v[i]) * d, d)
                elif bulk or i == worst1:
                    state[i] = STUCK
                    direction[i] = 0.0
            info[3] += 1
            if worst1 >= 0:  # a release was premature: after PREMATURE of them, one at a time
                premature += 1
                bulk = premature < PREMATURE
            screen = True
            continue
        if screen:  # this assignment holds as far as a screened motion tells: on to tol
            screen = False
            resume = True
            continue
        res = 0.0
        for i in range(n):
            if state[i] == STUCK:  # at most the bound, whatever the roundoff of the holding
                tauf[i] = min(max(hold[i], -phi[i]), phi[i])
            elif codes[i] != 0:
                tauf[i] = -direction[i] * phi[i]
            else:
                tauf[i] = 0.0
            res = max(res, abs(hold[i] - tauf[i]))
        info[0] = 1
        sums[0] = res
        if any_stuck:  # did a joint at rest break away? (the next call's prediction, above)
            held = True
            for i in range(n):
                if at_rest[i] and state[i] == FREE:
                    held = False
            sums[7] = min(sums[7] + 1.0, HELD_CALLS) if held else 0.0
        return True
    return False
