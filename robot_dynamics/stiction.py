"""Accelerations under reaction-dependent friction, with sticking joints (seed 004 §2.8 and beyond).

Solves ``M a + b = τ + τf`` where each joint's friction τf_i depends on its reaction wrench,
which depends on the unknown accelerations through eq. 2.3.7: ``W(a) = W0 + Σ_α a_α pl_α``.

* A **sliding** joint's friction is ``−m_i(W_i(a), q_i, q̇_i)·d_i`` with ``d_i`` its direction of
  motion. With every joint sliding this is the seed's problem; it is solved by the seed's
  successive approximation (perfect reactions first, then friction from them, then reactions
  again …) and, if that does not converge, by Newton's method on ``a`` (finite-difference
  Jacobian of the friction map).
* A **stuck** joint has a prescribed acceleration ``c_i`` and its friction ``λ_i`` is whatever
  holds it: ``λ = (M a + b − τ)_i``. It stays stuck while ``|λ_i| ≤`` its breakaway bound
  (the law's magnitude at rest, in the direction it would move, ``−sign λ_i``) — a bound that
  itself depends on the reactions, hence on every other joint's motion.
* A **breaking-away** joint was stuck and is released: it slides from rest in direction ``d_i``
  with the breakaway magnitude, which must agree with the sign of its resulting motion.

Several joints may stick at once. The active set is found by iteration: start with every joint
at rest stuck; release the stuck joint whose holding effort most exceeds its bound; re-stick a
released or sliding joint whose motion comes out against its assumed direction; stop when all
conditions hold (a complementarity solution), or report failure — never a silent wrong answer.

Two uses share this solver:

* ``h = 0`` — forward dynamics at an instant: joints with ``|q̇_i| > v_tol`` slide with
  ``d_i = sign q̇_i``; resting joints stick (``c_i = 0``) or break away.
* ``h > 0`` — a velocity-level time step of length h (the simulator): the sign that matters is
  that of the end-of-step velocity ``u = q̇ + h a``; stuck means ``u_i = 0`` (``c_i = −q̇_i/h``),
  so a joint whose velocity would cross zero within the step stops exactly, and a joint at rest
  does not creep. Friction magnitudes are evaluated at ``u`` (implicit in velocity).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .directors import wrenches_at


@dataclass
class FrictionSolveReport:
    """How a friction solve went: read it, it is never silent about failure."""

    converged: bool = True
    method: str = "direct"  # direct | fixed_point | newton
    iterations: int = 0  # successive-approximation / Newton iterations, summed over active sets
    residual: float = 0.0  # ‖M a + b − τ − τf‖∞ at the answer
    active_set_changes: int = 0
    stuck: list = field(default_factory=list)  # joint names held by stiction
    breaking_away: list = field(default_factory=list)
    message: str = ""


class FrictionSolveError(RuntimeError):
    """The friction problem has no solution the solver could find; ``.report`` says why."""

    def __init__(self, report: FrictionSolveReport):
        super().__init__(report.message)
        self.report = report


def solve_with_friction(model, friction, q, v, tau, M, bias, W0, D, *, h=0.0, v_tol=1e-9,
                        tol=1e-10, max_iter=50, reference=False):
    """Return (a, τf, report). See the module docstring for the meaning of ``h``.

    Friction models made only of built-in laws run the compiled kernel
    (:mod:`robot_dynamics.kernels.stiction`); others, and ``reference=True``, run this module.
    """
    if friction._packed is not None and not reference:
        return _solve_compiled(model, friction, q, v, tau, M, bias, W0, D, h, v_tol, tol, max_iter)
    n = model.nv
    report = FrictionSolveReport()
    if h > 0:
        at_rest = np.abs(v) <= v_tol
        target = -v / h  # acceleration that brings the joint to rest in this step
    else:
        at_rest = np.abs(v) <= v_tol
        target = np.zeros(n)
    stuck = at_rest & friction.active
    direction = np.where(at_rest, 0.0, np.sign(v))
    a = np.zeros(n)
    seen = set()
    for change in range(4 * n + 10):
        key = (stuck.tobytes(), np.sign(direction).tobytes())
        if key in seen:
            report.converged = False
            report.message = "active set cycles: stick/slip states of the joints do not settle"
            break
        seen.add(key)
        a, tauf, ok = _solve_free(model, friction, q, v, tau, M, bias, W0, D, stuck, target,
                                  direction, h, tol, max_iter, report)
        if not ok:
            report.converged = False
            break
        W = wrenches_at(W0, D, a)
        hold = M @ a + bias - tau  # friction each joint needs for this motion
        speed = v + h * a if h > 0 else a
        # 1) a sliding/breaking joint moving against its assumed direction must stick
        wrong = (~stuck) & friction.active & (direction * speed < -tol * (1 + np.abs(speed)))
        if h == 0:
            wrong &= at_rest  # at an instant, a sliding joint keeps the direction of q̇
        if wrong.any():
            i = int(np.argmax(np.where(wrong, -direction * speed, -np.inf)))
            stuck[i], direction[i] = True, 0.0
            report.active_set_changes += 1
            continue
        # 2) a stuck joint whose holding effort exceeds its bound breaks away
        release_dir = -np.sign(hold)
        bounds = friction.bounds(model, W, q, release_dir)
        excess = np.where(stuck, np.abs(hold) - bounds * (1 + 1e-9) - 1e-12, -np.inf)
        if excess.max() > 0:
            i = int(np.argmax(excess / (1.0 + bounds)))
            stuck[i], direction[i] = False, release_dir[i]
            report.active_set_changes += 1
            continue
        tauf = np.where(stuck, hold, tauf)
        report.residual = float(np.abs(M @ a + bias - tau - tauf).max())
        report.stuck = [model.joint_names[i] for i in np.flatnonzero(stuck)]
        report.breaking_away = [model.joint_names[i]
                                 for i in np.flatnonzero(at_rest & ~stuck & friction.active)]
        report.converged = True
        return a, tauf, report
    else:
        report.converged = False
        report.message = "active-set iteration limit reached"
    return a, np.zeros(n), report


def converged_step(step, prev, bound):
    """Stop the successive approximation: the last step is below ``bound``, or the error left,
    estimated for a contraction of rate ρ = step/prev as step·ρ/(1 − ρ), is."""
    if step <= bound:
        return True
    return step < prev < np.inf and step * step <= bound * (prev - step)


def _friction_of(model, friction, q, v, a, W0, D, free, direction, h):
    """Signed friction (nv,) of the non-stuck joints for accelerations ``a``."""
    W = wrenches_at(W0, D, a)
    qd = v + h * a if h > 0 else v
    mag = friction.magnitudes(model, W, q, np.where(free, qd, 0.0) if h > 0 else qd, direction)
    return np.where(free & friction.active, -mag * direction, 0.0)


def _solve_free(model, friction, q, v, tau, M, bias, W0, D, stuck, target, direction, h, tol,
                max_iter, report):
    """Accelerations of the free joints for a fixed stick/slip assignment."""
    free = ~stuck
    F, K = np.flatnonzero(free), np.flatnonzero(stuck)
    a = np.array(target, dtype=float)
    a[F] = 0.0
    if len(F) == 0:
        return a, np.zeros(model.nv), True
    MFF = M[np.ix_(F, F)]
    rhs0 = tau[F] - bias[F] - M[np.ix_(F, K)] @ target[K]
    factor = np.linalg.cholesky(MFF)

    def solve(rhs):
        return np.linalg.solve(factor.T, np.linalg.solve(factor, rhs))

    # successive approximation (seed 004 §2.8): frictionless start, then friction from reactions
    tauf = np.zeros(model.nv)
    a[F] = solve(rhs0)
    method = "direct" if not friction.active[F].any() else "fixed_point"
    if method == "direct":
        report.method = method
        return a, tauf, True
    step = np.inf
    for it in range(1, max_iter + 1):
        tauf = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)
        new = solve(rhs0 + tauf[F])
        prev, step = step, np.abs(new - a[F]).max()
        a[F] = new
        report.iterations += 1
        if converged_step(step, prev, tol * (1.0 + np.abs(new).max())):
            tauf = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)
            if report.method != "newton":
                report.method = "fixed_point"
            return a, tauf, True
        if not np.isfinite(step) or step > 1e12:
            break
    # Newton on r(a_F) = M_FF a_F − rhs0 − τf_F(a), Jacobian by finite differences
    report.method = "newton"
    a[F] = solve(rhs0)

    def residual(x):
        trial = a.copy()
        trial[F] = x
        return MFF @ x - rhs0 - _friction_of(model, friction, q, v, trial, W0, D, free,
                                             direction, h)[F], trial

    x = a[F].copy()
    r, _ = residual(x)
    J = None  # Jacobian of the last Newton step
    for it in range(1, max_iter + 1):
        report.iterations += 1
        scale = 1.0 + np.abs(x).max()
        if np.abs(r).max() <= tol * (np.abs(rhs0).max() + 1.0) * scale:
            a[F] = x
            if J is not None and np.linalg.eigvalsh(0.5 * (J + J.T)).min() <= 0:
                report.message = _NON_UNIQUE
            return a, _friction_of(model, friction, q, v, a, W0, D, free, direction, h), True
        J = np.empty((len(F), len(F)))
        eps = 1e-7 * scale
        for k in range(len(F)):
            xp = x.copy()
            xp[k] += eps
            J[:, k] = (residual(xp)[0] - r) / eps
        try:
            dx = np.linalg.solve(J, -r)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while t > 1e-4:
            xn = x + t * dx
            rn, _ = residual(xn)
            if np.abs(rn).max() < np.abs(r).max() or t <= 1e-3:
                break
            t *= 0.5
        x, r = xn, rn
    report.message = (f"friction solve did not converge (successive approximation step {step:.2e},"
                      f" Newton residual {np.abs(r).max():.2e}): friction coefficients too large "
                      "for a unique motion, or a law that is not continuous in the loads")
    a[F] = x
    return a, np.zeros(model.nv), False


_METHODS = ("direct", "fixed_point", "newton")
_NON_UNIQUE = ("friction this strong can make the motion non-unique (Painlevé-type): another "
               "acceleration may satisfy the equations too; this one is the root nearest the "
               "frictionless motion")


def _solve_compiled(model, friction, q, v, tau, M, bias, W0, D, h, v_tol, tol, max_iter):
    from .kernels.stiction import solve_friction

    n = model.nv
    a, tauf = np.empty(n), np.empty(n)
    stuck, at_rest = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    info = np.zeros(8, dtype=np.int64)
    codes, params = friction._packed[:2]
    residual = solve_friction(
        np.ascontiguousarray(M, dtype=float), np.ascontiguousarray(bias, dtype=float),
        np.ascontiguousarray(tau, dtype=float), np.ascontiguousarray(W0, dtype=float),
        np.ascontiguousarray(D, dtype=float), model._rel, codes, params, model._kargs[0], model._kargs[2],
        np.ascontiguousarray(v, dtype=float), float(h), float(v_tol), float(tol), int(max_iter),
        a, tauf, stuck, at_rest, info, np.empty((n, n)), np.empty((n, 6)), np.empty((24, n)),
        np.empty((5, n), dtype=np.int64))
    if not info[0]:
        tauf[:] = 0.0
    return a, tauf, compiled_report(model, info, residual, stuck, at_rest)


def compiled_report(model, info, residual, stuck, at_rest) -> FrictionSolveReport:
    """The report of a compiled solve from its ``info`` array and stick/slip flags."""
    ok = bool(info[0])
    report = FrictionSolveReport(
        converged=ok, method=_METHODS[info[1]], iterations=int(info[2]),
        residual=float(residual), active_set_changes=int(info[3]),
        stuck=[model.joint_names[i] for i in np.flatnonzero(stuck)] if ok else [],
        breaking_away=[model.joint_names[i] for i in np.flatnonzero((at_rest != 0) & (stuck == 0))]
        if ok else [],
        message="" if ok else ("friction solve did not converge (successive approximation"
                               " and Newton), or the stick/slip states did not settle"))
    if info[4] and ok:
        report.message = _NON_UNIQUE
    return report
