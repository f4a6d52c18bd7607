"""simulator: the core's friction-aware forward simulation as a ROS 2 node.

Steps :class:`robot_dynamics.simulation.simulator.Simulator` at a fixed step (default 1 kHz) under the
latest effort command (std_msgs/Float64MultiArray on ``/effort_controller/commands``, held between
commands), publishes ``/joint_states`` (position, velocity, and the applied motor effort; stamped
with simulated time) and ``/clock`` (for ``use_sim_time``). Modes (``mode``, live):

* ``realtime`` — simulated time follows the wall clock. When the node cannot keep up (the wall
  clock runs ahead of the simulation by more than ``overrun_threshold``) the tick is counted as an
  overrun. A tick integrates at most MAX_CATCH_UP seconds of steps under the command it holds;
  the steps beyond are dropped: simulated time falls behind the wall clock for good (the
  simulation runs slower than real time, as Gazebo does when its physics cannot keep up), and
  they are counted. Catching up 100 ms in one tick held one command over 100 steps that the
  controller never saw: a slow step (mimic joints in Python) made a computed-torque loop run
  away.
  Both counters are logged (throttled) and published;
* ``fast`` — as fast as possible, commands applied whenever they arrive (``publish_every``: steps
  per published state); it integrates for up to FAST_SLICE of wall time per executor turn, so
  commands and services are served between slices without an executor wake-up per step (a
  subscriber slower than the stream gets the newest states: /joint_states keeps the last 10);
* ``lockstep`` — as fast as possible but deterministic: after publishing a state it waits for the
  command computed from that state, then steps (re-publishing if none comes within
  ``lockstep_timeout``).

Safe at the edges (issue 12):

* **Never dies of a step.** Any error the core raises in a step (InputError, FrictionSolveError,
  a SimulationError, any arithmetic error) or a non-finite state is caught, logged (throttled,
  with the step's simulated time) and counted; the node keeps the last good state (``on_error:
  hold``) or goes back to the initial state (``reset``) and keeps serving. No NaN is published.
* **Stale commands.** With no fresh command for ``command_timeout`` seconds of simulated time
  (and of wall time too: in fast mode simulated time outruns a controller that is alive, only
  a silent one is stale; in lockstep mode nothing steps without a command) the simulator stops
  applying the last one (once per episode it logs e.g. "no effort command for
  0.10 s: applying zero effort") and applies ``stale_command_behavior``: ``zero`` effort, or
  ``brake`` — the drives hold the position the arm had when the command went stale, as a
  robot's category-2 stop does: τ = g(q) + diag(M(q_s)) (ω² (q_s − q) − 2ω q̇), saturated at the
  URDF effort limits, ω = ``brake_bandwidth`` (critically damped per joint; from velocity q̇₀ a
  joint stops within about q̇₀/(e ω) of where braking began).
* **Waiting for the controller.** With ``wait_for_command`` the simulation does not start (time
  frozen, the state re-published every WAIT_PUBLISH_PERIOD so a controller can start) until the
  first command arrives.
* ``self.stats`` counts overruns, dropped steps, stale-command steps, errors, and (from the core
  Simulator when it counts them) saturated and limit steps. Every second ``/diagnostics``
  (diagnostic_msgs/DiagnosticArray, as diagnostic_updater publishes: rqt_robot_monitor, the
  diagnostic aggregator and Foxglove read it) carries one status, ``<node>: simulation``,
  hardware_id the robot: ERROR when steps failed since the last report, WARN when steps overran,
  were dropped, went without a fresh command or had their effort saturated, else OK; its message
  says what happened, its values hold every counter, the simulated time and the mode.

Parameters are live (validated in the SetParameters callback, rejected with a reason, applied at
once; see :meth:`SimulatorNode.live_validators`) or read-only (``rate``, the robot, the command
topic, ``wait_for_command``, ``limits``: a SetParameters call on them fails saying so).

The payload parameters (``payload.link``, ``payload.mass``, ``payload.com``,
``payload.inertia``, ``payload_file``; :mod:`.payload`) load the plant, at start-up or live:
the state is kept and the motion follows the loaded dynamics from the next step on (the energy
audit's reference moves by the energy the change gives the state, which no work did).
``~/payload`` (geometry_msgs/InertiaStamped: ``header.frame_id`` the link, ``inertia.m``,
``inertia.com``, ``ixx``..``izz`` about the com in the link's axes; ``inertia.m`` 0 clears) sets
the same parameters in one call, with the same checks (a bad message: one warning naming the
message's field, the payload kept), and ``~/clear_payload`` (std_srvs/Trigger) clears them
(:class:`robot_dynamics.ros.payload.PayloadTopic`: a standard message, since a pip-installable
package cannot ship a custom .srv such as Franka's SetLoad).

External wrenches (issue 32): ``~/external_wrench`` (geometry_msgs/WrenchStamped) pushes a link,
as Gazebo's apply-link-wrench does. ``header.frame_id`` = ``<link>`` (force and torque in the
link's axes) or ``<link>@world`` (world axes), applied at the link frame's origin, the torque about
it (see :mod:`robot_dynamics.ros.external_wrench`). One wrench per link, held for
``external_wrench_duration`` seconds of simulated time (0: until replaced); an all-zero wrench
clears the link's, ``~/clear_external_wrench`` (std_srvs/Trigger) clears all (``~/reset`` keeps
them: it resets the arm, not the environment). Each step passes
them as ``Simulator.step(tau, fext=fext)`` (fext (nv, 6), Pinocchio's convention); with none held
the step is called without it (today's path). A bad message (empty frame_id, unknown link, a
non-finite component) is refused with one log line naming the field; the node keeps running.

``~/reset`` (std_srvs/Trigger) puts the arm back at its initial state; ``~/energy_audit``
(Float64MultiArray: kinetic, potential, motor_work, friction_dissipation, residual,
relative_residual, damping_dissipation, limit_dissipation, external_work — in this order, named
in ``layout.dim[0].label``) and a log line every ``audit_period`` seconds report the energy
balance; the external efforts' work (held wrenches, payload handling excluded) is in both.
"""
from __future__ import annotations

