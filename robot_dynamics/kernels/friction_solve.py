"""The friction/stiction solve of :mod:`robot_dynamics.algorithm.friction_solve`, compiled, for packed laws.

Same algorithm, same tolerances, same outputs: the Python module is its specification and the
tests compare the two. ``info`` returns [converged (1; 0 failed, −1 the stick/slip assignments
ran out, −2 the work cap WORK (n + 2) max_iter iterations was reached), method (0 direct,
1 fixed point, 2 Newton), iterations, active-set changes, non-unique flag].

The successive approximation runs as Newton's method: a⁺ = a + P⁻¹ r(a), r the residual of
the seed's equations, P = M_FF − ∂τf/∂a from the laws' analytic derivatives
(:func:`_newton_matrix`), factored on M's tree pattern without fill-in
(:func:`factor_tree_lu`); once close the last factorisation serves (chord) — at an instant
also while its steps shrink by CHORD each — and a simulator pass reuses the previous pass's.
Long chains (refactoring is n³ there) and self-locking gears (Newton can reach a root against
the assumed direction) keep the seed's iteration preconditioned by the diagonal
Λ = max(0, −∂τf_i/∂a_i), with M_FF + Λ factored once (LTL, :func:`factor_free`). If the
iteration fails, the Newton fallback (difference Jacobian) refactors M_FF and starts from the
frictionless motion M_FF⁻¹ rhs, the root nearest which it returns where the motion is
non-unique (robot_dynamics.algorithm.friction_solve). Everything lives in caller-provided scratch
(:mod:`.layout`) except that fallback.
"""
from __future__ import annotations

import math

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import finite_or_zero
from robot_dynamics.kernels.friction import (affine_in_velocity, can_self_lock,
    friction_gradient_inline, friction_one, friction_one_inline, law_inputs)

# rows of the ``vecs`` scratch (24, n) used here; kernels/fd.py uses rows 16 and up
(_TARGET, _DIRECTION, _HOLD, _BOUNDS, _RELEASE, _NOISE_ROW, _QD, _RHS0, _RHS, _X, _NEW, _TF,
 _TRIAL) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
_LAMBDA = _QD  # Λ of the free joints (by position in F); the row is otherwise unused
#: roundoff allowance of the inertial efforts Σ|M a| in the fixed point's residual test
ROUNDOFF = 1e-14
# rows for the callers: bounds of the end-of-step velocity (the stops), the stops' reactions
ULO, UHI, TAU_LIMIT = 13, 14, 15
# joint states (the ``stuck`` array), as robot_dynamics.algorithm.friction_solve
FREE, STUCK, LOWER, UPPER = 0, 1, 2, 3
NOISE = 1e-12  # relative roundoff allowance of a holding effort (robot_dynamics.algorithm.friction_solve._NOISE)
#: tolerance of the motions that only screen a stick/slip assignment (robot_dynamics.algorithm.friction_solve)
SCREEN = 1e-3
#: at an instant (forward dynamics), a chord step that shrank the step at least this much keeps
#: Newton's matrix (robot_dynamics.algorithm.friction_solve.CHORD)
CHORD = 0.1
#: the seed's iteration (a long chain) whose step is more than STALL of the step before goes
#: over to Newton from there (robot_dynamics.algorithm.friction_solve.STALL)
STALL = 0.5
#: premature releases after which the active set changes one joint at a time
#: (robot_dynamics.algorithm.friction_solve; why 2: docs/measurements.md)
PREMATURE = 2
#: iterations of one solve, summed over its stick/slip assignments, after which it gives up:
#: WORK (n + 2) max_iter (robot_dynamics.algorithm.friction_solve.WORK), a failed motion and its
#: Newton fallback for each joint that sticks and two more: a solve that cannot finish fails
#: within a bounded time (issue 35) — info[0] −2; −1 when the assignments (12 n + 21) ran out
WORK = 2


@njit(cache=True)
def wrenches_at(W0, D, rel, a, W):
    """W = W0 + Σ_α a_α D[α] (eq. 2.3.7), summed only over the joints α related to each joint
    (``rel`` = (ptr, idx, parents), CSR: ancestors, itself, descendants — D[α, i] is zero
    otherwise)."""
    ptr, idx = rel[0], rel[1]
    for i in range(a.shape[0]):
        w0, w1, w2, w3, w4, w5 = W0[i, 0], W0[i, 1], W0[i, 2], W0[i, 3], W0[i, 4], W0[i, 5]
        for k in range(ptr[i], ptr[i + 1]):
            al = idx[k]
            x = a[al]
            d = D[al, i]
            w0 += x * d[0]
            w1 += x * d[1]
            w2 += x * d[2]
            w3 += x * d[3]
            w4 += x * d[4]
            w5 += x * d[5]
        W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5] = w0, w1, w2, w3, w4, w5


