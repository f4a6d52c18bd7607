"""A FrictionModel written as the kernels read it: one law code and a block of parameters per
joint (robot_dynamics.kernels.friction describes the block)."""
from __future__ import annotations

import numpy as np

from robot_dynamics.friction.bearing import BearingFriction
from robot_dynamics.friction.classic import ClassicFriction
from robot_dynamics.friction.composite import CompositeFriction
from robot_dynamics.friction.gear_mesh import GearMeshFriction
from robot_dynamics.friction.load_dependent import LoadDependentFriction
from robot_dynamics.friction.none import NoFriction
from robot_dynamics.kernels.friction import (BEARING, CLASSIC, COMPOSITE, GEAR_MESH, LOAD_DEPENDENT,
                                             LOAD_DEPENDENT_255, MAX_PARTS, NONE)
from robot_dynamics.kernels.layout import LAW_PARAMS, pack_laws


def _pack_one(law, out):
    """Code of a plain built-in law, its eight parameters written to ``out``; None when the
    kernel does not know it."""
    t = type(law)
    if t is NoFriction:
        return NONE
    if t is ClassicFriction:
        st = law.stribeck
        out[:8] = [law.coulomb, law.viscous, 0.0 if st is None else 1.0,
                   0.0 if st is None else st[0], 1.0 if st is None else st[1],
                   law.coulomb_positive, law.coulomb_negative, 1.0 if law.asymmetric else 0.0]
        return CLASSIC
    if t is LoadDependentFriction and law.constant:
        out[:5] = [law.coulomb, law.viscous, law.k1, law.k2, law.k3]
        return LOAD_DEPENDENT if law.form == "2.5.6" else LOAD_DEPENDENT_255
    if t is BearingFriction:
        st = law.stribeck
        out[:8] = [law.mu, law.pin_radius, law.friction_arm,
                   0.0 if law.bending_arm is None else law.bending_arm, law.preload,
                   0.0 if st is None else 1.0, 0.0 if st is None else st[0],
                   1.0 if st is None else st[1]]
        return BEARING
    if t is GearMeshFriction:
        out[:2] = [law.c_forward, law.c_backward]
        return GEAR_MESH
    return None


def pack_friction(friction):
    """(codes, params, buffer) of a FrictionModel for the kernels (:func:`~robot_dynamics.kernels.layout.pack_laws`),
    or None when a joint uses a law the kernels do not know (a Python callable, function-valued
    coefficients, a registered user law): callers then take the Python path."""
    n = len(friction.laws)
    codes = np.zeros(n, dtype=np.int64)
    params = np.zeros((n, LAW_PARAMS))
    for i, law in enumerate(friction.laws):
        if type(law) is CompositeFriction:
            parts = law.named_parts
            if len(parts) > MAX_PARTS:
                return None
            codes[i] = COMPOSITE
            params[i, 0] = len(parts)
            for j, (_, part) in enumerate(parts):
                code = _pack_one(part, params[i, 2 + 9 * j:10 + 9 * j])
                if code is None:
                    return None
                params[i, 1 + 9 * j] = code
            continue
        code = _pack_one(law, params[i])
        if code is None:
            return None
        codes[i] = code
    return pack_laws(codes, params)
