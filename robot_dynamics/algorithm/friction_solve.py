"""Accelerations under reaction-dependent friction, with sticking joints (seed 004 §2.8 and beyond).

Solves ``M a + b = τ + τf`` where each joint's friction τf_i depends on its reaction wrench,
which depends on the unknown accelerations through eq. 2.3.7: ``W(a) = W0 + Σ_α a_α pl_α``.

* A **sliding** joint's friction is ``−m_i(W_i(a), q_i, q̇_i)·d_i`` with ``d_i`` its direction of
  motion. With every joint sliding this is the seed's problem; it is solved by the seed's
  successive approximation (perfect reactions first, then friction from them, then reactions
  again …) and, if that does not converge, by Newton's method on ``a`` (finite-difference
  Jacobian of the friction map) started from the frictionless motion ``M_FF⁻¹ rhs`` — never
  from the Λ-shifted one below nor from a warm guess: where friction this strong makes the
  motion non-unique (Painlevé-type, e.g. a self-locking gear back-driven with little rotor
  inertia) the root Newton returns is the one nearest the frictionless motion (the motoring
  root); another start can land on a root with the joints against their assumed directions,
  which the active set rejects, and the stick/slip states then cycle.
* A **stuck** joint has a prescribed acceleration ``c_i`` and its friction ``λ_i`` is whatever
  holds it: ``λ = (M a + b − τ)_i``. It stays stuck while ``|λ_i| ≤`` its breakaway bound
  (the law's magnitude at rest, in the direction it would move, ``−sign λ_i``) — a bound that
  itself depends on the reactions, hence on every other joint's motion.
* A **breaking-away** joint was stuck and is released: it slides from rest in direction ``d_i``
  with the breakaway magnitude, which must agree with the sign of its resulting motion.

Several joints may stick at once. The active set is found by iteration: start with every joint
at rest stuck; release the stuck joints whose holding efforts exceed their bounds; re-stick a
released or sliding joint whose motion comes out against its assumed direction — all such joints
at once until two releases have proved premature, then only the one most over its bound or
most against its direction; stop when all
conditions hold (a complementarity solution), or report failure — never a silent wrong answer.
At an instant (h = 0), once the assignment has changed, each new one is solved to ``SCREEN``
(1e-3) only, with the rules' margins at that tolerance: enough to decide what changes. The
assignment that passes is solved to ``tol`` from there and checked again (a margin case the
screen missed changes it then). Only the path changes: the answer is the same.

Two uses share this solver:

* ``h = 0`` — forward dynamics at an instant: joints with ``|q̇_i| > v_tol`` slide with
  ``d_i = sign q̇_i``; resting joints stick (``c_i = 0``) or break away.
* ``h > 0`` — a velocity-level time step of length h (the simulator): the sign that matters is
  that of the end-of-step velocity ``u = q̇ + h a``; stuck means ``u_i = 0`` (``c_i = −q̇_i/h``),
  so a joint whose velocity would cross zero within the step stops exactly, and a joint at rest
  does not creep. Friction magnitudes are evaluated at ``u`` (implicit in velocity).
  The simulator's hard stops are unilateral bounds on ``u`` in the same active set: a joint
  whose ``u`` would pass its bound lands on it (state LOWER/UPPER, ``u`` prescribed), the
  stop's reaction ``τl = hold − τf`` may only push, friction taking its share first (sliding
  friction along the stop, or static friction up to its bound when ``u = 0``); a stop that
  would pull lets its joint go, and a stuck joint that breaks away toward a stop it already
  touches goes onto the stop.

The successive approximation runs as Newton's method: ``a⁺ = a + P⁻¹ r(a)`` with the residual
``r = rhs − M_FF a + τf(a)`` and ``P = M_FF − ∂τf_F/∂a_F`` at a (:func:`newton_matrix`; the
kernel takes the laws' analytic derivatives) — the seed's fixed point in a few
iterations; once close the last P serves (chord); from a = 0 the first step is the plain one.
Where P is singular, and for long chains (:func:`_newton_pays`) and self-locking gears
(:func:`can_self_lock`), the seed's iteration preconditioned by the diagonal, ``(M_FF + Λ) a⁺ =
rhs + τf(a) + Λ a``, Λ = max(0, −∂τf_i/∂a_i) within a step (none at an instant). It starts
from a = 0, or from a previous solve's joint states and accelerations (``warm``: the
simulator's later passes of a step). The Newton fallback (difference Jacobian) refactors M_FF
for its start (above).

Tolerances are scale-aware: a stuck joint breaks away when its holding effort exceeds its bound
by more than 1e-9 of the bound plus the roundoff of the efforts in its equation
(1e-12·(1 + |τ| + |b| + Σ|M a|)), its friction is reported as at most the bound, and Newton stops
at 1e-10 of the efforts in the equations — so the verdicts hold at any magnitude.

The method: docs/method.md §2.8; measurements and history: docs/measurements.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from robot_dynamics.algorithm.directors import wrenches_at


@dataclass
class FrictionSolveReport:
    """How a friction solve went: read it, it is never silent about failure."""

    converged: bool = True
    #: "direct": no free joint has friction (one linear solve); "fixed_point": the seed's
    #: successive approximation (§2.8) — run as Newton's method with the laws' analytic
    #: derivatives where that pays (:func:`_newton_pays`), else preconditioned by the diagonal;
    #: "newton": the fallback when that did not converge (difference Jacobian, started from
    #: the frictionless motion)
    method: str = "direct"
    iterations: int = 0  # successive-approximation / Newton iterations, summed over active sets
    residual: float = 0.0  # ‖M a + b − τ − τf‖∞ at the answer
    active_set_changes: int = 0
    stuck: list = field(default_factory=list)  # joint names held by stiction
    breaking_away: list = field(default_factory=list)
    message: str = ""
    at_limit: list = field(default_factory=list)  # joint names held on a stop (simulator)
    tau_limit: np.ndarray = field(default=None, repr=False)  # the stops' reactions (nv,)
    state: np.ndarray = field(default=None, repr=False)  # active set: 4·state + direction + 1
    wrenches: np.ndarray = field(default=None, repr=False)  # joint wrenches W0 + Σ a_α pl_α


class FrictionSolveError(RuntimeError):
    """The friction problem has no solution the solver could find; ``.report`` says why."""

    def __init__(self, report: FrictionSolveReport):
        super().__init__(report.message)
        self.report = report


def solve_with_friction(model, friction, q, v, tau, M, bias, W0, D, *, h=0.0, v_tol=1e-9,
                        tol=1e-10, max_iter=50, reference=False, u_lower=None, u_upper=None,
                        warm=None, predict=False, guess=None):
    """Return (a, τf, report). See the module docstring for the meaning of ``h``.

    ``warm``: (report.state, a) of a previous solve to start from (joint states, directions
    and accelerations); otherwise every joint at rest starts stuck and a = ``guess`` (e.g. the
    simulator's previous step's q̈), or 0.

    ``predict``: a predictor solve (the simulator's first pass, whose answer only places the
    mid-step velocity of the velocity products), where some law is not affine in the velocity:
    the step test alone ends each iteration, from its second step on, with no confirming
    residual, and the first assignment that passes the rules is the answer.

    ``u_lower``/``u_upper`` (h > 0 only; (nv,), ∓inf = none) bound the end-of-step velocity
    ``u = q̇ + h a`` of each joint: the joint stops (hard stops of the simulator, see
    :mod:`robot_dynamics.simulation.simulator`); a joint held on its bound gets the stop's reaction
    ``report.tau_limit`` (≥ 0 on a lower bound, ≤ 0 on an upper one), friction taking its share
    first. Friction models made only of built-in laws run the compiled kernel
    (:mod:`robot_dynamics.kernels.friction_solve`); others, and ``reference=True``, run this module.
    """
    n = model.nv
    lo = np.full(n, -np.inf) if u_lower is None else np.asarray(u_lower, dtype=float)
    hi = np.full(n, np.inf) if u_upper is None else np.asarray(u_upper, dtype=float)
    if friction._packed is not None and not reference:  # (the kernel applies the rule below)
        return _solve_compiled(model, friction, q, v, tau, M, bias, W0, D, h, v_tol, tol, max_iter,
                               lo, hi, warm, predict, guess)
    predict = predict and not all(affine_in_velocity(law) for law in friction.laws)
    report = FrictionSolveReport()
    active = friction.active
    at_rest = np.abs(v) <= v_tol
    if warm is None:
        # state: 0 free (sliding or breaking away), STUCK held by friction, LOWER/UPPER on a stop
        state = np.where(at_rest & active, STUCK, FREE)
        direction = np.where(at_rest, 0.0, np.sign(v))
        a = np.zeros(n) if guess is None else np.array(guess, dtype=float)
    else:
        state, direction = warm[0] // 4, (warm[0] % 4 - 1).astype(float)
        a = np.array(warm[1], dtype=float)
    W = W0
    seen = set()
    bulk, premature = True, 0
    # at an instant, once the stick/slip assignment has changed, each new one is solved to
    # SCREEN only: its rules need no more; the assignment that passes them is then solved to
    # ``tol`` from there ("screened") and checked again. A predictor screens every assignment,
    # at tol, and takes the first that passes
    screening = (h == 0 and warm is None) or predict  # (kernels/stiction.py says why)
    screen, screened, last = predict, False, np.inf
    start_state, start_direction = state.copy(), np.sign(direction)
    unsettled = np.zeros(n, dtype=bool)  # joints whose state or direction the rules changed
    for change in range(12 * n + 21):
        if report.iterations > WORK * (n + 2) * max_iter:  # the work cap: a solve that
            report.converged = False  # cannot finish fails within a bounded time (issue 35)
            report.message = _gave_up(report.iterations, report.active_set_changes, n, max_iter)
            break
        sign = np.sign(direction)
        unsettled |= (state != start_state) | (sign != start_direction)
        key = (state.tobytes(), sign.tobytes(), screen)
        if key in seen:
            report.converged = False
            report.message = "active set cycles: " + _unsettled(model, unsettled)
            break
        seen.add(key)
        tol_k = max(tol, SCREEN) if screen and not predict else tol
        if h > 0:
            target = (np.select([state == LOWER, state == UPPER], [lo, hi], 0.0) - v) / h
        else:
            target = np.zeros(n)
        a, tauf, ok, last = _solve_free(model, friction, q, v, tau, M, bias, W0, D,
                                        state != FREE, target, direction, h, tol_k, max_iter,
                                        report,
                                        None if change == 0 and warm is None and guess is None
                                        else a,
                                        screen=screen, screened=last if screened else None)
        screened = False
        if not ok:
            # no motion with these joints sliding (e.g. a Stribeck drop steeper than the drive
            # can follow within the step): the joint whose equation is worst off at the last
            # iterate sticks, if it may (within a step, or at rest); its bound is checked below
            free = state == FREE
            with np.errstate(invalid="ignore", over="ignore"):
                tf_a = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)
                r = np.abs(M @ a + bias - tau - tf_a) / (1.0 + np.abs(tau) + np.abs(bias))
            cand = free & active & ((h > 0) | at_rest) & (r > 0)  # (False for NaN)
            if not cand.any():
                report.converged = False
                break
            i = int(np.argmax(np.where(cand, r, -np.inf)))
            state[i], direction[i] = STUCK, 0.0
            report.active_set_changes += 1
            report.message = ""
            screen = screening
            continue
        W = wrenches_at(W0, D, a) if D is not None else W0
        hold = M @ a + bias - tau  # friction (and stop) effort each joint needs for this motion
        # (a screened motion: within tol_k)
        noise = ((tol_k if screen else _NOISE)
                 * (1.0 + np.abs(tau) + np.abs(bias) + np.abs(M) @ np.abs(a)))
        speed = v + h * a if h > 0 else a
        free = state == FREE
        # 1) a sliding/breaking joint moving against its assumed direction must stick
        wrong = free & active & (direction * speed < -tol_k * (1 + np.abs(speed)))
        if h == 0:
            wrong &= at_rest  # at an instant, a sliding joint keeps the direction of q̇
        if wrong.any():  # every such joint at once while in bulk, else the worst one alone
            which = (np.flatnonzero(wrong) if bulk
                     else [int(np.argmax(np.where(wrong, -direction * speed, -np.inf)))])
            state[which], direction[which] = STUCK, 0.0
            report.active_set_changes += 1
            premature += 1  # a release was premature: after _PREMATURE of them, one joint at a
            bulk = premature < _PREMATURE  # time from then on (rules 1 and 3)
            screen = screening
            continue
        # 2) a free joint past a stop lands on it
        past = np.where(free, np.maximum(lo - speed, speed - hi), -np.inf)
        past[~(past > tol_k * (1 + np.abs(speed)))] = -np.inf
        if np.isfinite(past.max()):
            i = int(np.argmax(past))
            state[i] = LOWER if speed[i] < lo[i] else UPPER
            report.active_set_changes += 1
            screen = screening
            continue
        # 3) a stuck joint whose holding effort exceeds its bound breaks away (onto a stop
        #    when it has no room to move that way)
        release_dir = -np.sign(hold)
        bounds = friction.bounds(model, W, q, release_dir)
        excess = np.where(state == STUCK, np.abs(hold) - bounds * (1 + 1e-9) - noise, -np.inf)
        if excess.max() > 0:  # every joint over its bound at once, until a release proves
            # premature (rule 1), then the worst one alone
            which = (np.flatnonzero(excess > 0) if bulk
                     else [int(np.argmax(excess / (1.0 + bounds)))])
            for i in which:
                if release_dir[i] < 0 and lo[i] >= 0:
                    state[i] = LOWER
                elif release_dir[i] > 0 and hi[i] <= 0:
                    state[i] = UPPER
                else:
                    state[i], direction[i] = FREE, release_dir[i]
            report.active_set_changes += 1
            screen = screening
            continue
        # 4) a stop may only push: one that would pull lets its joint go
        tau_limit = np.zeros(n)
        on = state >= LOWER
        if on.any():
            push = np.where(state == LOWER, 1.0, -1.0)  # the direction a stop pushes
            u_star = np.select([state == LOWER, state == UPPER], [lo, hi], 0.0)
            # friction of a joint on a stop: sliding along it (u* ≠ 0), or static (u* = 0)
            # taking its share of the holding effort first, the stop the rest
            moving_dir = np.where(u_star != 0.0, -push, -np.sign(hold))
            mag = friction.magnitudes(model, W, q, u_star, moving_dir)
            tf = np.where(u_star != 0.0, push * mag, np.clip(hold, -mag, mag))
            tf = np.where(on & active, tf, 0.0)
            tl = hold - tf
            pull = np.where(on, -push * tl - noise, -np.inf)
            if pull.max() > 0:
                i = int(np.argmax(pull))
                if u_star[i] == 0.0 and active[i]:
                    state[i], direction[i] = STUCK, 0.0
                else:
                    state[i] = FREE
                    direction[i] = np.sign(v[i]) if v[i] != 0.0 else -push[i]
                report.active_set_changes += 1
                screen = screening
                continue
            tauf = np.where(on, tf, tauf)
            tau_limit = np.where(on, tl, 0.0)
        if screen and not predict:  # this assignment holds as far as a screened motion
            screen, screened = False, True  # tells: solve it to tol
            continue
        stuck = state == STUCK
        if stuck.any():  # at most the bound, whatever the roundoff of the holding effort
            tauf = np.where(stuck, np.clip(hold, -bounds, bounds), tauf)
        report.residual = float(np.abs(hold - tauf - tau_limit).max())
        report.stuck = [model.joint_names[i] for i in np.flatnonzero(stuck)]
        report.breaking_away = [model.joint_names[i]
                                for i in np.flatnonzero(at_rest & (state == FREE) & active)]
        report.at_limit = [model.joint_names[i] for i in np.flatnonzero(on)]
        report.tau_limit = tau_limit
        report.state = state * 4 + (np.sign(direction) + 1).astype(np.int64)
        report.wrenches = W
        report.converged = True
        return a, tauf, report
    else:
        report.converged = False
        report.message = (f"active-set iteration limit reached ({12 * n + 21} stick/slip "
                          "assignments, 12 n + 21): " + _unsettled(model, unsettled))
    return a, np.zeros(n), report


def _gave_up(iterations, changes, n, max_iter=None, work=None) -> str:
    """Why a solve stopped at its work cap (:data:`WORK`, or the kernel's ``work``)."""
    cap = (f"{WORK if work is None else work} (n + 2) max_iter iterations, n = {n}"
           + ("" if max_iter is None else f", max_iter = {max_iter}"))
    return (f"friction solve gave up after {iterations} iterations over {changes + 1} stick/slip "
            f"assignments (the cap of one solve: {cap}): "
            "no consistent motion found: friction too large for the inertia, or a law that is "
            "not continuous in the loads")


def _kernel_work() -> int:
    from robot_dynamics.kernels.friction_solve import WORK as work

    return work


def _unsettled(model, joints) -> str:
    """Why an active set that does not settle fails, naming the joints whose stick/slip state
    the rules kept changing."""
    names = [model.joint_names[i] for i in np.flatnonzero(joints)]
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    return (f"the stick/slip states of joint(s) {shown or '(none)'} do not settle (friction "
            "that grows with the joint loads faster than their inertia can leave a step with "
            "no consistent motion: check those joints' load coefficients)")


FREE, STUCK, LOWER, UPPER = 0, 1, 2, 3  # joint states of the active set (also the kernel's)
#: relative step of the differences in :func:`newton_matrix` (the kernel's matrix is analytic):
#: at 1e-6 the load terms' curvature left errors of 5 % in G at the iterates a 100-joint chain
#: reaches (|a| ~ 100), and with M_FF's condition there (1.7e6) Newton diverged where the
#: kernel's converges; at 1e-8 G agrees with the kernel's to 1e-3 of its largest entry
_LAMBDA_STEP = 1e-8
_ROUNDOFF = 1e-14  # roundoff allowance of the inertial efforts Σ|M a| in the residual test
_NOISE = 1e-12  # relative roundoff allowance of a holding effort (relative to the efforts in it)
#: tolerance of the motions that only screen a stick/slip assignment (kernels/stiction.py SCREEN)
SCREEN = 1e-3
#: premature releases after which the active set changes one joint at a time (kernel PREMATURE)
_PREMATURE = 2
#: iterations of one solve, summed over its stick/slip assignments and the Newton fallback's,
#: after which it gives up: WORK (n + 2) max_iter — a failed motion and its Newton fallback for
#: each joint that sticks, and two more (kernels/friction_solve.py WORK): a solve that cannot
#: finish fails within a bounded time, its message saying so (issue 35: a 60-joint chain tried
#: 12 n + 21 assignments, a minute per step)
WORK = 2


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
    # the assumed direction signs the velocity the laws see (|q̇| is the trial's): a law whose
    # regime depends on the direction (gear mesh, asymmetric Coulomb) is evaluated in the
    # assumed one, which the active set checks against the motion afterwards
    qd = np.where(direction != 0, direction * np.abs(qd), qd)
    mag = friction.magnitudes(model, W, q, np.where(free, qd, 0.0) if h > 0 else qd, direction)
    return np.where(free & friction.active, -mag * direction, 0.0)


#: at an instant (forward dynamics), a chord step (Newton's matrix of an earlier iterate) that
#: shrank the step at least this much keeps the matrix: refactoring pays only where the chord
#: stalls (kernels/friction_solve.py: the same rule; docs/measurements.md). Within a time step each solve starts close (the previous
#: step's answer) and a pass reuses the last one's matrix: unchanged there
CHORD = 0.1
#: the seed's iteration (a long chain, :func:`_newton_pays`) whose step is more than STALL of
#: the step before stops contracting fast enough to finish within max_iter: Newton from there
#: (kernels/friction_solve.py STALL; issue 35: on chains past 48 joints it diverged)
STALL = 0.5


def _newton_pays(model, F, n) -> bool:
    """Newton's method where refactoring its matrix is cheap beside an iteration: over the free
    joints F, Σ depth² ≤ 32 (Σ depth + 1), depth the number of free ancestors (the kernel's
    rule: its tree LU costs Σ depth², an iteration Σ depth; a chain of more than ~48 joints
    takes the seed's iteration, factored once)."""
    if model.coupling is not None or n != model.nv:  # mimic coordinates: no tree of their own
        return True
    free = np.zeros(n, dtype=bool)
    free[F] = True
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):  # parents before children
        p = model.parents[i]
        depth[i] = 0 if p < 0 else depth[p] + int(free[p])
    d = depth[F]
    return int((d * d).sum()) <= 32 * (int(d.sum()) + 1)


