"""Kinematics, RNEA (with the joint wrenches), CRBA and the wrench directors on raw arrays.

Same conventions as the reference modules (docs/ARCHITECTURE.md): body frames, motion [v; ω],
force [f; n]; ``kinds`` 0 = revolute, 1 = prismatic; parents before children.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def placements_kernel(kinds, axes, R0, p0, q, R, p):
    """Parent ← child rotation R[i] and translation p[i] at configuration q."""
    n = q.shape[0]
    Rj = np.empty((3, 3))
    for i in range(n):
        e0, e1, e2 = axes[i, 0], axes[i, 1], axes[i, 2]
        if kinds[i] == 1:
            for r in range(3):
                for c in range(3):
                    R[i, r, c] = R0[i, r, c]
                p[i, r] = p0[i, r] + q[i] * (R0[i, r, 0] * e0 + R0[i, r, 1] * e1 + R0[i, r, 2] * e2)
        else:
            s, c_ = np.sin(q[i]), np.cos(q[i])
            t = 1.0 - c_
            Rj[0, 0] = c_ + t * e0 * e0
            Rj[0, 1] = t * e0 * e1 - s * e2
            Rj[0, 2] = t * e0 * e2 + s * e1
            Rj[1, 0] = t * e0 * e1 + s * e2
            Rj[1, 1] = c_ + t * e1 * e1
            Rj[1, 2] = t * e1 * e2 - s * e0
            Rj[2, 0] = t * e0 * e2 - s * e1
            Rj[2, 1] = t * e1 * e2 + s * e0
            Rj[2, 2] = c_ + t * e2 * e2
            for r in range(3):
                for c in range(3):
                    R[i, r, c] = (R0[i, r, 0] * Rj[0, c] + R0[i, r, 1] * Rj[1, c]
                                  + R0[i, r, 2] * Rj[2, c])
                p[i, r] = p0[i, r]


@njit(cache=True)
def _to_child(R, p, x, out):
    """Motion transform parent → child: out = [Rᵀ(x_v + x_ω × p); Rᵀ x_ω]."""
    t0 = x[0] + x[4] * p[2] - x[5] * p[1]
    t1 = x[1] + x[5] * p[0] - x[3] * p[2]
    t2 = x[2] + x[3] * p[1] - x[4] * p[0]
    for r in range(3):
        out[r] = R[0, r] * t0 + R[1, r] * t1 + R[2, r] * t2
        out[3 + r] = R[0, r] * x[3] + R[1, r] * x[4] + R[2, r] * x[5]


@njit(cache=True)
def _add_to_parent(R, p, f, out):
    """Force transform child → parent, accumulated: out += [R f; p × R f + R n]."""
    f0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    f1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    f2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    out[0] += f0
    out[1] += f1
    out[2] += f2
    fp = (f0, f1, f2)
    out[3] += p[1] * fp[2] - p[2] * fp[1] + R[0, 0] * f[3] + R[0, 1] * f[4] + R[0, 2] * f[5]
    out[4] += p[2] * fp[0] - p[0] * fp[2] + R[1, 0] * f[3] + R[1, 1] * f[4] + R[1, 2] * f[5]
    out[5] += p[0] * fp[1] - p[1] * fp[0] + R[2, 0] * f[3] + R[2, 1] * f[4] + R[2, 2] * f[5]


@njit(cache=True)
def rnea_kernel(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f, tau):
    """τ = RNEA(q, v, a) with gravity ``gravity``; fills R, p, vel, acc, f (joint wrenches)."""
    n = q.shape[0]
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    a0 = np.zeros(6)
    a0[0], a0[1], a0[2] = -gravity[0], -gravity[1], -gravity[2]
    tmp = np.empty(6)
    Iv = np.empty(6)
    sv = np.empty(6)
    c1 = np.empty(3)
    c2 = np.empty(3)
    for i in range(n):
        par = parents[i]
        if par >= 0:
            _to_child(R[i], p[i], vel[par], tmp)
            for k in range(6):
                vel[i, k] = tmp[k] + S[i, k] * v[i]
            _to_child(R[i], p[i], acc[par], tmp)
        else:
            for k in range(6):
                vel[i, k] = S[i, k] * v[i]
            _to_child(R[i], p[i], a0, tmp)
        # a_i = X a_p + S q̈ + v_i ×m (S q̇)
        for k in range(6):
            sv[k] = S[i, k] * v[i]
        w = vel[i, 3:]
        lin = vel[i, :3]
        _cross(w, sv[:3], c1)
        _cross(lin, sv[3:], c2)
        for k in range(3):
            acc[i, k] = tmp[k] + S[i, k] * a[i] + c1[k] + c2[k]
        _cross(w, sv[3:], c1)
        for k in range(3):
            acc[i, 3 + k] = tmp[3 + k] + S[i, 3 + k] * a[i] + c1[k]
        # f_i = I a + v ×* I v
        for r in range(6):
            s1 = 0.0
            s2 = 0.0
            for k in range(6):
                s1 += I6[i, r, k] * acc[i, k]
                s2 += I6[i, r, k] * vel[i, k]
            f[i, r] = s1
            Iv[r] = s2
        _cross(w, Iv[:3], c1)
        for k in range(3):
            f[i, k] += c1[k]
        _cross(w, Iv[3:], c1)
        _cross(lin, Iv[:3], c2)
        for k in range(3):
            f[i, 3 + k] += c1[k] + c2[k]
    for i in range(n - 1, -1, -1):
        s = 0.0
        for k in range(6):
            s += S[i, k] * f[i, k]
        tau[i] = s
        par = parents[i]
        if par >= 0:
            _add_to_parent(R[i], p[i], f[i], f[par])


@njit(cache=True)
def _force_up(X, F, G):
    """F ← Xᵀ F: carry a force from a body's frame to its parent's (G is scratch)."""
    for r in range(6):
        s = 0.0
        for k in range(6):
            s += X[k, r] * F[k]
        G[r] = s
    F[:] = G


@njit(cache=True)
def _motion_matrix(R, p, X):
    """6×6 motion transform parent → child."""
    for r in range(6):
        for c in range(6):
            X[r, c] = 0.0
    for r in range(3):
        for c in range(3):
            X[r, c] = R[c, r]
            X[3 + r, 3 + c] = R[c, r]
    # −Rᵀ [p]×
    for r in range(3):
        X[r, 3] = -(R[1, r] * p[2] - R[2, r] * p[1])
        X[r, 4] = -(R[2, r] * p[0] - R[0, r] * p[2])
        X[r, 5] = -(R[0, r] * p[1] - R[1, r] * p[0])


@njit(cache=True)
def crba_kernel(kinds, parents, axes, R0, p0, I6, S, q, R, p, X, Ic, M):
    """Mass matrix M(q); fills R, p, X (6×6 per joint) and the composite inertias Ic."""
    n = q.shape[0]
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    for i in range(n):
        _motion_matrix(R[i], p[i], X[i])
        Ic[i, :, :] = I6[i]
    T = np.empty((6, 6))
    for i in range(n - 1, -1, -1):
        par = parents[i]
        if par >= 0:  # Ic[par] += Xᵀ Ic[i] X
            for r in range(6):
                for c in range(6):
                    s = 0.0
                    for k in range(6):
                        s += Ic[i, r, k] * X[i, k, c]
                    T[r, c] = s
            for r in range(6):
                for c in range(6):
                    s = 0.0
                    for k in range(6):
                        s += X[i, k, r] * T[k, c]
                    Ic[par, r, c] += s
    F = np.empty(6)
    G = np.empty(6)
    for i in range(n):
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += Ic[i, r, k] * S[i, k]
            F[r] = s
        s = 0.0
        for k in range(6):
            s += S[i, k] * F[k]
        M[i, i] = s
        j = i
        while parents[j] >= 0:
            _force_up(X[j], F, G)
            j = parents[j]
            s = 0.0
            for k in range(6):
                s += S[j, k] * F[k]
            M[i, j] = s
            M[j, i] = s


@njit(cache=True)
def directors_kernel(parents, S, X, Ic, D):
    """D[α, i] = pl_α at joint i (see robot_dynamics.directors), from crba_kernel's X and Ic."""
    n = parents.shape[0]
    F = np.empty(6)
    G = np.empty(6)
    motion = np.zeros((n, 6))
    inside = np.zeros(n, dtype=np.bool_)
    for al in range(n):
        for i in range(n):
            for k in range(6):
                D[al, i, k] = 0.0
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += Ic[al, r, k] * S[al, k]
            F[r] = s
            D[al, al, r] = s
        j = al
        while parents[j] >= 0:
            _force_up(X[j], F, G)
            j = parents[j]
            D[al, j, :] = F
        inside[:] = False
        inside[al] = True
        motion[al, :] = S[al]
        for i in range(al + 1, n):
            par = parents[i]
            if par >= 0 and inside[par]:
                inside[i] = True
                for r in range(6):
                    s = 0.0
                    for k in range(6):
                        s += X[i, r, k] * motion[par, k]
                    motion[i, r] = s
                for r in range(6):
                    s = 0.0
                    for k in range(6):
                        s += Ic[i, r, k] * motion[i, k]
                    D[al, i, r] = s


