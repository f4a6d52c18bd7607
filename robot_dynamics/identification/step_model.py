"""The simulator's step, replayed row by row: the exact states its friction balance used.

A log of :class:`~robot_dynamics.simulation.Simulator` (or the simulator node in lock-step,
which steps once per published state) has, per row k, the state after a step and the effort
applied over it. The step from (q_{k−1}, q̇_{k−1}) of length h (simulation.py's scheme, no stop
acting) solves

    M(q½) q̈ + b(q½, q̇_e) + d∘(q̇_{k−1} + h q̈) = τ_k + τf(W(q½, q̇_e, q̈), q̇_k)

with q½ = q_{k−1} + (h/2) q̇_{k−1} = q_k − (h/2) q̇_k, q̈ = (q̇_k − q̇_{k−1})/h, and the velocity
products evaluated at **q̇_e = q̇_{k−1} + (h/2) q̈⁰**, where q̈⁰ is the answer of the step's
*first* solve — the same equation with the products at q̇_{k−1}:

    M q̈⁰ + b(q½, q̇_{k−1}) + d∘(q̇_{k−1} + h q̈⁰)
        = τ_k + τf(W(q½, q̇_{k−1}, q̈⁰), q̇_{k−1} + h q̈⁰).

(The step re-solves with q̇_e and stops when the stick/slip set repeats: two solves on every row
without a transition.) Subtracting the two, with M_eff = M + h diag(d):

    M_eff (q̈⁰ − q̈) = b(q½, q̇_e) − b(q½, q̇_{k−1}) + τf⁰ − τf          (*)

(M includes the rotors, diag(armature): the simulator's M + diag(model.armature); when the
armature is being identified, the fitter sets :attr:`StepReplay.armature` to its estimate. With
a gear mesh (issue 16) τf depends on the joint wrench, hence on q̈⁰: the iteration carries it.)

solved for q̈⁰ by fixed-point iteration (q̇_e depends on it; the map contracts by ~h|∂b/∂q̇|/M,
plus c·M_link/(M_link + armature) for a gear mesh of coefficient c, which the first solve's
friction τf⁰ = τf(W(q½, q̇_{k−1}, q̈⁰)) carries); rows where it has not settled after
:data:`ITERATIONS` (a self-locking gear, c ≥ 1, as the simulator's own solve falls back to
Newton there) are solved by Newton's method, and a row that does not settle even then is not
described (invalid).
The friction difference τf⁰ − τf needs the law, hence the coefficients being fitted: the
fitter passes its current estimate (:func:`.fit.fit` iterates; the term is ~1e-3 of the
correction, so one estimate suffices). Joints at rest over the step (q̇ = 0 before and after:
stuck, or held on a stop) have their acceleration prescribed in both solves: their rows of (*)
drop out. A row where any joint starts or stops moving, or changes direction, may have taken
more solves (the stick/slip set changed between them): such a row is not described and is
marked invalid for every joint — as is a row with a joint on its position limit (a stop acted);
when such rows are more than :data:`ROW_SHARE` of the log (velocities flickering through zero:
sensor noise at rest, so not a simulator log), only for the joints concerned.

Measured on arm7 (docs/identification.md): the friction balance reconstructed this way equals
the simulator's own τf to ~1e-13 N·m (1e-15 relative to the efforts); with the mean velocity
(q̇_{k−1} + q̇_k)/2 instead of q̇_e it was off by up to 8e-7 N·m, correlated over seconds.

For logs of a real robot the correction is O(h²) and harmless.
"""
from __future__ import annotations

import numpy as np

from ..batch import joint_wrenches_batch, rnea_batch
from ..crba import mass_matrix
from .differentiate import step_lengths

#: fixed-point iterations of (*) at most, and the relative change of q̇_e that ends them
ITERATIONS, TOLERANCE = 12, 1e-14
#: Newton iterations at most for rows where the fixed point does not contract
NEWTON_ITERATIONS = 20
#: a transition excludes its row for every joint while such rows are at most this share of
#: the log; beyond it (velocities that flicker through zero: sensor noise at rest, not a
#: simulator log) only for the joint itself
ROW_SHARE = 0.1