def can_self_lock(law) -> bool:
    """A gear mesh (alone or a composite's part) with c_backward ≥ 1 (η_b ≤ 0): back-driven,
    its motion can be non-unique (kernels/friction.py ``can_self_lock`` says the same)."""
    from robot_dynamics.friction.composite import CompositeFriction
    from robot_dynamics.friction.gear_mesh import GearMeshFriction

    if isinstance(law, CompositeFriction):
        return any(can_self_lock(part) for _, part in law.named_parts)
    return isinstance(law, GearMeshFriction) and law.c_backward >= 1.0


def affine_in_velocity(law) -> bool:
    """No friction, or classic without a Stribeck term: a magnitude affine in |q̇| that reads no
    load, so one Newton step is exact where no joint's motion changes side (kernels/friction.py
    ``affine_in_velocity`` says the same)."""
    from robot_dynamics.friction.classic import ClassicFriction
    from robot_dynamics.friction.none import NoFriction

    return isinstance(law, NoFriction) or (isinstance(law, ClassicFriction)
                                           and law.stribeck is None)


def newton_matrix(model, friction, q, v, a, W0, D, F, direction, h):
    """(G, λ) at accelerations ``a``: G = −∂τf_F/∂a_F on the free joints F, by differences
    (a_α moved by ε = 1e-8 (1 + |a_α|) along its joint's direction; the kernel's analytic
    derivatives, kernels/friction.py law_gradient, give the same matrix), so that M_FF + G is
    the Jacobian of the residual M_FF a − rhs − τf(a); λ = max(0, diag G), the diagonal
    preconditioner Λ. Entries that are not finite are 0."""
    free = np.zeros(model.nv, dtype=bool)
    free[F] = True
    with np.errstate(invalid="ignore", over="ignore"):
        t0 = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)[F]
        G = np.zeros((len(F), len(F)))
        for c, al in enumerate(F):
            eps = _LAMBDA_STEP * (1.0 + abs(a[al]))
            d = direction[al] if direction[al] != 0 else 1.0
            ap = a.copy()
            ap[al] += eps * d
            G[:, c] = -(_friction_of(model, friction, q, v, ap, W0, D, free, direction, h)[F]
                        - t0) / (eps * d)
    G[~np.isfinite(G)] = 0.0
    lam = np.diag(G).copy()
    lam[~(lam > 0)] = 0.0
    return G, lam


