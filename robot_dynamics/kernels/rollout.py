"""Many simulation steps in one compiled call, with a compiled controller (rollouts).

:func:`sim_run_entry` repeats :func:`.fd._step` (the simulator's step) with the motor efforts of
a controller given as one flat array ``ctl`` (:func:`pack_controller`; the Python classes of
:mod:`robot_dynamics.control.controllers` build it and state the same law in NumPy):

* ``ZERO``: no effort;
* ``PD``: ``τ = τff_k + Kp∘(q_ref,k − q) + Kd∘(q̇_ref,k − q̇)`` (+ gravity compensation g(q));
* ``COMPUTED_TORQUE``: ``τ = ID(q, q̇, q̈_c)``, q̈_c = q̈_ref,k + Kp∘(q_ref,k − q)
  + Kd∘(q̇_ref,k − q̇): the motor effort of inverse dynamics (seed 004 §2.7, issue 33) —
  RNEA + armature∘q̈_c, the friction compensation ``− τf`` of the controller's own laws if
  given, and the URDF damping d∘q̇ unless the controller leaves it out — the statements of
  :func:`.friction.id_entry`.

Row ``k`` of the references is used at step ``k`` of the run (the last row holds beyond).
"""
from __future__ import annotations

import numpy as np
from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import (F1, add_joint_damping, add_rotor_effort,
                                             placements_kernel, rnea_passes)
from robot_dynamics.kernels.fd import Q_NEW, V_NEW, ZERO as ZERO_ROW, _step
from robot_dynamics.kernels.friction import ID_OUT, id_friction_kernel
from robot_dynamics.kernels.layout import (laws_views, model_armature, model_damping, model_gravity,
    model_views, scratch_views, work_views)
from robot_dynamics.kernels.friction_solve import TAU_LIMIT

ZERO, PD, COMPUTED_TORQUE = 0, 1, 2
_HEAD = 8  # kind, rows, gravity comp., friction comp., n, offset of the laws, rest velocity,
#            URDF damping (1: in the effort, as inverse_dynamics(damping=True))
#: status of sim_run_entry (returned as 4·step + status): completed, bad input, solve failed,
#: overflow — as a step's
DONE, BAD_INPUT, SOLVE_FAILED, OVERFLOW = 0, 1, 2, 3
RUN_STEP = 7  # slot of the work ``sums`` holding the step being taken (read after an exception)


def pack_controller(kind, n, kp, kd, Q, V, A, gravity=False, laws=None, v_tol=1e-6,
                    damping=False):
    """``ctl``: [kind, rows, gravity, friction, n, laws offset, v_tol, damping], Kp, Kd (n each),
    then the (rows, n) references Q, V and A (PD: the feed-forward), then the packed laws (or
    nothing); ``v_tol``: the friction compensation's rest velocity (inverse_dynamics');
    ``damping``: whether the effort includes the model's URDF damping d∘q̇ (the packed model's,
    :func:`.layout.model_damping`)."""
    rows = Q.shape[0]
    body = [np.asarray(kp, float).ravel(), np.asarray(kd, float).ravel(), Q.ravel(), V.ravel(),
            A.ravel()]
    off = _HEAD + sum(len(b) for b in body)
    head = np.array([kind, rows, 1.0 if gravity else 0.0, 0.0 if laws is None else 1.0, n, off,
                     v_tol, 1.0 if damping else 0.0], dtype=float)
    tail = [] if laws is None else [laws]
    return np.ascontiguousarray(np.concatenate([head] + body + tail), dtype=np.float64)


