"""Fixed-step simulation of the arm with reaction-dependent friction and stiction (no ROS).

One step of length h (a velocity-level, "time-stepping" scheme suited to friction):

1. drift half a step: ``q½ = q + (h/2) q̇``;
2. at (q½, q̇) solve for the end-of-step velocity ``q̇⁺ = q̇ + h q̈`` with
   ``M q̈ + b = τ + τf − d∘q̇⁺`` where friction is solved at the velocity level
   (:mod:`robot_dynamics.stiction` with h > 0): a joint whose velocity would cross zero stops
   exactly and stays stuck while friction can hold it — so nothing creeps at rest; URDF viscous
   damping ``d`` is implicit too;
3. drift the other half: ``q⁺ = q½ + (h/2) q̇⁺``.

The position update is the Störmer–Verlet splitting (second order, good energy behaviour). The
energy audit accumulates motor work ``h τ·q̇_mid``, friction dissipation ``−h τf·q̇_mid`` and
damping dissipation ``h d q̇_mid·q̇⁺`` with ``q̇_mid = (q̇ + q̇⁺)/2``, the power pairing consistent
with the step, and compares them with ΔT + ΔV (:class:`~robot_dynamics.energy.EnergyAudit`).
"""
from __future__ import annotations

import numpy as np

from .crba import bias_forces, mass_matrix
from .directors import wrench_directors
from .energy import EnergyAudit, kinetic_energy, potential_energy
from .errors import InputError, as_vector
from .kernels.fd import Q_NEW, V_NEW, sim_step_entry
from .stiction import FrictionSolveError, solve_with_friction


