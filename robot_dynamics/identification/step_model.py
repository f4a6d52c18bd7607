"""The simulator's step, replayed row by row: the exact states its friction balance used.

A log of :class:`~robot_dynamics.simulation.simulator.Simulator` (or the simulator node in lock-step,
which steps once per published state) has, per row k, the state after a step and the effort
applied over it. The step from (q_{k−1}, q̇_{k−1}) of length h (simulation.py's scheme, no stop
acting) solves

    M(q½) q̈ + b(q½, q̇_e) + d∘(q̇_{k−1} + h q̈) = τ_k + τf(W(q½, q̇_e, q̈), q̇_k)

with q½ = q_{k−1} + (h/2) q̇_{k−1} = q_k − (h/2) q̇_k, q̈ = (q̇_k − q̇_{k−1})/h, and the velocity
products evaluated at **q̇_e = q̇_{k−1} + (h/2)(2 q̈_{k−1} − q̈_{k−2})**, where
q̈_{k−1} = (q̇_{k−1} − q̇_{k−2})/h′ and q̈_{k−2} are the previous steps' answers: the simulator
places the mid-step velocity with their extrapolation and keeps that answer when the step's
stick/slip set is the previous step's. So the log alone gives q̇_e: no friction law, no mass
matrix, no solve.

The simulator extrapolates only from steps that kept their predecessor's stick/slip set (for
two steps after a change it takes the last q̈ alone). A row where any joint starts, stops or
reverses may have taken more solves (the set changed); such a row, the three rows after it
(their extrapolation may have taken the last q̈ alone), a row with a joint on or at its position
limit (a stop acted: after a stop's impulse the step predicts q̈ instead) and the three after
it, and the first three rows of a log (the steps before them are not in the log) are not
described: they are marked invalid for every joint. The replay takes every joint to have
friction, as the fit does: a joint without friction that reverses changes the set of the next
step too (that row is then not exact).
When such rows are more than :data:`ROW_SHARE` of the log (velocities flickering through zero:
sensor noise at rest, so not a simulator log), only the joints concerned of a row with a
transition are.

Measured on arm7 (docs/identification.md): the friction balance reconstructed this way equals
the simulator's own τf to ~1e-13 N·m (1e-15 relative to the efforts); with the mean velocity
(q̇_{k−1} + q̇_k)/2 instead of q̇_e it was off by up to 8e-7 N·m, correlated over seconds.

For logs of a real robot the correction is O(h²) and harmless.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.batch import joint_wrenches_batch
from robot_dynamics.identification.differentiate import step_lengths

#: a transition excludes its row for every joint while such rows are at most this share of
#: the log; beyond it (velocities that flicker through zero: sensor noise at rest, not a
#: simulator log) only for the joint itself
ROW_SHARE = 0.1


class StepReplay:
    """Per log row: the mid-step position ``Qh``, the step's start velocity ``Vp``, its mean
    acceleration ``A``, the velocity ``Ve`` its products were evaluated at, its length ``h``
    (N,), and ``valid`` (N, nv) (rows the replay describes). ``wrenches()`` gives the joint
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
        # rows the replay describes: in the row and the three before, no joint starts, stops or
        # reverses and none is at or past a stop — then the row's step and the two before it
        # kept their predecessors' stick/slip sets (every joint has friction: one that reverses
        # within a step is released along its new motion, the set the next step starts from),
        # so the step's extrapolated solve stood, extrapolated from two steps
        moving = (self.Vp != 0.0) | (V != 0.0)
        transition = moving & (np.sign(self.Vp) != np.sign(V))
        lo, hi = np.asarray(model.lower_limits, float), np.asarray(model.upper_limits, float)
        with np.errstate(invalid="ignore"):  # continuous joints: ∓inf, never at a stop
            at_stop = np.zeros_like(transition)
            for x in (Q, self.Qh):
                at_stop |= (((x <= lo + 1e-12 * (1 + np.abs(lo))) & np.isfinite(lo))
                            | ((x >= hi - 1e-12 * (1 + np.abs(hi))) & np.isfinite(hi)))
        bad = transition | at_stop
        clean = ~bad.any(axis=1)
        row_ok = clean.copy()
        for lag in (1, 2, 3):
            row_ok[lag:] &= clean[:-lag]
        row_ok[:3] = False  # (the first step after a reset predicts; the next two do not
        # extrapolate from two steps)
        # q̇_{k−1} + (h/2)(2 q̈_{k−1} − q̈_{k−2}) (rows 0 and 1: q̇_{k−1})
        self.Ve = self.Vp.copy()
        self.Ve[2:] += 0.5 * self.h[2:, None] * (2.0 * self.A[1:-1] - self.A[:-2])
        if row_ok.mean() >= 1.0 - ROW_SHARE:
            self.valid = np.repeat(row_ok[:, None], V.shape[1], axis=1)
        else:  # velocities that cross zero on many rows (noise at rest: not a simulator log)
            row_ok[3:] = True
            self.valid = ~bad & row_ok[:, None]

    def wrenches(self):
        """Joint wrenches W(q½, q̇_e, q̈) (N, nv, 6)."""
        return joint_wrenches_batch(self.model, self.Qh, self.Ve, self.A)
