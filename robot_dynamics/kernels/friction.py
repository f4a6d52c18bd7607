"""The built-in friction laws on arrays: one code and a block of parameters per joint.

A plain law uses the first eight parameters of its block. A composite law (code COMPOSITE,
:class:`~robot_dynamics.friction.composite.CompositeFriction`) stores its number of parts k ≤
MAX_PARTS in ``pr[0]`` and part j as a code and eight parameters at ``pr[1 + 9j:10 + 9j]``
(``layout.LAW_PARAMS`` is wide enough); its magnitude is the sum of the parts'
(:func:`friction_parts_kernel` gives them one by one, for the energy audit's loss split).

:mod:`robot_dynamics.friction.packing` writes a FrictionModel in this form.
"""
from __future__ import annotations

import math

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import (F1, F2, add_joint_damping, all_finite, rnea_entry,
                                             rnea_fext_entry)
from robot_dynamics.kernels.layout import (LAW_PARAMS, laws_views, model_damping, model_views,
                                           scratch_views, work_views)

NONE, CLASSIC, LOAD_DEPENDENT, LOAD_DEPENDENT_255, BEARING, GEAR_MESH, COMPOSITE = range(7)
MAX_PARTS = 3  # parts of a composite law in one block: 1 + 9·3 ≤ LAW_PARAMS


@njit(cache=True, inline="always")
def _part(pr, j):
    """Part j's eight parameters of a composite block (an array or a tuple) as a tuple."""
    o = 2 + 9 * j
    return (pr[o], pr[o + 1], pr[o + 2], pr[o + 3], pr[o + 4], pr[o + 5], pr[o + 6], pr[o + 7])


@njit(cache=True)
def friction_kernel(codes, params, kinds, axes, W, q, qd, direction, out):
    """Magnitudes (≥ 0) of every joint's friction; same formulas as the law classes."""
    for i in range(codes.shape[0]):
        out[i] = friction_one(codes[i], params[i], kinds[i], axes[i], W[i], qd[i], direction[i])


@njit(cache=True)
def friction_parts_kernel(codes, params, kinds, axes, W, qd, direction, out):
    """Each part's magnitude: ``out[i, j]`` part j of joint i's composite law (column 0 the
    whole law of a plain one, 0 for missing parts); rows sum to :func:`friction_kernel`'s."""
    for i in range(codes.shape[0]):
        pr = params[i]
        for j in range(out.shape[1]):
            out[i, j] = 0.0
        if codes[i] == COMPOSITE:
            for j in range(int(pr[0])):
                out[i, j] = law_one(int(pr[1 + 9 * j]), _part(pr, j), kinds[i],
                                    axes[i], W[i], qd[i], direction[i])
        else:
            out[i, 0] = law_one(codes[i], pr, kinds[i], axes[i], W[i], qd[i], direction[i])


@njit(cache=True)
def friction_split_kernel(codes, params, kinds, axes, W, v_end, tauf, v_mid, h, total, ids, out):
    """One step's friction dissipation split by part (robot_dynamics.algorithm.energy): joint i's
    ``e_i = −h τf_i q̇_mid,i`` (scaled so that Σ e_i = ``total`` unless ``total`` is NaN) is
    shared by its parts' magnitudes at (W, q̇⁺, motion against τf); ``out[ids[i, j]]`` gets
    part j's share (ids −1: no part)."""
    n = codes.shape[0]
    esum = 0.0
    for i in range(n):
        esum += -h * tauf[i] * v_mid[i]
    scale = total / esum if (total == total and esum != 0.0) else 1.0
    tmp = np.zeros(ids.shape[1])
    for i in range(n):
        e = -h * tauf[i] * v_mid[i] * scale
        if e == 0.0 or codes[i] == 0:
            continue
        d = -1.0 if tauf[i] > 0 else (1.0 if tauf[i] < 0 else 0.0)
        pr = params[i]
        for j in range(tmp.shape[0]):
            tmp[j] = 0.0
        if codes[i] == COMPOSITE:
            for j in range(int(pr[0])):
                tmp[j] = law_one(int(pr[1 + 9 * j]), _part(pr, j), kinds[i], axes[i],
                                 W[i], v_end[i], d)
        else:
            tmp[0] = law_one(codes[i], pr, kinds[i], axes[i], W[i], v_end[i], d)
        s = 0.0
        for j in range(tmp.shape[0]):
            s += tmp[j]
        if s > 0.0:
            for j in range(tmp.shape[0]):
                if ids[i, j] >= 0:
                    out[ids[i, j]] += tmp[j] * (e / s)


