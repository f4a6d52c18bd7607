"""Kinematics, RNEA (with the joint wrenches), CRBA and the wrench directors on raw arrays.

Same conventions as the reference modules (docs/ARCHITECTURE.md): body frames, motion [v; ω],
force [f; n]; ``kinds`` 0 = revolute, 1 = prismatic; parents before children.
"""
from __future__ import annotations

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.layout import model_armature, model_gravity, model_views, work_views


@njit(cache=True)
def placements_kernel(kinds, axes, R0, p0, q, R, p):
    """Parent ← child rotation R[i] and translation p[i] at configuration q (no allocation;
    indices, not row views: 175 against 232 ns on panda, the same numbers)."""
    n = q.shape[0]
    for i in range(n):
        e0, e1, e2 = axes[i, 0], axes[i, 1], axes[i, 2]
        if kinds[i] == 1:  # prismatic: p = p0 + R0 e q
            for r in range(3):
                a0, a1, a2 = R0[i, r, 0], R0[i, r, 1], R0[i, r, 2]
                R[i, r, 0], R[i, r, 1], R[i, r, 2] = a0, a1, a2
                p[i, r] = p0[i, r] + q[i] * (a0 * e0 + a1 * e1 + a2 * e2)
        else:  # revolute: R = R0 · Rodrigues(e, q)
            s, c = np.sin(q[i]), np.cos(q[i])
            t = 1.0 - c
            j00, j01, j02 = c + t * e0 * e0, t * e0 * e1 - s * e2, t * e0 * e2 + s * e1
            j10, j11, j12 = t * e0 * e1 + s * e2, c + t * e1 * e1, t * e1 * e2 - s * e0
            j20, j21, j22 = t * e0 * e2 - s * e1, t * e1 * e2 + s * e0, c + t * e2 * e2
            for r in range(3):
                a0, a1, a2 = R0[i, r, 0], R0[i, r, 1], R0[i, r, 2]
                R[i, r, 0] = a0 * j00 + a1 * j10 + a2 * j20
                R[i, r, 1] = a0 * j01 + a1 * j11 + a2 * j21
                R[i, r, 2] = a0 * j02 + a1 * j12 + a2 * j22
                p[i, r] = p0[i, r]


@njit(cache=True)
def _to_child(R, p, x0, x1, x2, x3, x4, x5):
    """Motion transform parent → child of x = [x_v; x_ω]: [Rᵀ(x_v + x_ω × p); Rᵀ x_ω]."""
    t0 = x0 + x4 * p[2] - x5 * p[1]
    t1 = x1 + x5 * p[0] - x3 * p[2]
    t2 = x2 + x3 * p[1] - x4 * p[0]
    return (R[0, 0] * t0 + R[1, 0] * t1 + R[2, 0] * t2,
            R[0, 1] * t0 + R[1, 1] * t1 + R[2, 1] * t2,
            R[0, 2] * t0 + R[1, 2] * t1 + R[2, 2] * t2,
            R[0, 0] * x3 + R[1, 0] * x4 + R[2, 0] * x5,
            R[0, 1] * x3 + R[1, 1] * x4 + R[2, 1] * x5,
            R[0, 2] * x3 + R[1, 2] * x4 + R[2, 2] * x5)


@njit(cache=True)
def _add_to_parent(R, p, f, out):
    """Force transform child → parent, accumulated: out += [R f; p × R f + R n]."""
    f0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    f1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    f2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    out[0] += f0
    out[1] += f1
    out[2] += f2
    out[3] += p[1] * f2 - p[2] * f1 + R[0, 0] * f[3] + R[0, 1] * f[4] + R[0, 2] * f[5]
    out[4] += p[2] * f0 - p[0] * f2 + R[1, 0] * f[3] + R[1, 1] * f[4] + R[1, 2] * f[5]
    out[5] += p[0] * f1 - p[1] * f0 + R[2, 0] * f[3] + R[2, 1] * f[4] + R[2, 2] * f[5]


