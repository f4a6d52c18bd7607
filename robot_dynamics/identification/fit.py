"""Least-squares identification of the friction laws, per joint, with intervals that cover.

Per joint (docs/identification.md explains and measures each choice):

1. **Samples.** Rows with ``|q̇| > min_velocity`` (friction's sign is undefined at rest) that the
   state model can describe. ``method="auto"`` (default) takes ``"filter"`` for every log but
   one of this project's simulator written at every step (:func:`.differentiate.
   simulator_step_log`): zero-phase Savitzky–Golay states (:func:`.differentiate.
   filtered_states`, no delay, q's noise averaged; velocities optional), the effort's own delay
   a per-joint nuisance column of the fit (compensated, reported), HAC lags at least the
   filter's window. With ``method="step"`` each row is a control period and
   :mod:`~.step_model` replays the simulator's step: exact mean q̈ = Δq̇/Δt, the wrench at the
   mid-step position and at the velocity the step evaluated its products at (the last steps'
   q̈ placed it), friction at the end-of-step velocity; rows where a joint starts, stops or
   reverses or meets a stop, and the three rows after, are excluded. The balance's other
   efforts — armature∘q̈ and URDF damping d∘q̇ (``damping=True``: the logged effort is the
   motor's whole effort, docs/identification.md) — are subtracted. Then the low-speed band
   where the log departs from the law (:func:`low_speed_band`: regularised friction such as
   MuJoCo's soft frictionloss, Stribeck) is found from the log and left out, per joint.
2. **Identifiability.** The regressor Φ (:mod:`~.regressors`) with unit-RMS columns; a load
   column the robot can never excite (e.g. an axial load on a planar arm) is *not applicable*
   (coefficient 0, no effect on this robot); while the scaled Φ's condition number exceeds
   :data:`COND_LIMIT`, the coefficient with the largest share of the weakest singular direction
   is *unidentifiable* — reported with the excitation that is missing — and the fit falls back
   to the identifiable subset (the dropped coefficients fixed at 0).
3. **Estimate.** Least squares ``y = Φ θ`` bounded at θ ≥ 0 (:func:`bounded_least_squares`;
   no robust loss): a coefficient held at 0 is reported as such, its interval the unconstrained
   one intersected with θ ≥ 0; one more than :data:`CONTRADICTION` SE below 0 is reported as
   contradicted by the log (model error), and the command refuses to write it.
4. **Uncertainty.** Newey–West (HAC) covariance with a Bartlett kernel and Andrews' AR(1)
   plug-in bandwidth: residuals that are white (sensor noise) get the OLS interval, residuals
   correlated in time get a wider one. Plus the worst case of each row's balance being known
   only to ``δ = balance_tolerance·(|τ| + |fn∥| + Σ_j |M_ij|(1 + |q̈_j|))`` (the simulator's
   friction solve stops at 1e-10 of the efforts in its equations): |Δθ| ≤ |(ΦᵀΦ)⁻¹Φᵀ| δ — the
   whole uncertainty of a noise-free simulator log, negligible beside any sensor noise.
   With the filter method, the states' reconstruction error (errors in the regressors): the
   joint's fit repeated on the same rows with the other readings of the states
   (:func:`.differentiate.check_states`: the next-order filter, q̇ as the mean over the sample),
   Σ(θ' − θ)² added to the variance (``JointFit.reconstruction_errors``).
   95 % interval: θ ± (t₀.₉₇₅(n − p) · SE + that bound).
5. **Other law, held out.** Both laws fitted on 4/5 of the samples in contiguous time blocks
   and evaluated on the fifth (blocks, not shuffled rows: neighbouring rows are correlated).
   An improvement is *supported* when the held-out RMS drops in every fold and on average by
   more than two standard errors of the per-fold differences.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student_t

from robot_dynamics.multibody import joints as jt
from robot_dynamics.algorithm.batch import joint_wrenches_batch
from robot_dynamics.algorithm.crba import mass_matrix
from robot_dynamics.algorithm.inverse_dynamics import check_damping
from robot_dynamics.errors import InputError
from robot_dynamics.multibody.units import units_of
from robot_dynamics.identification.differentiate import (METHODS, check_states, filtered_states,
                                                         savgol_states, simulator_step_log)
from robot_dynamics.identification.regressors import (EFFICIENCIES, FORMULAS, LAWS, TERM_ABSENT,
    TERM_MEANINGS, TERMS, coefficient_names, column_meaning, efficiency, load_terms, regressor)
from robot_dynamics.identification.step_model import StepReplay

#: column-scaled condition number above which a coefficient is declared unidentifiable
COND_LIMIT = 500.0
#: a load column below this fraction of the joint's largest possible load is "never carried"
ABSENT = 1e-9
OTHER = {"classic": "load_dependent", "load_dependent": "classic"}
#: relative precision of a logged effort balance: the Simulator's friction-solve tolerance
BALANCE_TOLERANCE = 1e-10


@dataclass
class JointFit:
    joint: str
    law: str
    coefficients: dict            # identifiable coefficients (OLS estimates)
    standard_errors: dict         # HAC standard errors
    intervals: dict               # 95 % intervals (lo, hi)
    residual_rms: float
    samples: int
    condition_number: float       # of the column-scaled regressor of the identifiable subset
    unidentifiable: dict = field(default_factory=dict)   # name → missing excitation
    not_applicable: dict = field(default_factory=dict)   # name → why it has no effect
    #: coefficients dropped for conditioning (not absent from the log): the fitted ones absorb
    #: their effect, so their estimates and intervals hold only if these are 0
    assumed_zero: list = field(default_factory=list)
    resolution: dict = field(default_factory=dict)       # worst-case bound of the balance's
    hac_lags: int = 0                                    # resolution, inside the interval
    balance_precision: float = 0.0  # RMS over the used rows of each balance's precision δ
    residual_autocorrelation: float = 0.0  # lag-1, over consecutive used rows
    #: share of the used rows whose effort beyond the rigid-body dynamics (and the fitted
    #: armature) opposes the motion, as friction's must (dissipation); and whether that effort
    #: is too large beside the rigid-body one to be noise (see :attr:`not_friction`)
    dissipative: float = 1.0
    substantial: bool = False
    cv_rms: dict = field(default_factory=dict)           # law → held-out RMS
    improvement: float = 0.0     # relative held-out RMS drop of load_dependent vs classic
    improvement_supported: bool = False
    rows: np.ndarray = field(default=None, repr=False)        # log rows used
    measured: np.ndarray = field(default=None, repr=False)    # τf per used row (signed)
    predicted: np.ndarray = field(default=None, repr=False)   # fitted τf per used row
    effort_unit: str = "N·m"  # of τf, the residual and coulomb (N on a prismatic joint)
    #: the fit is bounded (every coefficient ≥ 0, :data:`LOWER_BOUND`): the coefficients held
    #: at the bound (name → bound), the unconstrained least-squares estimates, and those more
    #: than :data:`CONTRADICTION` SE below the bound (name → unconstrained 95 % (lo, hi)): the
    #: log contradicts a physical value — model error (e.g. damping in or out of the efforts)
    at_bound: dict = field(default_factory=dict)
    effective_samples: float = 0.0  # samples after the residuals' correlation (HAC vs white)
    velocity_range: tuple = (0.0, 0.0)  # |q̇| of the used rows: where the fit holds
    #: the filter method's per-joint effort delay δ [s] (τ logged at t acted at t − δ) ± SE
    effort_delay: tuple = None
    unconstrained: dict = field(default_factory=dict)
    contradicted: dict = field(default_factory=dict)
    #: the low-speed band left out because the log departs from the law there
    #: (:func:`low_speed_band`): (cutoff |q̇|, departure of the last slice excluded, its SE);
    #: None when the rows from ``min_velocity`` up agree with the law
    low_speed_band: tuple = None
    #: the effort noise seen in the residuals, √(mean Δr²/2) over consecutive used rows (white
    #: noise passes, a smooth model error cancels): what the intervals' SE can account for
    noise_rms: float = float("nan")
    #: the filter method's state-reconstruction error in each coefficient, name → √Σ(θ' − θ)²
    #: over the refits on the same rows with the other readings of the states
    #: (:func:`.differentiate.check_states`: the next-order filter; q̇ as the mean over the
    #: sample): an error in the regressors that the residuals' HAC SE does not see; included in
    #: :attr:`standard_errors` in quadrature (which is thus the total)
    reconstruction_errors: dict = field(default_factory=dict)

    @property
    def model_mismatch(self) -> bool:
        """The held-out residual is more than :data:`MISMATCH` times the noise estimate: the
        intervals are dominated by model mismatch (law, dynamics, timing), not sensor noise."""
        held_out = self.cv_rms.get(self.law, self.residual_rms)
        return bool(np.isfinite(self.noise_rms) and held_out > self.balance_precision
                    and held_out > MISMATCH * self.noise_rms)

    @property
    def not_friction(self) -> bool:
        """The effort the dynamics leave unexplained is a sizeable share of the motor's yet
        opposes the motion in fewer than :data:`DISSIPATIVE` of the rows: it is not this
        joint's friction as logged — τ in other units (N·mm), motor-side, of the other sign
        convention, or the log of another robot. Its coefficients mean nothing."""
        return self.substantial and self.dissipative < DISSIPATIVE

    def value(self, name) -> float:
        """The coefficient as written to the YAML (0 when not fitted, ≥ 0)."""
        return max(float(self.coefficients.get(name, 0.0)), 0.0)

    @property
    def efficiencies(self) -> dict:
        """The fitted gear-mesh coefficients as efficiencies with their 95 % intervals:
        {efficiency_forward | efficiency_backward: (η, lo, hi)} — η_f = 1/(1 + c_f),
        η_b = 1 − c_b (monotone, so the interval maps end to end)."""
        out = {}
        for k, field_name in EFFICIENCIES.items():
            if k in self.coefficients:
                lo, hi = sorted(float(efficiency(k, x)) for x in self.intervals[k])
                out[field_name] = (float(efficiency(k, self.coefficients[k])), lo, hi)
        return out


#: held-out residual RMS beyond this multiple of the noise estimate: model mismatch dominates
MISMATCH = 2.0
#: the low-speed band (:func:`low_speed_band`): slices of |q̇| growing by this ratio; a slice
#: departing from the law by more than BAND_SE standard errors (HAC) is left out
BAND_RATIO = 2 ** 0.5
BAND_SE = 3.0

#: share of a joint's rows whose unexplained effort must oppose the motion (JointFit.not_friction)
DISSIPATIVE = 0.6
#: the unexplained effort's RMS beside the rigid-body effort's above which it cannot be noise
SUBSTANTIAL = 0.1


@dataclass
class FitResult:
    law: str
    joints: list = field(default_factory=list)
    terms: tuple = ()  # actuator terms fitted with the law (regressors.TERMS)

    @property
    def names(self) -> tuple:
        """Every fitted coefficient's name: the law's, then the actuator terms'."""
        return coefficient_names(self.law, self.terms)

    @property
    def actuators(self) -> dict:
        """{joint: {armature, mesh_forward, mesh_backward}} of the fitted actuator terms (as
        written: unfitted or negative as 0)."""
        names = coefficient_names(self.law, self.terms)[len(LAWS[self.law]):]
        return {j.joint: {k: j.value(k) for k in names} for j in self.joints} if names else {}

    def actuator_config(self, prior=None) -> dict:
        """The actuators mapping (config/arm7_actuators.yaml's structure, read back by
        :func:`~robot_dynamics.friction.actuators.actuators_from_config`) with the fitted terms: per joint
        ``armature`` and ``efficiency_forward``/``efficiency_backward`` (from c_f, c_b; an
        unfitted or negative coefficient as 0, i.e. η = 1 — the identify CLI refuses to write
        those unless --force). ``prior`` (an :class:`~robot_dynamics.friction.actuators.Actuators`):
        the fields not fitted — gear ratio, motor torque limit, and the armature or the gear
        when that term is not fitted — are carried over. Motor-side Coulomb/viscous friction is
        never written: it has the law's columns (1, |q̇|), so the fitted law's ``coulomb`` and
        ``viscous`` already hold it."""
        base = prior.to_config()["joints"] if prior is not None else {}
        joints = {}
        for j in self.joints:
            entry = base.get(j.joint)
            entry = dict(entry) if isinstance(entry, dict) else {}
            entry.pop("motor_coulomb", None)
            entry.pop("motor_viscous", None)
            if "armature" in self.terms:
                entry.pop("rotor_inertia", None)
                entry["armature"] = j.value("armature")
            if "gear_mesh" in self.terms:
                entry.pop("mesh", None)
                for k, field_name in EFFICIENCIES.items():
                    entry[field_name] = float(efficiency(k, j.value(k)))
            joints[j.joint] = entry if entry else "none"
        return {"joints": joints}

    @property
    def not_friction(self) -> list:
        """[(joint, why)] of the joints whose logged effort is not friction
        (:attr:`JointFit.not_friction`)."""
        return [(j.joint, f"only {100 * j.dissipative:.0f} % of its rows' effort beyond the "
                 "rigid-body dynamics opposes the motion") for j in self.joints if j.not_friction]

    @property
    def contradicted(self) -> list:
        """[(joint, coefficient, (lo, hi))]: coefficients whose unconstrained estimate is more
        than :data:`CONTRADICTION` standard errors below 0 — the log contradicts physical
        friction (held at 0 in the fit); (lo, hi) the unconstrained 95 % interval."""
        return [(j.joint, k, x) for j in self.joints for k, x in j.contradicted.items()]

    @property
    def unidentifiable(self) -> list:
        """[(joint, coefficient, missing excitation)] over all joints."""
        return [(j.joint, k, why) for j in self.joints for k, why in j.unidentifiable.items()]

    def friction_law(self, model):
        """``τf(U, W)``: the signed friction (N, nv) of the fitted law (and gear mesh) with these
        coefficients (unfitted ones as 0) at end velocities U (N, nv) and joint wrenches W
        (N, nv, 6)."""
        terms = tuple(x for x in self.terms if x != "armature")
        names = coefficient_names(self.law, terms)
        theta = [np.array([j.coefficients.get(k, 0.0) for k in names]) for j in self.joints]

        def tau_f(U, W):
            out = np.empty_like(U)
            for i in range(model.nv):
                Phi = regressor(self.law, U[:, i], W[:, i], model.axes[i], model.kinds[i],
                                terms, S=model.motion_subspaces[i])
                out[:, i] = -np.sign(U[:, i]) * (Phi @ theta[i])
            return out

        return tau_f

    @property
    def config(self) -> dict:
        """The friction mapping (same structure as config/*_friction.yaml)."""
        out = {}
        for j in self.joints:
            v = j.value
            if self.law == "classic":
                cp, cn = v("coulomb_positive"), v("coulomb_negative")
                if "coulomb_positive" not in j.coefficients:
                    cp = cn
                if "coulomb_negative" not in j.coefficients:
                    cn = cp
                entry = {"model": "classic", "coulomb": 0.5 * (cp + cn), "viscous": v("viscous"),
                         "coulomb_positive": cp, "coulomb_negative": cn}
            else:
                entry = {"model": "load_dependent", **{k: v(k) for k in LAWS[self.law]}}
            out[j.joint] = {k: float(x) if not isinstance(x, str) else x for k, x in entry.items()}
        return {"joints": out}

    def summary(self) -> str:
        other = OTHER[self.law]
        lines = [f"friction identification, law {self.law}: {FORMULAS[self.law]}"
                 + "".join(f" + {k}·{TERM_MEANINGS[k][1]}" for k in self.names
                           if k in TERM_MEANINGS)]
        if "gear_mesh" in self.terms:
            lines.append("  gear mesh: mesh_forward = c_f = 1/η_f − 1, mesh_backward = c_b = "
                         "1 − η_b (robot_dynamics.friction.gear_mesh)")
        for j in self.joints:
            lines.append(f"  {j.joint}: {j.samples} samples, condition number "
                         f"{j.condition_number:.3g}, residual RMS {j.residual_rms:.3g} "
                         f"{j.effort_unit}"
                         + (f" (HAC lags {j.hac_lags})" if j.hac_lags else ""))
            if j.coefficients:
                lo_v, hi_v = j.velocity_range
                lines.append(f"    effective samples ≈ {j.effective_samples:.0f} after the "
                             f"residuals' correlation; |q̇| {lo_v:.3g}…{hi_v:.3g} carried the fit"
                             + (f"; effort delay {1e3 * j.effort_delay[0]:.3g} ± "
                                f"{1e3 * j.effort_delay[1]:.2g} ms (compensated)"
                                if j.effort_delay else ""))
            if j.low_speed_band is not None and j.coefficients:
                cut, dep, dse = j.low_speed_band
                lines.append(f"    |q̇| ≤ {cut:.3g} left out: the log departs from the law there "
                             f"({dep:+.2g} ± {dse:.2g} {j.effort_unit} at the band's edge; "
                             "regularised or Stribeck friction near rest)")
            if j.model_mismatch and j.coefficients:
                held_out = j.cv_rms.get(j.law, j.residual_rms)
                lines.append(f"    MODEL MISMATCH: held-out residual {held_out:.3g} {j.effort_unit}"
                             f" is {held_out / j.noise_rms:.1f}× the noise estimate "
                             f"({j.noise_rms:.2g}): the intervals are dominated by model "
                             "mismatch, not noise — read them as approximate")
            if j.not_friction:
                lines.append(f"    NOT FRICTION: only {100 * j.dissipative:.0f} % of the rows' "
                             "effort beyond the rigid-body dynamics opposes the motion (friction"
                             "'s always does) — check τ's units (N·m, N), its sign, that it is "
                             "joint-side, and the robot; the values below mean nothing")
            within = j.residual_rms <= j.balance_precision
            if j.residual_autocorrelation > 0.5 and not within:
                rho = j.residual_autocorrelation
                lines.append(f"    residuals correlated in time (lag-1 {rho:.2f}): model error"
                             ", not sensor noise, dominates; the intervals allow for "
                             "it only approximately (docs/identification.md)")
            elif within and j.coefficients:
                lines.append(f"    residuals within the balance's precision "
                             f"({j.balance_precision:.2g} RMS): a noise-free log; the "
                             "intervals hold its worst case")
            if j.assumed_zero and j.coefficients:
                dropped = " and ".join(j.assumed_zero)
                lines.append(f"    estimates below assume {dropped} = 0 (unidentifiable, yet "
                             "present in the log: the others absorb its effect); their "
                             "intervals hold only if it is")
            for k in self.names:
                if k in j.coefficients:
                    lo, hi = j.intervals[k]
                    neg = ""
                    if k in j.at_bound:
                        u = j.unconstrained[k]
                        neg = (f"  (held at its bound {j.at_bound[k]:g}: unconstrained "
                               f"{u:.3g} ± {j.standard_errors[k]:.2g}"
                               + ("; the log contradicts a physical value — model error, e.g. "
                                  "URDF damping in or out of the efforts (fit(..., damping=))"
                                  if k in j.contradicted else "") + ")")
                    se, half = j.standard_errors[k], 0.5 * (hi - lo)
                    # digits down to a hundredth of the interval's half-width
                    d = 3 + max(int(np.ceil(np.log10(max(abs(j.coefficients[k]), 1e-300) /
                                                     half))), 0) if half > 0 else 6
                    bound = j.resolution.get(k, 0.0)
                    note = (f"  (incl. ± {bound:.2g} balance precision)"
                            if bound > 0.5 * half else "")
                    rec = j.reconstruction_errors.get(k, 0.0)
                    if rec > 0.5 * se:
                        note += f"  (SE incl. ± {rec:.2g} state reconstruction)"
                    lines.append(f"    {k:<17}{j.coefficients[k]:>12.{d}g} ± {se:<9.2g} "
                                 f"95 % [{lo:.{d}g}, {hi:.{d}g}]{neg}{note}")
                    if k in EFFICIENCIES:
                        eta, elo, ehi = j.efficiencies[EFFICIENCIES[k]]
                        sym = "η_f" if k == "mesh_forward" else "η_b"
                        lines.append(f"      = {EFFICIENCIES[k]} {sym} {eta:.{d}g}, 95 % "
                                     f"[{elo:.{d}g}, {ehi:.{d}g}]")
                elif k in j.unidentifiable:
                    lines.append(f"    {k:<17}unidentifiable: {j.unidentifiable[k]}")
                else:
                    lines.append(f"    {k:<17}not applicable: {j.not_applicable[k]}")
            if self.law in j.cv_rms and other in j.cv_rms:
                ours, theirs = j.cv_rms[self.law], j.cv_rms[other]
                rel = (theirs - ours) / theirs if self.law == "load_dependent" else \
                    (ours - theirs) / ours
                who = "load_dependent" if rel > 0 else "classic"
                verdict = ("supported" if j.improvement_supported else
                           "not supported by the folds")
                lines.append(f"    held-out RMS {self.law} {ours:.4g} vs {other} {theirs:.4g}: "
                             f"{who} better by {100 * abs(rel):.1f} % "
                             f"({verdict if who == 'load_dependent' else 'no load dependence'})")
        return "\n".join(lines)


