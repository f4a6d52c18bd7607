"""Controllers as arrays, for rollouts in one compiled call (:meth:`Simulator.run
<robot_dynamics.simulation.simulator.Simulator.run>`).

A Python callable ``controller(t, q, q̇) → τ`` costs a Python call (and whatever it computes in
NumPy) per step. The controllers here are data — gains and reference trajectories as arrays —
that the compiled rollout (:mod:`robot_dynamics.kernels.rollout`) evaluates inside its loop, so
``Simulator.run`` advances many steps without returning to Python. Each also states its law in
NumPy (:meth:`torque`), which the Python paths use and the tests compare with.

References are given per step: row ``k`` of ``q_ref`` (and ``v_ref``, ``a_ref``,
``feedforward``) is used at step ``k`` of the run, the last row beyond; a single row (or a
vector) is a constant reference.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.inverse_dynamics import check_damping
from robot_dynamics.control.computed_torque import computed_torque
from robot_dynamics.errors import InputError, check_friction, real_array
from robot_dynamics.kernels.rollout import COMPUTED_TORQUE, PD as _PD, ZERO, pack_controller


def _numbers(name, x) -> np.ndarray:
    """``x`` as a new float array; InputError for complex values (numpy would drop their
    imaginary part with a warning) and for what is not numbers."""
    try:
        return real_array(x)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected real numbers, got {x!r:.80}") from None


def _rows(name, x, n):
    if x is None:  # a zero reference
        return np.zeros((1, n))
    x = _numbers(name, x)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != n:
        raise InputError(f"{name}: expected ({n},) or (steps, {n}) numbers, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise InputError(f"{name}: not finite")
    return x


def _gains(name, x, n):
    x = _numbers(name, x)
    x = np.full(n, float(x)) if x.ndim == 0 else x
    if x.shape != (n,) or not np.isfinite(x).all():
        raise InputError(f"{name}: expected {n} finite gains, got {np.asarray(x).tolist()}")
    _early(name, x, gain=True)
    return x


def _early(name, x, gain=False):
    """What is checked when a controller is made (the lengths need the model): real, finite
    numbers, and a gain not below 0 (it would drive the joint away from its reference)."""
    if x is None:
        return
    try:
        np.asarray(x)
    except (TypeError, ValueError):  # ragged: the shape check names it
        return
    x = _numbers(name, x)
    if not np.isfinite(x).all():
        raise InputError(f"{name}: not finite, got {x.tolist()}")
    if gain and np.any(x < 0):
        raise InputError(f"{name}: gains must be ≥ 0 (a negative gain drives the joint away from "
                         f"its reference), got {x.tolist()}")


class _Controller:
    kind = ZERO

    def __init__(self, kp, kd, q_ref, v_ref=None, third=None, third_name=""):
        _early("kp", kp, gain=True)  # now, not at the first step (the lengths need the model)
        _early("kd", kd, gain=True)
        for name, x in (("q_ref", q_ref), ("v_ref", v_ref), (third_name, third)):
            _early(name, x)
        self._args = (kp, kd, q_ref, v_ref, third, third_name)
        self._packed = {}
        self._checked = {}  # nv → the validated arrays (the NumPy law reads them every step)

    def _arrays(self, n):
        if n not in self._checked:
            self._checked = {n: self._validated(n)}
        return self._checked[n]

    def _validated(self, n):
        kp, kd, q_ref, v_ref, third, third_name = self._args
        kp, kd = _gains("kp", kp, n), _gains("kd", kd, n)
        Q, V, A = _rows("q_ref", q_ref, n), _rows("v_ref", v_ref, n), _rows(third_name, third, n)
        # a trajectory's rows go together: references of several rows must have as many (one
        # row is a constant, held along any trajectory; an absent one is a row of zeros)
        lengths = {name: len(x) for name, x in (("q_ref", Q), ("v_ref", V), (third_name, A))
                   if len(x) > 1}
        if len(set(lengths.values())) > 1:
            raise InputError("references of a trajectory must have as many rows (steps): "
                             + ", ".join(f"{k} has {r}" for k, r in lengths.items())
                             + " (a single row is a constant reference)")
        rows = max(len(Q), len(V), len(A))
        return kp, kd, _extend(Q, rows), _extend(V, rows), _extend(A, rows)

    def _row(self, arrays, k):
        kp, kd, Q, V, A = arrays
        r = min(k, len(Q) - 1)
        return kp, kd, Q[r], V[r], A[r]


def _extend(x, rows):
    """(rows, n): a shorter reference holds its last row."""
    if len(x) >= rows:
        return x
    return np.vstack([x, np.repeat(x[-1:], rows - len(x), axis=0)])


class PD(_Controller):
    """``τ = τff_k + Kp∘(q_ref,k − q) + Kd∘(q̇_ref,k − q̇)``, plus the gravity torques g(q) with
    ``gravity_compensation=True``. Gains: scalars or (nv,); references: (nv,) or (steps, nv)."""

    kind = _PD

    def __init__(self, kp, kd, q_ref, v_ref=None, feedforward=None, *,
                 gravity_compensation=False):
        super().__init__(kp, kd, q_ref, v_ref, feedforward, "feedforward")
        self.gravity_compensation = bool(gravity_compensation)

    def pack(self, model):
        """The flat array of :func:`robot_dynamics.kernels.rollout.pack_controller` (cached)."""
        if model not in self._packed:
            self._packed = {model: pack_controller(self.kind, model.nv, *self._arrays(model.nv),
                                                   gravity=self.gravity_compensation)}
        return self._packed[model]

    def torque(self, model, data, k, q, v):
        """The law in NumPy at step ``k``."""
        kp, kd, qr, vr, ff = self._row(self._arrays(model.nv), k)
        tau = ff + kp * (qr - q) + kd * (vr - v)
        if self.gravity_compensation:
            from robot_dynamics.algorithm.crba import gravity_torques

            tau = tau + gravity_torques(model, data, q)
        return tau


class ComputedTorque(_Controller):
    """``τ = ID(q, q̇, q̈_ref,k + Kp∘(q_ref,k − q) + Kd∘(q̇_ref,k − q̇))`` (the law of
    :mod:`robot_dynamics.control.computed_torque`, compiled in the rollout): the motor effort of
    inverse dynamics, friction-aware (seed 004 §2.7, :func:`~robot_dynamics.algorithm.inverse_dynamics`)
    with a ``friction`` model of built-in laws, including the URDF's joint damping d∘q̇
    (``model.damping``, what ``Simulator(damping=True)`` applies; ``damping=False`` leaves it
    out: inverse dynamics' ``damping``)."""

    kind = COMPUTED_TORQUE

    def __init__(self, kp, kd, q_ref, v_ref=None, a_ref=None, *, friction=None,
                 velocity_tolerance=1e-6, damping=True):
        super().__init__(kp, kd, q_ref, v_ref, a_ref, "a_ref")
        self.friction = friction
        self.velocity_tolerance = float(velocity_tolerance)
        self.damping = check_damping(damping, "ComputedTorque",
                                     "compensate the URDF's joint damping")

    def pack(self, model):
        if model not in self._packed:
            laws = None
            if self.friction is not None:
                check_friction(model, self.friction, "ComputedTorque")
                if self.friction._packed is None:
                    raise InputError("ComputedTorque: friction with Python laws cannot be "
                                     "compiled; use a Python controller callable instead")
                laws = self.friction._packed[2]
            self._packed = {model: pack_controller(self.kind, model.nv, *self._arrays(model.nv),
                                                   laws=laws, v_tol=self.velocity_tolerance,
                                                   damping=self.damping)}
        return self._packed[model]

    def torque(self, model, data, k, q, v):
        """The law (:func:`~robot_dynamics.control.computed_torque.computed_torque`, friction
        along the measured velocity) at step ``k``."""
        kp, kd, qr, vr, ar = self._row(self._arrays(model.nv), k)
        return computed_torque(model, data, q, v, qr, vr, ar, kp, kd, self.friction,
                               damping=self.damping,
                               velocity_tolerance=self.velocity_tolerance)


class Prepacked(_Controller):
    """A compiled controller given as its packed array
    (:func:`~robot_dynamics.kernels.rollout.pack_controller`'s, for any model: the caller
    packed it for the one it runs on), e.g. one array rewritten in its gains from one rollout
    to the next (issue 35, :func:`robot_dynamics.simulation.rollouts._packed_controller`). Its
    NumPy law — for a step the compiled rollout hands back to Python — is the one of
    ``build()``'s controller, built the first time it is asked."""

    def __init__(self, packed, build):
        self._array, self._build, self._ctl = packed, build, None

    def pack(self, model):
        return self._array

    def torque(self, model, data, k, q, v):
        if self._ctl is None:
            self._ctl = self._build()
        return self._ctl.torque(model, data, k, q, v)