@njit(cache=True, inline="always")
def friction_one(code, pr, kind, e, Wi, v, direction):
    """One joint's friction magnitude (≥ 0): law ``code`` with parameters ``pr``, joint wrench
    ``Wi`` (joint frame), velocity ``v``; ``direction`` signs the motion when v = 0."""
    if code == 0:
        return 0.0
    if code == COMPOSITE:
        total = 0.0
        for j in range(int(pr[0])):
            total += law_one(int(pr[1 + 9 * j]), _part(pr, j), kind, e, Wi, v, direction)
        return total
    return law_one(code, pr, kind, e, Wi, v, direction)


#: a law block's length that :func:`law_inputs` reads (a composite of MAX_PARTS parts)
LAW_ROW = 1 + 9 * MAX_PARTS
if LAW_ROW > LAW_PARAMS:  # law_inputs would read past a joint's block
    raise ImportError(f"kernels.friction: a composite block needs {LAW_ROW} parameters, "
                      f"layout.LAW_PARAMS is {LAW_PARAMS}")


@njit(cache=True, inline="always")
def law_inputs(params, axes, W, i):
    """Joint i's law block, axis and wrench as tuples (values), for the hot loops' inlined
    laws (:func:`friction_one_inline`, :func:`friction_gradient_inline`). Passed arrays,
    an inlined law with branches keeps numba's reference counts on them: six runtime calls per
    joint and evaluation, about half of what evaluating a load-dependent law then costs."""
    return ((params[i, 0], params[i, 1], params[i, 2], params[i, 3], params[i, 4], params[i, 5],
             params[i, 6], params[i, 7], params[i, 8], params[i, 9], params[i, 10],
             params[i, 11], params[i, 12], params[i, 13], params[i, 14], params[i, 15],
             params[i, 16], params[i, 17], params[i, 18], params[i, 19], params[i, 20],
             params[i, 21], params[i, 22], params[i, 23], params[i, 24], params[i, 25],
             params[i, 26], params[i, 27]),
            (axes[i, 0], axes[i, 1], axes[i, 2]),
            (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5]))


@njit(cache=True, inline="always")
def _motion_sign(v, direction):
    """The sign of the motion: of v, or of ``direction`` when v = 0 (0 when both are)."""
    return 1.0 if v > 0 else (-1.0 if v < 0 else (1.0 if direction > 0 else
                                                    (-1.0 if direction < 0 else 0.0)))


@njit(cache=True, inline="always")
def _coulomb_level(pr, d):
    """The classic law's Coulomb level for motion sign d (asymmetric levels; at d = 0 the
    smaller one, or the symmetric level)."""
    if d > 0:
        return pr[5]
    if d < 0:
        return pr[6]
    return min(pr[5], pr[6]) if pr[7] > 0 else pr[0]


@njit(cache=True, inline="always")
def _rejection(x0, x1, x2, xpar, e):
    """|x − x∥ e|, the normal part's magnitude, from the rejection vector itself: accurate to
    the roundoff of x's components. Not √(|x|² − x∥²): where x is nearly axial (the base
    joint's force, the arm's weight along a vertical axis) that difference cancels, and the
    normal part came out as √ of a multiple of ulp(|x|²) — a staircase in the loads whose steps
    (1e-8 |x|, times the law's k) exceed the friction solve's tolerance, so that a joint at its
    stick/slip boundary had no converging sliding motion and its state cycled (issue 35,
    docs/measurements.md). components.load_components computes the same."""
    r0 = x0 - xpar * e[0]
    r1 = x1 - xpar * e[1]
    r2 = x2 - xpar * e[2]
    return math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)