def hac_covariance(X, r, rows, n_rows, min_lags=0):
    """Newey–West covariance of the OLS estimate (Bartlett kernel, Andrews' AR(1) bandwidth).

    ``rows`` are the log rows of the samples (gaps count as missing observations).
    Returns (cov, lags, rho) with rho the residuals' lag-1 autocorrelation.
    """
    n, p = X.shape
    consecutive = np.diff(rows) == 1
    den = float(r @ r)
    rho = float(r[1:][consecutive] @ r[:-1][consecutive]) / den if den > 0 else 0.0
    rho_raw = rho
    rho = float(np.clip(rho, -0.99, 0.99))
    alpha = 4 * rho ** 2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    lags = int(min(np.ceil(1.1447 * (alpha * n) ** (1 / 3)), n // 4)) if alpha > 0 else 0
    lags = int(min(max(lags, min_lags), n // 4))
    u = np.zeros((rows[-1] - rows[0] + 1, p))
    u[rows - rows[0]] = X * r[:, None]
    S = u.T @ u
    if lags:
        size = 1 << int(np.ceil(np.log2(2 * len(u))))
        F = np.fft.rfft(u, n=size, axis=0)
        C = np.fft.irfft(F[:, :, None] * F[:, None, :].conj(), n=size, axis=0)[:lags + 1]
        w = 1 - np.arange(1, lags + 1) / (lags + 1)  # C[l, a, b] = Σ u[t+l, a] u[t, b]
        G = np.einsum("l,lab->ab", w, C[1:])
        S = S + G + G.T
    B = np.linalg.inv(X.T @ X)
    return B @ S @ B * (n / max(n - p, 1)), lags, rho_raw


def _ols(X, y):
    theta = np.linalg.lstsq(X, y, rcond=None)[0]
    return theta, y - X @ theta


#: every fitted coefficient is physical at ≥ 0: Coulomb levels, viscous, the k's (friction
#: that grows with the loads), the armature, and the gear-mesh c_f = 1/η_f − 1, c_b = 1 − η_b
#: (efficiencies ≤ 1). A negative one would be friction that delivers power.
LOWER_BOUND = 0.0
#: an unconstrained estimate this many standard errors below the bound contradicts the bound
#: (a 95 % criterion would refuse one log in a few by chance: 35–56 coefficients per robot)
CONTRADICTION = 5.0


def bounded_least_squares(X, y, theta_ols=None):
    """(θ, held): least squares ``y = X θ`` subject to θ ≥ :data:`LOWER_BOUND`
    (``scipy.optimize.lsq_linear``, bounded-variable least squares; the OLS estimate when it is
    already physical), and which coefficients are held at the bound."""
    if theta_ols is None:
        theta_ols = _ols(X, y)[0]
    if np.all(theta_ols >= LOWER_BOUND):
        return theta_ols, np.zeros(len(theta_ols), dtype=bool)
    from scipy.optimize import lsq_linear

    scale = np.sqrt(np.mean(X ** 2, axis=0))
    scale[scale == 0] = 1.0
    sol = lsq_linear(X / scale, y, bounds=(LOWER_BOUND, np.inf), method="bvls", tol=1e-14)
    theta = np.maximum(sol.x / scale, LOWER_BOUND)
    return theta, sol.active_mask != 0


def structural_loads(model, samples=64, seed=0):
    """(nv, 3) bool: which load columns (X1, X2, X3) the robot can excite at all, judged from
    random states within the joint limits (a planar arm never carries an axial load)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    Q = rng.uniform(lo, hi, size=(samples, model.nv))
    V, A = rng.normal(size=(2, samples, model.nv))
    W = joint_wrenches_batch(model, Q, V, A)
    out = np.zeros((model.nv, 3), dtype=bool)
    for i in range(model.nv):
        X = load_terms(W[:, i], model.axes[i], model.kinds[i] == jt.PRISMATIC)
        out[i] = X.max(0) > ABSENT * max(X.max(), 1e-300)
    return out


def identifiable_subset(X, names, law, joint, kind, applicable):
    """(active column indices, {name: missing excitation}, [names dropped for conditioning])
    by greedy elimination (step 2). A column dropped for conditioning is not zero in the log:
    the kept coefficients absorb its effect (their estimates assume it 0)."""
    active = [k for k in range(len(names)) if applicable[k]]
    why, conditioned = {}, []
    rms = np.sqrt(np.mean(X ** 2, axis=0))
    for k in list(active):
        if rms[k] <= ABSENT * max(rms.max(), 1e-300):
            active.remove(k)
            meaning = column_meaning(law, names[k], kind)
            why[names[k]] = (f"{joint} {TERM_ABSENT[names[k]]}" if names[k] in TERM_ABSENT
                             else f"{joint} never had {meaning}" if law == "classic" or
                             names[k] in ("coulomb", "viscous") else
                             f"{joint} never carried {meaning}")
    while len(active) > 1:
        Xs = X[:, active] / rms[active]
        _, s, Vt = np.linalg.svd(Xs, full_matrices=False)
        if s[-1] > 0 and s[0] / s[-1] <= COND_LIMIT:
            break
        share = np.abs(Vt[-1]) * np.array([0.5 if names[k] == "coulomb" else 1.0
                                           for k in active])
        drop = active[int(np.argmax(share))]
        partners = [names[active[m]] for m in range(len(active))
                    if active[m] != drop and np.abs(Vt[-1, m]) > 0.3 * np.abs(Vt[-1]).max()]
        col = X[:, drop]
        meaning = column_meaning(law, names[drop], kind)
        if names[drop] == "viscous":
            what = "|q̇|"
        elif names[drop] in TERM_MEANINGS:
            what = TERM_MEANINGS[names[drop]][1]
        else:
            what = meaning[meaning.find("(") + 1:-1] if "(" in meaning else names[drop]
        conditioned.append(names[drop])
        why[names[drop]] = (f"needs {meaning} varying independently of "
                            f"{' and '.join(partners) or 'the other terms'}; in this log "
                            f"{what} only spans {col.min():.3g}…{col.max():.3g}")
        active.remove(drop)
    return active, why, conditioned


def _cv(regs, y, folds):
    """Held-out RMS per law over contiguous folds: {law: (folds,) array}."""
    parts = np.array_split(np.arange(len(y)), folds)
    out = {}
    for law, (X, cols) in regs.items():
        rms = []
        for k in range(folds):
            test = parts[k]
            train = np.concatenate([parts[m] for m in range(folds) if m != k])
            if not cols:
                pred = np.zeros(len(test))
            else:
                th, _ = _ols(X[train][:, cols], y[train])
                pred = X[test][:, cols] @ th
            rms.append(np.sqrt(np.mean((pred - y[test]) ** 2)))
        out[law] = np.array(rms)
    return out


def fit(model, q, v, tau, a=None, *, t=None, law="load_dependent", min_velocity=0.05, folds=5,
        min_samples=50, method="auto", balance_tolerance=BALANCE_TOLERANCE, terms=(),
        damping=True, progress=None, low_speed_band=True) -> FitResult:
    """Identify ``law`` ("classic" or "load_dependent") per joint from samples (N, nv).

    With recorded accelerations ``a`` every row is used at its own state; otherwise the states
    come from ``t`` with ``method`` ("step" or "savgol", see :mod:`.differentiate`).
    ``balance_tolerance``: relative precision of each row's effort balance (step 4: the
    simulator's friction-solve tolerance; 0 for none). ``terms``: actuator terms fitted with
    the law, any of ``"armature"`` (then ``model.armature`` is not subtracted: it is what is
    fitted) and ``"gear_mesh"`` (:mod:`.regressors`). ``damping``: whether the logged efforts
    contain the URDF joint damping d∘q̇ (``model.damping``) — True (default): τ is the motor's
    whole effort, which overcomes the damping too (issue 33's one definition: what
    :func:`~robot_dynamics.algorithm.inverse_dynamics.inverse_dynamics` returns and
    :class:`~robot_dynamics.simulation.simulator.Simulator` applies; MuJoCo and Drake alike), so
    d∘q̇ is taken out before the friction is fitted; False: τ holds no damping (Pinocchio's
    ``rnea``; ``inverse_dynamics(..., damping=False)``) — then the fitted ``viscous`` is the
    friction's alone either way. ``progress(done, total)`` is called after each joint.
    ``low_speed_band``: per joint, leave out the low-speed band where the log departs from the
    law (:func:`low_speed_band`, data-derived; reported as ``JointFit.low_speed_band``) — the
    rows from ``min_velocity`` up otherwise.
    """
    damping = check_damping(damping, "fit", "the efforts contain the URDF damping d∘q̇")
    damping = np.asarray(model.damping, float) if damping else np.zeros(model.nv)
    if law not in LAWS:
        raise InputError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    terms = tuple(terms)
    unknown = [x for x in terms if x not in TERMS]
    if unknown:
        raise InputError(f"terms must be among {sorted(TERMS)}, got {unknown}")
    arrays = {}
    if v is None and a is not None:
        raise InputError("recorded accelerations need the recorded velocities v too")
    for name, arr in (("q", q), ("v", v), ("tau", tau)) + ((("a", a),) if a is not None else ()):
        if arr is None:  # no velocities: differentiated from q (method "filter")
            continue
        arr = np.asarray(arr, dtype=float)
        if arr.ndim != 2 or arr.shape[1] != model.nv:
            raise InputError(f"{name}: expected shape (N, {model.nv}), got {arr.shape}")
        arrays[name] = arr
    n_samples = arrays["q"].shape[0]
    if any(x.shape[0] != n_samples for x in arrays.values()):
        raise InputError("q, v, tau (and a) must have the same number of samples")
    bad = ~np.all(np.concatenate([np.isfinite(x) for x in arrays.values()], axis=1), axis=1)
    if bad.any():
        where = []  # which arrays and joints: "v (joint_a2, joint_a3)"
        for name, x in arrays.items():
            cols = np.flatnonzero(~np.isfinite(x).all(axis=0))
            if cols.size:
                names = ", ".join(model.joint_names[c] for c in cols[:4])
                where.append(f"{name} ({names}{', …' if cols.size > 4 else ''})")
        raise InputError(f"non-finite values in {'; '.join(where)} at sample(s) "
                         f"{np.flatnonzero(bad)[:10].tolist()}"
                         f"{' …' if bad.sum() > 10 else ''} — drop or repair those rows")
    Q, V, TAU = arrays["q"], arrays.get("v"), arrays["tau"]
    if a is not None:
        A = arrays["a"]
        return _fit_all(model, law, terms, V, TAU, A, joint_wrenches_batch(model, Q, V, A),
                        np.ones(V.shape, dtype=bool), _inertial_scale(model, Q, A),
                        balance_tolerance, min_velocity, min_samples, folds, progress, damping,
                        band=low_speed_band)
    if t is None:
        raise InputError("without recorded accelerations, give the time stamps t")
    if method not in METHODS:
        raise InputError(f"acceleration method must be one of {METHODS}, got {method!r}")
    if method == "auto":
        method = "step" if simulator_step_log(t, Q, V) else "filter"
    if method == "filter":
        Qf, Vf, A, valid, w = filtered_states(t, Q, V)
        try:
            with np.errstate(over="raise", invalid="raise"):
                # other readings of the states: their refits measure the states' error in the
                # coefficients (step 4)
                checks = [(Vx, Ax, joint_wrenches_batch(model, Qx, Vx, Ax))
                          for Qx, Vx, Ax in check_states(t, Q, V, Qf, Vf, A)]
                return _fit_all(model, law, terms, Vf, TAU, A,
                                joint_wrenches_batch(model, Qf, Vf, A), valid,
                                _inertial_scale(model, Qf, A), 0.0, min_velocity, min_samples,
                                folds, progress, damping, lags=w, t=np.asarray(t, float),
                                band=low_speed_band,
                                check=checks)
        except (InputError, FloatingPointError, np.linalg.LinAlgError) as exc:
            raise _overflow(exc, Vf, A, TAU) from None
    if V is None:
        raise InputError(f"method {method!r} needs the logged velocities v")
    if method == "savgol":
        Qw, Vw, A, valid = savgol_states(t, Q, V)
        return _fit_all(model, law, terms, V, TAU, A, joint_wrenches_batch(model, Qw, Vw, A),
                        valid,
                        _inertial_scale(model, Qw, A), balance_tolerance, min_velocity,
                        min_samples, folds, progress, damping, band=low_speed_band)
    # the simulator's step replayed (step_model.py): the states its friction balance used
    replay = StepReplay(model, t, Q, V)
    try:
        with np.errstate(over="raise", invalid="raise"):
            result = _fit_all(model, law, terms, V, TAU, replay.A, replay.wrenches(),
                              replay.valid, _inertial_scale(model, replay.Qh, replay.A),
                              balance_tolerance, min_velocity, min_samples, folds, progress,
                              damping, band=low_speed_band)
    except (InputError, FloatingPointError, np.linalg.LinAlgError) as exc:
        raise _overflow(exc, V, replay.A, TAU) from None
    return result


def _overflow(exc, V, A, TAU):
    """The one-line error of a fit that overflowed (the inputs were checked finite before)."""
    return InputError(
        f"the fit of the log's rows overflowed ({str(exc).splitlines()[0][:80]}): "
        f"the log's magnitudes (|q̇| ≤ {np.abs(V).max():.3g}, |q̈| ≤ "
        f"{np.abs(A).max():.3g}, |τ| ≤ {np.abs(TAU).max():.3g}) are far beyond any "
        "motion of this robot — check the units and columns")


def _inertial_scale(model, Q, A):
    """Σ_j |M_ij(q)| (1 + |q̈_j|) per row (N, nv): the inertial efforts' size in a balance."""
    data = model.create_data()
    out = np.empty_like(A)
    for k in range(len(A)):
        out[k] = np.abs(mass_matrix(model, data, Q[k])) @ (1.0 + np.abs(A[k]))
    return out


def _other_effort(model, terms, damping, V, A, W):
    """The motor effort that is not friction (N, nv): fn∥ (eq. 2.7.5, from the joint wrenches
    W), the URDF damping d∘q̇ and, unless fitted, the armature's armature∘q̈."""
    other = np.einsum("nik,ik->ni", W, model.motion_subspaces) + damping * V
    if "armature" not in terms:
        other = other + np.asarray(model.armature, float) * A
    return other


def _fit_all(model, law, terms, V, TAU, A, W, valid, inertial, tolerance, min_velocity,
             min_samples, folds, progress, damping, lags=0, t=None, band=True, check=None):
    """Every joint's fit from the joint wrenches W (N, nv, 6) of the rows' states; the motor
    effort that is not friction: fn∥ (eq. 2.7.5), the armature's armature∘q̈ and the URDF
    damping d∘q̇ (the simulator applies both besides the friction law). Each row's balance is
    known to ± tolerance·(|τ| + |that effort| + inertial) (step 4). ``check``: [(V, A, W)] of
    other readings of the states (the filter method's, :func:`.differentiate.check_states`),
    refitted on each joint's rows to measure the reconstruction's error in the coefficients
    (step 4)."""
    other = _other_effort(model, terms, damping, V, A, W)
    delta = tolerance * (np.abs(TAU) + np.abs(other) + inertial)
    # the effort's timing against the states (t given: the filter method): τ logged at t_k may
    # have acted at t_k − δ (a zero-order hold over the simulator's step: δ = h/2; a sensor's
    # delay); other(t_k − δ) ≈ other − δ·d(other)/dt, δ a per-joint nuisance of the fit
    rate = None if t is None else np.gradient(other, t, axis=0)
    if check is not None:
        check = [(Vc, Ac, Wc, oc, None if t is None else np.gradient(oc, t, axis=0))
                 for Vc, Ac, Wc in check
                 for oc in [_other_effort(model, terms, damping, Vc, Ac, Wc)]]
    present = structural_loads(model)
    result = FitResult(law, terms=terms)
    for i in range(model.nv):
        result.joints.append(_fit_joint(model, i, law, terms, V, TAU, A, W, other, delta, valid,
                                        present[i], min_velocity, min_samples, folds, lags,
                                        None if rate is None else rate[:, i], band, check))
        if progress is not None:
            progress(i + 1, model.nv)
    return result


def low_speed_band(speed, X, y, rows, n_rows, lags, min_samples, ratio=BAND_RATIO, z=BAND_SE):
    """(cutoff, departure, SE) of the low-speed band where the log departs from the law, or
    None: from the slowest used row up, the slice of |q̇| within a factor ``ratio`` of the
    current cutoff gets an indicator column next to the law's columns ``X`` (and the delay's);
    if its coefficient — the slice's mean departure from the law fitted to the faster rows — is
    more than ``z`` HAC standard errors from 0, the slice is left out and the next one tested
    while the departures keep one sign (friction below the law's near rest, or above it; a
    departure that flips sign is another model error, not the band).
    Any source: regularised friction near rest (MuJoCo's soft frictionloss constraint, a
    simulator's smoothed sign), Stribeck friction, a velocity estimate that loses the sign.
    Stops before fewer than ``min_samples`` (and 20 per column) rows would remain."""
    keep = np.ones(len(speed), dtype=bool)
    cutoff, found = float(speed.min()), None
    floor = max(min_samples, 20 * X.shape[1])
    while True:
        low = keep & (speed <= cutoff * ratio)
        rest = keep & ~low
        if rest.sum() < floor or low.sum() < 2 * X.shape[1]:
            return found
        Xk = np.column_stack([X[keep], low[keep].astype(float)])
        th, r = _ols(Xk, y[keep])
        cov = hac_covariance(Xk, r, rows[keep], n_rows, lags)[0]
        se = float(np.sqrt(max(cov[-1, -1], 0.0)))
        if not abs(th[-1]) > z * se or (found is not None and th[-1] * found[1] < 0):
            return found
        cutoff = cutoff * ratio
        found = (cutoff, float(th[-1]), se)
        keep = rest


def _reconstruction_shift(model, i, law, terms, rows, cols, TAU, check, theta):
    """|θ' − θ| per column of the joint's fit: θ' the same fit (same rows, same columns, the
    delay's if any) on another reading of the states ``check`` = (V, A, W, other, rate)."""
    Vc, Ac, Wc, other_c, rate_c = check
    vi = Vc[rows, i]
    X = regressor(law, vi, Wc[rows, i], model.axes[i], model.kinds[i], terms, a=Ac[rows, i],
                  S=model.motion_subspaces[i])[:, cols]
    X, y = _balance(X, vi, TAU[rows, i], other_c[rows, i],
                    None if rate_c is None else rate_c[rows, i])
    return np.abs(_ols(X, y)[0] - theta)


def _balance(X, vi, tau, other, rate=None):
    """A joint's friction balance on its used rows: (X with the effort delay's column when
    ``rate`` is given — a nuisance, unbounded: y += −sign(q̇)·δ·ȯ — and y = sign(q̇)(τ − other),
    = |τf|, eq. 2.7.5)."""
    if rate is not None:
        X = np.column_stack([X, -np.sign(vi) * rate])
    return X, np.sign(vi) * (tau - other)


def _fit_joint(model, i, law, terms, V, TAU, A, W, other, delta, valid, present, min_velocity,
               min_samples, folds, lags=0, rate=None, band=True, check=None):
    """One joint's JointFit."""
    joint, kind = model.joint_names[i], model.kinds[i]
    rows = np.flatnonzero((np.abs(V[:, i]) > min_velocity) & valid[:, i])
    names = coefficient_names(law, terms)
    regs, subsets = {}, {}
    vi, Wi = V[rows, i], W[rows, i]
    for lw in (law, OTHER[law]):
        lw_names = coefficient_names(lw, terms)
        applicable = [not (lw == "load_dependent" and nm in LAWS[lw] and nm.startswith("k") and
                           not present[int(nm[1]) - 1]) for nm in lw_names]
        X = regressor(lw, vi, Wi, model.axes[i], kind, terms, a=A[rows, i],
                      S=model.motion_subspaces[i])
        conditioned = []
        if len(rows) < min_samples:
            speed = units_of(model.joint_types[i]).velocity
            cols, why = [], {nm: f"{joint} never moved faster than {min_velocity:g} {speed} "
                             f"({len(rows)} usable samples, need {min_samples})"
                             for nm, ok in zip(lw_names, applicable) if ok}
        else:
            cols, why, conditioned = identifiable_subset(X, lw_names, lw, joint, kind,
                                                         applicable)
        regs[lw] = (X, cols)
        subsets[lw] = (applicable, why, conditioned)
    X, cols = regs[law]
    applicable, why, conditioned = subsets[law]
    not_applicable = {nm: f"{joint} cannot carry {column_meaning(law, nm, kind)} on this robot "
                          "(set to 0)" for nm, ok in zip(names, applicable) if not ok}
    jf = JointFit(joint, law, {}, {}, {}, float("nan"), len(rows), float("nan"), why,
                  not_applicable, rows=rows)
    jf.assumed_zero = list(conditioned)
    jf.effort_unit = units_of(model.joint_types[i]).effort
    if not cols:
        return jf
    p = len(cols)
    Xa, y = _balance(X[:, cols], vi, TAU[rows, i], other[rows, i],
                     None if rate is None else rate[rows])
    theta_u, r = _ols(Xa, y)
    cov, jf.hac_lags, jf.residual_autocorrelation = hac_covariance(Xa, r, rows, len(V), lags)
    # a log the law fits to its balance's precision (noise-free, this project's simulator) has
    # no band: its departures are roundoff
    if band and np.sqrt(np.mean(r ** 2)) > np.sqrt(np.mean(delta[rows, i] ** 2)):
        found = low_speed_band(np.abs(vi), Xa, y, rows, len(V), jf.hac_lags, min_samples)
        if found is not None:
            out = _fit_joint(model, i, law, terms, V, TAU, A, W, other, delta, valid, present,
                             found[0], min_samples, folds, lags, rate, band=False, check=check)
            out.low_speed_band = found
            return out
    consecutive = np.diff(rows) == 1
    if consecutive.any():
        jf.noise_rms = float(np.sqrt(0.5 * np.mean(np.diff(r)[consecutive] ** 2)))
    # effective sample count after the residuals' correlation: n·SE²(white)/SE²(HAC), median
    white = np.diag(np.linalg.inv(Xa.T @ Xa)) * float(r @ r) / max(len(y) - Xa.shape[1], 1)
    ratio = white / np.maximum(np.diag(cov), 1e-300)
    jf.effective_samples = float(min(len(y) * np.median(ratio[:p]), len(y)))
    jf.velocity_range = (float(np.abs(vi).min()), float(np.abs(vi).max()))
    # errors in the regressors: the states rebuilt from the log carry an error (the filter's
    # truncation where q changes faster than its polynomial follows; where in the sample its
    # velocity stands) that is not in the residuals' noise; the refits on the other readings
    # of the states measure it in each coefficient, added to the variance (step 4)
    shift = np.zeros(len(theta_u)) if check is None else np.sqrt(sum(
        _reconstruction_shift(model, i, law, terms, rows, cols, TAU, c, theta_u) ** 2
        for c in check))
    cov = cov + np.diag(shift ** 2)
    if rate is not None:
        jf.effort_delay = (float(theta_u[p]), float(np.sqrt(max(cov[p, p], 0.0))))
        y = y - Xa[:, p] * theta_u[p]  # the delay compensated; the law's columns from here on
        Xa, theta_u, cov = Xa[:, :p], theta_u[:p], cov[:p, :p]
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    q975 = float(student_t.ppf(0.975, max(len(y) - len(cols), 1)))
    # the worst case of errors bounded by delta: |Δθ| ≤ |(ΦᵀΦ)⁻¹Φᵀ| δ
    bound = np.abs(np.linalg.solve(Xa.T @ Xa, Xa.T)) @ delta[rows, i]
    jf.balance_precision = float(np.sqrt(np.mean(delta[rows, i] ** 2)))
    theta, held = bounded_least_squares(Xa, y, theta_u)
    r = y - Xa @ theta
    for m, k in enumerate(cols):
        nm = names[k]
        jf.coefficients[nm] = float(theta[m])
        jf.standard_errors[nm] = float(se[m])
        if check is not None:
            jf.reconstruction_errors[nm] = float(shift[m])
        jf.resolution[nm] = float(bound[m])
        half = q975 * se[m] + bound[m]
        lo, hi = float(theta_u[m] - half), float(theta_u[m] + half)
        jf.unconstrained[nm] = float(theta_u[m])
        if held[m]:
            jf.at_bound[nm] = float(LOWER_BOUND)
        if theta_u[m] + CONTRADICTION * se[m] + bound[m] < LOWER_BOUND:
            # the log contradicts a physical coefficient beyond any chance (a true value ≥ 0
            # gives this with P < 3e-7): not friction as modelled
            jf.contradicted[nm] = (lo, hi)
        # the unconstrained 95 % interval intersected with the physical set {θ ≥ 0} covers
        # whenever the unconstrained one does (the truth is physical); widened to hold the
        # bounded estimate, which may leave it when another coefficient is held
        lo, hi = max(lo, LOWER_BOUND), max(hi, LOWER_BOUND)
        jf.intervals[nm] = (min(lo, float(theta[m])), max(hi, float(theta[m])))
    Xs = Xa / np.sqrt(np.mean(Xa ** 2, axis=0))
    s = np.linalg.svd(Xs, compute_uv=False)
    jf.condition_number = float(s[0] / s[-1])
    jf.residual_rms = float(np.sqrt(np.mean(r ** 2)))
    # friction alone (the armature's inertial effort, if fitted, taken out of both)
    inertia = np.zeros(len(y))
    if "armature" in jf.coefficients:
        inertia = X[:, names.index("armature")] * jf.coefficients["armature"]
    jf.measured = -np.sign(vi) * (y - inertia)
    jf.dissipative = float(np.mean(y - inertia > 0))
    rms = np.sqrt(np.mean((y - inertia) ** 2))
    jf.substantial = bool(rms > SUBSTANTIAL * np.sqrt(np.mean(other[rows, i] ** 2)))
    jf.predicted = -np.sign(vi) * (Xa @ theta - inertia)
    if folds > 1 and len(rows) >= 2 * folds:
        cv = _cv(regs, y, folds)
        jf.cv_rms = {lw: float(x.mean()) for lw, x in cv.items()}
        diff = cv["classic"] - cv["load_dependent"]
        jf.improvement = float(diff.mean() / cv["classic"].mean())
        sd = diff.std(ddof=1) / np.sqrt(folds)
        jf.improvement_supported = bool(np.all(diff > 0) and diff.mean() > 2 * sd)
    return jf
