"""The built-in friction laws on arrays: one code and eight parameters per joint.

``pack_friction`` turns a :class:`~robot_dynamics.friction.FrictionModel` into (codes, params), or
returns None when a joint uses a law the kernel does not know (a Python callable, function-valued
coefficients, a registered user law): callers then use the reference path, which is always right.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .dynamics import rnea_entry

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
    return codes, params


@njit(cache=True)
def friction_kernel(codes, params, kinds, axes, W, q, qd, direction, out):
    """Magnitudes (≥ 0) of every joint's friction; same formulas as the law classes."""
    n = codes.shape[0]
    for i in range(n):
        code = codes[i]
        if code == 0:
            out[i] = 0.0
            continue
        pr = params[i]
        v = qd[i]
        d = 1.0 if v > 0 else (-1.0 if v < 0 else (1.0 if direction[i] > 0 else
                                                     (-1.0 if direction[i] < 0 else 0.0)))
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
            out[i] = level + pr[1] * abs(v)
            continue
        e = axes[i]
        fpar = W[i, 0] * e[0] + W[i, 1] * e[1] + W[i, 2] * e[2]
        npar = W[i, 3] * e[0] + W[i, 4] * e[1] + W[i, 5] * e[2]
        ff = W[i, 0] ** 2 + W[i, 1] ** 2 + W[i, 2] ** 2
        nn = W[i, 3] ** 2 + W[i, 4] ** 2 + W[i, 5] ** 2
        fperp = math.sqrt(max(ff - fpar * fpar, 0.0))
        nperp = math.sqrt(max(nn - npar * npar, 0.0))
        prismatic = kinds[i] == 1
        if code == 2 or code == 3:
            if prismatic:
                x1, x2, x3 = fperp, nperp, abs(npar)
            elif code == 3:
                x1, x2, x3 = nperp, math.sqrt(ff), 0.0
            else:
                x1, x2, x3 = nperp, fperp, abs(fpar)
            out[i] = pr[0] + pr[1] * abs(v) + pr[2] * x1 + pr[3] * x2 + pr[4] * x3
        else:  # bearing
            mu = pr[0]
            if pr[5] > 0:
                mu = pr[0] + (pr[6] - pr[0]) * math.exp(-(v / pr[7]) ** 2)
            bend = nperp / pr[3] if pr[3] > 0 else 0.0
            if prismatic:
                tors = abs(npar) / pr[1] if pr[1] > 0 else 0.0
                load = fperp + bend + tors
            else:
                load = pr[1] * (fperp + bend) + pr[2] * abs(fpar)
            out[i] = pr[4] + mu * load


@njit(cache=True)
def id_friction_kernel(codes, params, kinds, axes, W, q, v, a, fn_axial, tol, tauf, tau):
    """Seed 004 §2.7 steps 2–4 after RNEA: τ = fn∥ − τf, τf against q̇ (or q̈ at rest)."""
    n = q.shape[0]
    d = np.empty(n)
    mag = np.empty(n)
    for i in range(n):
        src = v[i] if abs(v[i]) > tol else a[i]
        d[i] = 1.0 if src > 0 else (-1.0 if src < 0 else 0.0)
    friction_kernel(codes, params, kinds, axes, W, q, v, d, mag)
    for i in range(n):
        tauf[i] = -mag[i] * d[i]
        tau[i] = fn_axial[i] - tauf[i]



@njit(cache=True)
def id_entry(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f, fn_axial,
             codes, params, tol, tauf, tau):
    """Friction-aware inverse dynamics in one call (RNEA + seed 004 §2.7 steps 2–4); returns
    False (nothing computed) when an input is not finite."""
    if not rnea_entry(kinds, parents, axes, R0, p0, I6, S, gravity, q, v, a, R, p, vel, acc, f,
                      fn_axial):
        return False
    id_friction_kernel(codes, params, kinds, axes, f, q, v, a, fn_axial, tol, tauf, tau)
    return True