import array
import math
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from geometry_msgs.msg import WrenchStamped
from std_srvs.srv import Trigger

from robot_dynamics.errors import InputError
from robot_dynamics.friction.coupled import python_step_reason
from robot_dynamics.multibody.coupling import joint_state
from robot_dynamics.algorithm.crba import gravity_torques, mass_matrix
from robot_dynamics.simulation.simulator import Simulator, check_kinetic
from robot_dynamics.ros.common import (STATE_QOS, check_choice, declare, declare_robot_parameters,
    load_robot, on_set_parameters, per_joint, run_node, seconds_to_stamp)
from robot_dynamics.ros.external_wrench import ExternalWrenches, RejectLog
from robot_dynamics.ros.params import SIMULATOR, row
from robot_dynamics.ros.payload import NAMES as PAYLOAD_NAMES, NodePayload, PayloadTopic

AUDIT_FIELDS = ("kinetic", "potential", "motor_work", "friction_dissipation", "residual",
                "relative_residual", "damping_dissipation", "limit_dissipation", "external_work")
#: the choices of the string parameters, from the table (params.SIMULATOR)
MODES = row(SIMULATOR, "mode").choices
STALE_BEHAVIORS = row(SIMULATOR, "stale_command_behavior").choices
ON_ERROR = row(SIMULATOR, "on_error").choices
#: ``self.stats`` and the values of /diagnostics, in this order
STAT_FIELDS = ("steps", "overruns", "dropped_steps", "stale_command_steps", "errors",
               "saturated_steps", "limit_steps")
#: what a rise of each counter since the last report means, in the status message; a rise of
#: ``errors`` makes it ERROR, of the others WARN (a joint resting on its stop is physics, not a
#: fault: limit_steps is in the values only)
EVENTS = {"errors": "step error(s)", "overruns": "overrun(s)", "dropped_steps": "steps dropped",
          "stale_command_steps": "steps without a fresh command",
          "saturated_steps": "steps with the effort saturated"}