@njit(cache=True)
def law_one(code, pr, kind, e, Wi, v, direction):
    """One plain law's magnitude (codes NONE … GEAR_MESH; the formulas of the law classes)."""
    if code == 0:
        return 0.0
    d = _motion_sign(v, direction)
    if code == 1:
        fc = _coulomb_level(pr, d)
        level = fc
        if pr[2] > 0:
            static = pr[3] if pr[7] == 0 else pr[3] * fc / max(pr[0], 1e-300)
            level = fc + (static - fc) * math.exp(-(v / pr[4]) ** 2)
        return level + pr[1] * abs(v)
    fpar = Wi[0] * e[0] + Wi[1] * e[1] + Wi[2] * e[2]
    npar = Wi[3] * e[0] + Wi[4] * e[1] + Wi[5] * e[2]
    ff = Wi[0] ** 2 + Wi[1] ** 2 + Wi[2] ** 2
    fperp = _rejection(Wi[0], Wi[1], Wi[2], fpar, e)
    nperp = _rejection(Wi[3], Wi[4], Wi[5], npar, e)
    prismatic = kind == 1
    if code == 5:  # gear mesh: c_f |t| motoring (t·d > 0), c_b |t| back-driven
        t = fpar if prismatic else npar
        if d == 0.0:
            c = min(pr[0], pr[1])
        else:
            c = pr[0] if t * d > 0 else pr[1]
        return c * abs(t)
    if code == 2 or code == 3:
        if prismatic:
            x1, x2, x3 = fperp, nperp, abs(npar)
        elif code == 3:
            x1, x2, x3 = nperp, math.sqrt(ff), 0.0
        else:
            x1, x2, x3 = nperp, fperp, abs(fpar)
        return pr[0] + pr[1] * abs(v) + pr[2] * x1 + pr[3] * x2 + pr[4] * x3
    # bearing
    mu = pr[0]
    if pr[5] > 0:
        mu = pr[0] + (pr[6] - pr[0]) * math.exp(-(v / pr[7]) ** 2)
    bend = nperp / pr[3] if pr[3] > 0 else 0.0
    if prismatic:
        tors = abs(npar) / pr[1] if pr[1] > 0 else 0.0
        load = fperp + bend + tors
    else:
        load = pr[1] * (fperp + bend) + pr[2] * abs(fpar)
    return pr[4] + mu * load


#: :func:`law_one` compiled into its caller: the stick/slip iteration's friction map
#: (kernels/stiction.py ``_friction_of``) and the articulated recursions (kernels/articulated.py
#: ``evaluate``) evaluate a law per joint per iteration, where the call itself cost a third of
#: the evaluation; they inline it, on :func:`law_inputs`' values
_law_inline = njit(cache=True, inline="always")(law_one.py_func)


@njit(cache=True, inline="always")
def friction_one_inline(code, pr, kind, e, Wi, v, direction):
    """:func:`friction_one` with a plain law's formulas inlined (the hot loops' variant, on
    :func:`law_inputs`' values)."""
    if code == 0:
        return 0.0
    if code == COMPOSITE:
        return friction_one(code, pr, kind, e, Wi, v, direction)
    return _law_inline(code, pr, kind, e, Wi, v, direction)


@njit(cache=True)
def id_friction_kernel(codes, params, kinds, axes, W, q, v, a, fn_axial, tol, tauf, tau):
    """Seed 004 §2.7 steps 2–4 after RNEA: τ = fn∥ − τf, τf against q̇ (or q̈ at rest)."""
    for i in range(q.shape[0]):
        src = v[i] if abs(v[i]) > tol else a[i]
        d = 1.0 if src > 0 else (-1.0 if src < 0 else 0.0)
        tauf[i] = -friction_one(codes[i], params[i], kinds[i], axes[i], W[i], v[i], d) * d
        tau[i] = fn_axial[i] - tauf[i]


#: row of the work array's ``vecs`` scratch that receives id_entry's τ (fd.py uses 16–22, and
#: this row for its damped efforts: inverse dynamics copies τ out at once)
ID_OUT = 23


@njit(cache=True, inline="always")
def _id_friction_step(mb, fr, q, v, a, tol, damped, w):
    """Steps 2–4 of seed 004 §2.7 on the joint wrenches an RNEA pass left in ``w``, plus the URDF
    damping d∘q̇ when ``damped`` (issue 33): τ into row ID_OUT of ``vecs``, False when it or τf
    is not finite."""
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    R, p, vel, acc, f, fn_axial, tauf, _, _, _, _ = work_views(mb, w)
    codes, params = laws_views(fr, n)
    out = scratch_views(mb, w)[6][ID_OUT]
    id_friction_kernel(codes, params, kinds, axes, f, q, v, a, fn_axial, tol, tauf, out)
    if damped:
        add_joint_damping(model_damping(mb), v, out)
    return all_finite(out, tauf, out)


@njit(f"boolean({F1}, {F1}, {F1}, {F1}, {F1}, float64, boolean, {F1})", cache=True)
def id_entry(mb, fr, q, v, a, tol, damped, w):
    """Friction-aware inverse dynamics in one call (RNEA + seed 004 §2.7 steps 2–4, and with
    ``damped`` the URDF damping d∘q̇) on the packed model, laws (:func:`.layout.pack_laws`; the
    model's "no laws" for none) and work array; τ goes to row ID_OUT of ``vecs``.
    Returns False when an input is not finite (nothing computed) or the result overflows."""
    if not rnea_entry(mb, q, v, a, w):
        return False
    return _id_friction_step(mb, fr, q, v, a, tol, damped, w)