@njit(cache=True)
def free_tree(F, nf, parents, pos, fpar):
    """The free joints F (increasing) as a tree: ``pos`` joint → position in F (−1: not free),
    ``fpar`` each free joint's nearest free ancestor (position in F, −1: none)."""
    for i in range(parents.shape[0]):
        pos[i] = -1
    for r in range(nf):
        pos[F[r]] = r
    for r in range(nf):
        j = parents[F[r]]
        while j >= 0 and pos[j] < 0:
            j = parents[j]
        fpar[r] = pos[j] if j >= 0 else -1


@njit(cache=True)
def factor_free(A, F, nf, parents, pos, fpar, L, shift):
    """Factor the free block H = A[F][:, F] + diag(shift[:nf]) as H = Lᵀ L without fill-in
    (Featherstone's LTL, RBDA §6.5): the free joints F (increasing) form a tree through their
    nearest free ancestor (``fpar``, positions in F), H[r, c] ≠ 0 only between related joints,
    and L keeps that pattern — O(nf·depth²) instead of O(nf³) on branched robots. False if H is
    not SPD."""
    free_tree(F, nf, parents, pos, fpar)
    for r in range(nf):
        L[r, r] = A[F[r], F[r]] + shift[r]
        c = fpar[r]
        while c >= 0:
            L[r, c] = A[F[r], F[c]]
            c = fpar[c]
    for k in range(nf - 1, -1, -1):
        if not L[k, k] > 0.0:
            return False
        d = math.sqrt(L[k, k])
        L[k, k] = d
        i = fpar[k]
        while i >= 0:
            L[k, i] /= d
            i = fpar[i]
        i = fpar[k]
        while i >= 0:
            lki = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= lki * L[k, j]
                j = fpar[j]
            i = fpar[i]
    return True


@njit(cache=True)
def solve_free(L, fpar, nf, b, x):
    """x ← H⁻¹ b on the leading nf entries with H = Lᵀ L from :func:`factor_free`."""
    for r in range(nf):
        x[r] = b[r]
    for k in range(nf - 1, -1, -1):  # Lᵀ y = b, leaves first
        x[k] /= L[k, k]
        yk = x[k]
        i = fpar[k]
        while i >= 0:
            x[i] -= L[k, i] * yk
            i = fpar[i]
    for k in range(nf):  # L x = y, root first
        s = x[k]
        i = fpar[k]
        while i >= 0:
            s -= L[k, i] * x[i]
            i = fpar[i]
        x[k] = s / L[k, k]


@njit(cache=True)
def _friction_of(codes, params, kinds, axes, v, a, W0, D, rel, stuck, direction, h, W, loaded,
                 out):
    """Signed friction of the non-stuck joints for accelerations ``a`` (zero where stuck);
    the reactions W(a) only when some law reads them (``loaded``)."""
    n = a.shape[0]
    if loaded:
        wrenches_at(W0, D, rel, a, W)
    for i in range(n):
        if stuck[i] or codes[i] == 0:
            out[i] = 0.0
            continue
        u = v[i] + h * a[i] if h > 0 else v[i]
        if direction[i] != 0.0:  # the assumed direction signs it (stiction.py _friction_of)
            u = abs(u) * direction[i]
        pr, e, Wi = law_inputs(params, axes, W, i)
        out[i] = -friction_one_inline(codes[i], pr, kinds[i], e, Wi, u, direction[i]) * direction[i]


