"""Forward dynamics with friction by articulated-body recursions, written out — the readable
statement of :mod:`robot_dynamics.kernels.articulated` for one stick/slip assignment.

Joint i's equation (seed 004 §2.8; rotors' armature on top of the link wrench):
``S_iᵀ fn_i + armature_i q̈_i = τ_i − d_i φ_i(fn_i)`` for a sliding joint (d_i its direction of
motion, φ_i its law's magnitude, read from its own reaction wrench fn_i, eq. 2.3.7), ``q̈_i = 0``
for a stuck one. Newton's method linearises each law in its own wrench,
``φ_i(fn) ≈ φ̄_i + g_iᵀ (fn − f̄_i)``; the joint equation then reads
``T_iᵀ fn_i + armature_i q̈_i = μ_i`` with ``T_i = S_i + d_i g_i`` and
``μ_i = τ_i − d_i φ̄_i + d_i g_iᵀ f̄_i`` — the articulated-body algorithm (RBDA §7.3) with T in
place of S where the equation projects the force solves it exactly. Here in each body's frame
with 6×6 matrices and the laws' gradients by central differences; the kernel works in the world
frame with the laws' analytic derivatives, and adds the stick/slip rules of
:mod:`robot_dynamics.algorithm.friction_solve`.

The simulator's step 2 by the same recursions (:mod:`robot_dynamics.kernels.articulated_step`),
:func:`articulated_step_motion`: the damping as a further armature (h d) with −d q̇' on the
right, each law reading the end-of-step velocity |q̇' + h q̈|·s (its derivative on the pivot),
and the joints that are not free (stuck, on a stop) with a prescribed acceleration
(u − q̇')/h carried by their velocity products.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.errors import as_vector, check_data, check_friction
from robot_dynamics.reference.dynamics import mass_matrix, rnea
from robot_dynamics.reference.kinematics import placements
from robot_dynamics.spatial.algebra import force_cross, motion_cross


def _articulated_solve(model, data, T, mu, held, vel_products, bias, arm=None):
    """q̈ and the joint wrenches fn (nv, 6) of the linear joint equations
    ``T_iᵀ fn_i + armature_i q̈_i = μ_i`` (free joints), ``q̈_i = 0`` (``held``); ``arm``: the
    pivots' armatures (default the model's)."""
    n = model.nv
    S, X = data.S, data.X
    arm = model.armature if arm is None else arm
    IA = [np.array(model.spatial_inertias[i], dtype=float) for i in range(n)]
    pA = [bias[i].copy() for i in range(n)]
    U, V, D, u = np.zeros((n, 6)), np.zeros((n, 6)), np.ones(n), np.zeros(n)
    for i in range(n - 1, -1, -1):  # leaves first: each body's articulated inertia and bias
        c = vel_products[i]
        if held[i]:  # a rigid joint: the parent carries the whole subtree
            Ia, pa = IA[i], pA[i] + IA[i] @ c
        else:
            U[i] = IA[i] @ S[i]
            V[i] = IA[i].T @ T[i]
            D[i] = V[i] @ S[i] + arm[i]
            u[i] = mu[i] - T[i] @ pA[i]
            Ia = IA[i] - np.outer(U[i], V[i]) / D[i]
            pa = pA[i] + Ia @ c + U[i] * u[i] / D[i]
        p = model.parents[i]
        if p >= 0:
            IA[p] += X[i].T @ Ia @ X[i]
            pA[p] += X[i].T @ pa
    a0 = np.concatenate([-model.gravity, np.zeros(3)])  # the base accelerates at −g
    acc, qdd, fn = np.zeros((n, 6)), np.zeros(n), np.zeros((n, 6))
    for i in range(n):  # root first: q̈ and the bodies' accelerations
        p = model.parents[i]
        a = X[i] @ (acc[p] if p >= 0 else a0) + vel_products[i]
        if not held[i]:
            qdd[i] = (u[i] - V[i] @ a) / D[i]
        acc[i] = a + S[i] * qdd[i]
        fn[i] = IA[i] @ acc[i] + pA[i]
    return qdd, fn


def articulated_motion(model, data, q, v, tau, friction, held, directions, *, tol=1e-12,
                       max_iter=50, fext=None):
    """q̈ (nv,) and the joint wrenches fn (nv, 6, joint frames) with the joints in ``held``
    (bool, nv) stuck and the others sliding, each joint's friction −d_i φ_i(fn_i) against
    ``directions`` (the sign of its motion; a joint at rest that breaks away: its release
    direction). Newton's method from fn(q, q̇, 0), until q̈ moves by less than tol·(1 + |q̈|).
    ``fext`` (nv, 6): external wrenches on the bodies (body frames), taken off each body's bias
    v ×* I v (and so off fn(q, q̇, 0)), as in kernels/articulated.py's ``external_world``."""
    check_data(model, data, "articulated_motion")
    if friction is not None:
        check_friction(model, friction, "articulated_motion")
    q = as_vector("q", q, model.nq, where="articulated_motion")
    v = as_vector("v", v, model.nv, where="articulated_motion")
    tau = as_vector("tau", tau, model.nv, where="articulated_motion")
    n = model.nv
    held = np.asarray(held, dtype=bool)
    d = np.asarray(directions, dtype=float)
    rnea(model, data, q, v, np.zeros(n), fext)  # fn(q, q̇, 0): the first linearisation
    fn = data.f.copy()
    placements(model, data, q)
    vel = np.zeros((n, 6))
    c, beta = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):  # velocities, velocity products c = v ×m S q̇, bias forces v ×* I v
        p = model.parents[i]
        vel[i] = data.X[i] @ (vel[p] if p >= 0 else np.zeros(6)) + data.S[i] * v[i]
        c[i] = motion_cross(vel[i]) @ (data.S[i] * v[i])
        beta[i] = force_cross(vel[i]) @ (model.spatial_inertias[i] @ vel[i])
        if fext is not None:
            beta[i] -= fext[i]
    sliding = ~held & (friction.active if friction is not None else np.zeros(n, bool))
    u = np.abs(v) * d  # the velocity each law reads, signed by the direction of motion

    def phi(W):
        return (friction.magnitudes(model, W, q, u, d) if friction is not None
                else np.zeros(n))

    qdd = np.zeros(n)
    for _ in range(max_iter):
        m = phi(fn)
        g = np.zeros((n, 6))  # ∂φ_i/∂fn_i by central differences (each law reads its own fn_i)
        for k in range(6):
            step = 1e-6 * (1.0 + np.abs(fn[:, k]))
            up, down = fn.copy(), fn.copy()
            up[:, k] += step
            down[:, k] -= step
            g[:, k] = (phi(up) - phi(down)) / (2 * step)
        T = data.S.copy()
        mu = tau.copy()
        T[sliding] += d[sliding, None] * g[sliding]
        mu[sliding] += -d[sliding] * m[sliding] + d[sliding] * np.einsum(
            "ij,ij->i", g[sliding], fn[sliding])
        new, fn = _articulated_solve(model, data, T, mu, held, c, beta)
        done = np.abs(new - qdd).max() <= tol * (1.0 + np.abs(new).max())
        qdd = new
        if done:
            break
    return qdd, fn