#: fast mode: wall time integrated per executor turn [s]
FAST_SLICE = 0.002
#: realtime mode: most simulated time integrated in one tick [s] (5 steps at 1 kHz, at least one
#: step): the controller's command is held that long at most; beyond, steps are dropped
MAX_CATCH_UP = 0.005
#: waiting for the first command: the state is re-published this often [s of wall time]
WAIT_PUBLISH_PERIOD = 0.05
#: /diagnostics period [s of wall time]
DIAGNOSTICS_PERIOD = 1.0


class SimulatorNode(Node):
    node_name = "simulator"
    parameter_table = "simulator"  #: params.NODES key: what declare() reads

    def __init__(self, **kwargs):
        super().__init__(self.node_name, **kwargs)
        #: hooks for an in-process observer (robot-dynamics sim and record): called with each
        #: JointState published (after publishing), and with the mode after each set_mode
        self.state_observers = []
        self.mode_observers = []
        declare_robot_parameters(self)
        # the parameters that do not depend on the robot first: a wrong one is refused before
        # the robot loads (and logs)
        rate = declare(self, "rate")
        mode = check_choice("mode", declare(self, "mode"), MODES)
        self.limits = declare(self, "limits")
        self.lockstep_timeout = declare(self, "lockstep_timeout")
        self.audit_period = declare(self, "audit_period")
        self.publish_every = declare(self, "publish_every")
        self.publish_clock = declare(self, "publish_clock")
        cmd_topic = declare(self, "command_topic")
        self.command_timeout = declare(self, "command_timeout")
        self.stale_behavior = check_choice("stale_command_behavior",
                                           declare(self, "stale_command_behavior"),
                                           STALE_BEHAVIORS)
        self.brake_bandwidth = declare(self, "brake_bandwidth")
        if self.stale_behavior == "brake":  # (unused otherwise: e.g. --rate 10 with zero)
            self._check_bandwidth(self.brake_bandwidth, 1.0 / rate)
        self.wait_for_command = declare(self, "wait_for_command")
        self.on_error = check_choice("on_error", declare(self, "on_error"), ON_ERROR)
        self.overrun_threshold = declare(self, "overrun_threshold")
        self.model, self.friction = load_robot(self)
        #: the payload parameters (payload.*, payload_file): the plant carries it
        self.payload = NodePayload(self, self.model, on_change=self._payload_change).declare()
        n = self.model.nv
        q0 = declare(self, "initial_positions")
        v0 = declare(self, "initial_velocities")
        self.q0 = self.initial_positions(q0)
        self.v0 = self.initial_velocities(v0)
        self.sim = Simulator(self.model, friction=self.friction, dt=1.0 / rate,
                             limits=self.limits)
        self._core_counts = {"saturated_steps": 0, "limit_steps": 0}  # before the last reset
        slow = python_step_reason(self.model, self.friction)
        if slow:  # ~100× the compiled step: say it at the start, in every mode
            self.get_logger().warning(f"mimic joints: {slow} (or mimic:=false models the "
                                      "followers as independent joints)")
        self.reset_sim()
        self._brake_data = self.model.create_data()
        self.stats = dict.fromkeys(STAT_FIELDS, 0)
        self._reported = dict(self.stats)  # the counters at the last /diagnostics
        self.tau = np.zeros(n)       # the latest command
        self.applied = self.tau      # the effort of the last step (command, zero or brake)
        self._failed = False         # the last step failed: nothing was applied
        self.command_time = self.sim.t  # simulated time of the latest command
        self.command_wall = time.monotonic()  # and its wall-clock time
        self.stale = False
        self._hold = None            # brake: (q_s, diag M(q_s)) of the stale episode
        self.started = not self.wait_for_command
        self.waiting = False
        self.last_publish = time.monotonic()
        self.next_audit = self.audit_period
        self.state_pub = self.create_publisher(JointState, "/joint_states", STATE_QOS)
        # with mimic joints, every movable joint (followers too, for robot_state_publisher)
        self._state_msg = JointState(name=list(getattr(self.model, "full_joint_names",
                                                       self.model.joint_names)))
        self._clock_msg = Clock()
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        self.audit_pub = self.create_publisher(Float64MultiArray, "~/energy_audit", 10)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_subscription(Float64MultiArray, cmd_topic, self.on_command, STATE_QOS)
        self._cmd_topic = self.resolve_topic_name(cmd_topic)
        self._told_waiting = False  # lockstep: the wait for a command was logged
        self.create_service(Trigger, "~/reset", self.on_reset)
        self._setup_external_wrench()
        self.payload_topic = PayloadTopic(self)  # ~/payload, ~/clear_payload
        self.create_timer(DIAGNOSTICS_PERIOD, self.publish_diagnostics)
        self._timer = None
        self.mode = None
        self.set_mode(mode)
        on_set_parameters(self, self.live_validators(), self.apply_parameters,
                          check=self.payload.check)
        self.get_logger().info(f"simulating {self.model.name!r} ({n} joints) at {rate:g} Hz, "
                               f"mode {self.mode}, friction "
                               f"{'on' if self.friction is not None else 'off'}"
                               + ("; waiting for the first effort command"
                                  if not self.started else ""))

    # -- parameters ---------------------------------------------------------------------------
    def live_validators(self):
        """Live parameter → validator (value → value to apply, or ValueError with the reason).
        Types and ranges are checked by rclpy from the declarations before these run."""
        def bandwidth(w):  # checked against the step where the brake applies
            return (self._check_bandwidth(w, self.sim.dt) if self.stale_behavior == "brake"
                    else float(w))

        def stale(v):
            v = check_choice("stale_command_behavior", v, STALE_BEHAVIORS)
            if v == "brake":
                self._check_bandwidth(self.brake_bandwidth, self.sim.dt)
            return v

        return {
            "mode": lambda v: check_choice("mode", v, MODES),
            "initial_positions": self.initial_positions,
            "initial_velocities": self.initial_velocities,
            "lockstep_timeout": float, "audit_period": float, "publish_every": int,
            "publish_clock": bool, "command_timeout": float, "overrun_threshold": float,
            "stale_command_behavior": stale,
            "brake_bandwidth": bandwidth,
            "on_error": lambda v: check_choice("on_error", v, ON_ERROR),
            **{name: (lambda v, name=name: self.payload.validate(name, v))
               for name in PAYLOAD_NAMES},
            "external_wrench_duration": float,
        }

    def _payload_change(self, when):
        """Around a payload change: the state (q, q̇) is kept, its energy jumps with the
        inertia; the audit's reference moves by that jump (no work did it), and a brake in
        progress holds with the new diag M(q_s)."""
        sim = getattr(self, "sim", None)
        if sim is None:  # at start-up, before the Simulator exists
            return
        if when == "before":
            self._energy_before = sim.energy()
            return
        (T0, V0), (T1, V1) = self._energy_before, sim.energy()
        sim._energy0 = (sim._energy0[0] + T1 - T0, sim._energy0[1] + V1 - V0)
        if self._hold is not None:
            q_s = self._hold[0]
            self._hold = (q_s, np.diag(mass_matrix(self.model, self._brake_data, q_s)).copy())

    def initial_velocities(self, values):
        """``initial_velocities`` as (nv,), with a finite kinetic energy at the initial
        positions (1e300 rad/s would fail every step)."""
        v = per_joint("initial_velocities", values, self.model.nv)
        check_kinetic(self.model, self.model.create_data(), self.q0, v,
                      "parameter initial_velocities")
        return v

    def initial_positions(self, values):
        """``initial_positions`` as (nq,), within the joints' position limits. The default [0.0]
        puts a joint whose range excludes 0 at its nearest limit (a URDF's elbow limited to
        [−3.07, −0.07], as the Panda's); values given otherwise must be within the limits."""
        q = per_joint("initial_positions", values, self.model.nq)
        lower, upper = self.model.lower_limits, self.model.upper_limits
        if self.limits and len(values) == 1 and values[0] == 0.0:
            moved = np.flatnonzero((q < lower) | (q > upper))
            q = np.clip(q, lower, upper)
            if len(moved):
                self.get_logger().info(
                    "initial_positions: 0 is outside the limits of "
                    + ", ".join(f"{self.model.joint_names[i]} (starts at {q[i]:g})"
                                for i in moved))
        bad = np.flatnonzero((q < lower) | (q > upper)) if self.limits else []
        if len(bad):
            i = bad[0]
            raise ValueError(f"parameter initial_positions: joint {self.model.joint_names[i]!r} "
                             f"at {q[i]:g} is outside its limits [{lower[i]:g}, {upper[i]:g}]")
        return q

    def reset_sim(self):
        """The core Simulator back at (q0, v0); its saturation/limit counters are kept in the
        node's totals."""
        for key in self._core_counts:
            self._core_counts[key] += int(getattr(self.sim, key))
        self.sim.reset(self.q0, self.v0)

    @staticmethod
    def _check_bandwidth(w, dt):
        if w * dt > 0.2:  # the brake is explicit in the step: keep ω h well inside stability
            raise ValueError(f"parameter brake_bandwidth: {w:g} rad/s is too stiff for the "
                             f"{dt:g} s step of the brake (at most {0.2 / dt:g} rad/s)")
        return float(w)

    def apply_parameters(self, updates):
        attrs = {"initial_positions": "q0", "initial_velocities": "v0",
                 "stale_command_behavior": "stale_behavior"}
        for name, value in updates.items():
            if name == "mode" or name in PAYLOAD_NAMES:
                continue
            setattr(self, attrs.get(name, name), value)
        self.payload.commit(updates)  # (checked with the call: self.payload.check)
        if "audit_period" in updates:
            self.next_audit = self.sim.t + self.audit_period
        if "stale_command_behavior" in updates:
            self._hold = None
        if "mode" in updates and updates["mode"] != self.mode:
            self.set_mode(updates["mode"])

    def set_mode(self, mode):
        """Start (or switch to) ``mode``: its timer replaces the previous one."""
        if self._timer is not None:
            self.destroy_timer(self._timer)
        self.mode = mode
        self.waiting = False
        if mode == "realtime":
            self._check_step_cost()
        self._rebase()
        if not self.started and mode != "lockstep":
            self._timer = self.create_timer(WAIT_PUBLISH_PERIOD, self.publish_state)
            self.publish_state()
        elif mode == "realtime":
            self._timer = self.create_timer(self.sim.dt, self.realtime_tick)
        elif mode == "fast":
            self._timer = self.create_timer(0.0, self.fast_tick)
        else:
            self._timer = self.create_timer(0.01, self.lockstep_watchdog)
            self.publish_state()
            self.waiting = True
        for observer in self.mode_observers:
            observer(self.mode)

    def _check_step_cost(self, steps=20):
        """Warn, with the numbers, when a step costs more than half the realtime period (e.g.
        mimic joints stepped in Python): realtime would fall behind and drop steps. Timed
        on a scratch Simulator from the initial state; measured once."""
        if getattr(self, "_step_cost", None) is not None:
            return
        probe = Simulator(self.model, friction=self.friction, dt=self.sim.dt, limits=self.limits)
        probe.reset(self.q0, self.v0)
        zero = np.zeros(self.model.nv)
        try:
            for _ in range(3):  # first calls: caches, allocations
                probe.step(zero)
            t0 = time.perf_counter()
            for _ in range(steps):
                probe.step(zero)
        except Exception:  # noqa: BLE001 - the run itself reports a failing step
            return
        self._step_cost = (time.perf_counter() - t0) / steps
        if self._step_cost > 0.5 * self.sim.dt:
            why = python_step_reason(self.model, self.friction)
            why = (f"; {why}, or mimic:=false models the followers as independent joints"
                   if why else "")
            self.get_logger().warning(
                f"a step costs {self._step_cost * 1e3:.2g} ms here, more than half the "
                f"{self.sim.dt * 1e3:g} ms realtime period (publishing needs the rest): realtime "
                f"will fall behind (lower rate, or mode fast/lockstep){why}")

    def _rebase(self):
        """Realtime: simulated time follows the wall clock from now on."""
        self.wall_start, self.sim_start = time.monotonic(), self.sim.t
        self._fresh = True

    # -- input ------------------------------------------------------------------------------
    def on_command(self, msg):
        tau = np.asarray(msg.data, dtype=float)
        if tau.shape != (self.model.nv,):
            self.get_logger().warning(f"rejected effort command: {tau.size} values for "
                                      f"{self.model.nv} joints", throttle_duration_sec=1.0)
            return
        self._told_waiting = False  # a later silence is told again
        if not np.all(np.isfinite(tau)):
            self.get_logger().warning("rejected effort command: non-finite value(s)",
                                      throttle_duration_sec=1.0)
            return
        self.tau = tau
        if self.stale:
            self.stale, self._hold = False, None
            self.get_logger().info(f"t={self.sim.t:.3f} s: effort commands resumed after "
                                   f"{self.sim.t - self.command_time:.3f} s")
        self.command_time, self.command_wall = self.sim.t, time.monotonic()
        if not self.started:
            self.started = True
            self.get_logger().info(f"t={self.sim.t:.3f} s: first effort command: simulation "
                                   "started")
            self.set_mode(self.mode)
        if self.mode == "lockstep" and self.waiting:
            self.advance(1)

    # -- external wrenches (issue 32) -------------------------------------------------------
    def _setup_external_wrench(self):
        self.external_wrench_duration = declare(self, "external_wrench_duration")
        self.wrenches = ExternalWrenches(self.model)
        self._reject_wrench = RejectLog(self.get_logger())
        self.create_subscription(WrenchStamped, "~/external_wrench", self.on_external_wrench, 10)
        self.create_service(Trigger, "~/clear_external_wrench", self.on_clear_external_wrench)

    def on_external_wrench(self, msg):
        """Hold (or clear) a wrench on a link; a bad message is logged and refused."""
        try:
            what = self.wrenches.set(msg, self.sim.t, self.external_wrench_duration)
        except InputError as exc:
            self._reject_wrench(exc)
            return
        self.get_logger().info(f"t={self.sim.t:.3f} s: {what}")

    def on_clear_external_wrench(self, request, response):
        n = self.wrenches.clear()
        response.success, response.message = True, f"{n} external wrench(es) cleared"
        return response

    def external_fext(self):
        """``fext`` for the next step at the current state, or None when no wrench is held
        (wrenches whose duration is over are dropped, and said so, first)."""
        if not self.wrenches:
            return None
        for link in self.wrenches.expire(self.sim.t):
            self.get_logger().info(f"t={self.sim.t:.3f} s: external wrench on {link!r} ended "
                                   f"({self.external_wrench_duration:g} s)")
        return self.wrenches.fext(self.sim.q)

    def on_reset(self, request, response):
        t = self.sim.t
        self.reset_sim()
        self.sim.t = t  # simulated time (and /clock) keeps going forward
        self.tau = np.zeros(self.model.nv)
        self.applied = self.tau
        self.command_time, self.command_wall, self._hold = t, time.monotonic(), None
        self._rebase()
        self.next_audit = self.sim.t + self.audit_period
        response.success, response.message = True, "state reset to the initial positions"
        self.publish_state()
        return response

    # -- stepping ---------------------------------------------------------------------------
    def effort(self):
        """The effort for the next step: the latest command while fresh, else the stale
        behaviour (logged once per episode)."""
        if (self.command_timeout <= 0.0
                or self.sim.t - self.command_time < self.command_timeout - 1e-9
                or time.monotonic() - self.command_wall < self.command_timeout):
            return self.tau
        if not self.stale:
            self.stale = True
            what = ("applying zero effort" if self.stale_behavior == "zero" else
                    "braking to hold the position")
            self.get_logger().warning(f"t={self.sim.t:.3f} s: no effort command for "
                                      f"{self.sim.t - self.command_time:.2f} s: {what}")
        self.stats["stale_command_steps"] += 1
        if self.stale_behavior == "zero":
            return np.zeros(self.model.nv)
        return self.brake_effort()

    def brake_effort(self):
        """τ = g(q) + diag(M(q_s)) (ω² (q_s − q) − 2ω q̇), saturated at the effort limits."""
        q, v, data = self.sim.q, self.sim.v, self._brake_data
        if self._hold is None:
            self._hold = (q.copy(), np.diag(mass_matrix(self.model, data, q)).copy())
        q_s, m = self._hold
        w = self.brake_bandwidth
        tau = gravity_torques(self.model, data, q) + m * (w * w * (q_s - q) - 2.0 * w * v)
        return np.clip(tau, -self.sim.effort_limit, self.sim.effort_limit)

    def advance(self, steps):
        sim = self.sim
        for k in range(steps):
            q, v, t = sim.q, sim.v, sim.t
            try:
                tau = self.effort()
                fext = self.external_fext()
                if fext is None:
                    sim.step(tau)
                else:
                    sim.step(tau, fext=fext)
                # one dot product per step: a NaN, or |q̇| beyond 1e154, makes it non-finite
                # (q advances by h q̇: finite while q̇ is)
                if not math.isfinite(sim.v @ sim.v):
                    raise FloatingPointError("the step produced a non-finite (or overflowing) "
                                             "state")
            except Exception as exc:  # noqa: BLE001 - whatever the core raises, the node lives
                # the rest of this batch is skipped too: time goes on (realtime stays in step
                # with the wall clock), the state is held (or reset)
                self._step_failed(exc, q, v, t, steps - k)
                break
            self.applied, self._failed = tau, False
            self.stats["steps"] += 1
        self.publish_state()
        if self.audit_period > 0 and self.sim.t >= self.next_audit - 1e-12:
            self.next_audit = max(self.next_audit + self.audit_period, self.sim.t)
            try:
                self.report_audit()
            except Exception as exc:  # noqa: BLE001 - a report must not end the node
                self.get_logger().error(f"t={self.sim.t:.3f} s: energy audit failed: {exc}",
                                        throttle_duration_sec=1.0)

    def _step_failed(self, exc, q, v, t, skipped=1):
        """Count and log a failed step; keep the last good state (or reset); time goes on over
        the ``skipped`` steps."""
        sim = self.sim
        self.stats["errors"] += 1
        what = "holding the last good state" if self.on_error == "hold" else \
            "resetting to the initial state"
        self.get_logger().error(f"step at t={t:.4f} s failed ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}); {what} "
                                f"({self.stats['errors']} failed steps so far)",
                                throttle_duration_sec=1.0)
        if self.on_error == "reset":
            self.reset_sim()
            self.tau = np.zeros(self.model.nv)
            self._hold = None
        else:
            sim.q, sim.v = q, v
        sim.t = t + skipped * sim.dt
        self.applied, self._failed = np.zeros(self.model.nv), True

    def realtime_tick(self):
        if self._fresh:  # the first tick of a start: simulated time follows the clock from now
            self._rebase()
            self._fresh = False
        dt = self.sim.dt
        due = int((time.monotonic() - self.wall_start) / dt) - int(
            round((self.sim.t - self.sim_start) / dt))
        lag = (due - 1) * dt  # behind the wall clock, beyond the step this tick is for
        cap = max(1, int(round(MAX_CATCH_UP / dt)))
        if due > cap:
            dropped = due - cap
            self.stats["dropped_steps"] += dropped
            self.wall_start += dropped * dt  # simulated time falls behind the wall clock
            due = cap
        if lag > self.overrun_threshold + 1e-12:
            self.stats["overruns"] += 1
            self.get_logger().warning(
                f"t={self.sim.t:.3f} s: realtime overrun: the simulation is {lag:.3f} s "
                f"behind the wall clock ({self.stats['overruns']} overruns, "
                f"{self.stats['dropped_steps']} steps dropped so far)", throttle_duration_sec=1.0)
        if due > 0:
            self.advance(due)

    def fast_tick(self):
        end = time.perf_counter() + FAST_SLICE
        self.advance(self.publish_every)
        while time.perf_counter() < end and self.mode == "fast":
            self.advance(self.publish_every)

    def lockstep_watchdog(self):
        if time.monotonic() - self.last_publish > self.lockstep_timeout:
            if not self._told_waiting:  # once: a node started by hand would say nothing
                self._told_waiting = True
                self.get_logger().info(
                    f"lockstep: no effort command on {self._cmd_topic} for "
                    f"{self.lockstep_timeout:g} s; each step waits for one (the state is "
                    f"re-published every {self.lockstep_timeout:g} s meanwhile)")
            self.publish_state()  # nobody answered (yet): say the state again

    # -- output -----------------------------------------------------------------------------
    def publish_state(self):
        q, v = self.sim.q, self.sim.v
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):  # never: advance checks
            self.get_logger().error("simulation state is not finite; resetting",
                                    throttle_duration_sec=1.0)
            self.reset_sim()
            q, v = self.sim.q, self.sim.v
        msg = self._state_msg  # reused: publish() serialises it before returning
        tau = self.applied_effort()
        if self.model.coupling is not None:  # mimic joints: followers at G q + o
            q, v, tau = joint_state(self.model, q, v, tau)
        seconds_to_stamp(self.sim.t, msg.header.stamp)
        msg.position = array.array("d", q.tobytes())
        msg.velocity = array.array("d", v.tobytes())
        msg.effort = array.array("d", tau.tobytes())
        self.state_pub.publish(msg)
        for observer in self.state_observers:
            observer(msg)
        if self.publish_clock:
            seconds_to_stamp(self.sim.t, self._clock_msg.clock)
            self.clock_pub.publish(self._clock_msg)
        self.last_publish = time.monotonic()
        self.waiting = self.mode == "lockstep"

    def applied_effort(self):
        """The effort the plant received in the last step: the core's saturated effort, or the
        node's (command, zero or brake) when the step failed."""
        return self.applied if self._failed else self.sim.tau_applied

    def update_stats(self):
        """``stats`` with the core Simulator's counters (effort saturation, joint limits)."""
        for key, before in self._core_counts.items():
            self.stats[key] = before + int(getattr(self.sim, key))
        return self.stats

    def closing_line(self) -> str:
        """What the node says when it stops (Ctrl-C, SIGTERM): where the simulation got to."""
        stats = self.update_stats()
        return (f"stopped at t={self.sim.t:.3f} s of simulated time: "
                + ", ".join(f"{k} {v}" for k, v in stats.items()))

    def diagnostic_status(self) -> DiagnosticStatus:
        """The simulation's health since the last call (see the module docstring)."""
        stats = dict(self.update_stats())
        rose = {k: max(stats[k] - self._reported[k], 0) for k in STAT_FIELDS}
        self._reported = stats
        events = [f"{rose[k]} {text}" for k, text in EVENTS.items() if rose[k]]
        if rose["errors"]:
            level = DiagnosticStatus.ERROR
        elif events:
            level = DiagnosticStatus.WARN
        else:
            level = DiagnosticStatus.OK
        if events:
            message = "since the last report: " + ", ".join(events)
        elif not self.started:
            message = "waiting for the first effort command"
        else:
            message = f"simulating, mode {self.mode}"
        values = [KeyValue(key=k, value=str(stats[k])) for k in STAT_FIELDS]
        values += [KeyValue(key="sim_time", value=f"{self.sim.t:.6f}"),
                   KeyValue(key="mode", value=str(self.mode))]
        return DiagnosticStatus(level=level, name=f"{self.get_name()}: simulation",
                                message=message, hardware_id=self.model.name, values=values)

    def publish_diagnostics(self):
        msg = DiagnosticArray(status=[self.diagnostic_status()])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(msg)

    def report_audit(self):
        audit = self.sim.audit
        values = [float(getattr(audit, f)) for f in AUDIT_FIELDS]
        msg = Float64MultiArray()
        msg.layout.dim = [MultiArrayDimension(label="|".join(AUDIT_FIELDS), size=len(values),
                                              stride=len(values))]
        msg.data = [x if np.isfinite(x) else 0.0 for x in values]
        self.audit_pub.publish(msg)
        self.get_logger().info(
            f"t={self.sim.t:.2f} s energy audit: ΔT+ΔV={audit.kinetic + audit.potential:.6g} J, "
            f"motor work {audit.motor_work:.6g} J, dissipation by friction "
            f"{audit.friction_dissipation:.6g} J, damping {audit.damping_dissipation:.6g} J, "
            f"stops {audit.limit_dissipation:.6g} J, "
            + (f"external work {audit.external_work:.6g} J, " if audit.external_work else "")
            + f"residual {audit.relative_residual:.2e} (relative)")


def main(args=None):
    run_node(SimulatorNode, args)


if __name__ == "__main__":
    main()