@njit(cache=True, inline="always")
def _norm_grad(x0, x1, x2, xpar, xperp, e, c_perp, c_par, c_norm):
    """∂/∂x of c_perp·|x⊥| + c_par·|x∥| + c_norm·|x| (x⊥ = x − x∥e, x∥ = x·e), three values;
    a term adds nothing where its norm is 0 (not differentiable there)."""
    g0 = g1 = g2 = 0.0
    if c_perp != 0.0 and xperp > 0.0:
        s = c_perp / xperp
        g0 += s * (x0 - xpar * e[0])
        g1 += s * (x1 - xpar * e[1])
        g2 += s * (x2 - xpar * e[2])
    if c_par != 0.0 and xpar != 0.0:
        s = c_par if xpar > 0 else -c_par
        g0 += s * e[0]
        g1 += s * e[1]
        g2 += s * e[2]
    if c_norm != 0.0:
        nx = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        if nx > 0.0:
            s = c_norm / nx
            g0 += s * x0
            g1 += s * x1
            g2 += s * x2
    return g0, g1, g2


@njit(cache=True)
def law_gradient(code, pr, kind, e, Wi, v, direction):
    """Derivatives of :func:`law_one`'s magnitude m: (∂m/∂v, ∂m/∂W as six values). The regime
    (direction of motion, of power flow) is held as chosen; where m is not differentiable (a
    zero load component) that term is 0. Used by Newton's method (kernels/stiction.py,
    kernels/articulated.py); tested against differences of the law classes."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if code == 0:
        return 0.0, zero
    d = _motion_sign(v, direction)
    sv = 1.0 if v > 0 else (-1.0 if v < 0 else d)  # d|v|/dv
    if code == 1:
        fc = _coulomb_level(pr, d)
        dl = 0.0
        if pr[2] > 0:
            static = pr[3] if pr[7] == 0 else pr[3] * fc / max(pr[0], 1e-300)
            dl = (static - fc) * math.exp(-(v / pr[4]) ** 2) * (-2.0 * v / (pr[4] * pr[4]))
        return dl + pr[1] * sv, zero
    f0, f1, f2, n0, n1, n2 = Wi[0], Wi[1], Wi[2], Wi[3], Wi[4], Wi[5]
    fpar = f0 * e[0] + f1 * e[1] + f2 * e[2]
    npar = n0 * e[0] + n1 * e[1] + n2 * e[2]
    fperp = _rejection(f0, f1, f2, fpar, e)
    nperp = _rejection(n0, n1, n2, npar, e)
    prismatic = kind == 1
    dv = 0.0
    # coefficients of |x⊥|, |x∥|, |x| for the force (cf) and the moment (cn)
    cf_perp = cf_par = cf_norm = cn_perp = cn_par = 0.0
    if code == 5:  # gear mesh: c |t|
        t = fpar if prismatic else npar
        if d == 0.0:
            c = min(pr[0], pr[1])
        else:
            c = pr[0] if t * d > 0 else pr[1]
        if prismatic:
            cf_par = c
        else:
            cn_par = c
    elif code == 2 or code == 3:
        dv = pr[1] * sv
        if prismatic:
            cf_perp, cn_perp, cn_par = pr[2], pr[3], pr[4]
        elif code == 3:
            cf_norm, cn_perp = pr[3], pr[2]
        else:
            cf_perp, cf_par, cn_perp = pr[3], pr[4], pr[2]
    else:  # bearing: preload + μ(v)·load
        mu = pr[0]
        dmu = 0.0
        if pr[5] > 0:
            x = math.exp(-(v / pr[7]) ** 2)
            mu = pr[0] + (pr[6] - pr[0]) * x
            dmu = (pr[6] - pr[0]) * x * (-2.0 * v / (pr[7] * pr[7]))
        inv_bend = 1.0 / pr[3] if pr[3] > 0 else 0.0
        if prismatic:
            inv_tors = 1.0 / pr[1] if pr[1] > 0 else 0.0
            load = fperp + nperp * inv_bend + abs(npar) * inv_tors
            cf_perp, cn_perp, cn_par = mu, mu * inv_bend, mu * inv_tors
        else:
            load = pr[1] * (fperp + nperp * inv_bend) + pr[2] * abs(fpar)
            cf_perp, cf_par, cn_perp = mu * pr[1], mu * pr[2], mu * pr[1] * inv_bend
        dv = dmu * load
    a0, a1, a2 = _norm_grad(f0, f1, f2, fpar, fperp, e, cf_perp, cf_par, cf_norm)
    b0, b1, b2 = _norm_grad(n0, n1, n2, npar, nperp, e, cn_perp, cn_par, 0.0)
    return dv, (a0, a1, a2, b0, b1, b2)


@njit(cache=True)
def friction_gradient_values(code, pr, kind, e, Wi, v, direction):
    """:func:`law_gradient` of a joint's whole law (a composite's parts summed)."""
    if code != COMPOSITE:
        return law_gradient(code, pr, kind, e, Wi, v, direction)
    dv = g0 = g1 = g2 = g3 = g4 = g5 = 0.0
    for j in range(int(pr[0])):
        x, g = law_gradient(int(pr[1 + 9 * j]), _part(pr, j), kind, e, Wi, v, direction)
        dv += x
        g0, g1, g2, g3, g4, g5 = g0 + g[0], g1 + g[1], g2 + g[2], g3 + g[3], g4 + g[4], g5 + g[5]
    return dv, (g0, g1, g2, g3, g4, g5)


@njit(cache=True)
def friction_gradient(code, pr, kind, e, Wi, v, direction, g):
    """:func:`friction_gradient_values` into arrays: ``g`` (6) is overwritten with ∂m/∂W, the
    return value is ∂m/∂v."""
    dv, gt = friction_gradient_values(code, pr, kind, e, Wi, v, direction)
    for k in range(6):
        g[k] = gt[k]
    return dv


_law_gradient_inline = njit(cache=True, inline="always")(law_gradient.py_func)


@njit(cache=True, inline="always")
def friction_gradient_inline(code, pr, kind, e, Wi, v, direction):
    """:func:`friction_gradient_values` with a plain law's derivatives inlined (Newton's
    matrix, kernels/stiction.py and kernels/articulated.py, evaluates them per joint per
    iteration, on :func:`law_inputs`' values)."""
    if code != COMPOSITE:
        return _law_gradient_inline(code, pr, kind, e, Wi, v, direction)
    return friction_gradient_values(code, pr, kind, e, Wi, v, direction)


