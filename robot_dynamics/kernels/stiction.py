"""The friction/stiction solve of :mod:`robot_dynamics.stiction`, compiled, for packed laws.

Same algorithm, same tolerances, same outputs: the Python module is its specification and the
tests compare the two. ``info`` returns [converged, method (0 direct, 1 fixed point, 2 Newton),
iterations, active-set changes, non-unique flag].
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .friction import friction_kernel


@njit(cache=True)
def _wrenches(W0, D, a, W):
    n = a.shape[0]
    for i in range(n):
        for k in range(6):
            s = W0[i, k]
            for al in range(n):
                s += a[al] * D[al, i, k]
            W[i, k] = s


@njit(cache=True)
def _friction_of(codes, params, kinds, axes, q, v, a, W0, D, free, direction, h, active, W, mag,
                 out):
    n = a.shape[0]
    _wrenches(W0, D, a, W)
    qd = np.empty(n)
    for i in range(n):
        qd[i] = (v[i] + h * a[i] if free[i] else 0.0) if h > 0 else v[i]
    friction_kernel(codes, params, kinds, axes, W, q, qd, direction, mag)
    for i in range(n):
        out[i] = -mag[i] * direction[i] if (free[i] and active[i]) else 0.0


@njit(cache=True)
def _solve_free(M, bias, tau, W0, D, codes, params, kinds, axes, q, v, stuck, target, direction,
                h, tol, max_iter, active, a, tauf, info):
    n = M.shape[0]
    free = ~stuck
    F = np.flatnonzero(free)
    K = np.flatnonzero(stuck)
    nf = F.shape[0]
    W = np.empty((n, 6))
    mag = np.empty(n)
    for i in range(n):
        a[i] = target[i] if stuck[i] else 0.0
        tauf[i] = 0.0
    if nf == 0:
        return True
    MFF = np.empty((nf, nf))
    rhs0 = np.empty(nf)
    for r in range(nf):
        s = tau[F[r]] - bias[F[r]]
        for c in range(K.shape[0]):
            s -= M[F[r], K[c]] * target[K[c]]
        rhs0[r] = s
        for c in range(nf):
            MFF[r, c] = M[F[r], F[c]]
    x = np.linalg.solve(MFF, rhs0)
    for r in range(nf):
        a[F[r]] = x[r]
    any_active = False
    for r in range(nf):
        if active[F[r]]:
            any_active = True
    if not any_active:
        return True
    if info[1] < 1:
        info[1] = 1
    rhs = np.empty(nf)
    step = np.inf
    for it in range(max_iter):
        _friction_of(codes, params, kinds, axes, q, v, a, W0, D, free, direction, h, active, W,
                     mag, tauf)
        for r in range(nf):
            rhs[r] = rhs0[r] + tauf[F[r]]
        new = np.linalg.solve(MFF, rhs)
        step = 0.0
        big = 0.0
        for r in range(nf):
            step = max(step, abs(new[r] - a[F[r]]))
            big = max(big, abs(new[r]))
            a[F[r]] = new[r]
        info[2] += 1
        if step <= tol * (1.0 + big):
            _friction_of(codes, params, kinds, axes, q, v, a, W0, D, free, direction, h, active,
                         W, mag, tauf)
            return True
        if not np.isfinite(step) or step > 1e12:
            break
    # Newton with a finite-difference Jacobian
    info[1] = 2
    x = np.linalg.solve(MFF, rhs0)
    trial = a.copy()
    tf = np.empty(n)

    def_r = np.empty(nf)
    for r in range(nf):
        trial[F[r]] = x[r]
    _friction_of(codes, params, kinds, axes, q, v, trial, W0, D, free, direction, h, active, W,
                 mag, tf)
    for r in range(nf):
        def_r[r] = rhs0[r] + tf[F[r]]
    res = MFF @ x - def_r
    scale_rhs = np.abs(rhs0).max() + 1.0
    J = np.empty((nf, nf))
    for it in range(max_iter):
        info[2] += 1
        scale = 1.0 + np.abs(x).max()
        if np.abs(res).max() <= tol * scale_rhs * scale:
            for r in range(nf):
                a[F[r]] = x[r]
            if it > 0 and np.linalg.eigvalsh(0.5 * (J + J.T)).min() <= 0:
                info[4] = 1
            _friction_of(codes, params, kinds, axes, q, v, a, W0, D, free, direction, h, active,
                         W, mag, tauf)
            return True
        eps = 1e-7 * scale
        for k in range(nf):
            for r in range(nf):
                trial[F[r]] = x[r]
            trial[F[k]] += eps
            _friction_of(codes, params, kinds, axes, q, v, trial, W0, D, free, direction, h,
                         active, W, mag, tf)
            xp = x.copy()
            xp[k] += eps
            for r in range(nf):
                J[r, k] = ((MFF[r] @ xp - rhs0[r] - tf[F[r]]) - res[r]) / eps
        dx = np.linalg.solve(J, -res)
        t = 1.0
        xn = x + dx
        rn = res
        while t > 1e-4:
            xn = x + t * dx
            for r in range(nf):
                trial[F[r]] = xn[r]
            _friction_of(codes, params, kinds, axes, q, v, trial, W0, D, free, direction, h,
                         active, W, mag, tf)
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


@njit(cache=True)
def solve_friction_kernel(M, bias, tau, W0, D, codes, params, kinds, axes, active, q, v, h,
                          v_tol, tol, max_iter, a, tauf, stuck, at_rest, info):
    """Returns the residual ‖M a + b − τ − τf‖∞; see robot_dynamics.stiction."""
    n = M.shape[0]
    target = np.zeros(n)
    direction = np.zeros(n)
    for i in range(n):
        at_rest[i] = abs(v[i]) <= v_tol
        if h > 0:
            target[i] = -v[i] / h
        stuck[i] = at_rest[i] and active[i]
        direction[i] = 0.0 if at_rest[i] else (1.0 if v[i] > 0 else -1.0)
    for k in range(5):
        info[k] = 0
    W = np.empty((n, 6))
    hold = np.empty(n)
    bounds = np.empty(n)
    release = np.empty(n)
    zeros = np.zeros(n)
    for change in range(4 * n + 10):
        ok = _solve_free(M, bias, tau, W0, D, codes, params, kinds, axes, q, v, stuck, target,
                         direction, h, tol, max_iter, active, a, tauf, info)
        if not ok:
            return np.inf
        _wrenches(W0, D, a, W)
        for i in range(n):
            s = bias[i] - tau[i]
            for k in range(n):
                s += M[i, k] * a[k]
            hold[i] = s
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if stuck[i] or not active[i]:
                continue
            if h == 0 and not at_rest[i]:
                continue
            sp = v[i] + h * a[i] if h > 0 else a[i]
            val = -direction[i] * sp
            if val > tol * (1 + abs(sp)) and val > worst_val:
                worst, worst_val = i, val
        if worst >= 0:
            stuck[worst] = True
            direction[worst] = 0.0
            info[3] += 1
            continue
        for i in range(n):
            release[i] = -1.0 if hold[i] > 0 else (1.0 if hold[i] < 0 else 0.0)
        friction_kernel(codes, params, kinds, axes, W, q, zeros, release, bounds)
        worst = -1
        worst_val = 0.0
        for i in range(n):
            if not stuck[i]:
                continue
            excess = abs(hold[i]) - bounds[i] * (1 + 1e-9) - 1e-12
            if excess > 0 and excess / (1.0 + bounds[i]) > worst_val:
                worst, worst_val = i, excess / (1.0 + bounds[i])
        if worst >= 0:
            stuck[worst] = False
            direction[worst] = release[worst]
            info[3] += 1
            continue
        res = 0.0
        for i in range(n):
            if stuck[i]:
                tauf[i] = hold[i]
            res = max(res, abs(hold[i] - tauf[i]))
        info[0] = 1
        return res
    return np.inf