def articulated_step_motion(model, data, q_half, v_eval, vp, tau, friction, states, directions,
                            targets, h, damping, *, tol=1e-12, max_iter=50):
    """The simulator's step 2 for one joint-state assignment by the same recursions — the
    readable statement of :mod:`robot_dynamics.kernels.articulated_step`: at (q½, the velocity
    of the products ``v_eval``), joint i's equation
    ``S_iᵀ fn_i + (armature_i + h d_i) q̈_i = τ_i − d_i q̇'_i − s_i φ_i(fn_i, u_i)`` for a free
    joint (``states`` 0; d the damping, s_i ``directions``, u_i = |q̇'_i + h q̈_i|·s_i the
    end-of-step velocity its law reads), ``q̈_i = targets_i`` for the others (stuck or on a
    stop: the recursions take them as rigid, with S_i targets_i added to their velocity
    products). Newton's method: each law linearised in its own wrench and in q̈_i (central
    differences), ``φ_i ≈ φ̄_i + g_iᵀ (fn_i − f̄_i) + k_i (q̈_i − q̄̈_i)``, moves s_i k_i to the
    pivot's armature and s_i (k_i q̄̈_i + g_iᵀ f̄_i − φ̄_i) to the right. Returns q̈ (nv,) and
    the joint wrenches fn (nv, 6, joint frames) at the answer."""
    check_data(model, data, "articulated_step_motion")
    if friction is not None:
        check_friction(model, friction, "articulated_step_motion")
    n = model.nv
    held = np.asarray(states) != 0
    s = np.asarray(directions, dtype=float)
    targets = np.where(held, np.asarray(targets, dtype=float), 0.0)
    vp, tau, damping = (np.asarray(x, dtype=float) for x in (vp, tau, damping))
    rnea(model, data, q_half, v_eval, np.zeros(n))
    placements(model, data, q_half)
    vel = np.zeros((n, 6))
    c, beta = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        p = model.parents[i]
        vel[i] = data.X[i] @ (vel[p] if p >= 0 else np.zeros(6)) + data.S[i] * v_eval[i]
        c[i] = motion_cross(vel[i]) @ (data.S[i] * v_eval[i])
        beta[i] = force_cross(vel[i]) @ (model.spatial_inertias[i] @ vel[i])
    c_held = c + data.S * targets[:, None]  # prescribed accelerations ride on c
    sliding = ~held & (friction.active if friction is not None else np.zeros(n, bool))
    arm = model.armature + h * damping
    rhs = tau - damping * vp

    def phi(W, qdd):
        u = np.abs(vp + h * qdd) * s
        return (friction.magnitudes(model, W, q_half, u, s) if friction is not None
                else np.zeros(n))

    qdd = np.where(held, targets, 0.0)  # the first linearisation: q̈ = targets (held), 0
    fn = _articulated_solve(model, data, data.S, rhs, np.ones(n, bool), c + data.S * qdd[:, None],
                            beta, arm)[1]  # (every joint prescribed: RNEA)
    for _ in range(max_iter):
        m = phi(fn, qdd)
        g = np.zeros((n, 6))
        for k in range(6):
            step = 1e-6 * (1.0 + np.abs(fn[:, k]))
            up, down = fn.copy(), fn.copy()
            up[:, k] += step
            down[:, k] -= step
            g[:, k] = (phi(up, qdd) - phi(down, qdd)) / (2 * step)
        step = 1e-6 * (1.0 + np.abs(qdd))
        kv = (phi(fn, qdd + step) - phi(fn, qdd - step)) / (2 * step)
        T = data.S.copy()
        mu = rhs.copy()
        piv = arm.copy()
        sl = sliding
        T[sl] += s[sl, None] * g[sl]
        piv[sl] += s[sl] * kv[sl]
        mu[sl] += s[sl] * (kv[sl] * qdd[sl] + np.einsum("ij,ij->i", g[sl], fn[sl]) - m[sl])
        new, fn = _articulated_solve(model, data, T, mu, held, c_held, beta, piv)
        new = np.where(held, targets, new)
        done = np.abs(new - qdd).max() <= tol * (1.0 + np.abs(new).max())
        qdd = new
        if done:
            break
    return qdd, fn