@njit(cache=True)
def _newton_matrix(M, codes, params, kinds, axes, v, a, F, nf, fpar, direction, h, W, D, loaded,
                   lam, P):
    """P = M_FF − ∂τf_F/∂a_F at accelerations ``a`` on the free joints' tree pattern (P[r, c]
    with c an ancestor of r, and P[c, r]; positions in F): the Jacobian of the residual
    M_FF a − rhs − τf(a), for Newton's method. τf_i = −d_i m_i(W_i(a), u_i(a)), so
    −∂τf_i/∂a_α = d_i (∂m_i/∂W · pl_α[i] + δ_iα ∂m_i/∂u h) (eq. 2.3.7; u = q̇ + h a the velocity
    the law sees), from the laws' analytic derivatives (kernels/friction.py law_gradient).
    ``W`` must hold W(a) when ``loaded`` and is overwritten with the gradients. ``lam`` gets
    the diagonal Λ = max(0, −∂τf_i/∂a_i), the fallback preconditioner. Entries that are not
    finite are 0."""
    for r in range(nf):
        i = F[r]
        lam[r] = 0.0
        d = direction[i]
        if codes[i] == 0 or d == 0.0:
            for k in range(6):
                W[i, k] = 0.0
            continue
        u = v[i] + h * a[i] if h > 0 else v[i]
        du = 0.0
        if h > 0:
            du = h if u * d >= 0 else -h  # u = |q̇ + h a|·d
            u = abs(u) * d
        pr, e, wt = law_inputs(params, axes, W, i)
        mu, g = friction_gradient_inline(codes[i], pr, kinds[i], e, wt, u, d)
        for k in range(6):  # d_i ∂m_i/∂W_i: the row of −∂τf_i/∂a through the reactions
            x = g[k] * d
            W[i, k] = finite_or_zero(x)
        lam[r] = d * mu * du  # the velocity part of the diagonal, completed below
    for r in range(nf):
        i = F[r]
        Wi = W[i]
        x = lam[r]
        if loaded:
            Dii = D[i, i]
            x += (Wi[0] * Dii[0] + Wi[1] * Dii[1] + Wi[2] * Dii[2] + Wi[3] * Dii[3]
                  + Wi[4] * Dii[4] + Wi[5] * Dii[5])
        x = finite_or_zero(x)  # (0 for NaN: loads beyond the float range)
        lam[r] = x if x > 0.0 else 0.0
        P[r, r] = M[i, i] + x
        c = fpar[r]
        while c >= 0:
            al = F[c]
            P[r, c] = M[i, al]
            P[c, r] = M[al, i]
            if loaded:
                Da, Wa, Di = D[al, i], W[al], D[i, al]
                x = (Wi[0] * Da[0] + Wi[1] * Da[1] + Wi[2] * Da[2] + Wi[3] * Da[3]
                     + Wi[4] * Da[4] + Wi[5] * Da[5])
                y = (Wa[0] * Di[0] + Wa[1] * Di[1] + Wa[2] * Di[2] + Wa[3] * Di[3]
                     + Wa[4] * Di[4] + Wa[5] * Di[5])
                P[r, c] += finite_or_zero(x)
                P[c, r] += finite_or_zero(y)
            c = fpar[c]


@njit(cache=True)
def factor_tree_lu(P, fpar, nf):
    """In place, P (tree pattern of :func:`_newton_matrix`, not symmetric) eliminated leaves
    first without fill-in — the unsymmetric twin of :func:`factor_free`: each joint's unknown
    is removed from its ancestors' equations (multipliers stored in P[ancestor, k]). False
    when a pivot is not positive and finite (the caller then uses the diagonal Λ)."""
    for k in range(nf - 1, -1, -1):
        piv = P[k, k]
        if not 0.0 < piv < np.inf:
            return False
        i = fpar[k]
        while i >= 0:
            lik = P[i, k] / piv
            P[i, k] = lik
            j = fpar[k]
            while j >= 0:
                P[i, j] -= lik * P[k, j]
                j = fpar[j]
            i = fpar[i]
    return True


@njit(cache=True)
def solve_tree_lu(P, fpar, nf, b, x):
    """x ← P⁻¹ b on the leading nf entries with P from :func:`factor_tree_lu`."""
    for r in range(nf):
        x[r] = b[r]
    for k in range(nf - 1, -1, -1):  # the eliminations, leaves first
        xk = x[k]
        i = fpar[k]
        while i >= 0:
            x[i] -= P[i, k] * xk
            i = fpar[i]
    for k in range(nf):  # back substitution, root first
        s = x[k]
        j = fpar[k]
        while j >= 0:
            s -= P[k, j] * x[j]
            j = fpar[j]
        x[k] = s / P[k, k]


