"""Fixed-step simulation of the arm with reaction-dependent friction, stiction, effort saturation
and hard joint stops (no ROS).

One step of length h (a velocity-level, "time-stepping" scheme suited to friction and stops):

0. effort saturation: each motor effort is clipped to the joint's URDF effort limit;
1. drift half a step: ``q½ = q + (h/2) q̇`` — unless that would carry a joint past a stop
   (URDF ``lower``/``upper``; continuous joints have none): then the stop first takes the
   approach velocity by an inelastic impulse P on the joints concerned, ``q̇' = q̇ + M(q)⁻¹ P``,
   chosen so that the half drift ends exactly on the stop (``q̇'_i = 2(lower − q_i)/h``); the
   kinetic energy this removes, ``T(q̇) − T(q̇')``, is dissipated by the stop;
2. at (q½, q̇') solve for the end-of-step velocity ``q̇⁺ = q̇' + h q̈`` with
   ``M q̈ + b = τ + τf + τl − d∘q̇⁺`` where friction is solved at the velocity level
   (:mod:`robot_dynamics.algorithm.friction_solve` with h > 0): a joint whose velocity would cross zero stops
   exactly and stays stuck while friction can hold it — so nothing creeps at rest; URDF viscous
   damping ``d`` is implicit too (−d∘q̇⁺; ``forward_dynamics(…, damping=True)`` takes the
   same term explicitly, −d∘q̇ at its given q̇: the two differ by h d∘q̈, issue 33). The stops are unilateral constraints of the same solve:
   ``q̇⁺_i ≥ 2(lower − q½_i)/h`` (≤ 0) and ``q̇⁺_i ≤ 2(upper − q½_i)/h`` (≥ 0), so
   the second half drift cannot cross a stop and a joint on its stop has no velocity into it
   (inelastic); the stop's reaction τl pushes only (≥ 0 on a lower stop), enters the joint's
   axial effort like any other effort — hence the reaction wrenches and friction — and friction
   takes its share of holding a joint on a stop first;
3. drift the other half: ``q⁺ = q½ + (h/2) q̇⁺`` (clipped to the stops: roundoff only).

M is the mass matrix with the actuators' rotors, M + diag(``model.armature``), everywhere in the
step (the impulse of step 0, the solve of step 2) and in the audit's kinetic energy. The compiled
step solves step 2 of models with many joints (kernels/articulated_step.py ARTICULATED_MIN; with
a law that reads its reactions, ARTICULATED_LOADED_MIN; no mimic joints) by articulated-body
recursions that never form M nor the wrench directors — O(n) per iteration, the same motion to
the solve's tolerance — and by the dense solve elsewhere (issue 35).

The position update is the Störmer–Verlet splitting (second order, good energy behaviour); the
impulse of step 0 keeps it exact (``q⁺ − q = h (q̇' + q̇⁺)/2``) with positions never past a stop.
Velocity products (b and fn(q, q̇, 0)) are evaluated at the mid-step velocity ``q̇' + (h/2) q̈``.
Normally one solve: q̈ extrapolated from the last two steps, ``2 q̈_k − q̈_{k−1}``, places it (an
O(h³) error in that velocity; a predictor solve's was O(h²)), and the answer stands when its
stick/slip/stop active set is the last step's (the second step after a reset takes the last
q̈ alone). Otherwise — a joint sticks, breaks away or meets a stop, and on the first step after
:meth:`Simulator.reset` or a stop's impulse, where a first solve with ``q̇'`` predicts q̈ (ended
on its step test without a confirming residual) — it is re-solved at ``q̇' + (h/2) q̈`` of the
previous solve until the active set repeats; if it does not settle in four (a step far too long
for the motion, e.g. 1e7 N·m on a wrist), at ``q̇'`` (explicit), so the verdict always holds
for the loads it used (the report says so). A joint that ends on a stop lands on it exactly.

The energy audit accumulates motor work ``h τ·q̇_mid``, friction dissipation ``−h τf·q̇_mid``,
damping dissipation ``h d q̇_mid·q̇⁺`` and stop dissipation ``T(q̇) − T(q̇') − h τl·q̇_mid`` with
``q̇_mid = (q̇' + q̇⁺)/2``, the power pairing consistent with the step, and compares them with
ΔT + ΔV (:class:`~robot_dynamics.algorithm.energy.EnergyAudit`).

External efforts (``fext``, (nv, 6) — mimic models: (``model.full.nv``, 6) —, Pinocchio's
convention: row i the wrench [force; torque] on body i, body frame, about its origin; see
:mod:`robot_dynamics.algorithm.external`) are held constant over a step: they enter b and
fn(q, q̇, 0) at every pass of step 2 (so the friction laws see the loads they cause), at q½. Their
work over the step is booked like the motor work: ``h τ_ext·q̇_mid`` with the generalized
effort ``τ_ext = Σ_i J_i(q½)ᵀ fext_i`` — the body-frame power ``fext_i·v_i`` at (q½, q̇_mid) —
(compiled path: ``τ_ext·(q⁺ − q)``, the same number up to roundoff, since ``q⁺ − q = h q̇_mid``).
``Simulator(external=…)`` or ``step(τ, fext=callable)``: a callable ``(t, q, q̇) → fext``,
evaluated once per step at the step's start (:class:`robot_dynamics.simulation.contact.PlaneContact`
is one).

A step either advances to a finite state or raises :class:`SimulationError` naming the step,
time, state and input, and leaves the last good state in place.
"""
from __future__ import annotations

import math
import numbers
import os

import numpy as np

from robot_dynamics.friction.coupled import coupled_friction
from robot_dynamics.algorithm.crba import bias_forces, mass_matrix
from robot_dynamics.algorithm.directors import wrench_directors
from robot_dynamics.algorithm.energy import (EnergyAudit, kinetic_energy, potential_energy,
    split_friction_dissipation)
from robot_dynamics.errors import (F64, InputError, ModelError, as_vector, as_wrenches,
                                   check_friction)
from robot_dynamics.kernels.fd import (ACC, ACTED, PASSES, Q_HALF, Q_NEW, SP_DAMPING, SP_FRICTION,
    SP_GROSS, SP_GUESS, SP_H, SP_HISTORY, SP_LIMIT, SP_LIMIT_STEPS, SP_MOTOR, SP_SATURATED,
    V_EVAL, V_NEW, sim_params, sim_step_entry, sim_step_fext_entry, sim_step_mimic_entry,
    sim_step_raw,
    sim_step_mimic_fext_entry)