class Simulator:
    """Fixed-step forward simulation. See the module docstring for the scheme."""

    def __init__(self, model, friction=None, dt=1e-3, *, damping=True, velocity_tolerance=1e-9,
                 tol=1e-10, max_iter=50, compiled=True, saturate=True):
        """``compiled=False`` runs every step through the Python statement of the scheme
        (:meth:`_integrate` with the reference friction solver): the specification the compiled
        step is tested against, and much slower.

        ``saturate``: apply at most the URDF effort limit of each joint (``model.effort_limits``;
        inf, absent or non-positive = no limit), as a drive does; ``tau_applied`` is the effort
        actually applied, ``saturated`` flags the joints at their limit in the last step and
        ``saturated_steps`` counts the steps with any joint saturated."""
        if not (np.isfinite(dt) and dt > 0):
            raise InputError(f"dt must be a positive number of seconds, got {dt}")
        self.model, self.friction, self.dt = model, friction, float(dt)
        effort = np.asarray(model.effort_limits, dtype=float)
        self.effort_limit = (np.where(effort > 0, effort, np.inf) if saturate
                             else np.full(model.nv, np.inf))
        self.tau_applied = np.zeros(model.nv)
        self.saturated = np.zeros(model.nv, dtype=bool)
        self.damping = np.array(model.damping if damping else np.zeros(model.nv), dtype=float)
        self.data = model.create_data()
        self.v_tol, self.tol, self.max_iter = float(velocity_tolerance), float(tol), int(max_iter)
        self.tau_friction = np.zeros(model.nv)
        # built-in laws (or none) step in one compiled call (kernels/fd.py); others in Python
        self._packed = model._no_friction if friction is None else friction._packed
        self._reference_only = not compiled
        if not compiled:
            self._packed = None
        self._report = None
        self.reset(np.zeros(model.nq))

    @property
    def report(self):
        """The friction solve's report of the last step
        (:class:`~robot_dynamics.stiction.FrictionSolveReport`), or None before any step."""
        return self.data.fd_report if self._report is None else self._report

    def reset(self, q, v=None):
        """Start again at (q, q̇) with the clock at 0 and a fresh energy audit."""
        self.q = as_vector("q", q, self.model.nq, where="Simulator.reset").copy()
        self.v = (np.zeros(self.model.nv) if v is None else
                  as_vector("v", v, self.model.nv, where="Simulator.reset").copy())
        self.t = 0.0
        self.steps = 0
        self.saturated_steps = 0
        self.saturated[:] = False
        self.tau_applied[:] = 0.0
        self._audit = EnergyAudit()
        self._energy0 = self.energy()
        self.tau_friction[:] = 0.0

    def energy(self):
        """(kinetic, potential) energy of the current state [J]."""
        M = mass_matrix(self.model, self.data, self.q)
        return kinetic_energy(M, self.v), potential_energy(self.model, self.data)

    @property
    def audit(self) -> EnergyAudit:
        T, V = self.energy()
        self._audit.kinetic = T - self._energy0[0]
        self._audit.potential = V - self._energy0[1]
        return self._audit

    def step(self, tau):
        """Advance one step under motor efforts ``tau`` (held constant over the step), each
        saturated at the joint's effort limit (see ``saturate``).

        If the friction solve of a step fails (compiled path, then the reference path), the step
        is split in two halves, recursively up to 1/16 of a step, before giving up with
        :class:`~robot_dynamics.stiction.FrictionSolveError` — never a silent wrong state.
        """
        tau = as_vector("tau", tau, self.model.nv, where="Simulator.step")
        lim = self.effort_limit
        np.abs(tau, out=self.tau_applied)
        np.greater_equal(self.tau_applied, lim, out=self.saturated)
        np.clip(tau, -lim, lim, out=self.tau_applied)
        if self.saturated.any():
            self.saturated_steps += 1
        tau = self.tau_applied
        status = None
        if self._packed is not None:
            try:  # the compiled step checks tau itself (length, finite)
                status = self._step_compiled(tau, self.dt)
            except TypeError:  # not a float64 vector: converted (or reported) below
                pass
        if status != 0:
            self._advance(tau, self.dt, 0)
        self.t += self.dt
        self.steps += 1

    def _advance(self, tau, h, depth):
        if self._packed is not None:
            if self._step_compiled(tau, h) == 0:
                return
            failure = FrictionSolveError(self.data.fd_report)
        elif not self._reference_only:
            try:
                self._integrate(tau, h, reference=False)
                return
            except FrictionSolveError as exc:
                failure = exc
        try:
            self._integrate(tau, h, reference=True)
            return
        except FrictionSolveError as exc:
            failure = exc
        if depth >= 4:
            raise failure
        self._advance(tau, 0.5 * h, depth + 1)
        self._advance(tau, 0.5 * h, depth + 1)

    def _step_compiled(self, tau, h) -> int:
        """The step below as one compiled call. Returns 0 when done; otherwise the state is
        untouched: 1 a non-finite or wrongly sized input, 2 the friction solve failed."""
        data = self.data
        packed = self._packed
        status = sim_step_entry(self.model._mb, packed[2], self.damping, self.q, self.v, tau, h,
                                self.v_tol, self.tol, self.max_iter, data._work)
        data.fd_report = data.compiled_report
        self._report = None
        if status != 0:
            return status
        vecs, sums = data._vecs, data._sums
        self.q = vecs[Q_NEW].copy()
        self.v = vecs[V_NEW].copy()
        self.tau_friction = data.tau_friction.copy()
        self._audit.motor_work += sums[1]
        self._audit.friction_dissipation += sums[2]
        self._audit.damping_dissipation += sums[3]
        return 0

    def _integrate(self, tau, h, reference):
        model, data = self.model, self.data
        v = self.v
        q_half = self.q + 0.5 * h * v
        M = mass_matrix(model, data, q_half)
        M_eff = M + h * np.diag(self.damping)  # implicit damping: −d∘(q̇ + h q̈)
        D = None
        if self.friction is not None and self.friction.active.any():
            D = wrench_directors(model, data)  # from the composite inertias of mass_matrix
        # velocity-product terms at the mid-step velocity (implicit midpoint, one correction):
        # a first solve with q̇ predicts q̇⁺, the second evaluates b and fn(q, q̇, 0) at the mean
        v_eval = v
        for _ in range(2):
            bias = bias_forces(model, data, q_half, v_eval) + self.damping * v
            a, tauf = self._solve(tau, q_half, v, M_eff, bias, data.f.copy(), D, h, reference)
            v_eval = v + 0.5 * h * a
        v_new = v + h * a
        v_new[np.abs(v_new) < self.v_tol * 1e-3] = 0.0  # exact zeros from the stick solve
        v_mid = 0.5 * (v + v_new)
        self._audit.motor_work += h * float(tau @ v_mid)
        self._audit.friction_dissipation -= h * float(tauf @ v_mid)
        self._audit.damping_dissipation += h * float((self.damping * v_new) @ v_mid)
        self.q = q_half + 0.5 * h * v_new
        self.v = v_new
        self.tau_friction = tauf

    def _solve(self, tau, q, v, M_eff, bias, W0, D, h, reference):
        if D is None:
            return np.linalg.solve(M_eff, tau - bias), np.zeros(self.model.nv)
        a, tauf, report = solve_with_friction(self.model, self.friction, q, v, tau, M_eff, bias,
                                              W0, D, h=h, v_tol=self.v_tol, tol=self.tol,
                                              max_iter=self.max_iter, reference=reference)
        self._report = report
        if not report.converged:
            raise FrictionSolveError(report)
        return a, tauf

    def run(self, duration, controller=None):
        """Simulate ``duration`` seconds; ``controller(t, q, q̇) → τ`` (default zero effort).

        Returns a dict of arrays: t, q, v, tau (the effort applied, after saturation),
        tau_friction (one row per step, after it).
        """
        n = int(round(duration / self.dt))
        out = {k: np.zeros((n, self.model.nv)) for k in ("q", "v", "tau", "tau_friction")}
        out["t"] = np.zeros(n)
        zero = np.zeros(self.model.nv)
        for k in range(n):
            tau = zero if controller is None else controller(self.t, self.q, self.v)
            self.step(tau)
            out["t"][k], out["q"][k], out["v"][k] = self.t, self.q, self.v
            out["tau"][k], out["tau_friction"][k] = self.tau_applied, self.tau_friction
        return out