@njit(cache=True, inline="always")
def _solve_free(M, bias, tau, W0, D, rel, codes, params, kinds, axes, v, stuck, h, tol, max_iter,
                a, tauf, info, L, W, vecs, idx, start, loaded, screen, prev0, predict, lockfree,
                affine):
    """Accelerations of the free joints for the stick/slip assignment in ``stuck``, iterating
    from the free joints' entries of ``a`` (``start`` 0) — or from a = 0 (1, cold), or from a
    screened solve's answer for the same assignment (2; ``prev0`` its last step, the first
    contraction estimate's). ``screen``: the step test alone ends the iteration (no confirming
    residual; ``tauf`` is then that of the last iterate but one; ``predict``: and the factored
    matrix is kept for the next pass, as after a confirmed solve). ``lockfree``: no joint's law
    can self-lock (:func:`.friction.can_self_lock`); ``affine``: every law is affine in |q̇| and
    load-free (:func:`.friction.affine_in_velocity`): the caller's, once per solve. Returns the
    last step's size (0 for a direct solve), or -1 when there is no motion with this
    assignment. Sets ``idx[1, 0]`` to 1 when ``W`` holds the wrenches W(a) of the answer (a
    confirmed solve with ``loaded``), else 0."""
    cold = start == 1
    n = M.shape[0]
    target, direction = vecs[_TARGET], vecs[_DIRECTION]
    rhs0, rhs, x, new = vecs[_RHS0], vecs[_RHS], vecs[_X], vecs[_NEW]
    F = idx[0]
    idx[1, 0] = 0  # 1 once W holds the wrenches W(a) of the answer (a confirmed solve)
    nf = 0
    any_active = False
    lam = vecs[_LAMBDA]
    for i in range(n):
        tauf[i] = 0.0
        if stuck[i]:
            a[i] = target[i]
        else:  # a[i] is the first guess (the caller's)
            lam[nf] = 0.0
            F[nf] = i
            nf += 1
            any_active = any_active or codes[i] != 0
    if nf == 0:
        return 0.0
    ptr, ridx = rel[0], rel[1]
    for r in range(nf):  # M_FK over the related held joints (M is zero elsewhere)
        i = F[r]
        s = tau[i] - bias[i]
        for j in range(ptr[i], ptr[i + 1]):
            k = ridx[j]
            if stuck[k]:
                s -= M[i, k] * target[k]
        rhs0[r] = s
    fpar = idx[4]
    if not any_active:
        info[7] = 0
        if not factor_free(M, F, nf, rel[2], idx[3], fpar, L, lam):
            return -1.0
        solve_free(L, fpar, nf, rhs0, x)
        for r in range(nf):
            a[F[r]] = x[r]
        return 0.0
    if cold:
        for r in range(nf):
            a[F[r]] = 0.0
    # L still holds Newton's factored matrix of the caller's previous solve (info[7]) for the
    # same free joints (``pos``, left by that solve): the simulator's later passes of a step,
    # same M, velocity products barely moved — a chord step from it, refactored only if far
    same = info[7] == 1
    pos = idx[3]
    if same:
        for i in range(n):
            if (pos[i] >= 0) != (stuck[i] == FREE):
                same = False
                break
    info[7] = 0
    free_tree(F, nf, rel[2], idx[3], fpar)
    if info[1] < 1:
        info[1] = 1
    # successive approximation (seed 004 §2.8) as Newton's method: a⁺ = a + P⁻¹ r(a), residual
    # r = rhs − M_FF a + τf(a), P = M_FF − ∂τf/∂a at a (analytic) — quadratic, three or four
    # iterations where the plain iteration took seven; where P has a pivot that is not positive
    # (a law falling with the load or the speed faster than inertia rises), M_FF + Λ from then
    # on (the seed's iteration, preconditioned by the diagonal). Newton only where refactoring
    # its matrix is cheap beside an iteration: its tree LU costs Σ depth² against an
    # iteration's Σ depth (a long chain: n³ against n²; beyond ~48 joints in a row the seed's
    # iteration, factored once, is faster), and not with a self-locking gear (Newton can reach
    # a root with the gear against its assumed direction, and the active set then cycles)
    s1 = 0
    s2 = 0
    for r in range(nf):
        dep = 0
        c = fpar[r]
        while c >= 0:
            dep += 1
            c = fpar[c]
        s1 += dep
        s2 += dep * dep
    step = np.inf
    fresh = False  # Newton's matrix factored in this solve; steps taken on it
    newton0 = False
    since = 0
    prev = np.inf  # the step before the last one
    big = 0.0
    newton = s2 <= 32 * (s1 + 1) and lockfree  # (any joint's law: as robot_dynamics.algorithm.friction_solve)
    # a long chain's seed iteration that stops contracting (a step more than STALL of the one
    # before: on a 60-joint chain it diverges) goes over to Newton from the current iterate,
    # once (issue 35); not with a self-locking gear (above)
    switch = lockfree and not newton
    # ``dear``: refactoring Newton's matrix costs n³ here (a long chain): after the switch the
    # chord rule holds within a step too — the matrix is kept while each step shrinks the one
    # before by CHORD, refactored only where it stalls (issue 35: a cold solve of a 200-joint
    # chain took 10.2 tree LUs of about 9 ms each, refactoring at every iteration; now 3.8)
    dear = switch
    force = False
    # affine: every law affine in |q̇| and load-free, a Newton step can land on the root
    chord = same and newton
    if not newton:  # the seed's iteration: preconditioned by the diagonal Λ within a step
        # (none at an instant: lam stays 0), started from (M_FF + Λ)⁻¹ rhs when cold
        if h > 0:
            if loaded:
                wrenches_at(W0, D, rel, a, W)
            _newton_matrix(M, codes, params, kinds, axes, v, a, F, nf, fpar, direction, h, W,
                           D, loaded, lam, L)
        if not factor_free(M, F, nf, rel[2], idx[3], fpar, L, lam):
            return -1.0
        if cold:
            solve_free(L, fpar, nf, rhs0, x)
            for r in range(nf):
                a[F[r]] = x[r]
    for it in range(max_iter):
        _friction_of(codes, params, kinds, axes, v, a, W0, D, rel, stuck, direction, h, W, loaded,
                     tauf)
        for r in range(nf):
            i = F[r]
            s = rhs0[r] + tauf[i]
            for k in range(ptr[i], ptr[i + 1]):  # M_FF a over related free joints
                al = ridx[k]
                if pos[al] >= 0:
                    s -= M[i, al] * a[al]
            rhs[r] = s
        if newton and cold and it == 0:  # from a = 0 Newton's first step is no better than
            # the plain one (M_FF, factored as such): the derivatives are taken from a₁ on
            for r in range(nf):
                lam[r] = 0.0
            if not factor_free(M, F, nf, rel[2], idx[3], fpar, L, lam):
                return -1.0
        elif newton and (force or step > 1e-3 * (1.0 + big) and not (same and it == 0) and (
                (h > 0 and not dear) or not fresh or (since >= 2 and step > CHORD * prev))):
            # once close, or at an instant (or on a long chain, ``dear``) while its steps
            # contract by CHORD each, the last matrix serves (chord); ``force``: the switch
            # from the seed's iteration, below
            force = False
            _newton_matrix(M, codes, params, kinds, axes, v, a, F, nf, fpar, direction, h, W, D,
                           loaded, lam, L)
            chord = factor_tree_lu(L, fpar, nf)
            fresh = chord
            since = 0
            if not chord:
                newton = False
                if not factor_free(M, F, nf, rel[2], idx[3], fpar, L, lam):
                    return -1.0
        if chord:
            solve_tree_lu(L, fpar, nf, rhs, new)
        else:
            solve_free(L, fpar, nf, rhs, new)
        prev = step if (it > 0 or start != 2) else prev0
        if it == 0:
            newton0 = fresh  # the first step was Newton's, its matrix taken at the guess
        since += 1
        step = 0.0
        big = 0.0
        for r in range(nf):
            x_new = a[F[r]] + new[r]
            step = max(step, abs(new[r]))
            big = max(big, abs(x_new))
            a[F[r]] = x_new
        info[2] += 1
        bound = tol * (1.0 + big)  # the rule of robot_dynamics.algorithm.friction_solve.converged_step; from a
        # caller's guess, the contraction estimate from the third iteration on (the first step
        # is the guess's error, not the iteration's) — from the second where the first was a
        # Newton step (the second is then the error Newton left, and the next error at most
        # step²/(prev − step): quadratic, or the chord's rate step/prev); to screen an
        # assignment, from the second; from a screened answer, from the first (with the
        # screened solve's last step)
        # laws affine in the velocity: where no joint's motion changed side, the Newton step is
        # exact — the residual test says whether it was, without a confirming step
        # (a chord step after Newton's: its ratio to Newton's step is the chord's own rate, the
        # error of Newton's matrix's iterate — the estimate holds through that pair too)
        if step <= bound or (affine and newton and not screen) or (
                (cold or it >= 2 or start == 2 or (it >= 1 and (screen or newton0)))
                and step < prev < np.inf and step * step <= bound * (prev - step)):
            if screen:  # the solve to tol takes a fresh Newton matrix from here (a predictor's
                info[7] = 1 if (predict and chord) else 0  # next pass: a chord from it)
                return step
            _friction_of(codes, params, kinds, axes, v, a, W0, D, rel, stuck, direction, h, W,
                         loaded, tauf)
            # and the equations hold (a preconditioned step alone is a weaker test): residual
            # within tol of the applied efforts (plus the roundoff of the inertial ones)
            worst = 0.0
            applied = 0.0
            eff = 0.0
            for r in range(nf):
                i = F[r]
                s = -rhs0[r] - tauf[i]
                e = 0.0
                for k in range(ptr[i], ptr[i + 1]):
                    al = ridx[k]
                    if pos[al] >= 0:
                        y = M[i, al] * a[al]
                        s += y
                        e += abs(y)
                worst = max(worst, abs(s))
                applied = max(applied, abs(rhs0[r]), abs(tauf[i]))
                eff = max(eff, e)
            if worst <= tol * (1.0 + applied) + ROUNDOFF * eff:
                info[7] = 1 if chord else 0
                idx[1, 0] = 1 if loaded else 0
                return step
        if switch and it >= 1 and step > STALL * prev:
            switch = False
            newton = True
            force = True
        if not np.isfinite(step) or step > 1e12:
            break
    # Newton starts from the frictionless motion M_FF⁻¹ rhs0: refactor without Λ (the root
    # nearest the frictionless motion, robot_dynamics.algorithm.friction_solve._solve_free)
    for r in range(nf):
        lam[r] = 0.0
    if not factor_free(M, F, nf, rel[2], idx[3], fpar, L, lam):
        return -1.0
    ok = _newton(M, rhs0, W0, D, rel, codes, params, kinds, axes, v, stuck, direction, h, tol,
                 max_iter, a, tauf, info, L, W, vecs, F[:nf], fpar, loaded)
    return 0.0 if ok else -1.0


