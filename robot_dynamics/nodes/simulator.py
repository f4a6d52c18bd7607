"""simulator: the core's friction-aware forward simulation as a ROS 2 node.

Steps :class:`robot_dynamics.simulation.Simulator` at a fixed step (default 1 kHz) under the
latest effort command (std_msgs/Float64MultiArray on ``/effort_controller/commands``, held between
commands), publishes ``/joint_states`` (position, velocity, and the applied motor effort; stamped
with simulated time) and ``/clock`` (for ``use_sim_time``). Modes:

* ``realtime`` — simulated time follows the wall clock;
* ``fast`` — as fast as possible, commands applied whenever they arrive (``publish_every``: steps
  per published state); it integrates for up to FAST_SLICE of wall time per executor turn, so
  commands and services are served between slices without an executor wake-up per step (a
  subscriber slower than the stream gets the newest states: /joint_states keeps the last 10);
* ``lockstep`` — as fast as possible but deterministic: after publishing a state it waits for the
  command computed from that state, then steps (re-publishing if none comes within
  ``lockstep_timeout``).

``~/reset`` (std_srvs/Trigger) puts the arm back at its initial state; ``~/energy_audit``
(Float64MultiArray: kinetic, potential, motor_work, friction_dissipation, residual,
relative_residual) and a log line every ``audit_period`` seconds report the energy balance.
"""
from __future__ import annotations

import array
import time

import numpy as np
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from std_srvs.srv import Trigger

from .. import mimic
from ..simulation import Simulator
from ..stiction import FrictionSolveError
from .common import (STATE_QOS, declare, declare_robot_parameters, load_robot, per_joint,
                     run_node, seconds_to_stamp)

AUDIT_FIELDS = ("kinetic", "potential", "motor_work", "friction_dissipation", "residual",
                "relative_residual")
MODES = ("realtime", "fast", "lockstep")
#: fast mode: wall time integrated per executor turn [s]
FAST_SLICE = 0.002


class SimulatorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("simulator", **kwargs)
        declare_robot_parameters(self)
        self.model, self.friction = load_robot(self)
        n = self.model.nv
        rate = declare(self, "rate", 1000.0, "integration rate [Hz] (step = 1/rate)",
                       low=10.0, high=100000.0)
        self.mode = declare(self, "mode", "realtime", "realtime | fast | lockstep")
        if self.mode not in MODES:
            raise ValueError(f"parameter mode: expected one of {MODES}, got {self.mode!r}")
        q0 = declare(self, "initial_positions", [0.0], "initial joint positions (URDF order); "
                     "[0.0] means all zero")
        v0 = declare(self, "initial_velocities", [0.0], "initial joint velocities; [0.0] = zero")
        self.q0 = per_joint("initial_positions", q0, n)
        self.v0 = per_joint("initial_velocities", v0, n)
        self.lockstep_timeout = declare(self, "lockstep_timeout", 0.5,
                                        "lockstep: re-publish the state after this many seconds "
                                        "without a command", low=0.001, high=60.0)
        self.audit_period = declare(self, "audit_period", 1.0,
                                    "simulated seconds between energy-audit reports (0: never)",
                                    low=0.0, high=3600.0)
        self.publish_every = declare(self, "publish_every", 1,
                                     "fast mode: steps integrated per published state (a "
                                     "JointState per 1 kHz step caps fast mode at the rate rclpy "
                                     "can publish)", low=1, high=100000)
        self.publish_clock = declare(self, "publish_clock", True, "publish /clock (sim time)")
        cmd_topic = declare(self, "command_topic", "/effort_controller/commands",
                            "effort command input (Float64MultiArray, URDF joint order)")
        self.sim = Simulator(self.model, friction=self.friction, dt=1.0 / rate)
        self.sim.reset(self.q0, self.v0)
        self.tau = np.zeros(n)
        self.waiting = False
        self.last_publish = time.monotonic()
        self.next_audit = self.audit_period
        self.state_pub = self.create_publisher(JointState, "/joint_states", STATE_QOS)
        # with mimic joints, every movable joint (followers too, for robot_state_publisher)
        self._state_msg = JointState(name=list(getattr(self.model, "full_joint_names",
                                                       self.model.joint_names)))
        self._clock_msg = Clock()
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if self.publish_clock else None
        self.audit_pub = self.create_publisher(Float64MultiArray, "~/energy_audit", 10)
        self.create_subscription(Float64MultiArray, cmd_topic, self.on_command, STATE_QOS)
        self.create_service(Trigger, "~/reset", self.on_reset)
        self.wall_start = time.monotonic()
        self.sim_start = self.sim.t
        if self.mode == "realtime":
            self.create_timer(1.0 / rate, self.realtime_tick)
        elif self.mode == "fast":
            self.create_timer(0.0, self.fast_tick)
        else:
            self.create_timer(0.01, self.lockstep_watchdog)
            self.publish_state()
            self.waiting = True
        self.get_logger().info(f"simulating {self.model.name!r} ({n} joints) at {rate:g} Hz, "
                               f"mode {self.mode}, friction "
                               f"{'on' if self.friction is not None else 'off'}")

    # -- input ------------------------------------------------------------------------------
    def on_command(self, msg):
        tau = np.asarray(msg.data, dtype=float)
        if tau.shape != (self.model.nv,):
            self.get_logger().warning(f"rejected effort command: {tau.size} values for "
                                   f"{self.model.nv} joints", throttle_duration_sec=1.0)
            return
        if not np.all(np.isfinite(tau)):
            self.get_logger().warning("rejected effort command: non-finite value(s)",
                                   throttle_duration_sec=1.0)
            return
        self.tau = tau
        if self.mode == "lockstep" and self.waiting:
            self.advance(1)

    def on_reset(self, request, response):
        t = self.sim.t
        self.sim.reset(self.q0, self.v0)
        self.sim.t = t  # simulated time (and /clock) keeps going forward
        self.tau = np.zeros(self.model.nv)
        self.wall_start, self.sim_start = time.monotonic(), self.sim.t
        self.next_audit = self.sim.t + self.audit_period
        response.success, response.message = True, "state reset to the initial positions"
        self.publish_state()
        return response

    # -- stepping ---------------------------------------------------------------------------
    def advance(self, steps):
        try:
            for _ in range(steps):
                self.sim.step(self.tau)
        except FrictionSolveError as exc:  # the state stays where it was: nothing invented
            self.get_logger().error(f"step at t={self.sim.t:.4f} s failed: {exc}; holding the "
                                    "state", throttle_duration_sec=1.0)
        self.publish_state()
        if self.audit_period > 0 and self.sim.t >= self.next_audit - 1e-12:
            self.next_audit += self.audit_period
            self.report_audit()

    def realtime_tick(self):
        due = int((time.monotonic() - self.wall_start) / self.sim.dt) - int(
            round((self.sim.t - self.sim_start) / self.sim.dt))
        if due > 0:
            self.advance(min(due, 100))  # never more than 0.1 s of catching up per tick

    def fast_tick(self):
        end = time.perf_counter() + FAST_SLICE
        self.advance(self.publish_every)
        while time.perf_counter() < end:
            self.advance(self.publish_every)

    def lockstep_watchdog(self):
        if time.monotonic() - self.last_publish > self.lockstep_timeout:
            self.publish_state()  # nobody answered (yet): say the state again

    # -- output -----------------------------------------------------------------------------
    def publish_state(self):
        q, v = self.sim.q, self.sim.v
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            self.get_logger().error("simulation state is not finite; resetting",
                                    throttle_duration_sec=1.0)
            self.sim.reset(self.q0, self.v0)
            q, v = self.sim.q, self.sim.v
        msg = self._state_msg  # reused: publish() serialises it before returning
        tau = self.tau
        if self.model.coupling is not None:  # mimic joints: followers at G q + o
            q, v, tau = mimic.joint_state(self.model, q, v, tau)
        seconds_to_stamp(self.sim.t, msg.header.stamp)
        msg.position = array.array("d", q.tobytes())
        msg.velocity = array.array("d", v.tobytes())
        msg.effort = array.array("d", tau.tobytes())
        self.state_pub.publish(msg)
        if self.clock_pub is not None:
            seconds_to_stamp(self.sim.t, self._clock_msg.clock)
            self.clock_pub.publish(self._clock_msg)
        self.last_publish = time.monotonic()
        self.waiting = self.mode == "lockstep"

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
            f"motor work {audit.motor_work:.6g} J, friction dissipation "
            f"{audit.friction_dissipation:.6g} J, residual {audit.relative_residual:.2e} (relative)")


def main(args=None):
    run_node(SimulatorNode, args)


if __name__ == "__main__":
    main()