def _solve_free(model, friction, q, v, tau, M, bias, W0, D, stuck, target, direction, h, tol,
                max_iter, report, guess, screen=False, screened=None):
    """(a, τf, ok, last step): accelerations of the free joints for a fixed stick/slip
    assignment, the iteration starting from ``guess`` on the free joints — or, None, from a = 0.
    ``screen``: the step test alone ends the iteration (no confirming residual); ``screened``:
    ``guess`` is a screened answer for this assignment and this its last step (the first
    contraction estimate's)."""
    free = ~stuck
    F, K = np.flatnonzero(free), np.flatnonzero(stuck)
    a = np.array(target, dtype=float)
    a[F] = 0.0 if guess is None else guess[F]
    if len(F) == 0:
        return a, np.zeros(model.nv), True, 0.0
    MFF = M[np.ix_(F, F)]
    rhs0 = tau[F] - bias[F] - M[np.ix_(F, K)] @ target[K]
    tauf = np.zeros(model.nv)
    if not friction.active[F].any():
        report.method = "direct"
        a[F] = np.linalg.solve(MFF, rhs0)
        return a, tauf, True, 0.0
    # successive approximation (seed 004 §2.8) as Newton's method: a⁺ = a + P⁻¹ r(a), residual
    # r = rhs0 + τf(a) − M_FF a, P = M_FF − ∂τf/∂a at a; when P is singular, M_FF + Λ (the
    # seed's iteration preconditioned by the diagonal) from then on
    lockfree = not any(can_self_lock(law) for law in friction.laws)
    newton, P = _newton_pays(model, F, len(M)) and lockfree, None
    # a long chain's seed iteration that stops contracting (a step more than STALL of the one
    # before: on a 60-joint chain it diverges) goes over to Newton from the current iterate,
    # once (issue 35); not with a self-locking gear (above)
    switch, force = lockfree and not newton, False
    # refactoring Newton's matrix costs n³ on a long chain: after the switch the chord rule
    # holds within a step too — the matrix is kept while each step shrinks the one before by
    # CHORD (issue 35: a 200-joint chain refactored at every iteration)
    dear = switch
    affine = all(affine_in_velocity(law) for law in friction.laws)
    if not newton:  # a long chain, or a self-locking gear: the seed's iteration, preconditioned
        # by the diagonal Λ within a step (none at an instant) and started from (M_FF + Λ)⁻¹
        # rhs0 — Newton can reach a root with the gear against its assumed direction, and the
        # active set then cycles
        lam = (newton_matrix(model, friction, q, v, a, W0, D, F, direction, h)[1] if h > 0
               else np.zeros(len(F)))
        P = MFF + np.diag(lam)
        if guess is None:
            a[F] = np.linalg.solve(P, rhs0)
    step, big = np.inf, 0.0
    fresh, since, prev = False, 0, np.inf  # Newton's matrix of this solve, steps taken on it
    newton1 = False
    for it in range(1, max_iter + 1):
        tauf = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)
        r = rhs0 + tauf[F] - MFF @ a[F]
        if newton and guess is None and it == 1:  # from a = 0 Newton's first step is no
            P = MFF  # better than the plain one: the derivatives are taken from a₁ on
        elif newton and (force or step > 1e-3 * (1.0 + big) and (
                (h > 0 and not dear) or not fresh or (since >= 2 and step > CHORD * prev))):
            # once close, or at an instant (or on a long chain, ``dear``) while its steps
            # contract by CHORD each, the last matrix serves (``force``: the switch from the
            # seed's iteration, below)
            force = False
            G, lam = newton_matrix(model, friction, q, v, a, W0, D, F, direction, h)
            fresh, since = True, 0
            P = MFF + G
            with np.errstate(invalid="ignore", over="ignore"):
                try:
                    if not np.isfinite(np.linalg.solve(P, r)).all():
                        raise np.linalg.LinAlgError
                except np.linalg.LinAlgError:
                    newton, P, fresh = False, MFF + np.diag(lam), False
        dx = np.linalg.solve(P, r)
        new = a[F] + dx
        prev = step if (it > 1 or screened is None) else screened
        newton1 = fresh if it == 1 else newton1  # the first step was Newton's (at the guess)
        since += 1
        step, big = np.abs(dx).max(), np.abs(new).max()
        a[F] = new
        report.iterations += 1
        # from a caller's guess, the contraction estimate from the third iteration on (the first
        # step is the guess's error, not the iteration's) — from the second where the first was
        # a Newton step (the second is then the error Newton left, and the next error at most
        # step²/(prev − step): quadratic, or the chord's rate step/prev); to screen an
        # assignment, from the second; from a screened answer, from the first (with the
        # screened solve's last step)
        # laws affine in the velocity: where no joint's motion changed side, the Newton step is
        # exact — the residual test says whether it was, without a confirming step
        # (a chord step after Newton's: its ratio to Newton's step is the chord's own rate, the
        # error of Newton's matrix's iterate — the estimate holds through that pair too)
        estimate = (guess is None or it >= 3 or screened is not None
                    or (it >= 2 and (screen or newton1)))
        if (affine and newton and not screen) or converged_step(
                step, prev if estimate else np.inf,
                tol * (1.0 + np.abs(new).max())):
            if screen:
                return a, tauf, True, step
            tauf = _friction_of(model, friction, q, v, a, W0, D, free, direction, h)
            # and the equations hold (a preconditioned step alone is a weaker test): residual
            # within tol of the applied efforts (plus the roundoff of the inertial ones)
            r = MFF @ new - rhs0 - tauf[F]
            big = max(np.abs(rhs0).max(), np.abs(tauf[F]).max())
            if (np.abs(r).max()
                    <= tol * (1.0 + big) + _ROUNDOFF * (np.abs(MFF) @ np.abs(new)).max()):
                if report.method != "newton":
                    report.method = "fixed_point"
                return a, tauf, True, step
        if switch and it >= 2 and step > STALL * prev:
            switch, newton, force = False, True, True
        if not np.isfinite(step) or step > 1e12:
            break
    # Newton on r(a_F) = M_FF a_F − rhs0 − τf_F(a), Jacobian by finite differences, from the
    # frictionless motion M_FF⁻¹ rhs0 (Λ left out: where friction makes the motion non-unique,
    # Painlevé-type, Newton returns the root nearest the frictionless motion — the motoring
    # root of a self-locking gear back-driven; from (M_FF + Λ)⁻¹ rhs0 it can land on a root
    # with every joint against its assumed direction, and the active set then cycles)
    report.method = "newton"
    a[F] = np.linalg.solve(MFF, rhs0)

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
        # converged when the residual is roundoff of the efforts in the equations (scale-aware)
        if np.abs(r).max() <= tol * (1.0 + np.abs(rhs0).max() + (np.abs(MFF) @ np.abs(x)).max()):
            a[F] = x
            if J is not None and np.linalg.eigvalsh(0.5 * (J + J.T)).min() <= 0:
                report.message = _NON_UNIQUE
            return (a, _friction_of(model, friction, q, v, a, W0, D, free, direction, h), True,
                    0.0)
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
    return a, np.zeros(model.nv), False, -1.0