class StepReplay:
    """Per log row: the mid-step position ``Qh``, the step's start velocity ``Vp``, its mean
    acceleration ``A``, its length ``h`` (N,), and ``valid`` (N, nv) (rows the replay
    describes). ``evaluation_velocity(friction)`` gives q̇_e; ``wrenches(Ve)`` the joint
    wrenches W(q½, q̇_e, q̈) (N, nv, 6) the step's friction saw."""

    def __init__(self, model, t, Q, V):
        self.model = model
        Q, V = np.asarray(Q, float), np.asarray(V, float)
        dt = step_lengths(t)
        self.h = np.concatenate([[dt[0] if len(dt) else 0.0], dt])
        self.V = V
        self.Vp = np.vstack([V[:1], V[:-1]])
        self.A = np.zeros_like(V)
        self.A[1:] = (V[1:] - V[:-1]) / dt[:, None]
        self.Qh = Q - 0.5 * self.h[:, None] * V
        # rows the replay describes: no joint starts, stops or reverses within the step
        moving = (self.Vp != 0.0) | (V != 0.0)
        transition = moving & (np.sign(self.Vp) != np.sign(V))
        lo, hi = np.asarray(model.lower_limits, float), np.asarray(model.upper_limits, float)
        with np.errstate(invalid="ignore"):  # continuous joints: ∓inf, never at a stop
            at_stop = ((Q <= lo + 1e-12 * (1 + np.abs(lo))) & np.isfinite(lo)) | \
                      ((Q >= hi - 1e-12 * (1 + np.abs(hi))) & np.isfinite(hi))
        bad = transition | at_stop
        row_ok = ~bad.any(axis=1)
        row_ok[0] = False
        if row_ok.mean() >= 1.0 - ROW_SHARE:
            self.valid = np.repeat(row_ok[:, None], V.shape[1], axis=1)
        else:  # velocities that cross zero on many rows (noise at rest: not a simulator log)
            row_ok[1:] = True
            self.valid = ~bad & row_ok[:, None]
        self.sliding = moving & ~transition  # joints whose friction follows the law
        self.rest = ~moving                   # acceleration prescribed (0) in both solves
        self._rows = np.flatnonzero(row_ok)
        self._M = None
        self._armature = np.array(model.armature, dtype=float)
        self.iterations = 0  # fixed-point iterations of (*) so far

    @property
    def armature(self):
        """The rotors' reflected inertia in M_eff (default ``model.armature``): set it to the
        fitted armature when that is what is being identified (the simulator's M carried the
        true one)."""
        return self._armature.copy()

    @armature.setter
    def armature(self, value):
        value = np.array(value, dtype=float).reshape(self.model.nv)
        if not np.array_equal(value, self._armature):
            self._armature, self._M = value, None

    def _mass(self):
        """M_eff (R, nv, nv) at the replayed rows, rest joints decoupled (rows of (*) out)."""
        if self._M is None:
            model, rows = self.model, self._rows
            data = model.create_data()
            damping = np.asarray(model.damping, float)
            extra = self._armature - np.asarray(model.armature, float)  # crba has model's
            M = np.empty((len(rows), model.nv, model.nv))
            for m, k in enumerate(rows):
                M[m] = mass_matrix(model, data, self.Qh[k])
                M[m][np.diag_indices(model.nv)] += self.h[k] * damping + extra
            rest = self.rest[rows]
            M[rest[:, :, None] | rest[:, None, :]] = 0.0
            idx = np.arange(model.nv)
            M[:, idx, idx] = np.where(rest, 1.0, M[:, idx, idx])
            self._M = M
        return self._M

    def wrenches(self, Ve):
        """Joint wrenches W(q½, q̇_e, q̈) (N, nv, 6)."""
        return joint_wrenches_batch(self.model, self.Qh, Ve, self.A)

    def evaluation_velocity(self, friction=None, start=None):
        """q̇_e (N, nv) of equation (*); the mean velocity on rows the replay does not describe.

        ``friction(U, W)`` → signed τf (R, nv) at end velocities ``U`` (R, nv) and joint
        wrenches ``W`` (R, nv, 6) (the law being fitted, with its current coefficients); None
        leaves the friction difference out. ``start``: a previous answer to iterate from.
        """
        model, rows = self.model, self._rows
        Ve = 0.5 * (self.Vp + self.V)
        if not len(rows):
            return Ve
        Qh, Vp, A, h = self.Qh[rows], self.Vp[rows], self.A[rows], self.h[rows, None]
        M = self._mass()
        zero = np.zeros_like(Vp)
        b_start = rnea_batch(model, Qh, Vp, zero)
        sliding = self.sliding[rows]
        V_end = self.V[rows]

        def correction(sub, A0):
            """M⁻¹ × the right-hand side of (*) at q̈⁰ = A0 on the rows ``sub``."""
            ve = Vp[sub] + 0.5 * h[sub] * A0
            rhs = rnea_batch(model, Qh[sub], ve, zero[sub]) - b_start[sub]
            if friction is not None:
                W0 = joint_wrenches_batch(model, Qh[sub], Vp[sub], A0)
                tf_end = friction(V_end[sub], joint_wrenches_batch(model, Qh[sub], ve, A[sub]))
                rhs += np.where(sliding[sub], friction(Vp[sub] + h[sub] * A0, W0) - tf_end, 0.0)
            rhs[~sliding[sub]] = 0.0
            return np.linalg.solve(M[sub], rhs[..., None])[..., 0]

        every = np.arange(len(rows))
        ve = Ve[rows] if start is None else start[rows]
        A0 = 2.0 * (ve - Vp) / h
        for _ in range(ITERATIONS):
            A0 = A + correction(every, A0)
            new = Vp + 0.5 * h * A0
            change = np.abs(new - ve).max(axis=1) / (1.0 + np.abs(ve).max())
            ve = new
            self.iterations += 1
            if change.max() <= TOLERANCE:
                break
        else:  # rows where the fixed point does not contract (a self-locking gear: c ≥ 1)
            ve = self._newton(np.flatnonzero(change > TOLERANCE), ve, Vp, A, h, correction)
        Ve[rows] = ve
        return Ve

    def _newton(self, sub, ve, Vp, A, h, correction):
        """Newton's method on G(q̈⁰) = q̈⁰ − q̈ − M⁻¹ rhs(q̈⁰) = 0 for the rows ``sub`` (indices
        into the replayed rows), from q̈⁰ = q̈, with a finite-difference Jacobian (the friction
        map is piecewise linear). Rows that still do not settle are marked invalid."""
        nv = self.model.nv
        A0 = A[sub].copy()
        Vp_s, h_s = Vp[sub], h[sub]
        change = np.full(len(sub), np.inf)
        for _ in range(NEWTON_ITERATIONS):
            G = A0 - A[sub] - correction(sub, A0)
            J = np.empty((len(sub), nv, nv))
            eps = 1e-7 * (1.0 + np.abs(A0))
            for j in range(nv):
                Aj = A0.copy()
                Aj[:, j] += eps[:, j]
                J[:, :, j] = (Aj - A[sub] - correction(sub, Aj) - G) / eps[:, j, None]
            step = np.linalg.solve(J, G[..., None])[..., 0]
            A0 = A0 - step
            change = np.abs(0.5 * h_s * step).max(axis=1) / (1.0 + np.abs(Vp_s).max())
            self.iterations += 1
            if change.max() <= TOLERANCE:
                break
        ve = ve.copy()
        ve[sub] = Vp_s + 0.5 * h_s * A0
        failed = self._rows[sub[~(change <= TOLERANCE)]]
        self.valid[failed] = False
        return ve