def predict_release(model, data, q, v, tau, friction, *, velocity_tolerance=1e-9, sweeps=30,
                    tol=1e-4, plain=False, max_depth=8):
    """The first stick/slip assignment of the instant's solve, predicted before any pass
    (kernels/articulated.py ``predict_release``, dense NumPy): x (nv,), non-zero (its sign the
    direction) for each joint at rest that the prediction releases, 0 elsewhere.

    At q̈ = 0 each joint needs y = τ − b − d φ (b the bias efforts, φ the moving joints' laws at
    fn(q, q̇, 0)). Holding the joints at rest R (those with friction) and letting the others F
    move with their friction frozen, R needs h = −(y_R − M_RF M_FF⁻¹ y_F) from friction, within
    bounds β (the laws at fn(q, q̇, 0), released against h). The accelerations x a release adds
    minimise ½ xᵀ S x + hᵀ x + Σ β_i |x_i|, S = M_RR − M_RF M_FF⁻¹ M_FR: coordinate descent over
    R in index order, each root subtree alone, until a sweep changes x by at most
    tol·(1 + max|x|) (or ``sweeps`` sweeps); once the signs hold a sweep, their exact answer
    when it is optimal. ``plain``: also the plain step's q̈ at that release (the solve's first
    iterate), x on R and M_FF⁻¹ (y_F − M_FR x_R) on F. None (no prediction) when the joints'
    mean depth exceeds ``max_depth``."""
    n = model.nv
    depth = np.zeros(n, dtype=int)
    for i in range(n):
        if model.parents[i] >= 0:
            depth[i] = depth[model.parents[i]] + 1
    if depth.sum() > max_depth * n:
        return None  # (the kernel's PREDICT_DEPTH: deep chains release in bulk)
    b = rnea(model, data, q, v, np.zeros(n))
    f0 = data.f.copy()  # fn(q, q̇, 0), joint frames
    M = mass_matrix(model, data, q)
    active = friction.active
    rest = (np.abs(v) <= velocity_tolerance) & active
    d = np.where(rest, 0.0, np.sign(v))
    phi = friction.magnitudes(model, f0, q, np.abs(v) * d, d)
    y = tau - b - np.where(~rest & active, d * phi, 0.0)
    R, F = np.flatnonzero(rest), np.flatnonzero(~rest)
    x = np.zeros(n)
    if len(R) == 0:
        return (x, np.linalg.solve(M, y)) if plain else x
    K = np.linalg.solve(M[np.ix_(F, F)], np.column_stack([M[np.ix_(F, R)], y[F]]))
    S = M[np.ix_(R, R)] - M[np.ix_(R, F)] @ K[:, :-1]
    h = -(y[R] - M[np.ix_(R, F)] @ K[:, -1])
    release = np.zeros(n)
    release[R] = np.where(h > 0, -1.0, 1.0)
    beta = friction.bounds(model, f0, q, release)[R]
    root = np.arange(n)
    for i in range(n):
        if model.parents[i] >= 0:
            root[i] = root[model.parents[i]]
    xs = np.zeros(len(R))
    for r0 in np.unique(root[R]):
        block = np.flatnonzero(root[R] == r0)
        for _ in range(sweeps):
            delta = big = 0.0
            before = np.sign(xs[block])
            for a in block:
                g = h[a] + S[a, block] @ xs[block] - S[a, a] * xs[a]
                new = 0.0 if abs(g) <= beta[a] else -(g - np.sign(g) * beta[a]) / S[a, a]
                delta, big = max(delta, abs(new - xs[a])), max(big, abs(new))
                xs[a] = new
            if delta <= tol * (1.0 + big):
                break
            if np.array_equal(before, np.sign(xs[block])):
                # the signs held a sweep: their exact answer, kept when it is optimal
                P, off = block[xs[block] != 0], block[xs[block] == 0]
                if len(P) == 0 or len(P) ** 2 + 2 * len(P) > 33 * n:  # (the kernel's scratch)
                    continue
                z = np.linalg.solve(S[np.ix_(P, P)], -h[P] - beta[P] * np.sign(xs[P]))
                if (np.array_equal(np.sign(z), np.sign(xs[P]))
                        and np.all(np.abs(h[off] + S[np.ix_(off, P)] @ z) <= beta[off])):
                    xs[P] = z
                    break
    x[R] = xs
    if not plain:
        return x
    qdd = x.copy()
    qdd[F] = np.linalg.solve(M[np.ix_(F, F)], y[F] - M[np.ix_(F, R)] @ xs)
    return x, qdd