_METHODS = ("direct", "fixed_point", "newton")
_NON_UNIQUE = ("friction this strong can make the motion non-unique (Painlevé-type): another "
               "acceleration may satisfy the equations too; this one is the root nearest the "
               "frictionless motion")


def _solve_compiled(model, friction, q, v, tau, M, bias, W0, D, h, v_tol, tol, max_iter, lo, hi,
                    warm=None, predict=False, guess=None):
    from robot_dynamics.kernels.friction_solve import solve_friction

    n = model.nv
    a, tauf = np.empty(n), np.empty(n)
    stuck, at_rest = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    info = np.zeros(8, dtype=np.int64)
    vecs = np.empty((24, n))
    if warm is not None:
        stuck[:] = warm[0] // 4
        vecs[1] = warm[0] % 4 - 1
        a[:] = warm[1]
    else:
        a[:] = 0.0 if guess is None else guess
    codes, params = friction._packed[:2]
    W = np.empty((n, 6))
    residual = solve_friction(
        np.ascontiguousarray(M, dtype=float), np.ascontiguousarray(bias, dtype=float),
        np.ascontiguousarray(tau, dtype=float), np.ascontiguousarray(W0, dtype=float),
        np.ascontiguousarray(D, dtype=float), model._rel, codes, params, model._kargs[0],
        model._kargs[2],
        np.ascontiguousarray(v, dtype=float), float(h), float(v_tol), float(tol), int(max_iter),
        np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float),
        a, tauf, stuck, at_rest, info, np.empty((n, n)), W, vecs,
        np.empty((5, n), dtype=np.int64),
        1 if warm is not None else (3 if predict else (0 if guess is None else 2)),
        True)
    if info[0] != 1:
        tauf[:] = 0.0
    report = compiled_report(model, info, residual, stuck, at_rest)
    if report.converged:
        report.tau_limit = vecs[TAU_LIMIT].copy()
        report.state = stuck * 4 + (np.sign(vecs[1]) + 1).astype(np.int64)
        report.wrenches = W
    return a, tauf, report