@njit(cache=True)
def _dot6(x, y):
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@njit(cache=True)
def _inertia_times(I, m0, m1, m2, m3, m4, m5):
    """I m for a spatial inertia I = [[m1, −ĥ], [ĥ, Ī]] (its structural zeros skipped: 24
    products instead of 36)."""
    I0, I1, I2, I3, I4, I5 = I[0], I[1], I[2], I[3], I[4], I[5]
    return (I0[0] * m0 + I0[4] * m4 + I0[5] * m5,
            I1[1] * m1 + I1[3] * m3 + I1[5] * m5,
            I2[2] * m2 + I2[3] * m3 + I2[4] * m4,
            I3[1] * m1 + I3[2] * m2 + I3[3] * m3 + I3[4] * m4 + I3[5] * m5,
            I4[0] * m0 + I4[2] * m2 + I4[3] * m3 + I4[4] * m4 + I4[5] * m5,
            I5[0] * m0 + I5[1] * m1 + I5[3] * m3 + I5[4] * m4 + I5[5] * m5)


@njit(cache=True)
def rnea_kernel(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f, tau):
    """τ = RNEA(q, v, a) with gravity ``gravity``; fills R, p, vel, acc, f (joint wrenches)."""
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes(parents, I6, S, gravity, v, a, R, p, vel, acc, f, tau)


@njit(cache=True)
def rnea_passes(parents, I6, S, gravity, v, a, R, p, vel, acc, f, tau):
    """The two RNEA passes on placements R, p already computed for the configuration, no
    external efforts (:func:`rnea_passes_ext` with an empty ``fext``)."""
    rnea_passes_ext(parents, I6, S, gravity, v, a, R, p, vel, acc, f, tau, f[:0])


@njit(cache=True)
def rnea_passes_ext(parents, I6, S, gravity, v, a, R, p, vel, acc, f, tau, fext):
    """The two RNEA passes on placements R, p already computed for the configuration.

    ``fext`` (n, 6): the external wrench on each body (body frame, about its origin; Pinocchio's
    convention), subtracted from the body's balance in the backward pass (docs/method.md §1b):
    f_i = I_i a_i + v_i ×* I_i v_i − f_i^ext + Σ_children X_cᵀ f_c. An empty ``fext`` (0 rows)
    means none: nothing is subtracted. Scalar temporaries only: nothing is allocated per call.
    """
    n = v.shape[0]
    external = fext.shape[0] > 0
    for i in range(n):
        par = parents[i]
        if par >= 0:
            x0, x1, x2, x3, x4, x5 = _to_child(R[i], p[i], vel[par, 0], vel[par, 1],
                                               vel[par, 2], vel[par, 3], vel[par, 4], vel[par, 5])
            y0, y1, y2, y3, y4, y5 = _to_child(R[i], p[i], acc[par, 0], acc[par, 1],
                                               acc[par, 2], acc[par, 3], acc[par, 4], acc[par, 5])
        else:  # the base does not move; gravity enters as its acceleration −g
            x0 = x1 = x2 = x3 = x4 = x5 = 0.0
            y0, y1, y2, y3, y4, y5 = _to_child(R[i], p[i], -gravity[0], -gravity[1],
                                               -gravity[2], 0.0, 0.0, 0.0)
        Si = S[i]
        qd = v[i]
        qdd = a[i]
        s0, s1, s2, s3, s4, s5 = (Si[0] * qd, Si[1] * qd, Si[2] * qd, Si[3] * qd, Si[4] * qd,
                                  Si[5] * qd)
        # v_i = X v_p + S q̇
        l0, l1, l2 = x0 + s0, x1 + s1, x2 + s2
        w0, w1, w2 = x3 + s3, x4 + s4, x5 + s5
        vi = vel[i]
        vi[0], vi[1], vi[2], vi[3], vi[4], vi[5] = l0, l1, l2, w0, w1, w2
        # a_i = X a_p + S q̈ + v_i ×m (S q̇),  [v; ω] ×m [u; w] = [ω × u + v × w; ω × w]
        ai = acc[i]
        ai[0] = y0 + Si[0] * qdd + (w1 * s2 - w2 * s1) + (l1 * s5 - l2 * s4)
        ai[1] = y1 + Si[1] * qdd + (w2 * s0 - w0 * s2) + (l2 * s3 - l0 * s5)
        ai[2] = y2 + Si[2] * qdd + (w0 * s1 - w1 * s0) + (l0 * s4 - l1 * s3)
        ai[3] = y3 + Si[3] * qdd + (w1 * s5 - w2 * s4)
        ai[4] = y4 + Si[4] * qdd + (w2 * s3 - w0 * s5)
        ai[5] = y5 + Si[5] * qdd + (w0 * s4 - w1 * s3)
        # f_i = I a_i + v_i ×* I v_i,  [v; ω] ×* [f; n] = [ω × f; ω × n + v × f]
        Ii = I6[i]
        fi = f[i]
        e0, e1, e2, e3, e4, e5 = _inertia_times(Ii, ai[0], ai[1], ai[2], ai[3], ai[4], ai[5])
        g0, g1, g2, g3, g4, g5 = _inertia_times(Ii, l0, l1, l2, w0, w1, w2)
        fi[0] = e0 + (w1 * g2 - w2 * g1)
        fi[1] = e1 + (w2 * g0 - w0 * g2)
        fi[2] = e2 + (w0 * g1 - w1 * g0)
        fi[3] = e3 + (w1 * g5 - w2 * g4 + l1 * g2 - l2 * g1)
        fi[4] = e4 + (w2 * g3 - w0 * g5 + l2 * g0 - l0 * g2)
        fi[5] = e5 + (w0 * g4 - w1 * g3 + l0 * g1 - l1 * g0)
    for i in range(n - 1, -1, -1):
        fi = f[i]
        if external:  # the environment's wrench on body i (its children's are already in)
            fx = fext[i]
            fi[0] -= fx[0]
            fi[1] -= fx[1]
            fi[2] -= fx[2]
            fi[3] -= fx[3]
            fi[4] -= fx[4]
            fi[5] -= fx[5]
        tau[i] = _dot6(S[i], fi)
        par = parents[i]
        if par >= 0:
            _add_to_parent(R[i], p[i], fi, f[par])