@njit(cache=True)
def controller_kernel(mb, ctl, k, q, v, w, out):
    """The controller's efforts at step ``k`` and state (q, q̇) into ``out`` (uses Data's work
    buffers R, p, v, a, f, tau, tau_friction, which the step overwrites)."""
    n = q.shape[0]
    kind = int(ctl[0])
    if kind == ZERO:
        for i in range(n):
            out[i] = 0.0
        return
    rows = int(ctl[1])
    r = min(k, rows - 1)
    kp, kd = ctl[_HEAD:_HEAD + n], ctl[_HEAD + n:_HEAD + 2 * n]
    base = _HEAD + 2 * n
    Q = ctl[base + r * n:base + (r + 1) * n]
    V = ctl[base + rows * n + r * n:base + rows * n + (r + 1) * n]
    A = ctl[base + 2 * rows * n + r * n:base + 2 * rows * n + (r + 1) * n]
    _, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    R, p, vel, acc, f, tau, tauf, _, _, _, _ = work_views(mb, w)
    zero = scratch_views(mb, w)[6][ZERO_ROW]
    if kind == PD:
        for i in range(n):
            out[i] = A[i] + kp[i] * (Q[i] - q[i]) + kd[i] * (V[i] - v[i])
        if ctl[2] != 0.0:  # gravity compensation: RNEA at rest
            for i in range(n):
                zero[i] = 0.0
            placements_kernel(kinds, axes, R0, p0, q, R, p)
            rnea_passes(parents, I6, S, model_gravity(mb), zero, zero, R, p, vel, acc, f, tau)
            for i in range(n):
                out[i] += tau[i]
        return
    acmd = zero  # computed torque: inverse dynamics at the commanded acceleration
    for i in range(n):
        acmd[i] = A[i] + kp[i] * (Q[i] - q[i]) + kd[i] * (V[i] - v[i])
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes(parents, I6, S, model_gravity(mb), v, acmd, R, p, vel, acc, f, tau)
    add_rotor_effort(model_armature(mb), acmd, tau)  # the rotors' armature∘q̈ (as rnea's)
    if ctl[3] != 0.0:
        codes, params = laws_views(ctl[int(ctl[5]):], n)
        id_friction_kernel(codes, params, kinds, axes, f, q, v, acmd, tau, ctl[6], tauf, out)
    else:
        for i in range(n):
            out[i] = tau[i]
    if ctl[7] != 0.0:  # the URDF damping the plant applies, −d∘q̇ (as id_entry's)
        add_joint_damping(model_damping(mb), v, out)


@njit(f"int64({F1}, {F1}, {F1}, {F1}, {F1}, {F1}, int64, {F1}, float64[:, :, ::1])", cache=True,
      nogil=True)
def sim_run_entry(mb, fr, sp, ctl, q, v, k0, w, out):
    """Steps k0 … N−1 of a rollout (N = len(out)), each :func:`.fd._step` under the controller
    ``ctl``; step k starts from (q, q̇) when k = 0, else from out[k − 1]. Writes per step
    out[k] = [q⁺, q̇⁺, applied τ, τf, τl]. Returns 4·k + status: k = N and status DONE when all
    steps ran, else the step that could not be taken (its row untouched) and its status."""
    n = model_views(mb)[0]
    N = out.shape[0]
    vecs = scratch_views(mb, w)[6]
    sums = scratch_views(mb, w)[7]
    u = vecs[ID_OUT]
    R, p, vel, acc, f, tau, tauf, _, _, _, _ = work_views(mb, w)
    if q.shape[0] != n or v.shape[0] != n or out.shape[1] != 5 or out.shape[2] != n:
        return 4 * k0 + BAD_INPUT
    for k in range(k0, N):
        sums[RUN_STEP] = k
        qk = q if k == 0 else out[k - 1, 0]
        vk = v if k == 0 else out[k - 1, 1]
        controller_kernel(mb, ctl, k, qk, vk, w, u)
        status = _step(mb, fr, sp, qk, vk, u, w, mb, sp[:0], w, f[:0]) & 3
        if status != 0:
            return 4 * k + status
        row = out[k]
        for i in range(n):
            row[0, i] = vecs[Q_NEW, i]
            row[1, i] = vecs[V_NEW, i]
            row[2, i] = tau[i]
            row[3, i] = tauf[i]
            row[4, i] = vecs[TAU_LIMIT, i]
    return 4 * N + DONE
