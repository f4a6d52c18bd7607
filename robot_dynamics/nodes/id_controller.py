"""id_controller: friction-aware computed-torque control (seed 004 §2.7 in the loop).

    τ = ID_friction(q, q̇, q̈_d + K_d (q̇_d − q̇) + K_p (q_d − q)),  clipped to the URDF effort limits

Subscribes ``joint_states`` (sensor_msgs/JointState, matched by name) and ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory, time-parameterised, interpolated); serves
``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) when control_msgs is
installed (MoveIt's simple controller manager talks to it); publishes the efforts as
std_msgs/Float64MultiArray on ``/effort_controller/commands`` (ros2_control's effort controller).

Latency: by default the JointState subscription is served by its own thread
(:mod:`.state_loop`, parameter ``state_thread``), not by the executor, which keeps the
trajectory topic, the stale-state timer, the parameters and the action server.

Time: the reference is evaluated at the JointState's stamp, so the loop runs the same on a
real arm, in real-time simulation and in lock-step simulation. Safety: when no valid JointState
arrives for ``stale_timeout`` seconds (wall clock), it holds gravity compensation at the last
state (or zero effort, ``stale_behavior``) and warns.
"""
from __future__ import annotations

import array
import threading
import time

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..crba import gravity_torques
from ..errors import InputError
from ..inverse_dynamics import inverse_dynamics
from ..trajectory import JointTrajectory
from .common import (STATE_QOS, TRAJECTORY_QOS, JointStateMatcher, declare,
                     declare_robot_parameters, load_robot, per_joint, run_node,
                     stamp_to_seconds)
from .state_loop import StateLoop


def trajectory_from_msg(msg, joint_names):
    """trajectory_msgs/JointTrajectory → :class:`JointTrajectory` in model order (by name)."""
    names = list(msg.joint_names)
    missing = [n for n in joint_names if n not in names]
    if missing:
        raise InputError(f"JointTrajectory lacks joint(s) {missing} (has {names})")
    if not msg.points:
        raise InputError("JointTrajectory has no points")
    perm = [names.index(n) for n in joint_names]
    n = len(names)
    times, pos, vel, acc = [], [], [], []
    for k, p in enumerate(msg.points):
        if len(p.positions) != n:
            raise InputError(f"JointTrajectory point {k}: {len(p.positions)} positions for {n} joints")
        times.append(p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec)
        pos.append(np.asarray(p.positions, float)[perm])
        vel.append(np.asarray(p.velocities, float)[perm] if len(p.velocities) == n else None)
        acc.append(np.asarray(p.accelerations, float)[perm] if len(p.accelerations) == n else None)
    V = np.array(vel) if all(v is not None for v in vel) else None
    A = np.array(acc) if V is not None and all(a is not None for a in acc) else None
    return JointTrajectory(times, np.array(pos), V, A)


#: how often the controller looks for stale state [s]
STALE_CHECK = 0.02