from robot_dynamics.kernels.rollout import DONE, RUN_STEP, sim_run_entry
from robot_dynamics.kernels.friction_solve import TAU_LIMIT
from robot_dynamics.algorithm.rnea import rnea
from robot_dynamics.control.controllers import _Controller
from robot_dynamics.algorithm.friction_solve import (_EXPLICIT, LOWER, STUCK, UPPER,
                                                     FrictionSolveError, report_from_work,
                                                     solve_with_friction)


class SimulationError(RuntimeError):
    """A simulation step could not advance to a finite state (overflow, or a friction solve
    that failed even on sub-steps). The simulator keeps the last good state. Attributes: step
    (number of the failed step, 1-based), t (time at its start), q, v, tau (the input), report
    (the friction solve's, when it failed)."""

    def __init__(self, message, *, step, t, q, v, tau, report=None):
        super().__init__(message)
        self.step, self.t, self.q, self.v, self.tau, self.report = step, t, q, v, tau, report


def _vec(x):
    return np.array2string(np.asarray(x), precision=6, max_line_width=10**6, separator=", ")


def check_kinetic(model, data, q, v, what) -> float:
    """½ q̇ᵀ M q̇ at (q, q̇) (``data`` left at q's placements), or InputError ``"<what>: the
    kinetic energy leaves the float64 range …"`` when it is not finite: no step could be taken
    from that state."""
    with np.errstate(over="ignore", invalid="ignore"):
        kinetic = kinetic_energy(mass_matrix(model, data, q), v)
    if not math.isfinite(kinetic):
        i = int(np.argmax(np.abs(v)))
        raise InputError(f"{what}: the kinetic energy leaves the float64 range (joint "
                         f"{model.joint_names[i]!r} at {v[i]:.6g}): scale the velocities down")
    return kinetic


def _real(name, x, what, ok, where="Simulator"):
    """``x`` a finite real number (not a bool) for which ``ok`` holds, else InputError naming
    ``name`` and ``what`` it must be."""
    if (isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real)
            or not math.isfinite(x) or not ok(x)):
        raise InputError(f"{where}: {name} must be {what}, got {x!r}")


