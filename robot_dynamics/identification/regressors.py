"""Per-joint regressors: friction magnitude = Φ θ, linear in each law's coefficients.

The measured motor effort is ``τ = fn∥ − τf`` (seed 004 eq. 2.7.5) with ``fn∥`` and the whole joint
wrench ``fn`` given by Newton–Euler from the recorded motion (q, q̇, q̈). So, for a sliding joint,

    y = sign(q̇) (τ − fn∥) = |τf| = Φ(q̇, fn⊥) θ        (τf = −|τf| sign q̇)

* ``classic`` (Coulomb, asymmetric, + viscous):  Φ = [1{q̇>0}, 1{q̇<0}, |q̇|],  θ = [c+, c−, v]
* ``load_dependent`` (eq. 2.5.6 / 2.5.7):       Φ = [1, |q̇|, X1, X2, X3],    θ = [c, v, k1, k2, k3]
  with (X1, X2, X3) = (|n⊥|, |f⊥|, |f∥|) revolute, (|f⊥|, |n⊥|, |n∥|) prismatic.

Stribeck terms are not linear and the samples they matter for (near zero velocity) are excluded.

Actuator terms (issue 16), appended to either law's columns when asked for (:data:`TERMS`):

* ``armature`` — the reflected rotor inertia's effort armature·q̈ is part of τ, not of fn∥:
  column sign(q̇)·q̈, coefficient ``armature``;
* ``gear_mesh`` — friction in the gear mesh (:class:`~robot_dynamics.friction.gear_mesh.
  GearMeshFriction`, the law the simulator applies) that follows the transmitted effort
  n∥ = Sᵀfn (the joint wrench's axial part, exactly the law's ``t``: n·e revolute, f·e prismatic)
  and the direction of power flow, judged as the law does at the row's velocity q̇ (the
  end-of-step velocity of a simulator log): ``mesh_forward``·|n∥| while the motor drives the load
  (n∥·q̇ > 0), ``mesh_backward``·|n∥| while the load drives the motor (n∥·q̇ < 0; n∥ = 0 adds
  nothing either way) — linear once each sample's regime is known, which fn gives. The
  coefficients are the law's c_f = 1/η_f − 1 and c_b = 1 − η_b (:func:`efficiency`); rows at
  rest (where the law takes min(c_f, c_b)) are never fitted.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.multibody import joints as jt

LAWS = {
    "classic": ("coulomb_positive", "coulomb_negative", "viscous"),
    "load_dependent": ("coulomb", "viscous", "k1", "k2", "k3"),
}

#: the fitted magnitude, for reports
FORMULAS = {
    "classic": "|τf| = coulomb± + viscous·|q̇| (classic, asymmetric Coulomb + viscous)",
    "load_dependent": "|τf| = coulomb + viscous·|q̇| + k1·X1 + k2·X2 + k3·X3 (load_dependent, "
                      "seed 004 eq. 2.5.6/2.5.7)",
}

#: what the load columns X1..X3 are, per joint kind (for "never carried …" messages)
LOAD_NAMES = {
    False: ("a bending moment (|n⊥|)", "a radial force (|f⊥|)", "an axial load (|f∥|)"),
    True: ("a transverse force (|f⊥|)", "a bending moment (|n⊥|)", "a torsion moment (|n∥|)"),
}


#: optional actuator terms: name → the coefficients they add
TERMS = {"armature": ("armature",), "gear_mesh": ("mesh_forward", "mesh_backward")}

#: what an actuator coefficient needs in the data, and its column, in words
TERM_MEANINGS = {"armature": ("accelerations q̈ while moving", "sign(q̇)·q̈"),
                 "mesh_forward": ("the motor driving the load (n∥·q̇ > 0)", "|n∥| while motoring"),
                 "mesh_backward": ("the load driving the motor (n∥·q̇ < 0)",
                                   "|n∥| while back-driven")}
#: an actuator coefficient whose column is zero in the log: what never happened
TERM_ABSENT = {"armature": "never accelerated while moving",
               "mesh_forward": "never motoring (the motor never drove the load: n∥·q̇ > 0)",
               "mesh_backward": "never back-driven (the load never drove the motor: n∥·q̇ < 0)"}
#: the gear-mesh coefficients' efficiencies (actuators YAML fields)
EFFICIENCIES = {"mesh_forward": "efficiency_forward", "mesh_backward": "efficiency_backward"}


def efficiency(name, c):
    """The efficiency of a gear-mesh coefficient: η_f = 1/(1 + c_f), η_b = 1 − c_b (both
    decreasing in c; ``c`` may be an array; c_f ≤ −1 gives inf)."""
    c = np.asarray(c, dtype=float)
    if name == "mesh_forward":
        with np.errstate(divide="ignore"):
            return np.where(c > -1.0, 1.0 / np.maximum(1.0 + c, 1e-300), np.inf)
    if name == "mesh_backward":
        return 1.0 - c
    raise ValueError(f"{name!r} is not a gear-mesh coefficient")


def mesh_columns(W, S, v):
    """(motoring, back-driven) columns (N,) each of the gear mesh: |n∥| where n∥·q̇ > 0 / < 0,
    n∥ = W·S (the law's transmitted effort)."""
    n_par = W @ S
    power = n_par * v
    return np.abs(n_par) * (power > 0), np.abs(n_par) * (power < 0)


def coefficient_names(law, terms=()):
    """The fitted coefficients: the law's, then those of each actuator term."""
    return LAWS[law] + tuple(c for term in terms for c in TERMS[term])


def column_meaning(law, name, kind):
    """The excitation a coefficient needs, in words: what must vary in the data."""
    if name in TERM_MEANINGS:
        return TERM_MEANINGS[name][0]
    if law == "classic":
        return {"coulomb_positive": "motion in the positive direction",
                "coulomb_negative": "motion in the negative direction",
                "viscous": "several different speeds |q̇|"}[name]
    if name == "coulomb":
        return "motion"
    if name == "viscous":
        return "several different speeds |q̇|"
    return LOAD_NAMES[kind == jt.PRISMATIC][int(name[1]) - 1]


def load_terms(W, axis, prismatic):
    """(X1, X2, X3) per sample from joint wrenches W (N, 6)."""
    f, n = W[:, :3], W[:, 3:]
    fpar, npar = f @ axis, n @ axis
    # the rejections' norms, as the laws take them (friction/components.py: √(|f|² − f∥²)
    # cancels where the wrench is nearly axial)
    fperp = np.linalg.norm(f - fpar[:, None] * axis, axis=1)
    nperp = np.linalg.norm(n - npar[:, None] * axis, axis=1)
    if prismatic:
        return np.column_stack([fperp, nperp, np.abs(npar)])
    return np.column_stack([nperp, fperp, np.abs(fpar)])


def regressor(law, v, W, axis, kind, terms=(), a=None, S=None):
    """Φ (N, p) for one joint: the law's columns, then the actuator ``terms``' (which need the
    accelerations ``a`` (N,) for ``armature`` and the joint's motion subspace ``S`` (6,) for
    ``gear_mesh``)."""
    if law == "classic":
        cols = [(v > 0).astype(float), (v < 0).astype(float), np.abs(v)]
    else:
        cols = [np.ones_like(v), np.abs(v), *load_terms(W, axis, kind == jt.PRISMATIC).T]
    for term in terms:
        if term == "armature":
            cols.append(np.sign(v) * a)
        elif term == "gear_mesh":
            cols += list(mesh_columns(W, S, v))
        else:
            raise ValueError(f"unknown actuator term {term!r}")
    return np.column_stack(cols)