class IdController(Node):
    def __init__(self, **kwargs):
        super().__init__("id_controller", **kwargs)
        declare_robot_parameters(self)
        self.model, self.friction = load_robot(self)
        n = self.model.nv
        declare(self, "joint_names", list(self.model.joint_names),
                "joint order of the effort command (defaults to the URDF order)", read_only=True)
        kp = declare(self, "kp", [400.0], "position gains K_p [1/s²], one per joint or one for all")
        kd = declare(self, "kd", [40.0], "velocity gains K_d [1/s], one per joint or one for all")
        self.kp = per_joint("kp", kp, n, nonnegative=True)
        self.kd = per_joint("kd", kd, n, nonnegative=True)
        self.friction_compensation = declare(
            self, "friction_compensation", True, "add the friction map to the computed torque")
        self.smoothing = declare(self, "friction_smoothing_velocity", 0.0,
                                 "friction direction tanh(q̇/ε) instead of sign(q̇) [rad/s or m/s]; "
                                 "0 = sign, with the commanded q̈'s direction at rest (a small ε "
                                 "removes compensation chatter at rest on a real arm)",
                                 low=0.0, high=10.0)
        self.stale_timeout = declare(self, "stale_timeout", 0.1,
                                     "seconds without a valid JointState before holding",
                                     low=0.001, high=60.0)
        self.stale_behavior = declare(self, "stale_behavior", "gravity",
                                      "what to command when the state is stale: gravity | zero")
        if self.stale_behavior not in ("gravity", "zero"):
            raise ValueError(f"stale_behavior must be 'gravity' or 'zero', got {self.stale_behavior!r}")
        cmd_topic = declare(self, "command_topic", "/effort_controller/commands",
                            "std_msgs/Float64MultiArray effort command topic")
        state_topic = declare(self, "joint_states_topic", "/joint_states", "JointState input topic")
        self.data = self.model.create_data()
        self.order = [self.model.joint_index(name) for name in
                      self.get_parameter("joint_names").value]
        self.matcher = JointStateMatcher(self.model.joint_names)
        self.limits = np.where(np.isfinite(self.model.effort_limits), self.model.effort_limits, np.inf)
        self.pub = self.create_publisher(Float64MultiArray, cmd_topic, STATE_QOS)
        self._command = Float64MultiArray()
        self._command.layout.dim = [MultiArrayDimension(label="joints", size=n, stride=n)]
        self._zeros = np.zeros(n)
        state_thread = declare(self, "state_thread", True,
                               "serve joint_states from a dedicated thread instead of the "
                               "executor (lower latency: see robot_dynamics.nodes.state_loop)",
                               read_only=True)
        self._lock = threading.Lock()  # the state thread and the executor share the state below
        self.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self.on_trajectory,
                                 TRAJECTORY_QOS)
        self.trajectory = None
        self.traj_start = None  # stamp time at which the trajectory starts
        self.hold = None  # set point when no trajectory: the first state seen
        self.last_q = None
        self.last_valid = None  # monotonic time of the last valid state
        self.last_error = np.zeros(n)
        self.last_t = 0.0
        self.goal_tolerance = declare(self, "goal_tolerance", 0.01,
                                      "max |q_d − q| [rad or m] for a FollowJointTrajectory goal "
                                      "to succeed at its end", low=1e-6, high=10.0)
        self.state_loop = None
        if state_thread:  # started once everything its callbacks read exists
            try:
                self.state_loop = StateLoop(self, JointState, state_topic, STATE_QOS,
                                            self.on_state, self._state_error,
                                            periodic=self.check_stale, period=STALE_CHECK)
            except RuntimeError as exc:
                self.get_logger().warning(f"no state thread ({exc}): joint_states via the executor")
        if self.state_loop is None:  # the executor serves the states and the stale check
            self.create_subscription(JointState, state_topic, self.on_state, STATE_QOS)
            self.create_timer(STALE_CHECK, self.check_stale)
        self._action = self._make_action_server()
        self.needs_threads = self._action is not None
        self.get_logger().info(
            f"computed-torque control of {self.model.name!r} ({n} joints), friction "
            f"{'on' if self.friction is not None and self.friction_compensation else 'off'}, "
            f"commands on {cmd_topic}")

    # -- reference ------------------------------------------------------------------------
    def on_trajectory(self, msg):
        try:
            traj = trajectory_from_msg(msg, self.model.joint_names)
        except InputError as exc:
            self.get_logger().warning(f"rejected trajectory: {exc}", throttle_duration_sec=1.0)
            return
        self.set_trajectory(traj, stamp_to_seconds(msg.header.stamp) or None)

    def set_trajectory(self, traj, start=None):
        """Track ``traj`` from stamp time ``start`` (None: from the next state received)."""
        with self._lock:
            self.trajectory, self.traj_start = traj, start
        self.get_logger().info(f"tracking a trajectory of {len(traj.times)} points, "
                               f"{traj.duration:.3f} s")

    def reference(self, t, q):
        if self.trajectory is None:
            if self.hold is None:
                self.hold = q.copy()
            return self.hold, self._zeros, self._zeros
        if self.traj_start is None:
            self.traj_start = t
        return self.trajectory.sample(t - self.traj_start)

    # -- control --------------------------------------------------------------------------
    def on_state(self, msg):
        with self._lock:
            self._on_state(msg)

    def _state_error(self, exc):
        self.get_logger().error(f"state callback failed: {exc!r}", throttle_duration_sec=1.0)

    def _on_state(self, msg):
        try:
            q, v, _ = self.matcher.read(msg)
        except InputError as exc:
            self.get_logger().warning(f"rejected JointState: {exc}", throttle_duration_sec=1.0)
            return
        t = stamp_to_seconds(msg.header.stamp)
        qd, vd, ad = self.reference(t, q)
        self.last_error = qd - q
        a_cmd = ad + self.kd * (vd - v) + self.kp * (qd - q)
        friction = self.friction if self.friction_compensation else None
        tau = inverse_dynamics(self.model, self.data, q, v, a_cmd, friction=friction,
                               smoothing_velocity=self.smoothing)
        self.last_q, self.last_t = q, t
        self.last_valid = time.monotonic()
        self.publish(tau)

    def publish(self, tau):
        tau = np.clip(tau, -self.limits, self.limits)
        if not np.all(np.isfinite(tau)):
            self.get_logger().error("computed a non-finite effort; not sent",
                                    throttle_duration_sec=1.0)
            return
        msg = self._command  # reused: publish() serialises it before returning
        msg.data = array.array("d", tau[self.order].tobytes())
        self.pub.publish(msg)

    def check_stale(self):
        with self._lock:
            self._check_stale()

    def _check_stale(self):
        if self.last_valid is None or time.monotonic() - self.last_valid < self.stale_timeout:
            return
        self.get_logger().warning(
            f"no valid JointState for {time.monotonic() - self.last_valid:.2f} s: holding "
            f"{'gravity compensation' if self.stale_behavior == 'gravity' else 'zero effort'}",
            throttle_duration_sec=2.0)
        if self.stale_behavior == "gravity" and self.last_q is not None:
            self.publish(gravity_torques(self.model, self.data, self.last_q))
        else:
            self.publish(np.zeros(self.model.nv))

    def destroy_node(self):
        if self.state_loop is not None:
            self.state_loop.close()
        return super().destroy_node()

    # -- FollowJointTrajectory (MoveIt) -----------------------------------------------------
    def _make_action_server(self):
        try:
            from control_msgs.action import FollowJointTrajectory
        except ImportError:
            self.get_logger().info("control_msgs is not installed: no FollowJointTrajectory "
                                   "action server (the ~/joint_trajectory topic still works)")
            return None
        from rclpy.action import ActionServer
        from rclpy.callback_groups import ReentrantCallbackGroup

        # the goal runs in its own group so that state callbacks go on while it waits
        return ActionServer(self, FollowJointTrajectory, "~/follow_joint_trajectory",
                            self._execute_goal, callback_group=ReentrantCallbackGroup())

    def _execute_goal(self, goal_handle):  # pragma: no cover - needs control_msgs
        from control_msgs.action import FollowJointTrajectory

        result = FollowJointTrajectory.Result()
        try:
            traj = trajectory_from_msg(goal_handle.request.trajectory, self.model.joint_names)
        except InputError as exc:
            goal_handle.abort()
            result.error_code = FollowJointTrajectory.Result.INVALID_JOINTS
            result.error_string = str(exc)
            return result
        self.set_trajectory(traj)
        deadline = time.monotonic() + 10.0 * traj.duration + 5.0
        while rclpy.ok() and time.monotonic() < deadline:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                self.trajectory = None
                return result
            if self.traj_start is not None and self.last_valid is not None:
                feedback = FollowJointTrajectory.Feedback()
                feedback.joint_names = list(self.model.joint_names)
                goal_handle.publish_feedback(feedback)
                if self.trajectory is not traj:
                    break
                done = np.abs(self.last_error).max() < self.goal_tolerance
                if done and self.last_t - self.traj_start >= traj.duration:
                    goal_handle.succeed()
                    result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
                    return result
            time.sleep(0.01)
        goal_handle.abort()
        result.error_code = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED
        result.error_string = "trajectory not completed within tolerance in time"
        return result


def main(args=None):
    run_node(IdController, args)


if __name__ == "__main__":
    main()