@njit(cache=True)
def friction_gradient_kernel(codes, params, kinds, axes, W, qd, direction, G, dv):
    """Every joint's :func:`friction_gradient`: ∂m_i/∂W_i into G (n, 6), ∂m_i/∂q̇_i into dv."""
    for i in range(codes.shape[0]):
        dv[i] = friction_gradient(codes[i], params[i], kinds[i], axes[i], W[i], qd[i],
                                  direction[i], G[i])


@njit(cache=True)
def can_self_lock(code, pr):
    """True for a gear mesh (alone or a composite's part) with c_backward ≥ 1 (η_b ≤ 0): its
    back-driven motion can be non-unique (Painlevé-type), and the stick/slip solve then keeps
    the seed's successive approximation (kernels/stiction.py) instead of Newton's method."""
    if code == GEAR_MESH:
        return pr[1] >= 1.0
    if code == COMPOSITE:
        for j in range(int(pr[0])):
            if int(pr[1 + 9 * j]) == GEAR_MESH and pr[3 + 9 * j] >= 1.0:
                return True
    return False


@njit(cache=True)
def affine_in_velocity(code, pr):
    """True for a law whose magnitude is affine in |q̇| and reads no load: none, or classic
    without a Stribeck term (Coulomb + viscous). With the motion's direction held, its friction
    is then affine in q̈ within a time step (q̇ + h q̈), on each side of q̇ + h q̈ = 0, and
    independent of q̈ at an instant: one Newton step is exact (kernels/stiction.py)."""
    return code == 0 or (code == 1 and not pr[2] > 0)


@njit(cache=True)
def loads_matter(codes, params):
    """True when some joint's law reads its reaction wrench (load-dependent, bearing, gear
    mesh, or a composite with such a part): only then are the wrench directors needed."""
    for i in range(codes.shape[0]):
        c = codes[i]
        if c == COMPOSITE:
            pr = params[i]
            for j in range(int(pr[0])):
                if int(pr[1 + 9 * j]) >= LOAD_DEPENDENT:
                    return True
        elif c >= LOAD_DEPENDENT:
            return True
    return False


@njit(f"boolean({F1}, {F1}, {F1}, {F1}, {F1}, {F2}, float64, boolean, {F1})", cache=True)
def id_fext_entry(mb, fr, q, v, a, fext, tol, damped, w):
    """:func:`id_entry` with external wrenches ``fext`` (n, 6) on the bodies: the friction laws
    read the joint wrenches that carry them (seed 004 §2.7 with FN_ext, docs/method.md §1b)."""
    if not rnea_fext_entry(mb, q, v, a, fext, w):
        return False
    return _id_friction_step(mb, fr, q, v, a, tol, damped, w)