@njit(cache=True)
def world_kernel(parents, R, p, oMi):
    """World poses oMi (n, 4, 4) from the parent ← child placements."""
    n = parents.shape[0]
    for i in range(n):
        par = parents[i]
        for r in range(3):
            for c in range(3):
                if par < 0:
                    oMi[i, r, c] = R[i, r, c]
                else:
                    oMi[i, r, c] = (oMi[par, r, 0] * R[i, 0, c] + oMi[par, r, 1] * R[i, 1, c]
                                    + oMi[par, r, 2] * R[i, 2, c])
            if par < 0:
                oMi[i, r, 3] = p[i, r]
            else:
                oMi[i, r, 3] = (oMi[par, r, 0] * p[i, 0] + oMi[par, r, 1] * p[i, 1]
                                + oMi[par, r, 2] * p[i, 2] + oMi[par, r, 3])
        oMi[i, 3, 0] = 0.0
        oMi[i, 3, 1] = 0.0
        oMi[i, 3, 2] = 0.0
        oMi[i, 3, 3] = 1.0


@njit(cache=True)
def all_finite(q, v, a):
    """True when the three state vectors hold only finite numbers (checked in the kernel, so a
    caller with well-formed arrays pays no NumPy reduction)."""
    for i in range(q.shape[0]):
        if not (np.isfinite(q[i]) and np.isfinite(v[i]) and np.isfinite(a[i])):
            return False
    return True


@njit(cache=True)
def rnea_entry(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f, tau):
    """:func:`rnea_kernel` behind a finiteness check; returns False (nothing computed) on NaN/Inf."""
    if not all_finite(q, v, a):
        return False
    rnea_kernel(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f, tau)
    return True