@njit(cache=True)
def _force_up(X, F0, F1, F2, F3, F4, F5):
    """Xᵀ F: a force carried from a body's frame to its parent's, for a motion transform
    X = [[Rᵀ, −Rᵀ[p]×], [0, Rᵀ]] (its zero block skipped: 27 products instead of 36)."""
    X0, X1, X2, X3, X4, X5 = X[0], X[1], X[2], X[3], X[4], X[5]
    return (X0[0] * F0 + X1[0] * F1 + X2[0] * F2,
            X0[1] * F0 + X1[1] * F1 + X2[1] * F2,
            X0[2] * F0 + X1[2] * F1 + X2[2] * F2,
            X0[3] * F0 + X1[3] * F1 + X2[3] * F2 + X3[3] * F3 + X4[3] * F4 + X5[3] * F5,
            X0[4] * F0 + X1[4] * F1 + X2[4] * F2 + X3[4] * F3 + X4[4] * F4 + X5[4] * F5,
            X0[5] * F0 + X1[5] * F1 + X2[5] * F2 + X3[5] * F3 + X4[5] * F4 + X5[5] * F5)


@njit(cache=True)
def _motion_matrix(R, p, X, i):
    """X[i] = 6×6 motion transform parent → child, [[Rᵀ, −Rᵀ[p]×], [0, Rᵀ]] of R[i], p[i];
    every entry written once (indices, not views: no reference counting in the loops)."""
    p0, p1, p2 = p[i, 0], p[i, 1], p[i, 2]
    for r in range(3):
        a0, a1, a2 = R[i, 0, r], R[i, 1, r], R[i, 2, r]  # row r of Rᵀ
        X[i, r, 0], X[i, r, 1], X[i, r, 2] = a0, a1, a2
        X[i, r, 3] = -(a1 * p2 - a2 * p1)
        X[i, r, 4] = -(a2 * p0 - a0 * p2)
        X[i, r, 5] = -(a0 * p1 - a1 * p0)
        X[i, 3 + r, 0], X[i, 3 + r, 1], X[i, 3 + r, 2] = 0.0, 0.0, 0.0
        X[i, 3 + r, 3], X[i, 3 + r, 4], X[i, 3 + r, 5] = a0, a1, a2


@njit(cache=True)
def crba_kernel(kinds, parents, axes, R0, p0, I6, S, q, R, p, X, Ic, M):
    """Mass matrix M(q); fills R, p, X (6×6 per joint) and the composite inertias Ic."""
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    crba_core(parents, I6, S, R, p, X, Ic, M)


