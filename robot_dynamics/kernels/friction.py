"""The built-in friction laws on arrays: one code and eight parameters per joint.

``pack_friction`` turns a :class:`~robot_dynamics.friction.FrictionModel` into
(codes, params, buffer) (:func:`.layout.pack_laws`), or
returns None when a joint uses a law the kernel does not know (a Python callable, function-valued
coefficients, a registered user law): callers then use the reference path, which is always right.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .dynamics import F1, all_finite, rnea_entry
from .layout import laws_views, model_views, pack_laws, scratch_views, work_views

NONE, CLASSIC, LOAD_DEPENDENT, LOAD_DEPENDENT_255, BEARING = 0, 1, 2, 3, 4


def pack_friction(friction):
    from ..friction.bearing import BearingFriction
    from ..friction.classic import ClassicFriction
    from ..friction.load_dependent import LoadDependentFriction
    from ..friction.none import NoFriction

    n = len(friction.laws)
    codes = np.zeros(n, dtype=np.int64)
    params = np.zeros((n, 8))
    for i, law in enumerate(friction.laws):
        t = type(law)
        if t is NoFriction:
            codes[i] = NONE
        elif t is ClassicFriction:
            codes[i] = CLASSIC
            st = law.stribeck
            params[i] = [law.coulomb, law.viscous, 0.0 if st is None else 1.0,
                         0.0 if st is None else st[0], 1.0 if st is None else st[1],
                         law.coulomb_positive, law.coulomb_negative, 1.0 if law.asymmetric else 0.0]
        elif t is LoadDependentFriction and law.constant:
            codes[i] = LOAD_DEPENDENT if law.form == "2.5.6" else LOAD_DEPENDENT_255
            params[i, :5] = [law.coulomb, law.viscous, law.k1, law.k2, law.k3]
        elif t is BearingFriction:
            codes[i] = BEARING
            st = law.stribeck
            params[i] = [law.mu, law.pin_radius, law.friction_arm,
                         0.0 if law.bending_arm is None else law.bending_arm, law.preload,
                         0.0 if st is None else 1.0, 0.0 if st is None else st[0],
                         1.0 if st is None else st[1]]
        else:
            return None
    return pack_laws(codes, params)


@njit(cache=True)
def friction_kernel(codes, params, kinds, axes, W, q, qd, direction, out):
    """Magnitudes (≥ 0) of every joint's friction; same formulas as the law classes."""
    for i in range(codes.shape[0]):
        out[i] = friction_one(codes[i], params[i], kinds[i], axes[i], W[i], qd[i], direction[i])


@njit(cache=True, inline="always")
def friction_one(code, pr, kind, e, Wi, v, direction):
    """One joint's friction magnitude (≥ 0): law ``code`` with parameters ``pr``, joint wrench
    ``Wi`` (joint frame), velocity ``v``; ``direction`` signs the motion when v = 0."""
    if code == 0:
        return 0.0
    d = 1.0 if v > 0 else (-1.0 if v < 0 else (1.0 if direction > 0 else
                                                 (-1.0 if direction < 0 else 0.0)))
    if code == 1:
        if d > 0:
            fc = pr[5]
        elif d < 0:
            fc = pr[6]
        else:
            fc = min(pr[5], pr[6]) if pr[7] > 0 else pr[0]
        level = fc
        if pr[2] > 0:
            static = pr[3] if pr[7] == 0 else pr[3] * fc / max(pr[0], 1e-300)
            level = fc + (static - fc) * math.exp(-(v / pr[4]) ** 2)
        return level + pr[1] * abs(v)
    fpar = Wi[0] * e[0] + Wi[1] * e[1] + Wi[2] * e[2]
    npar = Wi[3] * e[0] + Wi[4] * e[1] + Wi[5] * e[2]
    ff = Wi[0] ** 2 + Wi[1] ** 2 + Wi[2] ** 2
    nn = Wi[3] ** 2 + Wi[4] ** 2 + Wi[5] ** 2
    fperp = math.sqrt(max(ff - fpar * fpar, 0.0))
    nperp = math.sqrt(max(nn - npar * npar, 0.0))
    prismatic = kind == 1
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


@njit(cache=True)
def id_friction_kernel(codes, params, kinds, axes, W, q, v, a, fn_axial, tol, tauf, tau):
    """Seed 004 §2.7 steps 2–4 after RNEA: τ = fn∥ − τf, τf against q̇ (or q̈ at rest)."""
    for i in range(q.shape[0]):
        src = v[i] if abs(v[i]) > tol else a[i]
        d = 1.0 if src > 0 else (-1.0 if src < 0 else 0.0)
        tauf[i] = -friction_one(codes[i], params[i], kinds[i], axes[i], W[i], v[i], d) * d
        tau[i] = fn_axial[i] - tauf[i]


#: row of the work array's ``vecs`` scratch that receives id_entry's τ (fd.py uses 16–22)
ID_OUT = 23


@njit(f"boolean({F1}, {F1}, {F1}, {F1}, {F1}, float64, {F1})", cache=True)
def id_entry(mb, fr, q, v, a, tol, w):
    """Friction-aware inverse dynamics in one call (RNEA + seed 004 §2.7 steps 2–4) on the packed
    model, laws (:func:`.layout.pack_laws`) and work array; τ goes to row ID_OUT of ``vecs``.
    Returns False when an input is not finite (nothing computed) or the result overflows."""
    if not rnea_entry(mb, q, v, a, w):
        return False
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    R, p, vel, acc, f, fn_axial, tauf, _, _, _, _ = work_views(mb, w)
    codes, params = laws_views(fr, n)
    out = scratch_views(mb, w)[6][ID_OUT]
    id_friction_kernel(codes, params, kinds, axes, f, q, v, a, fn_axial, tol, tauf, out)
    return all_finite(out, tauf, out)