def report_from_work(model, views) -> FrictionSolveReport:
    """The report a compiled solve left in a Data's work arrays (``Data.fd_report`` calls this
    when first read, so the compiled paths store this function instead of building a report)."""
    return compiled_report(model, views["info"], views["sums"][0], views["stuck"],
                           views["at_rest"])


def compiled_report(model, info, residual, stuck, at_rest) -> FrictionSolveReport:
    """The report of a compiled solve from its ``info`` array and joint states (``stuck``:
    0 free, 1 stuck, 2/3 on the lower/upper stop)."""
    ok = bool(info[0] == 1)
    names = model.joint_names
    report = FrictionSolveReport(
        converged=ok, method=_METHODS[info[1]], iterations=int(info[2]),
        residual=float(residual), active_set_changes=int(info[3]),
        stuck=[names[i] for i in np.flatnonzero(stuck == STUCK)] if ok else [],
        breaking_away=[names[i] for i in np.flatnonzero((at_rest != 0) & (stuck == FREE))]
        if ok else [],
        at_limit=[names[i] for i in np.flatnonzero(stuck >= LOWER)] if ok else [],
        message="" if ok else (
            _gave_up(int(info[2]), int(info[3]), len(stuck), work=_kernel_work())
            if info[0] == -2 else
            "active-set iteration limit reached (12 n + 21 stick/slip assignments, n the joints "
            "solved): the stick/slip states did not settle" if info[0] == -1 else
            "friction solve did not converge (successive approximation and Newton), or the "
            "stick/slip states did not settle"))
    if info[4] and ok:
        report.message = _NON_UNIQUE
    if info[5] and ok:
        report.message = _EXPLICIT
    return report


_EXPLICIT = ("velocity products at the start-of-step velocity: their mid-step evaluation did not "
             "settle (a step too long for the motion; the stick/slip verdict holds for the loads "
             "used)")
TAU_LIMIT = 15  # row of the kernels' vecs scratch holding the stops' reactions