@njit(cache=True)
def crba_core(parents, I6, S, R, p, X, Ic, M):
    """The CRBA on placements R, p already computed for the configuration."""
    composite_inertias(parents, I6, R, p, X, Ic)
    mass_from_composite(parents, S, X, Ic, M)


@njit(cache=True)
def composite_inertias(parents, I6, R, p, X, Ic):
    """Motion transforms X and composite inertias Ic (subtree of each body) from placements."""
    n = parents.shape[0]
    for i in range(n):
        _motion_matrix(R, p, X, i)
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = I6[i, r, c]
    for i in range(n - 1, -1, -1):
        par = parents[i]
        if par >= 0:
            _inertia_to_parent(R, p, Ic, i, par)


@njit(cache=True, inline="always")
def transformed_inertia(R, i, p0, p1, p2, I, k):
    """The spatial inertia I[k] = [[m1, −ĥ], [ĥ, Ī]] seen from a frame in which its own frame has
    rotation R[i] (the leading 3×3 of R[i]) and origin (p0, p1, p2): h' = R h + m p and
    Ī' = R Ī Rᵀ − (p h_Rᵀ + h_R pᵀ − 2 h_R·p 1) − m (p pᵀ − |p|² 1) with h_R = R h
    (far fewer flops than two 6×6 products; scalars only, every input read once). Ī is
    symmetric (a link's, or a sum of them): its upper triangle is read and Ī''s formed, 6
    entries, not 9. Returns (m, h'0, h'1, h'2, Ī'00, Ī'01, Ī'02, Ī'11, Ī'12, Ī'22)."""
    m = I[k, 0, 0]
    h0, h1, h2 = I[k, 5, 1], I[k, 3, 2], I[k, 4, 0]
    J00, J01, J02 = I[k, 3, 3], I[k, 3, 4], I[k, 3, 5]
    J11, J12, J22 = I[k, 4, 4], I[k, 4, 5], I[k, 5, 5]
    R00, R01, R02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
    R10, R11, R12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
    R20, R21, R22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
    a0 = R00 * h0 + R01 * h1 + R02 * h2
    a1 = R10 * h0 + R11 * h1 + R12 * h2
    a2 = R20 * h0 + R21 * h1 + R22 * h2
    g0, g1, g2 = a0 + m * p0, a1 + m * p1, a2 + m * p2
    diag = 2.0 * (a0 * p0 + a1 * p1 + a2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    # rows of T = R Ī
    T00, T01, T02 = (R00 * J00 + R01 * J01 + R02 * J02, R00 * J01 + R01 * J11 + R02 * J12,
                     R00 * J02 + R01 * J12 + R02 * J22)
    T10, T11, T12 = (R10 * J00 + R11 * J01 + R12 * J02, R10 * J01 + R11 * J11 + R12 * J12,
                     R10 * J02 + R11 * J12 + R12 * J22)
    T20, T21, T22 = (R20 * J00 + R21 * J01 + R22 * J02, R20 * J01 + R21 * J11 + R22 * J12,
                     R20 * J02 + R21 * J12 + R22 * J22)
    v00 = T00 * R00 + T01 * R01 + T02 * R02 - (p0 * a0 + a0 * p0) - m * p0 * p0 + diag
    v01 = T00 * R10 + T01 * R11 + T02 * R12 - (p0 * a1 + a0 * p1) - m * p0 * p1
    v02 = T00 * R20 + T01 * R21 + T02 * R22 - (p0 * a2 + a0 * p2) - m * p0 * p2
    v11 = T10 * R10 + T11 * R11 + T12 * R12 - (p1 * a1 + a1 * p1) - m * p1 * p1 + diag
    v12 = T10 * R20 + T11 * R21 + T12 * R22 - (p1 * a2 + a1 * p2) - m * p1 * p2
    v22 = T20 * R20 + T21 * R21 + T22 * R22 - (p2 * a2 + a2 * p2) - m * p2 * p2 + diag
    return m, g0, g1, g2, v00, v01, v02, v11, v12, v22


@njit(cache=True)
def _inertia_to_parent(R, p, Ic, i, par):
    """Ic[par] += X_iᵀ Ic[i] X_i: body i's subtree inertia seen from its parent's frame
    (rotation R[i], origin p[i]; :func:`transformed_inertia`)."""
    m, g0, g1, g2, v00, v01, v02, v11, v12, v22 = transformed_inertia(
        R, i, p[i, 0], p[i, 1], p[i, 2], Ic, i)
    Ic[par, 3, 3] += v00
    Ic[par, 3, 4] += v01
    Ic[par, 3, 5] += v02
    Ic[par, 4, 3] += v01
    Ic[par, 4, 4] += v11
    Ic[par, 4, 5] += v12
    Ic[par, 5, 3] += v02
    Ic[par, 5, 4] += v12
    Ic[par, 5, 5] += v22
    Ic[par, 0, 0] += m
    Ic[par, 1, 1] += m
    Ic[par, 2, 2] += m
    Ic[par, 0, 4] += g2  # −ĝ
    Ic[par, 0, 5] -= g1
    Ic[par, 1, 3] -= g2
    Ic[par, 1, 5] += g0
    Ic[par, 2, 3] += g1
    Ic[par, 2, 4] -= g0
    Ic[par, 4, 0] += g2  # ĝ
    Ic[par, 5, 0] -= g1
    Ic[par, 3, 1] -= g2
    Ic[par, 5, 1] += g0
    Ic[par, 3, 2] += g1
    Ic[par, 4, 2] -= g0


@njit(cache=True)
def mass_from_composite(parents, S, X, Ic, M):
    """M[i, j] = S_jᵀ X_{i→j}ᵀ Ic_i S_i along the path from body i to the base."""
    n = parents.shape[0]
    for i in range(n):
        Si = S[i]
        F0, F1, F2, F3, F4, F5 = _inertia_times(Ic[i], Si[0], Si[1], Si[2], Si[3], Si[4], Si[5])
        M[i, i] = Si[0] * F0 + Si[1] * F1 + Si[2] * F2 + Si[3] * F3 + Si[4] * F4 + Si[5] * F5
        j = i
        while parents[j] >= 0:
            F0, F1, F2, F3, F4, F5 = _force_up(X[j], F0, F1, F2, F3, F4, F5)
            j = parents[j]
            Sj = S[j]
            s = Sj[0] * F0 + Sj[1] * F1 + Sj[2] * F2 + Sj[3] * F3 + Sj[4] * F4 + Sj[5] * F5
            M[i, j] = s
            M[j, i] = s


@njit(cache=True)
def directors_kernel(parents, S, R, p, X, Ic, D, rel):
    """D[α, i] = pl_α at joint i (see robot_dynamics.algorithm.directors), from crba_kernel's R, p, X, Ic;
    ``rel`` = (ptr, idx, parents) from :func:`.layout.model_relations`."""
    n = parents.shape[0]
    D[:] = 0.0
    directors_core(parents, S, R, p, X, Ic, D, np.empty((n, 6)), rel)


@njit(cache=True)
def directors_core(parents, S, R, p, X, Ic, D, motion, rel):
    """:func:`directors_kernel` on caller-provided scratch ``motion`` (n, 6).

    Writes only the entries D[α, i] of related joints (``rel``); the others, zero by
    construction, are left as they are."""
    ptr, idx = rel[0], rel[1]
    n = parents.shape[0]
    for al in range(n):
        Dal = D[al]
        Sa = S[al]
        F0, F1, F2, F3, F4, F5 = _inertia_times(Ic[al], Sa[0], Sa[1], Sa[2], Sa[3], Sa[4], Sa[5])
        d = Dal[al]
        d[0], d[1], d[2], d[3], d[4], d[5] = F0, F1, F2, F3, F4, F5
        j = al
        while parents[j] >= 0:  # the path to the base: X_{α→j}ᵀ Ic_α S_α
            F0, F1, F2, F3, F4, F5 = _force_up(X[j], F0, F1, F2, F3, F4, F5)
            j = parents[j]
            d = Dal[j]
            d[0], d[1], d[2], d[3], d[4], d[5] = F0, F1, F2, F3, F4, F5
        ma = motion[al]
        for k in range(6):
            ma[k] = Sa[k]
        for k in range(ptr[al], ptr[al + 1]):  # the subtree (related joints after α, parents
            i = idx[k]                          # first): Ic_i X_{i←α} S_α
            if i <= al:
                continue
            mp = motion[parents[i]]
            m0, m1, m2, m3, m4, m5 = _to_child(R[i], p[i], mp[0], mp[1], mp[2], mp[3], mp[4],
                                               mp[5])
            mi = motion[i]
            mi[0], mi[1], mi[2], mi[3], mi[4], mi[5] = m0, m1, m2, m3, m4, m5
            d = Dal[i]
            d[0], d[1], d[2], d[3], d[4], d[5] = _inertia_times(Ic[i], m0, m1, m2, m3, m4, m5)


@njit(cache=True)
def mass_from_directors(S, D, rel, M):
    """M[α, j] = S_jᵀ pl_α[j] (seed 004 §2.6, M = S A) from the directors of directors_core;
    zero for unrelated joints (``rel``, see :func:`.layout.model_relations`)."""
    ptr, idx = rel[0], rel[1]
    M[:, :] = 0.0
    for j in range(S.shape[0]):
        Sj = S[j]
        s0, s1, s2, s3, s4, s5 = Sj[0], Sj[1], Sj[2], Sj[3], Sj[4], Sj[5]
        for k in range(ptr[j], ptr[j + 1]):
            al = idx[k]
            d = D[al, j]
            M[al, j] = s0 * d[0] + s1 * d[1] + s2 * d[2] + s3 * d[3] + s4 * d[4] + s5 * d[5]


@njit(cache=True)
def world_kernel(parents, R, p, oMi):
    """World poses oMi (n, 4, 4) from the parent ← child placements (the placement read once
    into scalars, no branch in the row loop: 62 against 103 ns on panda, the same numbers)."""
    n = parents.shape[0]
    for i in range(n):
        par = parents[i]
        if par < 0:
            for r in range(3):
                oMi[i, r, 0], oMi[i, r, 1], oMi[i, r, 2] = R[i, r, 0], R[i, r, 1], R[i, r, 2]
                oMi[i, r, 3] = p[i, r]
        else:
            r00, r01, r02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
            r10, r11, r12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
            r20, r21, r22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
            t0, t1, t2 = p[i, 0], p[i, 1], p[i, 2]
            for r in range(3):
                b0, b1, b2 = oMi[par, r, 0], oMi[par, r, 1], oMi[par, r, 2]
                oMi[i, r, 0] = b0 * r00 + b1 * r10 + b2 * r20
                oMi[i, r, 1] = b0 * r01 + b1 * r11 + b2 * r21
                oMi[i, r, 2] = b0 * r02 + b1 * r12 + b2 * r22
                oMi[i, r, 3] = b0 * t0 + b1 * t1 + b2 * t2 + oMi[par, r, 3]
        oMi[i, 3, 0] = 0.0
        oMi[i, 3, 1] = 0.0
        oMi[i, 3, 2] = 0.0
        oMi[i, 3, 3] = 1.0


@njit(cache=True, inline="always")
def finite_or_zero(x):
    """x, or 0 where it is not finite (NaN included)."""
    return x if abs(x) < np.inf else 0.0


@njit(cache=True)
def all_finite(q, v, a):
    """True when the three state vectors hold only finite numbers (checked in the kernel, so a
    caller with well-formed arrays pays no NumPy reduction)."""
    for i in range(q.shape[0]):
        if not (np.isfinite(q[i]) and np.isfinite(v[i]) and np.isfinite(a[i])):
            return False
    return True


@njit(cache=True)
def all_finite_array(x):
    """True when the C-contiguous array ``x`` (any shape) holds only finite numbers: Σ 0·x is 0
    for finite entries and NaN once one is ±Inf or NaN (no branch per entry)."""
    flat = x.reshape(x.size)
    acc = 0.0
    for i in range(flat.shape[0]):
        acc += flat[i] * 0.0
    return acc == 0.0


@njit(cache=True)
def add_armature(arm, M):
    """M += diag(armature): the reflected rotor inertia of each joint's actuator (as Pinocchio's
    ``model.armature``). The rotors spin about the joint axes only, so they add to M's diagonal
    and nothing to the link wrenches (the directors pl_α, fn)."""
    for i in range(arm.shape[0]):
        M[i, i] += arm[i]


@njit(cache=True)
def add_rotor_effort(arm, a, tau):
    """τ += armature ∘ q̈: the effort that accelerates the rotors, which the motor supplies on
    top of the joint's axial wrench fn∥ (``data.f`` excludes it, as Pinocchio's ``data.f``)."""
    for i in range(arm.shape[0]):
        tau[i] += arm[i] * a[i]


@njit(cache=True)
def add_joint_damping(d, v, tau):
    """τ += d∘q̇: the URDF joint damping (``<dynamics damping>``, :func:`.layout.model_damping`),
    a passive effort of the plant the motor works against, like friction — the one statement
    of the term in the motor effort of inverse dynamics (issue 33), after the friction:
    τ = (fn∥ + armature∘q̈ − τf) + d∘q̇."""
    for i in range(d.shape[0]):
        tau[i] += d[i] * v[i]


# Entry points carry explicit signatures: an argument of another type (a list, ints, a 2-D or
# non-contiguous or read-only array) raises TypeError at dispatch instead of compiling a new
# specialisation. The Python callers do not rely on that (a failed dispatch is slow):
# they test errors.plain first and convert with errors.as_vector.
F1 = "float64[::1]"


@njit(f"boolean({F1}, {F1}, {F1}, {F1}, {F1})", cache=True)
def rnea_entry(mb, q, v, a, w):
    """RNEA on the packed model and work array (:mod:`.layout`) behind a finiteness check:
    τ = Sᵀ fn + armature ∘ q̈ (the joint wrenches fn exclude the rotors).

    Returns False when q, q̇ or q̈ holds a NaN/Inf or has the wrong length (nothing computed),
    or when the results (τ, the joint wrenches) are not finite: inputs so large that the
    dynamics overflow (the caller then names the input:
    :func:`robot_dynamics.errors.raise_overflow`).
    """
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if q.shape[0] != n or v.shape[0] != n or a.shape[0] != n or not all_finite(q, v, a):
        return False
    R, p, vel, acc, f, tau, _, _, _, _, _ = work_views(mb, w)
    rnea_kernel(kinds, parents, axes, R0, p0, I6, S, model_gravity(mb), q, v, a, R, p, vel,
                acc, f, tau)
    add_rotor_effort(model_armature(mb), a, tau)
    return all_finite_array(f) and all_finite(tau, tau, tau)


F2 = "float64[:, ::1]"


@njit(f"boolean({F1}, {F1}, {F1}, {F1}, {F2}, {F1})", cache=True)
def rnea_fext_entry(mb, q, v, a, fext, w):
    """:func:`rnea_entry` with the external wrenches ``fext`` (n, 6) on the bodies (body frames,
    about their origins): False also when ``fext`` has another shape or a NaN/Inf."""
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if (q.shape[0] != n or v.shape[0] != n or a.shape[0] != n or fext.shape[0] != n
            or fext.shape[1] != 6 or not all_finite(q, v, a) or not all_finite_array(fext)):
        return False
    R, p, vel, acc, f, tau, _, _, _, _, _ = work_views(mb, w)
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes_ext(parents, I6, S, model_gravity(mb), v, a, R, p, vel, acc, f, tau, fext)
    add_rotor_effort(model_armature(mb), a, tau)
    return all_finite_array(f) and all_finite(tau, tau, tau)


@njit(f"boolean({F1}, {F1}, {F1})", cache=True)
def crba_entry(mb, q, w):
    """Mass matrix (armature included), composite inertias, transforms and world poses into the
    work array.

    Returns False when q is not finite or has the wrong length, or when M or the poses are not
    finite (a prismatic q so large that the placements overflow)."""
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    if q.shape[0] != n or not all_finite(q, q, q):
        return False
    R, p, _, _, _, _, _, X, Ic, oMi, M = work_views(mb, w)
    crba_kernel(kinds, parents, axes, R0, p0, I6, S, q, R, p, X, Ic, M)
    add_armature(model_armature(mb), M)
    world_kernel(parents, R, p, oMi)
    return all_finite_array(M) and all_finite_array(oMi)
