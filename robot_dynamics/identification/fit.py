"""Least-squares identification of the friction laws, per joint, with honest statistics.

For each joint: samples with ``|q̇| > min_velocity`` (the sign of friction is undefined at rest),
a robust (soft-L1) bounded (coefficients ≥ 0) least-squares fit of ``y = Φ θ`` (see
:mod:`~robot_dynamics.identification.regressors`), standard errors from the residual variance
and (ΦᵀΦ)⁻¹ at the solution, the residual RMS, and a K-fold cross-validation of the
load-dependent law against the classic one: an improvement is *claimed* only when the
held-out RMS drops in every fold and on average by more than two standard errors of the
per-fold differences — so data that does not support load dependence does not get it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..batch import joint_wrenches_batch
from ..errors import InputError
from .differentiate import accelerations
from .regressors import LAWS, regressor


ACCEL_WINDOW = 21  # samples of the Savitzky–Golay differentiator (see differentiate.py)


@dataclass
class JointFit:
    joint: str
    law: str
    coefficients: dict
    standard_errors: dict
    residual_rms: float
    samples: int
    cv_rms_classic: float = float("nan")
    cv_rms_load_dependent: float = float("nan")
    improvement: float = 0.0  # relative drop of held-out RMS, load_dependent vs classic
    improvement_supported: bool = False


@dataclass
class FitResult:
    law: str
    joints: list = field(default_factory=list)

    @property
    def config(self) -> dict:
        """The friction mapping (same structure as config/*_friction.yaml)."""
        out = {}
        for j in self.joints:
            c = j.coefficients
            if self.law == "classic":
                entry = {"model": "classic", "coulomb": 0.5 * (c["coulomb_positive"] +
                                                               c["coulomb_negative"]),
                         "viscous": c["viscous"], "coulomb_positive": c["coulomb_positive"],
                         "coulomb_negative": c["coulomb_negative"]}
            else:
                entry = {"model": "load_dependent", **c}
            out[j.joint] = {k: float(v) if not isinstance(v, str) else v for k, v in entry.items()}
        return {"joints": out}

    def summary(self) -> str:
        lines = [f"friction identification ({self.law})"]
        for j in self.joints:
            coef = ", ".join(f"{k}={j.coefficients[k]:.4g}±{j.standard_errors[k]:.2g}"
                             for k in j.coefficients)
            verdict = (f"load-dependent improves held-out RMS by {100 * j.improvement:.1f} %"
                       if j.improvement_supported else "no supported improvement over classic")
            lines.append(f"  {j.joint}: {coef}; residual RMS {j.residual_rms:.3g} "
                         f"({j.samples} samples); {verdict}")
        return "\n".join(lines)


def _solve(Phi, y):
    res = least_squares(lambda th: Phi @ th - y, np.full(Phi.shape[1], 0.01), loss="soft_l1",
                        f_scale=max(np.std(y), 1e-6), bounds=(0.0, np.inf), method="trf")
    theta = res.x
    r = Phi @ theta - y
    dof = max(len(y) - Phi.shape[1], 1)
    s2 = float(r @ r) / dof
    try:
        cov = s2 * np.linalg.inv(Phi.T @ Phi)
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        se = np.full(len(theta), np.inf)
    return theta, se, float(np.sqrt(np.mean(r ** 2)))


def _cv(PhiC, PhiL, y, folds, rng):
    idx = rng.permutation(len(y))
    parts = np.array_split(idx, folds)
    rc, rl = [], []
    for k in range(folds):
        test = parts[k]
        train = np.concatenate([parts[m] for m in range(folds) if m != k])
        for Phi, out in ((PhiC, rc), (PhiL, rl)):
            th, _, _ = _solve(Phi[train], y[train])
            out.append(np.sqrt(np.mean((Phi[test] @ th - y[test]) ** 2)))
    return np.array(rc), np.array(rl)


def fit(model, q, v, tau, a=None, *, t=None, law="load_dependent", min_velocity=0.05, folds=5,
        min_samples=50, seed=0, progress=None) -> FitResult:
    """Identify ``law`` ("classic" or "load_dependent") per joint from samples (N, nv).

    ``a`` (q̈) is differentiated from ``v`` with a zero-phase filter when not given (needs ``t``).
    ``progress(done, total)`` is called after each joint.
    """
    if law not in LAWS:
        raise InputError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    arrays = {}
    for name, arr in (("q", q), ("v", v), ("tau", tau)) + ((("a", a),) if a is not None else ()):
        arr = np.asarray(arr, dtype=float)
        if arr.ndim != 2 or arr.shape[1] != model.nv:
            raise InputError(f"{name}: expected shape (N, {model.nv}), got {arr.shape}")
        arrays[name] = arr
    n_samples = arrays["q"].shape[0]
    if any(x.shape[0] != n_samples for x in arrays.values()):
        raise InputError("q, v, tau (and a) must have the same number of samples")
    bad = ~np.all(np.concatenate([np.isfinite(x) for x in arrays.values()], axis=1), axis=1)
    if bad.any():
        raise InputError(f"non-finite values in sample(s) {np.flatnonzero(bad)[:10].tolist()}"
                         " — drop or repair those rows")
    edge = np.zeros(n_samples, dtype=bool)
    if a is None:
        if t is None:
            raise InputError("without recorded accelerations, give the time stamps t")
        arrays["a"] = accelerations(t, arrays["v"], window=ACCEL_WINDOW)
        edge[:ACCEL_WINDOW] = edge[-ACCEL_WINDOW:] = True  # the filter extrapolates there
    Q, V, A, TAU = arrays["q"], arrays["v"], arrays["a"], arrays["tau"]
    W = joint_wrenches_batch(model, Q, V, A)
    axial = np.einsum("nik,ik->ni", W, model.motion_subspaces)
    rng = np.random.default_rng(seed)
    result = FitResult(law)
    for i, joint in enumerate(model.joint_names):
        moving = (np.abs(V[:, i]) > min_velocity) & ~edge
        if moving.sum() < min_samples:
            raise InputError(f"joint {joint!r}: only {int(moving.sum())} samples with "
                             f"|q̇| > {min_velocity}; need {min_samples} (move the joint more)")
        vi, Wi = V[moving, i], W[moving, i]
        y = np.sign(vi) * (TAU[moving, i] - axial[moving, i])  # = |τf| (eq. 2.7.5)
        Phi = regressor(law, vi, Wi, model.axes[i], model.kinds[i])
        theta, se, rms = _solve(Phi, y)
        names = LAWS[law]
        jf = JointFit(joint, law, dict(zip(names, theta.tolist())), dict(zip(names, se.tolist())),
                      rms, int(moving.sum()))
        rc, rl = _cv(regressor("classic", vi, Wi, model.axes[i], model.kinds[i]),
                     regressor("load_dependent", vi, Wi, model.axes[i], model.kinds[i]), y,
                     folds, rng)
        diff = rc - rl
        jf.cv_rms_classic, jf.cv_rms_load_dependent = float(rc.mean()), float(rl.mean())
        jf.improvement = float(diff.mean() / rc.mean())
        sd = diff.std(ddof=1) / np.sqrt(folds) if folds > 1 else np.inf
        jf.improvement_supported = bool(np.all(diff > 0) and diff.mean() > 2 * sd)
        result.joints.append(jf)
        if progress is not None:
            progress(i + 1, model.nv)
    return result