class Simulator:
    """Fixed-step forward simulation. See the module docstring for the scheme."""

    def __init__(self, model, friction=None, dt=1e-3, *, damping=True, velocity_tolerance=1e-9,
                 tol=1e-10, max_iter=50, compiled=True, saturate=True, limits=True,
                 external=None):
        """``compiled=False`` runs every step through the Python statement of the scheme
        (:meth:`_integrate` with the reference friction solver): the specification the compiled
        step is tested against, and much slower.

        ``saturate``: apply at most the URDF effort limit of each joint (``model.effort_limits``;
        inf, absent or non-positive = no limit), as a drive does; ``tau_applied`` is the effort
        actually applied, ``saturated`` flags the joints at their limit in the last step and
        ``saturated_steps`` counts the steps with any joint saturated.

        ``limits``: the URDF position limits are hard stops (see the module docstring);
        ``tau_limit`` is the stops' reaction effort of the last step (impulses as P/h),
        ``at_limit`` flags the joints held on a stop, ``limit_steps`` counts the steps in which
        a stop acted. ``limits=False`` simulates without them.

        ``external``: external efforts on the bodies applied at every step — None, a constant
        ``fext`` array ((nv, 6); mimic models (``model.full.nv``, 6)) or a callable
        ``external(t, q, q̇) → fext`` evaluated once per step at the step's start (e.g. a
        :class:`~robot_dynamics.simulation.contact.PlaneContact`); a ``fext`` given to
        :meth:`step` adds to it. Settable later (``sim.external = …``)."""
        if model.mass_matrix_problem is not None:  # simulation inverts M: refuse here, once
            raise ModelError(model.mass_matrix_problem)
        self._coupled = model.coupling is not None  # mimic joints (robot_dynamics/mimic.py)
        if self._coupled:
            friction = coupled_friction(friction, model)
        _real("dt", dt, "a positive number of seconds", lambda x: x > 0)
        _real("velocity_tolerance", velocity_tolerance, "a number ≥ 0 [rad/s or m/s]",
              lambda x: x >= 0)
        _real("tol", tol, "a positive number", lambda x: x > 0)
        if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, numbers.Integral) \
                or max_iter < 1:
            raise InputError(f"Simulator: max_iter must be a whole number ≥ 1, got {max_iter!r}")
        check_friction(model, friction, "Simulator")
        self.model, self._friction, self.dt = model, friction, float(dt)
        # composite laws book their friction dissipation by part at every step (_split_losses)
        self._split = bool(getattr(friction, "has_parts", False))
        n = model.nv
        effort = np.asarray(model.effort_limits, dtype=float)
        self.effort_limit = (np.where(effort > 0, effort, np.inf) if saturate
                             else np.full(n, np.inf))
        self.lower = (np.array(model.lower_limits, dtype=float) if limits
                      else np.full(n, -np.inf))
        self.upper = np.array(model.upper_limits, dtype=float) if limits else np.full(n, np.inf)
        self._has_stops = bool(np.isfinite(self.lower).any() or np.isfinite(self.upper).any())
        self._from_work = False  # see _hold
        self._taua = np.zeros(n)  # tau_applied (None: the last step's, in sp's published slots)
        self.damping = np.array(model.damping if damping else np.zeros(n), dtype=float)
        self.data = model.create_data()
        self.v_tol, self.tol, self.max_iter = float(velocity_tolerance), float(tol), int(max_iter)
        # the compiled step's parameters, energy-audit sums and counters (kernels/fd.py)
        self._sp = sim_params(self.damping, self.lower, self.upper, self.effort_limit,
                              self.dt, self.v_tol, self.tol, self.max_iter)
        self._tail = self._sp[4 * n:]
        # the last step's joint-state codes (4·state + sign + 1, kernels/fd.py SP_GUESS): a
        # joint on a stop has a code ≥ 4·LOWER (at_limit, computed from them when read)
        self._codes = self._tail[SP_GUESS + n:SP_GUESS + 2 * n]
        # the applied and friction efforts of the last compiled step that succeeded (read when
        # asked: tau_applied, tau_friction)
        self._published_tau = self._tail[SP_GUESS + 3 * n:SP_GUESS + 4 * n]
        self._published_tauf = self._tail[SP_GUESS + 4 * n:SP_GUESS + 5 * n]
        self._on_stop = np.full(n, 4.0 * LOWER)
        self._tauf = np.zeros(n)  # tau_friction (None: as _taua)
        self.tau_limit = np.zeros(n)
        self.at_limit = np.zeros(n, dtype=bool)
        self._wrenches = None
        self._rnea_data = None
        # the reference solve needs a friction model even without friction, when stops exist
        self._no_friction_model = None  # (that model, built once)
        self._solve_friction_model = self._solve_model(friction)
        # built-in laws (or none) step in one compiled call (kernels/fd.py); others in Python.
        # Mimic joints: in their coordinates (kernels/fd.py ``_coupled_mass``) where no follower
        # has friction and M keeps the coordinates' tree; else the Python statement, always
        self._packed = model._no_friction if friction is None else (
            friction.step_pack if self._coupled else friction._packed)
        self._reference_only = not compiled or (self._coupled and self._packed is None)
        if not compiled:
            self._packed = None
        self._fr = None if self._packed is None else self._packed[2]
        # step()'s inline path: compiled, no mimic coordinates, no loss split by law part
        self._plain = self._packed is not None and not self._coupled and not self._split
        if self._packed is not None:  # what a step leaves in the work array
            data = self.data
            self._q_new, self._v_new = data._vecs[Q_NEW], data._vecs[V_NEW]
            self._tau_new, self._tauf_new = data.tau, data.tau_friction
            self._tau_limit_new, self._state = data._vecs[TAU_LIMIT], data._views["stuck"]
            self._on_lower = np.full(n, LOWER, dtype=self._state.dtype)
            if self._coupled:  # the coordinates' packed tree and work, then the full tree's
                self._mb, self._work = model._rmb, data._rwork
                self._full = (model.full._mb, model._cp, data.full._work)
            else:
                self._mb, self._work = model._mb, data._work
        self._ctl_data = None  # Data of controllers run in Python (Simulator.run)
        self._ext_data = None  # Data for the external efforts' generalized effort (audit)
        self._last_fext = None  # the last step's external efforts (joint_wrenches)
        self._n_bodies = model.full.nv if self._coupled else n  # fext rows
        self.external = external
        self._report = None
        self.reset(np.zeros(n) if not self._has_stops else
                   np.clip(np.zeros(n), self.lower, self.upper))

    def _solve_model(self, friction):
        """The friction model of the reference solve: ``friction``, or a law-less one when there
        is none and stops exist (the solve needs one then)."""
        if friction is None and self._has_stops:
            if self._no_friction_model is None:
                from robot_dynamics.friction import friction_from_config
                self._no_friction_model = friction_from_config({"default": {"model": "none"}},
                                                               self.model)
            return self._no_friction_model
        return friction

    def _renew(self, friction) -> bool:
        """Make this simulator what ``Simulator(model, friction, …)`` with its other arguments
        would be, for the next :meth:`reset` (issue 35: :func:`.rollouts.run_chunk` keeps one
        Simulator per worker instead of building one per rollout): checks the model's mass
        matrix again (a payload may have changed it) and swaps the friction model — what
        ``__init__`` sets from ``friction``, nothing else; the compiled step reads the rest of
        its state from ``sp``, which :meth:`reset` zeroes. Only between built-in laws on the
        compiled inline path (no mimic coordinates, no composite laws, ``compiled=True``, no
        ``external``): False, nothing changed, otherwise (build a new Simulator then)."""
        packed = (self.model._no_friction if friction is None
                  else getattr(friction, "_packed", None))
        if (not self._plain or self._external is not None or packed is None
                or getattr(friction, "has_parts", False)):
            return False
        if self.model.mass_matrix_problem is not None:
            raise ModelError(self.model.mass_matrix_problem)
        if friction is not self._friction:
            check_friction(self.model, friction, "Simulator")
            self._friction = friction
            self._solve_friction_model = self._solve_model(friction)
            self._packed, self._fr = packed, packed[2]
        self._hold()
        self._last_fext = None
        return True

    @property
    def friction(self):
        """The friction model (fixed at construction: the compiled step holds its packed
        parameters)."""
        return self._friction

    def _hold(self):
        """After step()'s inline path (``_from_work``: its report, joint wrenches, applied and
        friction efforts are in the work array and sp's published slots, read from there when
        asked), state them in the fields every other path writes — what that path would have
        written, five stores it saves at every step (issue 35). Called first by each writer
        of those fields."""
        if self._from_work:
            self._from_work = False
            self._report = None
            self._wrenches = _IN_WORK
            self._last_fext = None
            self._tauf = self._taua = None  # copied from sp's published slots when read

    @property
    def report(self):
        """The friction solve's report of the last step
        (:class:`~robot_dynamics.algorithm.friction_solve.FrictionSolveReport`), or None before any step."""
        return (self.data.fd_report if self._from_work or self._report is None
                else self._report)

    @property
    def joint_wrenches(self):
        """The joint wrenches (nv, 6) of the last step's answer, ``W0 + Σ q̈_α pl_α`` at
        (q½, the velocity the products were evaluated at) — the loads its friction and
        stiction verdicts used (eq. 2.3.7); None when the step had no friction solve."""
        if self._from_work or self._wrenches is _IN_WORK:
            # the solve computed them (a law reads its loads; mimic: the leaders' only)
            if self.data._views["info"][6] and not self._coupled:
                return self.data._views["Wt"].copy()
            # laws that do not read the loads (or none): the kernel skipped the directors; the
            # wrenches of the answer are RNEA's at (q½, velocity of the products, q̈)
            if self._rnea_data is None:
                self._rnea_data = self.model.create_data()
            vecs = self.data._vecs
            if self._from_work or self._last_fext is None:
                rnea(self.model, self._rnea_data, vecs[Q_HALF], vecs[V_EVAL], vecs[ACC])
            else:  # the step's external efforts are carried by the joints too
                rnea(self.model, self._rnea_data, vecs[Q_HALF], vecs[V_EVAL], vecs[ACC],
                     self._last_fext)
            return self._rnea_data.f.copy()
        return None if self._wrenches is None else self._wrenches.copy()

    def reset(self, q, v=None):
        """Start again at (q, q̇) with the clock at 0, a fresh energy audit and no step history
        (the first step predicts its q̈ instead of extrapolating the last steps': see the
        module docstring; ``report`` and ``joint_wrenches`` None until a step, as on a new
        Simulator). With stops, q must lie within them."""
        q = as_vector("q", q, self.model.nq, where="Simulator.reset")
        v = (np.zeros(self.model.nv) if v is None else
             as_vector("v", v, self.model.nv, where="Simulator.reset").copy())
        out = ()  # within the stops (most resets): nothing to find, the slack aside
        if not ((q >= self.lower).all() and (q <= self.upper).all()):
            slack = 1e-9 * (1.0 + np.abs(q))
            out = np.flatnonzero((q < self.lower - slack) | (q > self.upper + slack))
        if len(out):
            i = out[0]
            raise InputError(f"q in Simulator.reset: joint {self.model.joint_names[i]!r} at "
                             f"{q[i]:.6g} is outside its limits [{self.lower[i]:.6g}, "
                             f"{self.upper[i]:.6g}] (Simulator(limits=False) simulates "
                             "without stops)")
        q = np.clip(q, self.lower, self.upper)
        kinetic = check_kinetic(self.model, self.data, q, v, "v in Simulator.reset")
        self._hold()
        self.q, self.v = q, v
        self._q_own, self._v_own = q, v  # float64 C vectors (step: sim_step_raw)
        self.t = 0.0
        self.steps = 0
        self._tail[SP_MOTOR:] = 0.0  # energy-audit sums and counters
        self._external_work = 0.0  # the external efforts' work (audit)
        self.tau_applied = np.zeros(self.model.nv)
        self._audit = EnergyAudit()
        self._energy0 = (kinetic, potential_energy(self.model, self.data))  # (self.energy())
        self.tau_friction = np.zeros(self.model.nv)
        self.tau_limit = np.zeros(self.model.nv)
        self.at_limit = np.zeros(self.model.nv, dtype=bool)
        self._stops_shown = False
        self._wrenches = None
        self._report = self.data._report = None  # as a new Simulator: no report before a step

    def energy(self):
        """(kinetic, potential) energy of the current state [J]."""
        M = mass_matrix(self.model, self.data, self.q)
        return kinetic_energy(M, self.v), potential_energy(self.model, self.data)

    @property
    def saturated_steps(self) -> int:
        """Steps since the last reset in which some joint's effort was at its limit."""
        return int(self._tail[SP_SATURATED])

    @property
    def limit_steps(self) -> int:
        """Steps since the last reset in which a stop acted."""
        return int(self._tail[SP_LIMIT_STEPS])

    @property
    def audit(self) -> EnergyAudit:
        T, V = self.energy()
        audit, tail = self._audit, self._tail
        audit.kinetic = T - self._energy0[0]
        audit.potential = V - self._energy0[1]
        audit.motor_work = float(tail[SP_MOTOR])
        audit.motor_gross = float(tail[SP_GROSS])
        audit.friction_dissipation = float(tail[SP_FRICTION])
        audit.damping_dissipation = float(tail[SP_DAMPING])
        audit.limit_dissipation = float(tail[SP_LIMIT])
        audit.external_work = self._external_work
        return audit

    @property
    def external(self):
        """The external efforts applied at every step: None, a constant (checked) ``fext``
        array, or a callable ``(t, q, q̇) → fext``."""
        return self._external

    @external.setter
    def external(self, value):
        if value is not None and not callable(value):
            value = self._check_fext(value, "Simulator.external")
        self._external = value
        self._inline = self._plain and value is None  # step()'s inline path

    def _check_fext(self, fext, where):
        names = (self.model.full if self._coupled else self.model).link_names
        return as_wrenches("fext", fext, self._n_bodies, where=where, names=names)

    def _step_fext(self, fext):
        """The external efforts of the coming step (None: none), checked: the step's ``fext``
        (array or callable of (t, q, q̇)) plus ``external``."""
        total = None
        for source in (self._external, fext):
            if source is None:
                continue
            if callable(source):
                value = source(self.t, self.q.copy(), self.v.copy())
                value = self._check_fext(value, "Simulator.step (the external callable's "
                                         "return)")
            elif source is self._external:
                value = source
            else:
                value = self._check_fext(source, "Simulator.step")
            total = value if total is None else total + value
        return total

    def _tau_ext(self, q_half, F):
        """The generalized effort of the external wrenches at q½: Σ J_i(q½)ᵀ F_i (coordinates
        of a mimic model), as g(q½) − rnea(q½, 0, 0, F), on a Data of its own."""
        if self._ext_data is None:
            self._ext_data = self.model.create_data()
        d, zero = self._ext_data, np.zeros(self.model.nv)
        return rnea(self.model, d, q_half, zero, zero) - rnea(self.model, d, q_half, zero, zero, F)

    def step(self, tau, fext=None):
        """Advance one step under motor efforts ``tau`` (held constant over the step), each
        saturated at the joint's effort limit (see ``saturate``).

        ``fext``: external efforts on the bodies over this step, held constant over it (see the
        module docstring): an (nv, 6) array (mimic models: (``model.full.nv``, 6)), row i the
        wrench [force; torque] on body i in its frame about its origin (Pinocchio's ``fext``;
        :func:`~robot_dynamics.point_force` builds one), or a callable ``(t, q, q̇) → fext``
        evaluated once, at the step's start; added to ``external``. A wrong shape or a NaN/Inf
        is refused with a one-line InputError naming ``fext``. None (and no ``external``): the
        step without external efforts, exactly as before they existed.

        If the friction solve of a step fails (compiled path, then the reference path), the step
        is split in two halves, recursively up to 1/16 of a step. If that fails too, or the new
        state is not finite (an overflow), it raises :class:`SimulationError` and keeps the
        state it had — never a silent wrong state.
        """
        q, v = self.q, self.v  # the step replaces, never edits, these
        if fext is None and self._inline:  # the common path: one compiled call, two copies —
            # stated inline (this is _compiled_step_done and _take_compiled without their calls
            # and tests: each Python operation here costs a visible share of a 5 µs step,
            # issue 35); compiled, no mimic coordinates, no loss split, no external efforts
            try:  # the compiled step saturates and checks tau itself (length, finite); a list
                # or an int array goes straight to the conversion below (numba's refusal of
                # an argument type is slow). q and q̇ this step made (or reset checked) and a
                # float64 vector τ skip the dispatcher's type resolution (sim_step_raw; the
                # dimensions too: an array's shape can be set in place, and numba's unboxing
                # of a 2-D array into a vector would write past its struct)
                if (q is self._q_own and v is self._v_own and tau.dtype is F64
                        and tau.ndim == q.ndim == v.ndim == 1):
                    status = sim_step_raw(self._mb, self._fr, self._sp, q, v, tau, self._work)
                else:
                    status = (1 if tau.dtype is not F64 else
                              sim_step_entry(self._mb, self._fr, self._sp, q, v, tau,
                                             self._work))
            except (AttributeError, TypeError, np.linalg.LinAlgError):  # not a float64
                status = 1  # vector: converted below; non-finite matrices: named below
            if not status & 3:
                self.data._report = report_from_work
                self._from_work = True  # report, wrenches, τ and τf: in work and sp (_hold)
                # new arrays: the user may keep them across steps
                self.q = self._q_own = self._q_new.copy()
                self.v = self._v_own = self._v_new.copy()
                if status & ACTED:  # (_show_stops; at_limit from the codes when read)
                    self.tau_limit = self._tau_limit_new.copy()
                    self._at_limit = None
                    self._stops_shown = True
                elif self._stops_shown:  # no stop acted in this step
                    self._hide_stops()
                self.t += self.dt
                self.steps += 1
                return
            self._hold()
            self._last_fext = None
            if not self._compiled_step_done(status, q, v, None):  # (an overflow raises)
                self._step_slow(tau)
            return
        self._hold()
        if fext is not None or self._external is not None:
            F = self._step_fext(fext)
            self._last_fext = F  # (joint_wrenches)
            return self._step_with(tau, F)
        self._last_fext = None
        if self._split:  # composite laws: the step's friction dissipation by part, below
            d0 = float(self._tail[SP_FRICTION])
        if self._packed is not None:  # mimic coordinates or a loss split: one compiled call
            try:  # the compiled step saturates and checks tau itself (length, finite); a list
                # or an int array goes straight to the conversion below (numba's refusal of
                # an argument type is slow)
                status = (1 if tau.dtype is not F64 else
                          sim_step_entry(self._mb, self._fr, self._sp, q, v, tau, self._work)
                          if not self._coupled else
                          sim_step_mimic_entry(self._mb, self._fr, self._sp, q, v, tau,
                                               self._work, *self._full))
            except (AttributeError, TypeError):  # not a float64 C vector: converted below
                status = 1
            except np.linalg.LinAlgError:  # non-finite matrices (an overflow): named below
                status = 1
            if self._compiled_step_done(status, q, v, d0 if self._split else None):
                return
        self._step_slow(tau)
        if self._split:
            self._split_losses(q, v, d0, self._acted)

    def _compiled_step_done(self, status, q, v, d0) -> bool:
        """After a compiled step from (q, v): take its state and return True, or (status 1: an
        input the kernel refused) return False for the Python statement; an overflow (3) raises
        SimulationError. ``d0``: the friction dissipation before the step (composite laws)."""
        if not status & 3:
            self._take_compiled(status)
            self.tau_applied = self._tau_new.copy()
            if not status & ACTED and self._stops_shown:  # no stop acted in this step
                self._hide_stops()
            self.t += self.dt
            self.steps += 1
            if self._split:
                self._split_losses(q, v, d0, bool(status & ACTED))
            return True
        if status == 3:  # (tau_applied stays the last good step's, as _step_slow's failure)
            self._fail(_Overflow(), self._tau_new.copy())
        return False

    def _step_with(self, tau, F):
        """:meth:`step` under external efforts ``F`` (checked): the compiled step with its
        fext slot (mimic models too), else the Python statement; their work booked."""
        q, v = self.q, self.v
        if self._split:
            d0 = float(self._tail[SP_FRICTION])
        if self._packed is not None:
            try:
                status = (1 if tau.dtype is not F64 else
                          sim_step_fext_entry(self._mb, self._fr, self._sp, q, v, tau, F,
                                              self._work)
                          if not self._coupled else
                          sim_step_mimic_fext_entry(self._mb, self._fr, self._sp, q, v, tau, F,
                                                    self._work, *self._full))
            except (AttributeError, TypeError, np.linalg.LinAlgError):
                status = 1
            if not status & 3:
                self._book_compiled(q, F)
            if self._compiled_step_done(status, q, v, d0 if self._split else None):
                return
        self._step_slow(tau, F)
        if self._split:
            self._split_losses(q, v, d0, self._acted)

    def _book_compiled(self, q0, F):
        """Book the work of ``F`` over the compiled (sub-)step just taken from ``q0``:
        τ_ext(q½)·(q⁺ − q) (= h τ_ext·q̇_mid)."""
        q_half = self.data._vecs[Q_HALF].copy()
        self._external_work += float(self._tau_ext(q_half, F) @ (self._q_new - q0))

    def _split_losses(self, q0, v0, d0, acted):
        """Book the step's friction dissipation by law part (composite laws: bearing, gear
        mesh, motor), rescaled to the audit's own total when a stop's impulse acted."""
        W = self.joint_wrenches
        if W is not None:
            split_friction_dissipation(self.friction, self.model, W, 0.5 * (q0 + self.q),
                                       self.v, self.tau_friction, 0.5 * (v0 + self.v), self.dt,
                                       self._audit.friction_parts,
                                       float(self._tail[SP_FRICTION]) - d0 if acted else None)

    def _show_stops(self):
        self.tau_limit = self._tau_limit_new.copy()
        self.at_limit = self._state >= self._on_lower  # (an array compare: cheaper than testing LOWER)
        self._stops_shown = True

    def _hide_stops(self):
        self.tau_limit = np.zeros(self.model.nv)
        self.at_limit = np.zeros(self.model.nv, dtype=bool)
        self._stops_shown = False

    def _step_slow(self, tau, F=None):
        """The step when the compiled one could not be taken: a converted input, the reference
        path (Python laws, ``compiled=False``), or a failed friction solve (sub-steps).
        ``F``: the step's external efforts (checked), or None."""
        self._acted = False
        tau = np.ascontiguousarray(as_vector("tau", tau, self.model.nv, where="Simulator.step"))
        # the state as the user may have assigned it (a list, a strided or int view): the
        # compiled calls take float64 C vectors; a wrong shape or a NaN is named
        self.q = as_vector("q", self.q, self.model.nq, where="Simulator.step")
        self.v = as_vector("v", self.v, self.model.nv, where="Simulator.step")
        lim = self.effort_limit
        applied = np.clip(tau, -lim, lim)
        n_saturated = int(np.count_nonzero(np.abs(tau) >= lim))
        saved = (self.q, self.v, self.tau_friction, self.tau_limit, self.at_limit,
                 self._tail.copy(), self._external_work)
        try:
            self._advance(applied, self.dt, 0, F)
        except (FrictionSolveError, np.linalg.LinAlgError, ArithmeticError) as exc:
            (self.q, self.v, self.tau_friction, self.tau_limit, self.at_limit) = saved[:5]
            self._tail[:] = saved[5]
            self._external_work = saved[6]
            self._fail(exc, applied)
        self.tau_applied = applied
        if n_saturated:
            self._tail[SP_SATURATED] += 1
        if self._acted:
            self._tail[SP_LIMIT_STEPS] += 1
            self._stops_shown = True
        elif self._stops_shown:  # no stop acted in this step
            self._hide_stops()
        self.t += self.dt
        self.steps += 1

    @property
    def tau_applied(self):
        """(nv,) the motor efforts applied in the last step (after saturation)."""
        if self._from_work:  # step()'s inline path: the kernel's published copy (issue 35)
            return self._published_tau.copy()
        x = self._taua
        if x is None:  # (after _hold) the same, once
            x = self._taua = self._published_tau.copy()
        return x

    @tau_applied.setter
    def tau_applied(self, value):
        self._hold()
        self._taua = value

    @property
    def tau_friction(self):
        """(nv,) the friction efforts τf of the last step (stuck joints' holding effort
        included)."""
        if self._from_work:  # as tau_applied
            return self._published_tauf.copy()
        x = self._tauf
        if x is None:
            x = self._tauf = self._published_tauf.copy()
        return x

    @tau_friction.setter
    def tau_friction(self, value):
        self._hold()
        self._tauf = value

    @property
    def at_limit(self):
        """Per joint (nv,) bool: held on a stop at the end of the last step."""
        if self._at_limit is None:  # step()'s inline path: from the last step's codes (sp's
            # SP_GUESS slots: a step that fails leaves them), once — an array compare costs a
            # visible share of a step on a stop, where nobody may read it (issue 35)
            self._at_limit = self._codes >= self._on_stop
        return self._at_limit

    @at_limit.setter
    def at_limit(self, value):
        self._at_limit = value

    @property
    def saturated(self):
        """Per joint (nv,) bool: the last step's motor effort was at (or beyond) its limit."""
        return np.abs(self.tau_applied) >= self.effort_limit

    def _fail(self, exc, applied):
        why = ("the friction solve failed, even on 1/16 steps: " + str(exc)
               if isinstance(exc, FrictionSolveError) else
               "the new state is not finite (overflow)")
        raise SimulationError(
            f"Simulator.step {self.steps + 1} at t={self.t:.6g} s: {why}; state kept at "
            f"q={_vec(self.q)}, v={_vec(self.v)}; tau applied={_vec(applied)}",
            step=self.steps + 1, t=self.t, q=self.q.copy(), v=self.v.copy(),
            tau=np.array(applied), report=getattr(exc, "report", None)) from exc

    def _advance(self, tau, h, depth, F=None):
        if self._packed is not None:
            if self._step_compiled(tau, h, F) == 0:
                return
            failure = FrictionSolveError(self.data.fd_report)
        elif not self._reference_only:
            try:
                self._integrate(tau, h, reference=False, F=F)
                return
            except FrictionSolveError as exc:
                failure = exc
        try:
            self._integrate(tau, h, reference=True, F=F)
            return
        except FrictionSolveError as exc:
            failure = exc
        if depth >= 4:
            raise failure
        self._advance(tau, 0.5 * h, depth + 1, F)
        self._advance(tau, 0.5 * h, depth + 1, F)

    def _step_compiled(self, tau, h, F=None) -> int:
        """A (sub-)step of length h as one compiled call, for :meth:`_advance` (the step's
        counters are kept by the caller). Returns 0 when done; otherwise the state is
        untouched: 1 a non-finite or wrongly sized input, 2 the friction solve failed; an
        overflow (status 3) raises."""
        tail = self._tail
        saved = tail[SP_H], tail[SP_SATURATED], tail[SP_LIMIT_STEPS]
        tail[SP_H] = h
        try:
            if F is not None:
                status = (sim_step_mimic_fext_entry(self._mb, self._fr, self._sp, self.q,
                                                    self.v, tau, F, self._work, *self._full)
                          if self._coupled else
                          sim_step_fext_entry(self._mb, self._fr, self._sp, self.q, self.v, tau,
                                              F, self._work))
            else:
                status = (sim_step_mimic_entry(self._mb, self._fr, self._sp, self.q, self.v,
                                               tau, self._work, *self._full) if self._coupled
                          else sim_step_entry(self._mb, self._fr, self._sp, self.q, self.v,
                                              tau, self._work))
        finally:
            tail[SP_H], tail[SP_SATURATED], tail[SP_LIMIT_STEPS] = saved
        self.data._report = report_from_work
        self._report = None
        self._wrenches = None
        if status == 3:
            raise _Overflow()
        if status & 3:
            return status & 3
        if F is not None:
            self._book_compiled(self.q, F)
        self._take_compiled(status)
        self._acted = self._acted or bool(status & ACTED)
        return 0

    def _take_compiled(self, status):
        """The state, friction, loads and stop reactions of a compiled (sub-)step that
        succeeded, copied out of the work array (new arrays: the user may keep them across
        steps)."""
        self.data._report = report_from_work
        self._report = None
        self._wrenches = _IN_WORK
        self.q = self._q_new.copy()
        self.v = self._v_new.copy()
        self.tau_friction = self._tauf_new.copy()
        if status & ACTED:
            self._show_stops()

    def _stop_impulse(self, q, v, h):
        """Step 0 of the scheme (kernels/fd.py ``stop_impulse`` states the same): returns
        (q̇', q½, kinetic energy lost, P)."""
        lo, hi = self.lower, self.upper
        x = q + 0.5 * h * v
        if not ((x < lo) | (x > hi)).any():
            return v, x, 0.0, np.zeros(self.model.nv)
        M = mass_matrix(self.model, self.data, q)
        Minv = np.linalg.inv(M)
        side = np.zeros(self.model.nv)
        P = np.zeros(self.model.nv)
        vp = v.copy()
        for _ in range(self.model.nv):
            x = q + 0.5 * h * vp
            new = (side == 0) & ((x < lo) | (x > hi))
            if not new.any():
                break
            side[new] = np.where(x[new] < lo[new], -1.0, 1.0)
            C = np.flatnonzero(side != 0)
            target = np.where(side[C] < 0, np.minimum(2.0 * (lo[C] - q[C]) / h, 0.0),
                              np.maximum(2.0 * (hi[C] - q[C]) / h, 0.0))
            P[:] = 0.0
            P[C] = np.linalg.solve(Minv[np.ix_(C, C)], target - v[C])
            vp = v + Minv[:, C] @ P[C]
        lost = kinetic_energy(M, v) - kinetic_energy(M, vp)
        q_half = q + 0.5 * h * vp
        q_half = np.where(side < 0, lo, np.where(side > 0, hi, q_half))
        return vp, q_half, lost, P

    def _integrate(self, tau, h, reference, F=None):
        model, data = self.model, self.data
        n, tail = model.nv, self._tail
        v, lost, P = self.v, 0.0, np.zeros(n)
        q_half = self.q + 0.5 * h * v
        crossing = bool(((q_half < self.lower) | (q_half > self.upper)).any())
        if crossing:
            v, q_half, lost, P = self._stop_impulse(self.q, self.v, h)
        with np.errstate(invalid="ignore", over="ignore"):
            u_lo = np.minimum(2.0 * (self.lower - q_half) / h, 0.0)
            u_hi = np.maximum(2.0 * (self.upper - q_half) / h, 0.0)
        M = mass_matrix(model, data, q_half)
        M_eff = M + h * np.diag(self.damping)  # implicit damping: −d∘(q̇ + h q̈)
        D = None
        if self.friction is not None and self.friction.active.any():
            D = wrench_directors(model, data)  # from the composite inertias of mass_matrix
        # velocity-product terms at the mid-step velocity q̇' + (h/2) q̈: after a step, q̈
        # extrapolated from the last steps places it, and the answer stands if its active set
        # is the last step's; otherwise (and after a reset or a stop's impulse) a first solve
        # with q̇ predicts q̈. The next passes evaluate b and fn(q, q̇, 0) at q̇' + (h/2) q̈ of
        # the previous pass until the active set repeats; if it does not, at q̇ (explicit).
        # Each pass after the first starts from the previous pass's states and accelerations
        last, states = tail[SP_GUESS:SP_GUESS + n], tail[SP_GUESS + n:SP_GUESS + 2 * n]
        before = tail[SP_GUESS + 2 * n:SP_GUESS + 3 * n]
        # the first solve iterates from the last steps' q̈, extrapolated (and it places q̇_mid)
        guess = 2.0 * last - before if tail[SP_HISTORY] >= 3.0 else last.copy()
        first = 1 if tail[SP_HISTORY] >= 1.0 and not crossing else 0
        v_eval, seen, explicit, warm = v, None, False, None
        if first:
            v_eval, seen = v + 0.5 * h * guess, states.astype(np.int64)
        for ps in range(first, PASSES + 1):
            if ps == PASSES:
                v_eval, explicit = v, True
            bias = (bias_forces(model, data, q_half, v_eval) if F is None else
                    rnea(model, data, q_half, v_eval, np.zeros(n), F)) + self.damping * v
            a, tauf, tlim, state = self._solve(tau, q_half, v, M_eff, bias, data.f.copy(), D, h,
                                               reference, u_lo, u_hi, warm, ps == 0,
                                               guess if ps == first else None)
            warm = (state, a)
            if ps == PASSES or (ps > 0 and np.array_equal(state, seen)):
                break
            seen = state
            v_eval = v + 0.5 * h * a
        if explicit and self._report is not None:
            self._report.message = _EXPLICIT
        st = state // 4
        v_new = v + h * a
        v_new[(st == STUCK) | (np.abs(v_new) < self.v_tol * 1e-3)] = 0.0  # exact zeros
        v_new = np.where(st == LOWER, u_lo, np.where(st == UPPER, u_hi, v_new))
        v_mid = 0.5 * (v + v_new)
        with np.errstate(invalid="ignore", over="ignore"):
            q_new = q_half + 0.5 * h * v_new
        q_new = np.where(st == LOWER, self.lower, np.where(st == UPPER, self.upper, q_new))
        if not (np.isfinite(q_new).all() and np.isfinite(v_new).all()):
            raise _Overflow()
        acted = bool(lost != 0.0 or P.any() or (st >= LOWER).any())
        before[:], last[:], states[:] = last, a, state  # the answer, for the next steps
        smooth = first == 1 and ps == 1 and not explicit  # the extrapolated pass stood
        tail[SP_HISTORY] = min(tail[SP_HISTORY] + 1.0, 3.0) if smooth else 1.0
        motor = h * float(tau @ v_mid)
        tail[SP_MOTOR] += motor
        tail[SP_GROSS] += abs(motor)
        tail[SP_FRICTION] -= h * float(tauf @ v_mid)
        tail[SP_DAMPING] += h * float((self.damping * v_new) @ v_mid)
        if F is not None:  # the external efforts' work, paired as the motor work
            self._external_work += h * float(self._tau_ext(q_half, F) @ v_mid)
        if acted:
            tail[SP_LIMIT] += lost - h * float(tlim @ v_mid)
            self.tau_limit = tlim + P / h
            self.at_limit = st >= LOWER
            self._acted = True
        self.q = np.clip(q_new, self.lower, self.upper)  # roundoff only: q̇⁺ respects the stops
        self.v = v_new
        self.tau_friction = tauf

    def _solve(self, tau, q, v, M_eff, bias, W0, D, h, reference, u_lo, u_hi, warm, predict,
               guess):
        n = self.model.nv
        if D is None and not self._has_stops:
            self._wrenches = None
            # no law and no stop: every joint free, along q̇ (the active set's codes)
            state = np.where(np.abs(v) <= self.v_tol, 0, np.sign(v)).astype(np.int64) + 1
            return np.linalg.solve(M_eff, tau - bias), np.zeros(n), np.zeros(n), state
        a, tauf, report = solve_with_friction(self.model, self._solve_friction_model, q, v, tau,
                                              M_eff, bias, W0, D, h=h, v_tol=self.v_tol,
                                              tol=self.tol, max_iter=self.max_iter,
                                              reference=reference, u_lower=u_lo, u_upper=u_hi,
                                              warm=warm, predict=predict, guess=guess)
        self._report = report
        if not report.converged:
            raise FrictionSolveError(report)
        self._wrenches = report.wrenches
        return a, tauf, report.tau_limit, report.state

    def run(self, duration=None, controller=None, *, steps=None, external=None):
        """Simulate ``duration`` seconds (or ``steps`` steps) under ``controller``.

        ``controller``: None (zero effort), a compiled controller (:class:`~robot_dynamics.PD`,
        :class:`~robot_dynamics.ComputedTorque`: gains and references as arrays, row k of a
        reference at step k of this run, its last row held beyond its end, a single row a
        constant) — then every step runs inside one compiled call
        (:mod:`robot_dynamics.kernels.rollout`), the same step as :meth:`step` —, or any
        callable ``controller(t, q, q̇) → τ``, called before each step.

        ``external``: external efforts over this run (an ``fext`` array or a callable
        ``(t, q, q̇) → fext``, as :meth:`step`'s ``fext``; added to the Simulator's
        ``external``). When any external effort applies, the run steps in Python — each step
        still one compiled call (:meth:`step`) — instead of the compiled rollout, which has no
        slot for them.

        Returns a dict of arrays: t, q, v, tau (the effort applied, after saturation),
        tau_friction, tau_limit (one row per step, after it). A step that cannot be taken raises
        :class:`SimulationError` naming it (step, time) with the state before it kept.
        """
        rows, t = self._run_rows(self._run_length(duration, steps), controller, external)
        return {"t": t, "q": rows[:, 0].copy(), "v": rows[:, 1].copy(),
                "tau": rows[:, 2].copy(), "tau_friction": rows[:, 3].copy(),
                "tau_limit": rows[:, 4].copy()}

    def _run_rows(self, N, controller, external=None, buffer=None):
        """:meth:`run` of ``N`` checked steps without its copies: (rows, t), rows (N, 5, nv)
        the [q, q̇, τ, τf, τl] after each step, t (N,) the clock after each (a rollout that keeps
        no trajectory reads its summary from the rows: :func:`.rollouts.run_chunk`).
        ``buffer``: a C-contiguous float64 (≥ N, 5, nv) array the rows are written into (its
        first N; one per worker: no 40 kB a joint and 1000 steps to allocate, and to fault
        in, per rollout); None: a new array."""
        n = self.model.nv
        self._at_limit = self.at_limit  # (the rollout moves the codes it is computed from on)
        compiled_ctl = controller is None or isinstance(controller, _Controller)
        t0 = self.t
        if external is not None and not callable(external):
            external = self._check_fext(external, "Simulator.run")
        pushed = external is not None or self._external is not None
        # composite laws book their loss split per step (step()): they take the loop below
        # (mimic joints: each step compiled, the loop in Python)
        compiled = (self._packed is not None and compiled_ctl and not self._split
                    and not self._coupled and not pushed)
        if compiled:
            rows = self._run_compiled(N, controller, buffer)
        else:
            rows = np.empty((N, 5, n)) if buffer is None else buffer[:N]
            for k in range(N):
                if compiled_ctl:
                    tau = self._python_torque(controller, k)
                else:
                    tau = controller(self.t, self.q, self.v)
                self.step(tau, external)
                rows[k] = (self.q, self.v, self.tau_applied, self.tau_friction, self.tau_limit)
        # the clock as step() advances it: ((t₀ + dt) + dt) + … (a sequential sum)
        t = np.cumsum(np.concatenate([[t0], np.full(N, self.dt)]))[1:]
        if compiled and N:
            self.t = float(t[-1])
        return rows, t

    def _run_length(self, duration, steps) -> int:
        """The number of steps of :meth:`run`, or InputError naming what is wrong: not a
        number, not finite, negative, or a record larger than half the machine's memory."""
        if (duration is None) == (steps is None):
            raise InputError("Simulator.run: give either duration (seconds) or steps")
        if steps is not None:
            _real("steps", steps, "a whole number of steps", lambda x: float(x).is_integer(),
                  where="Simulator.run")
            N = int(steps)
        else:
            _real("duration", duration, "a finite number of seconds", lambda x: True,
                  where="Simulator.run")
            N = int(round(duration / self.dt))
        if N < 0:
            raise InputError(f"Simulator.run: a negative number of steps ({N})")
        record = N * 5 * self.model.nv * 8  # the returned rows (t, q, v, τ, τf, τl)
        try:
            memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # not on this platform
            memory = 2 ** 40
        if record > memory // 2:
            count = N if N < 10 ** 9 else f"{N:.3g}"
            raise InputError(f"Simulator.run: {count} steps would record {record / 1e9:.3g} GB, "
                             "more than half this machine's memory: run fewer steps at a time")
        return N

    def _python_torque(self, controller, k):
        """A compiled controller's law stated in NumPy (its ``torque``), at step k of a run."""
        if controller is None:
            return np.zeros(self.model.nv)
        if self._ctl_data is None:
            self._ctl_data = self.model.create_data()
        return controller.torque(self.model, self._ctl_data, k, self.q, self.v)

    def _run_compiled(self, N, controller, buffer=None):
        n = self.model.nv
        self._hold()
        self._last_fext = None  # the rollout has no external efforts
        t0 = self.t
        steps0 = self.steps
        ctl = _ZERO_CTL if controller is None else controller.pack(self.model)
        rows = np.empty((N, 5, n)) if buffer is None else buffer[:N]
        q0 = np.array(self.q, dtype=np.float64)
        v0 = np.array(self.v, dtype=np.float64)
        k = 0
        last_compiled = True
        while k < N:
            try:
                ret = sim_run_entry(self._mb, self._fr, self._sp, ctl, q0, v0, k, self._work,
                                    rows)
            except np.linalg.LinAlgError:  # non-finite matrices: step() names the overflow
                ret = 4 * int(self.data._sums[RUN_STEP]) + 1
            k, status = divmod(int(ret), 4)
            if status == DONE:
                last_compiled = True
                break
            # step k could not be taken in the compiled loop: step() takes it (sub-steps, the
            # reference path) or raises naming it, with the state before it
            if k > 0:
                self.q, self.v = rows[k - 1, 0].copy(), rows[k - 1, 1].copy()
            self.t = t0
            for _ in range(k):
                self.t += self.dt
            self.steps = steps0 + k
            tau = self._python_torque(controller, k)
            try:
                self.step(tau)
            except InputError as exc:
                raise InputError(f"Simulator.run: step {self.steps + 1} at t={self.t:.6g} s: "
                                 f"the controller's effort: {exc}") from exc
            rows[k] = (self.q, self.v, self.tau_applied, self.tau_friction, self.tau_limit)
            k += 1
            last_compiled = False
        if N:
            last = rows[N - 1]
            self.q, self.v = last[0].copy(), last[1].copy()
            self.tau_applied, self.tau_friction = last[2].copy(), last[3].copy()
            if last_compiled:
                self.data._report = report_from_work
                self._report = None
                self._wrenches = _IN_WORK
                if last[4].any() or (self._state >= LOWER).any():
                    self._show_stops()
                elif self._stops_shown:
                    self._hide_stops()
        self.steps = steps0 + N  # (run() sets the clock: the same sequential sum)
        return rows


class _Overflow(ArithmeticError):
    """Internal: a step's new state is not finite."""


_IN_WORK = object()  # marker: the last step's joint wrenches are in the Data work array


def _zero_controller():
    from robot_dynamics.kernels.rollout import ZERO, pack_controller

    return pack_controller(ZERO, 0, np.zeros(0), np.zeros(0), np.zeros((1, 0)),
                           np.zeros((1, 0)), np.zeros((1, 0)))


_ZERO_CTL = _zero_controller()