@njit(cache=True)
def _newton(M, rhs0_buf, W0, D, rel, codes, params, kinds, axes, v, stuck, direction, h, tol,
            max_iter, a, tauf, info, L, W, vecs, F, fpar, loaded):
    """Newton on r(a_F) = M_FF a_F − rhs0 − τf_F(a), finite-difference Jacobian (rare path)."""
    n = M.shape[0]
    nf = F.shape[0]
    info[1] = 2
    tf, trial = vecs[_TF], vecs[_TRIAL]
    rhs0 = rhs0_buf[:nf].copy()
    MFF = np.empty((nf, nf))
    for r in range(nf):
        for c in range(nf):
            MFF[r, c] = M[F[r], F[c]]
    x = np.empty(nf)
    solve_free(L, fpar, nf, rhs0, x)
    for i in range(n):
        trial[i] = a[i]

    def_r = np.empty(nf)
    for r in range(nf):
        trial[F[r]] = x[r]
    _friction_of(codes, params, kinds, axes, v, trial, W0, D, rel, stuck, direction, h, W, loaded, tf)
    for r in range(nf):
        def_r[r] = rhs0[r] + tf[F[r]]
    res = MFF @ x - def_r
    scale_rhs = np.abs(rhs0).max() + 1.0
    J = np.empty((nf, nf))
    for it in range(max_iter):
        info[2] += 1
        scale = 1.0 + np.abs(x).max()
        eff = 0.0  # the efforts in the equations: the residual's roundoff scale
        for r in range(nf):
            e = 0.0
            for c in range(nf):
                e += abs(MFF[r, c] * x[c])
            eff = max(eff, e)
        if np.abs(res).max() <= tol * (scale_rhs + eff):
            for r in range(nf):
                a[F[r]] = x[r]
            if it > 0 and np.linalg.eigvalsh(0.5 * (J + J.T)).min() <= 0:
                info[4] = 1
            _friction_of(codes, params, kinds, axes, v, a, W0, D, rel, stuck, direction, h, W, loaded,
                         tauf)
            return True
        eps = 1e-7 * scale
        for k in range(nf):
            for r in range(nf):
                trial[F[r]] = x[r]
            trial[F[k]] += eps
            _friction_of(codes, params, kinds, axes, v, trial, W0, D, rel, stuck, direction, h, W,
                         loaded, tf)
            xp = x.copy()
            xp[k] += eps
            for r in range(nf):
                J[r, k] = ((MFF[r] @ xp - rhs0[r] - tf[F[r]]) - res[r]) / eps
        if np.isfinite(J).all() and np.isfinite(res).all():
            try:  # a singular Jacobian (a gear with c_b = 1, no rotor inertia) ends Newton
                dx = np.linalg.solve(J, -res)
            except Exception:  # noqa: BLE001 (numba raises LinAlgError; it cannot name it)
                break
        else:  # non-finite (huge inputs): LinAlgError, whose callers name the overflow
            dx = np.linalg.solve(J, -res)
        t = 1.0
        xn = x + dx
        rn = res
        while t > 1e-4:
            xn = x + t * dx
            for r in range(nf):
                trial[F[r]] = xn[r]
            _friction_of(codes, params, kinds, axes, v, trial, W0, D, rel, stuck, direction, h, W,
                         loaded, tf)
            rn = MFF @ xn - rhs0
            for r in range(nf):
                rn[r] -= tf[F[r]]
            if np.abs(rn).max() < np.abs(res).max() or t <= 1e-3:
                break
            t *= 0.5
        x = xn
        res = rn
    for r in range(nf):
        a[F[r]] = x[r]
        tauf[F[r]] = 0.0
    return False


