"""Per-joint regressors: friction magnitude = Φ θ, linear in each law's coefficients.

The measured motor effort is ``τ = fn∥ − τf`` (seed 004 eq. 2.7.5) with ``fn∥`` and the whole joint
wrench ``fn`` given by Newton–Euler from the recorded motion (q, q̇, q̈). So, for a sliding joint,

    y = sign(q̇) (τ − fn∥) = |τf| = Φ(q̇, fn⊥) θ        (τf = −|τf| sign q̇)

* ``classic`` (Coulomb, asymmetric, + viscous):  Φ = [1{q̇>0}, 1{q̇<0}, |q̇|],  θ = [c+, c−, v]
* ``load_dependent`` (eq. 2.5.6 / 2.5.7):       Φ = [1, |q̇|, X1, X2, X3],    θ = [c, v, k1, k2, k3]
  with (X1, X2, X3) = (|n⊥|, |f⊥|, |f∥|) revolute, (|f⊥|, |n⊥|, |n∥|) prismatic.

Stribeck terms are not linear and the samples they matter for (near zero velocity) are excluded.
"""
from __future__ import annotations

import numpy as np

from .. import joints as jt

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


def column_meaning(law, name, kind):
    """The excitation a coefficient needs, in words: what must vary in the data."""
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
    fperp = np.sqrt(np.maximum((f * f).sum(1) - fpar ** 2, 0.0))
    nperp = np.sqrt(np.maximum((n * n).sum(1) - npar ** 2, 0.0))
    if prismatic:
        return np.column_stack([fperp, nperp, np.abs(npar)])
    return np.column_stack([nperp, fperp, np.abs(fpar)])


def regressor(law, v, W, axis, kind):
    """Φ (N, p) for one joint."""
    if law == "classic":
        return np.column_stack([(v > 0).astype(float), (v < 0).astype(float), np.abs(v)])
    X = load_terms(W, axis, kind == jt.PRISMATIC)
    return np.column_stack([np.ones_like(v), np.abs(v), X])