@njit(cache=True, inline="always")
def leave_stop(i, stuck, direction, ulo, uhi, codes, v):
    """Rule 4's change for joint i, whose stop would pull: it sticks where the stop leaves it no
    velocity (u* = 0; friction holds it), else it slides off, along q̇ (away from the stop at
    rest)."""
    push = 1.0 if stuck[i] == LOWER else -1.0
    u = ulo[i] if stuck[i] == LOWER else uhi[i]
    if u == 0.0 and codes[i] != 0:
        stuck[i] = STUCK
        direction[i] = 0.0
    else:
        stuck[i] = FREE
        direction[i] = (1.0 if v[i] > 0 else -1.0) if v[i] != 0.0 else -push


@njit(cache=True)
def solve_friction(M, bias, tau, W0, D, rel, codes, params, kinds, axes, v, h, v_tol, tol, max_iter,
                   ulo, uhi, a, tauf, stuck, at_rest, info, L, W, vecs, idx, warm, loaded):
    """Returns the residual ‖M a + b − τ − τf − τl‖∞ (inf on failure); see
    robot_dynamics.algorithm.friction_solve (``ulo``/``uhi``: bounds of the end-of-step velocity, h > 0).

    ``warm``: 1, start from the joint states in ``stuck``, the directions in vecs[1] and the
    accelerations in ``a`` (a previous solve's, e.g. the simulator's previous pass); otherwise
    from every joint at rest stuck, the others sliding along q̇, and a = 0 (``warm`` 0) or the
    caller's ``a`` as the first guess (2: the simulator's previous step's q̈; 3: the same, a
    predictor, the simulator's first pass, whose answer only places the mid-step velocity of the
    velocity products: the step test alone ends each iteration, from its second step on, with
    no confirming residual, and the first assignment that passes the rules is the answer —
    where some law is not affine in the velocity; otherwise as 2).

    ``stuck`` (int64 joint states: 0 free, 1 stuck, 2/3 on the lower/upper stop), ``at_rest``,
    ``info`` and ``vecs[TAU_LIMIT]`` (the stops' reactions) are outputs; ``L``, ``W``, ``vecs``
    (≥ 16 rows), ``idx`` (≥ 5 rows) are scratch; ``W`` ends as the joint wrenches at the answer
    when ``loaded`` (:func:`.friction.loads_matter`: some law reads its reactions; D is then
    required) — otherwise W and D are not used and W is left as it was.
    """
    n = M.shape[0]
    ptr, ridx = rel[0], rel[1]
    target, direction = vecs[_TARGET], vecs[_DIRECTION]
    hold, bounds, release = vecs[_HOLD], vecs[_BOUNDS], vecs[_RELEASE]
    noise, tlim = vecs[_NOISE_ROW], vecs[TAU_LIMIT]
    # a predictor where a confirmed solve costs more than one step: laws affine in the velocity
    # land on the root in one Newton step and confirm it with one residual (_solve_free)
    predict = False
    lockfree = True
    affine = True
    for i in range(n):
        lockfree = lockfree and not can_self_lock(codes[i], params[i])
        affine = affine and affine_in_velocity(codes[i], params[i])
    if warm == 3:
        warm = 2
        predict = not affine
    for i in range(n):
        rest = abs(v[i]) <= v_tol
        at_rest[i] = rest and codes[i] != 0  # a joint without friction never "breaks away"
        if warm != 1:
            stuck[i] = STUCK if (rest and codes[i] != 0) else FREE
            direction[i] = 0.0 if rest else (1.0 if v[i] > 0 else -1.0)
            if warm == 0:
                a[i] = 0.0
    for k in range(5):
        info[k] = 0
    if warm != 1:
        info[7] = 0  # no factored matrix to reuse (see _solve_free)
    bulk = True
    premature = 0
    # at an instant (h = 0: forward dynamics), once the stick/slip assignment has changed,
    # each new one is solved to SCREEN only: its rules need no more; the assignment that passes
    # them is then solved to ``tol`` from there and checked again. The first assignment is
    # solved to tol (it is most often the answer: joints at rest that stay stuck). Not in a
    # time step: there each solve starts from the previous step's answer, close already, and a
    # pass's factored matrix serves the next. A predictor screens every assignment, at tol,
    # and takes the first that passes
    screening = (h == 0.0 and warm != 1) or predict
    screen = predict
    screened = False  # the assignment was just screened: solve it to tol from there
    last = np.inf  # the last solve's last step
    for change in range(12 * n + 21):
        if info[2] > WORK * (n + 2) * max_iter:  # the work cap: give up (the report says so)
            info[0] = -2
            return np.inf
        tol_k = max(tol, SCREEN) if screen and not predict else tol
        for i in range(n):
            st = stuck[i]
            if h > 0:
                u = 0.0 if st == STUCK else (ulo[i] if st == LOWER else uhi[i])
                target[i] = (u - v[i]) / h
            else:
                target[i] = 0.0
        start = 1 if change == 0 and warm == 0 else (2 if screened else 0)
        screened = False
        last = _solve_free(M, bias, tau, W0, D, rel, codes, params, kinds, axes, v, stuck, h,
                           tol_k, max_iter, a, tauf, info, L, W, vecs, idx, start, loaded,
                           screen, last, predict, lockfree, affine)
        if last < 0.0:
            # no motion with these joints sliding (e.g. a Stribeck drop steeper than the drive
            # can follow within the step): the joint whose equation is worst off at the last
            # iterate sticks, if it may (within a step, or at rest); its bound is checked below
            _friction_of(codes, params, kinds, axes, v, a, W0, D, rel, stuck, direction, h, W,
                         loaded, tauf)
            worst = -1
            worst_val = 0.0
            for i in range(n):
                if stuck[i] != FREE or codes[i] == 0 or not (h > 0 or at_rest[i]):
                    continue
                s = bias[i] - tau[i] - tauf[i]
                for k in range(n):
                    s += M[i, k] * a[k]
                val = abs(s) / (1.0 + abs(tau[i]) + abs(bias[i]))
                if val > worst_val:  # (False for NaN)
                    worst, worst_val = i, val
            if worst < 0:
                return np.inf
            stuck[worst] = STUCK
            direction[worst] = 0.0
            info[3] += 1
            screen = screening
            continue
        if loaded and idx[1, 0] == 0:  # the reactions of this motion (stiction bounds,
            wrenches_at(W0, D, rel, a, W)  # report), unless the solve's check left them in W
        for i in range(n):
            s = bias[i] - tau[i]
            e = 1.0 + abs(bias[i]) + abs(tau[i])
            for j in range(ptr[i], ptr[i + 1]):  # M[i, k] ≠ 0 only for related k (increasing:
                k = ridx[j]                         # the same sums as over every k)
                s += M[i, k] * a[k]
                e += abs(M[i, k] * a[k])
            hold[i] = s  # the friction (and stop) effort each joint needs for this motion
            noise[i] = (tol_k if screen else NOISE) * e  # (a screened motion: within tol_k)
        # 1) a sliding/breaking joint moving against its assumed direction must stick
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if stuck[i] != FREE or codes[i] == 0:
                continue
            if h == 0 and not at_rest[i]:
                continue  # at an instant, a sliding joint keeps the direction of q̇
            sp = v[i] + h * a[i] if h > 0 else a[i]
            val = -direction[i] * sp
            if val > tol_k * (1 + abs(sp)) and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            for i in range(n):
                if i != worst:
                    if (not bulk or stuck[i] != FREE or codes[i] == 0
                            or (h == 0 and not at_rest[i])):
                        continue
                    sp = v[i] + h * a[i] if h > 0 else a[i]
                    if not -direction[i] * sp > tol_k * (1 + abs(sp)):
                        continue
                stuck[i] = STUCK
                direction[i] = 0.0
            info[3] += 1
            premature += 1  # a release was premature: after PREMATURE of them, one joint at a
            bulk = premature < PREMATURE  # time from then on (rules 1 and 3)
            screen = screening
            continue
        # 2) a free joint past a stop lands on it
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if stuck[i] != FREE:
                continue
            sp = v[i] + h * a[i] if h > 0 else a[i]
            val = max(ulo[i] - sp, sp - uhi[i])
            if val > tol_k * (1 + abs(sp)) and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            sp = v[worst] + h * a[worst] if h > 0 else a[worst]
            stuck[worst] = LOWER if sp < ulo[worst] else UPPER
            info[3] += 1
            screen = screening
            continue
        # 3) a stuck joint whose holding effort exceeds its bound breaks away (onto a stop
        #    when it has no room to move that way)
        worst = -1
        worst_val = 0.0
        for i in range(n):
            release[i] = -1.0 if hold[i] > 0 else (1.0 if hold[i] < 0 else 0.0)
            if stuck[i] != STUCK:
                continue
            bounds[i] = friction_one(codes[i], params[i], kinds[i], axes[i], W[i], 0.0,
                                     release[i])
            excess = abs(hold[i]) - bounds[i] * (1 + 1e-9) - noise[i]
            if excess > 0 and excess / (1.0 + bounds[i]) > worst_val:
                worst, worst_val = i, excess / (1.0 + bounds[i])
        if worst >= 0:  # every joint over its bound at once until a release proves premature
            for i in range(n):  # (rule 1), then the worst one alone
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
            screen = screening
            continue
        # 4) a stop may only push: one that would pull lets its joint go. Friction of a joint
        #    on a stop: sliding along it (u* ≠ 0), or static (u* = 0) taking its share of the
        #    holding effort first, the stop the rest
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
                if u != 0.0:
                    tf = push * friction_one(codes[i], params[i], kinds[i], axes[i], W[i], u,
                                             -push)
                else:
                    mag = friction_one(codes[i], params[i], kinds[i], axes[i], W[i], 0.0,
                                       release[i])
                    tf = min(max(hold[i], -mag), mag)
            tauf[i] = tf
            tlim[i] = hold[i] - tf
            val = -push * tlim[i] - noise[i]
            if val > 0 and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            leave_stop(worst, stuck, direction, ulo, uhi, codes, v)
            info[3] += 1
            screen = screening
            continue
        if screen and not predict:  # this assignment holds as far as a screened motion
            screen = False  # tells: solve it to tol
            screened = True
            continue
        res = 0.0
        for i in range(n):
            if stuck[i] == STUCK:  # at most the bound, whatever the roundoff of the holding
                tauf[i] = min(max(hold[i], -bounds[i]), bounds[i])
            res = max(res, abs(hold[i] - tauf[i] - tlim[i]))
        info[0] = 1
        return res
    info[0] = -1  # the assignments ran out (the report says so)
    return np.inf
