"""id_controller: friction-aware computed-torque control (seed 004 §2.7 in the loop).

    τ = ID_friction(q, q̇, q̈_d + K_d (q̇_d − q̇) + K_p (q_d − q)),  clipped to the URDF effort limits

Subscribes ``joint_states`` (sensor_msgs/JointState, matched by name) and ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory, any reliable publisher); serves ``~/follow_joint_trajectory``
(control_msgs/action/FollowJointTrajectory) when control_msgs is installed (MoveIt's simple
controller manager talks to it); publishes the efforts as std_msgs/Float64MultiArray on
``/effort_controller/commands`` (ros2_control's effort controller), and with control_msgs
``~/controller_state`` (JointTrajectoryControllerState at ``state_publish_rate``, as
joint_trajectory_controller: the reference, the measured state it was computed from, their
difference and the effort sent, stamped with that state's stamp; rqt_plot and PlotJuggler read
it while the gains are tuned).

Trajectories, from the topic or the action, follow ros2_controllers' joint_trajectory_controller
(:mod:`robot_dynamics.control.execution`): validated when they arrive (a bad goal is rejected
at goal time, the reason logged), started from the current reference, the first point reached
over its ``time_from_start``; path/goal tolerances and ``goal_time`` from the goal or the
``constraints.*`` parameters; cancel and violations hold the measured position; a new goal
preempts the active one (aborted with INVALID_GOAL, as JTC).

Parameters are live (validated, rejected with a reason, applied at once) or read-only (a
SetParameters call on them fails saying so): see :data:`LIVE` and the descriptions. The payload
parameters (``payload.link``, ``payload.mass``, ``payload.com``, ``payload.inertia``,
``payload_file``; :mod:`.payload`), as Franka's SetLoad, put the load on the controller's model:
its feed-forward (gravity, inertia) and its friction compensation (the reactions that carry the
load) include it from the next state on. ``~/payload`` (geometry_msgs/InertiaStamped:
``header.frame_id`` the link, ``inertia.m``, ``inertia.com``, ``ixx``..``izz`` about the com in
the link's axes; ``inertia.m`` 0 clears) sets the same parameters in one call, with the same
checks (a bad message: one warning naming the message's field, the payload kept), and
``~/clear_payload`` (std_srvs/Trigger) clears them (:class:`~robot_dynamics.ros.payload.PayloadTopic`:
a standard message, since a pip-installable package cannot ship a custom .srv such as Franka's
SetLoad).

Latency: by default the JointState subscription is served by its own thread
(:mod:`.state_loop`, parameter ``state_thread``), not by the executor, which keeps the
trajectory topic, the parameters and the action server. Trajectories on the topic are taken as
bytes and read into arrays (:mod:`.trajectory_cdr`), not as one Python object per point, then
prepared on the executor.

Time: the reference is evaluated at the JointState's stamp, so the loop runs the same on a
real arm, in real-time simulation and in lock-step simulation. Safety: when no valid JointState
arrives for ``stale_timeout`` seconds (wall clock), it holds gravity compensation at the last
state (or zero effort, ``stale_behavior``) and warns.
"""
from __future__ import annotations

import array
import math
import sys
import threading
import time

import numpy as np
import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from robot_dynamics.algorithm.crba import gravity_torques
from robot_dynamics.errors import InputError
from robot_dynamics.control.computed_torque import ReferenceDirection, computed_torque
from robot_dynamics.control.execution import (GoalExecution, GoalRejected, Outcome,
                                              SegmentTolerances, TrajectoryExecution,
                                              effort_demand, goal_tolerances, validate_trajectory)
from robot_dynamics.multibody.units import units_of
from robot_dynamics.ros.common import (STATE_QOS, JointStateMatcher, declare,
    declare_robot_parameters, load_robot, per_joint, run_node, seconds_to_stamp, stamp_to_seconds)
from robot_dynamics.ros.params import ID_CONTROLLER, row
from robot_dynamics.ros.payload import NAMES as PAYLOAD_NAMES, NodePayload, PayloadTopic
from robot_dynamics.ros.state_loop import StateLoop
from robot_dynamics.ros.trajectory_cdr import parse_trajectory

#: ~/joint_trajectory: reliable, volatile (as joint_trajectory_controller), so that a publisher
#: with default QoS matches; keep a few so a burst of replacements is not dropped
TRAJECTORY_SUB_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE,
                                history=HistoryPolicy.KEEP_LAST, depth=10)
#: how often the controller looks for stale state [s]
STALE_CHECK = 0.02
#: points converted per slice before yielding the interpreter to the state thread
PARSE_SLICE = 2000
#: interpreter thread switch interval [s]: while the executor thread runs Python (rclpy builds a
#: large trajectory message object by object), the state thread waits at most this long for the
#: interpreter at each of its steps (Python's default, 5 ms, makes a 1 kHz loop fall behind)
SWITCH_INTERVAL = 2e-4
STALE_BEHAVIORS = row(ID_CONTROLLER, "stale_behavior").choices


def _duration(d) -> float:
    return d.sec + 1e-9 * d.nanosec


def _yield():
    time.sleep(0)  # releases the GIL: a waiting state thread runs now, not after 5 ms


def trajectory_fields(msg):
    """trajectory_msgs/JointTrajectory → (names, times, positions, velocities, accelerations,
    effort_given, stamp), point fields as lists of arrays; sliced so the state thread keeps
    running while a long message is read."""
    points = msg.points
    n = len(points)
    times = np.empty(n)
    pos, vel, acc = [], [], []
    effort = False
    for start in range(0, n, PARSE_SLICE):
        chunk = points[start:start + PARSE_SLICE]
        for k, p in enumerate(chunk, start):
            d = p.time_from_start
            times[k] = d.sec + 1e-9 * d.nanosec
            pos.append(p.positions)
            vel.append(p.velocities)
            acc.append(p.accelerations)
            effort = effort or len(p.effort) > 0
        if n > PARSE_SLICE:
            _yield()
    return (list(msg.joint_names), times, pos, vel, acc, effort,
            stamp_to_seconds(msg.header.stamp))


def trajectory_from_msg(msg, joint_names, **checks):
    """Validated :class:`~robot_dynamics.control.execution.TrajectoryCommand` from a message,
    or from its serialized bytes (raises GoalRejected with a FollowJointTrajectory error code
    and the reason)."""
    if isinstance(msg, (bytes, bytearray, memoryview)):
        fields = parse_trajectory(msg)  # arrays straight from the bytes (fast path)
        if fields is None:
            from rclpy.serialization import deserialize_message

            fields = trajectory_fields(deserialize_message(bytes(msg), JointTrajectoryMsg))
    else:
        fields = trajectory_fields(msg)
    names, times, pos, vel, acc, effort, stamp = fields
    return validate_trajectory(names, times, pos, vel, acc, controller_joints=joint_names,
                               stamp=stamp, effort_given=effort, **checks)


class IdController(Node):
    node_name = "id_controller"
    parameter_table = "id_controller"  #: params.NODES key: what declare() reads

    def __init__(self, **kwargs):
        super().__init__(self.node_name, **kwargs)
        declare_robot_parameters(self)
        self.model, self.friction = load_robot(self)
        #: held around each computation with the model and while a payload change writes it
        #: (the state thread computes, the executor serves SetParameters)
        self._model_lock = threading.Lock()
        #: the payload parameters (payload.*, payload_file): feed-forward and friction
        #: compensation carry it
        self.payload = NodePayload(self, self.model, lock=self._model_lock).declare()
        n = self.model.nv
        names = list(self.model.joint_names)
        declare(self, "joint_names", names)  # its default: the URDF order
        kp = declare(self, "kp")
        kd = declare(self, "kd")
        self.kp = per_joint("kp", kp, n, nonnegative=True)
        self.kd = per_joint("kd", kd, n, nonnegative=True)
        self.friction_compensation = declare(self, "friction_compensation")
        self.smoothing = declare(self, "friction_smoothing_velocity")
        self.error_gain = declare(self, "friction_error_gain")
        self.blend = declare(self, "friction_velocity_blend")
        self.stale_timeout = declare(self, "stale_timeout")
        self.stale_behavior = declare(self, "stale_behavior")
        cmd_topic = declare(self, "command_topic")
        state_topic = declare(self, "joint_states_topic")
        state_thread = declare(self, "state_thread")
        # joint_trajectory_controller's trajectory parameters (same names and defaults)
        self.allow_partial = declare(self, "allow_partial_joints_goal")
        self.allow_nonzero_end = declare(self, "allow_nonzero_velocity_at_trajectory_end")
        self.monitor_rate = declare(self, "action_monitor_rate")
        state_rate = declare(self, "state_publish_rate")
        goal_time = declare(self, "constraints.goal_time")
        stopped = declare(self, "constraints.stopped_velocity_tolerance")
        path_tol, goal_tol = {}, {}
        for j in names:  # the rows constraints.<joint>.trajectory and .goal, per joint
            path_tol[j] = declare(self, f"constraints.{j}.trajectory")
            goal_tol[j] = declare(self, f"constraints.{j}.goal")
        self._constraints = {"goal_time": goal_time, "stopped_velocity_tolerance": stopped,
                             "trajectory": path_tol, "goal": goal_tol}
        self.data = self.model.create_data()
        self.command_names = list(self.get_parameter("joint_names").value)
        self.order = [self.model.joint_index(name) for name in self.command_names]
        self.matcher = JointStateMatcher(names)
        self.limits = np.where(np.isfinite(self.model.effort_limits), self.model.effort_limits, np.inf)
        self.pub = self.create_publisher(Float64MultiArray, cmd_topic, STATE_QOS)
        self._command = Float64MultiArray()
        self._command.layout.dim = [MultiArrayDimension(label="joints", size=n, stride=n)]
        self._lock = threading.Lock()  # the state thread and the executor share the state below
        self._install_lock = threading.Lock()  # one trajectory installed at a time
        self.execution = TrajectoryExecution(names, self._default_tolerances())
        self.traj_start = None  # stamp time at which the last trajectory started (its splice)
        self.last_q = None
        self.last_valid = None  # monotonic time of the last valid state
        self.last_error = np.zeros(n)
        self.last_t = 0.0
        self._snapshot = None  # (t, q, q̇, q_d, q̇_d, q̈_d, τ sent) of the last control step
        self._last_check = time.monotonic()
        self._deferred = None  # a topic trajectory that came before the first state
        self._received = time.monotonic()  # when the last trajectory or goal came in
        self.trajectories_received = 0  # topic trajectories taken (valid or not)
        self._goals = {}  # goal UUID → GoalExecution (action goals being executed)
        self._pending = {}  # id(goal request) → (request, command, tolerances, arrival number)
        # goals own the arm from their acceptance (JTC): arrival numbers, the newest installed
        # one, and cancels that came before their goal was installed, under one lock
        self._goal_lock = threading.Lock()
        self._arrivals = 0
        self._newest = 0
        self._early_cancels = set()
        # raw: the bytes are read into arrays here, without one Python object per point
        self.create_subscription(JointTrajectoryMsg, "~/joint_trajectory", self.on_trajectory,
                                 TRAJECTORY_SUB_QOS, raw=True)
        self.state_loop = None
        if state_thread:  # started once everything its callbacks read exists
            sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
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
        self._state_pub = self._make_state_publisher(state_rate)
        # a goal waits (and a long trajectory is parsed) while other callbacks are served
        self.needs_threads = self._action is not None or self.state_loop is not None
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.payload_topic = PayloadTopic(self)  # ~/payload, ~/clear_payload
        self.get_logger().info(
            f"computed-torque control of {self.model.name!r} ({n} joints), friction "
            f"{'on' if self.friction is not None and self.friction_compensation else 'off'}, "
            + (f"URDF joint damping {self.model.damping.tolist()} "
               f"{'' if self.friction_compensation else 'not '}compensated, "
               if self.model.damping.any() else "")
            + f"commands on {cmd_topic}")

    # -- parameters ---------------------------------------------------------------------------
    def _default_tolerances(self):
        c = self._constraints
        return SegmentTolerances.from_parameters(self.model.joint_names, c["trajectory"], c["goal"],
                                                 c["stopped_velocity_tolerance"], c["goal_time"])

    #: live parameters whose attribute has another name
    ATTRIBUTES = {"friction_smoothing_velocity": "smoothing", "friction_velocity_blend": "blend",
                  "friction_error_gain": "error_gain", "allow_partial_joints_goal": "allow_partial",
                  "allow_nonzero_velocity_at_trajectory_end": "allow_nonzero_end"}
    #: parameters fixed at start-up (besides those declared read_only): a change is refused
    FIXED = ("robot", "robot_description", "friction_config")

    def _on_set_parameters(self, params):
        """Validate every parameter of the call, then apply them all (or none)."""
        n = self.model.nv
        updates = {}
        try:
            for p in params:
                name, value = p.name, p.value
                if name in self.FIXED:
                    raise ValueError(f"parameter {name} is read-only: the robot and its "
                                     f"friction model are loaded at start-up (restart the node "
                                     f"to change it)")
                if name in ("kp", "kd"):
                    updates[name] = per_joint(name, value, n, nonnegative=True)
                elif name in ("friction_smoothing_velocity", "friction_velocity_blend",
                              "friction_error_gain",
                              "stale_timeout", "constraints.goal_time",
                              "constraints.stopped_velocity_tolerance") or (
                        name.startswith("constraints.") and name.rsplit(".", 1)[-1]
                        in ("trajectory", "goal")):
                    value = float(value)
                    if not math.isfinite(value):
                        raise ValueError(f"parameter {name}: expected a finite number, got {value}")
                    updates[name] = value  # ranges: checked by the descriptor before this call
                elif name == "stale_behavior":
                    if value not in STALE_BEHAVIORS:
                        raise ValueError(f"parameter stale_behavior: expected gravity or zero, "
                                         f"got {value!r}")
                    updates[name] = value
                elif name in ("friction_compensation", "allow_partial_joints_goal",
                              "allow_nonzero_velocity_at_trajectory_end"):
                    updates[name] = bool(value)
                elif name in PAYLOAD_NAMES:
                    updates[name] = self.payload.validate(name, value)
            if any(name in PAYLOAD_NAMES for name in updates):  # the set, together
                self.payload.check(updates)
        except (ValueError, TypeError) as exc:
            self.get_logger().warning(f"rejected parameter change: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        constraints_changed = False
        self.payload.commit(updates)
        for name, value in updates.items():
            if name in PAYLOAD_NAMES:
                continue
            if name.startswith("constraints."):
                key = name[len("constraints."):]
                if "." in key:
                    joint, kind = key.rsplit(".", 1)
                    self._constraints[kind][joint] = value
                else:
                    self._constraints[key] = value
                constraints_changed = True
            else:
                setattr(self, self.ATTRIBUTES.get(name, name), value)
        if constraints_changed:
            defaults = self._default_tolerances()
            with self._lock:
                self.execution.defaults = defaults  # for the next goals (the active one keeps its)
        if updates:
            self.get_logger().info(f"parameters set: {', '.join(sorted(updates))}")
        return SetParametersResult(successful=True)

    # -- reference ----------------------------------------------------------------------------
    def _validate(self, msg, stamp_now):
        return trajectory_from_msg(msg, self.model.joint_names, now=stamp_now,
                                   allow_partial=self.allow_partial,
                                   allow_nonzero_end_velocity=self.allow_nonzero_end,
                                   lower=self.model.lower_limits, upper=self.model.upper_limits)

    def on_trajectory(self, msg):
        self._received = time.monotonic()
        self.trajectories_received += 1
        try:
            command = self._validate(msg, self.last_t)
            self.start(command, GoalExecution(self.execution.defaults.copy(), "topic"))
        except GoalRejected as exc:
            topic = self.resolve_topic_name("~/joint_trajectory")
            self.get_logger().warning(f"rejected trajectory on {topic}: {exc} (error code "
                                      f"{exc.code})", throttle_duration_sec=1.0)

    def set_trajectory(self, traj, start=0.0):
        """In process (the demo, the bag recorder): track ``traj``, a core
        :class:`~robot_dynamics.control.trajectory.JointTrajectory` in model joint order, from stamp time
        ``start`` (0 = when the next state arrives), checked and spliced as a topic trajectory."""
        model = self.model
        command = validate_trajectory(
            model.joint_names, traj.times, traj.positions, traj.velocities, traj.accelerations,
            controller_joints=model.joint_names, stamp=start, allow_nonzero_end_velocity=True,
            lower=model.lower_limits, upper=model.upper_limits)
        self._received = time.monotonic()
        return self.start(command, GoalExecution(self.execution.defaults.copy(), "topic"))

    def start(self, command, goal):
        """Prepare ``command`` off the state thread, then make it the reference for ``goal``."""
        with self._install_lock:
            while True:
                with self._lock:
                    ref, now = self.execution.reference, self.last_t
                if ref is None:
                    if goal.source == "action":
                        raise GoalRejected(-1, "no joint state received yet: nothing to start from")
                    with self._lock:  # a topic trajectory waits for the first state
                        self._deferred = (command, goal)
                    self.get_logger().info("trajectory received before any joint state: it "
                                           "starts at the first one")
                    return None
                traj = self.execution.prepare(command, now, ref)  # the long part, no lock held
                with self._lock:
                    if self.execution.reference is ref:  # else the state thread replaced it: redo
                        self.execution.install(traj, goal, command)
                        self.traj_start = float(traj.times[0])
                        break
        try:  # the feed-forward it asks for, against the effort limits: a hint, never a refusal
            need = effort_demand(self.model, traj, self.friction if self.friction_compensation
                                 else None, damping=self.friction_compensation)
        except (InputError, ArithmeticError):  # (an overflow: the goal's checks name inputs)
            need = None
        if need is not None:
            joint, t_need, tau_need, lim = need
            unit = units_of(self.model.joint_types[self.model.joint_index(joint)]).effort
            self.get_logger().warning(
                f"the trajectory asks {tau_need:.4g} {unit} of {joint} at t={t_need:.3f} s, "
                f"beyond its effort limit {lim:g} {unit}: the drive saturates there and tracking "
                "lags (slow the trajectory down)", throttle_duration_sec=1.0)
        ahead = float(traj.times[0]) - now
        later = (f", starting in {ahead:.3f} s (its header stamp, on the joint states' clock)"
                 if ahead > 1e-3 else "")
        points = f"{len(command)} point" + ("s" if len(command) != 1 else "")
        self.get_logger().info(f"tracking a trajectory of {points}, "
                               f"{traj.duration - traj.times[0]:.3f} s{later} ({goal.source}; "
                               f"read and prepared in {time.monotonic() - self._received:.3f} s)")
        return traj

    # -- control ------------------------------------------------------------------------------
    def on_state(self, msg):
        try:
            q, v, _ = self.matcher.read(msg)
        except InputError as exc:
            self.get_logger().warning(f"rejected JointState: {exc}", throttle_duration_sec=1.0)
            return
        t = stamp_to_seconds(msg.header.stamp)
        with self._lock:
            qd, vd, ad = self.execution.update(t, q, v)
            events = self.execution.log
            if events:
                self.execution.log = []
            self.last_q, self.last_t = q, t
            self.last_valid = time.monotonic()
        if self._deferred is not None:
            with self._lock:
                deferred, self._deferred = self._deferred, None
            if deferred is not None:
                self.start(*deferred)
        for source, outcome in events:
            text = f"{source} trajectory {outcome.status}: {outcome.text}"
            if outcome.status == "succeeded":
                self.get_logger().info(text)
            else:
                self.get_logger().warning(text)
        self.last_error = qd - q
        compensate = self.friction_compensation  # friction and the URDF's joint damping
        with self._model_lock:  # (a payload change waits: never a half-written model)
            tau = computed_torque(self.model, self.data, q, v, qd, vd, ad, self.kp, self.kd,
                                  self.friction if compensate else None,
                                  damping=compensate,
                                  direction=ReferenceDirection(self.error_gain, self.blend,
                                                               self.smoothing))
        sent = self.publish(tau)
        if sent is not None:  # one tuple: ~/controller_state reads it from another thread
            self._snapshot = (t, q, v, qd, vd, ad, sent)

    def _state_error(self, exc):
        self.get_logger().error(f"state callback failed: {exc!r}", throttle_duration_sec=1.0)

    def publish(self, tau):
        """Send ``tau`` clipped to the effort limits; returns what was sent (None: nothing,
        it was not finite)."""
        tau = np.clip(tau, -self.limits, self.limits)
        if not np.all(np.isfinite(tau)):
            self.get_logger().error("computed a non-finite effort; not sent",
                                    throttle_duration_sec=1.0)
            return None
        msg = self._command  # reused: publish() serialises it before returning
        msg.data = array.array("d", tau[self.order].tobytes())
        self.pub.publish(msg)
        return tau

    def check_stale(self):
        now = time.monotonic()
        late, self._last_check = now - self._last_check > 3 * STALE_CHECK, now
        with self._lock:
            last_valid, last_q = self.last_valid, self.last_q
        if last_valid is None or now - last_valid < self.stale_timeout:
            return
        if late:  # this thread itself was held up: the states may be queued, not missing
            return
        self.get_logger().warning(
            f"no valid JointState for {time.monotonic() - last_valid:.2f} s: holding "
            f"{'gravity compensation' if self.stale_behavior == 'gravity' else 'zero effort'}",
            throttle_duration_sec=2.0)
        if self.stale_behavior == "gravity" and last_q is not None:
            with self._model_lock:
                tau = gravity_torques(self.model, self.data, last_q)
            self.publish(tau)
        else:
            self.publish(np.zeros(self.model.nv))

    def destroy_node(self):
        # also for a half-built node (a parameter refused): rclpy destroys it at shutdown
        if getattr(self, "state_loop", None) is not None:
            self.state_loop.close()
        return super().destroy_node()

    # -- controller state (joint_trajectory_controller's ~/controller_state) -------------------
    def _make_state_publisher(self, rate):
        """~/controller_state at ``rate`` Hz when control_msgs is installed (else None)."""
        if rate <= 0.0:
            return None
        try:
            from control_msgs.msg import JointTrajectoryControllerState
        except ImportError:  # (the action server's start-up line says so)
            return None
        self._state_out = JointTrajectoryControllerState()
        self._state_out.joint_names = list(self.model.joint_names)
        pub = self.create_publisher(JointTrajectoryControllerState, "~/controller_state", 10)
        self.create_timer(1.0 / rate, self.publish_controller_state)
        return pub

    def publish_controller_state(self):
        """The last control step: reference, feedback, error = reference − feedback, output
        (the effort sent), in the URDF joint order, stamped with its state's stamp. Humble's
        message also has the deprecated desired/actual (the same points); Jazzy's has a
        speed_scaling_factor (1: this controller does not scale)."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        t, q, v, qd, vd, ad, tau = snapshot
        msg = self._state_out  # reused: publish() serialises it before returning
        seconds_to_stamp(t, msg.header.stamp)
        msg.reference.positions = array.array("d", qd.tobytes())
        msg.reference.velocities = array.array("d", vd.tobytes())
        msg.reference.accelerations = array.array("d", ad.tobytes())
        msg.feedback.positions = array.array("d", q.tobytes())
        msg.feedback.velocities = array.array("d", v.tobytes())
        msg.error.positions = array.array("d", (qd - q).tobytes())
        msg.error.velocities = array.array("d", (vd - v).tobytes())
        msg.output.effort = array.array("d", tau.tobytes())
        if hasattr(msg, "desired"):  # Humble
            msg.desired, msg.actual = msg.reference, msg.feedback
        if hasattr(msg, "speed_scaling_factor"):  # Jazzy and later
            msg.speed_scaling_factor = 1.0
        self._state_pub.publish(msg)

    # -- FollowJointTrajectory (MoveIt) -------------------------------------------------------
    def _make_action_server(self):
        try:
            from control_msgs.action import FollowJointTrajectory
        except ImportError:
            self.get_logger().info("control_msgs is not installed: no FollowJointTrajectory "
                                   "action server and no ~/controller_state (the "
                                   "~/joint_trajectory topic still works)")
            return None
        self._fjt = FollowJointTrajectory
        # goal and cancel requests are served one at a time, in the order they arrive (the
        # newest accepted goal owns the arm); the execute callbacks, which wait while the goal
        # runs, are executor tasks outside this group: state callbacks and requests go on
        return ActionServer(self, FollowJointTrajectory, "~/follow_joint_trajectory",
                            execute_callback=self._execute_goal,
                            goal_callback=self._on_goal,
                            handle_accepted_callback=self._on_accepted,
                            cancel_callback=self._on_cancel,
                            callback_group=MutuallyExclusiveCallbackGroup())

    def _goal_command(self, goal):
        """Validate a FollowJointTrajectory goal: (command, tolerances) or GoalRejected."""
        command = self._validate(goal.trajectory, self.last_t)
        if goal.multi_dof_trajectory.points:
            raise GoalRejected(-1, "multi_dof_trajectory is not supported (joint space only)")
        if self.execution.reference is None:
            raise GoalRejected(-1, "no joint state received yet: nothing to start from")

        def entries(tolerances):
            return [(t.name, t.position, t.velocity, t.acceleration) for t in tolerances]

        tol = goal_tolerances(self.execution.defaults, self.model.joint_names,
                              entries(goal.path_tolerance), entries(goal.goal_tolerance),
                              _duration(goal.goal_time_tolerance))
        return command, tol

    def _on_goal(self, goal):
        with self._goal_lock:  # numbered as they arrive: the newest one owns the arm
            self._arrivals += 1
            arrival = self._arrivals
        self._received = time.monotonic()
        self.get_logger().info("Received new action goal")
        try:
            command, tol = self._goal_command(goal)
        except GoalRejected as exc:
            self.get_logger().error(f"Rejected action goal: {exc} (error code {exc.code})")
            return GoalResponse.REJECT
        self._pending[id(goal)] = (goal, command, tol, arrival)
        self.get_logger().info("Accepted new action goal")
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle):
        """The accepted goal becomes the reference now, preempting the active one (as
        joint_trajectory_controller's goal-accepted callback), not when its execute callback
        runs: a cancel that comes before that finds it installed and holds the arm. A goal
        older than the one installed (they were accepted on two threads) is ended preempted."""
        request = goal_handle.request
        uuid = bytes(goal_handle.goal_id.uuid)
        entry = self._pending.pop(id(request), None)
        with self._goal_lock:
            try:
                if entry is not None and entry[0] is request:
                    command, tol, arrival = entry[1], entry[2], entry[3]
                else:
                    command, tol = self._goal_command(request)
                    self._arrivals += 1
                    arrival = self._arrivals
                goal = GoalExecution(tol, "action")
                self._goals[uuid] = goal
                if arrival < self._newest:  # a newer goal owns the arm already
                    goal.outcome = Outcome("aborted", self._fjt.Result.INVALID_GOAL,
                                           "Current goal preempted by new incoming action.")
                else:
                    self._newest = arrival
                    self.start(command, goal)
                    if uuid in self._early_cancels or goal_handle.is_cancel_requested:
                        with self._lock:
                            if self.execution.cancel(goal):
                                self.get_logger().info("Canceling action goal before its "
                                                       "start: holding position")
            except GoalRejected as exc:
                goal = self._goals.setdefault(uuid, GoalExecution(self.execution.defaults,
                                                                  "action"))
                with self._lock:  # it preempted the active goal all the same (JTC)
                    self.execution.preempt_and_hold()
                goal.outcome = Outcome("aborted", exc.code, str(exc))
            finally:
                self._early_cancels.discard(uuid)
        goal_handle.execute()

    def _on_cancel(self, goal_handle):
        self.get_logger().info("Got request to cancel goal")
        uuid = bytes(goal_handle.goal_id.uuid)
        with self._goal_lock:
            goal = self._goals.get(uuid)
            if goal is None:  # accepted, not yet installed: _on_accepted cancels it
                self._early_cancels.add(uuid)
                return CancelResponse.ACCEPT
            with self._lock:
                if self.execution.cancel(goal):
                    self.get_logger().info("Canceling active action goal: holding position")
        return CancelResponse.ACCEPT

    def _execute_goal(self, goal_handle):
        uuid = bytes(goal_handle.goal_id.uuid)
        goal = self._goals.get(uuid)
        try:
            if goal is None:  # (not through _on_accepted)
                Result = self._fjt.Result
                goal_handle.abort()
                return Result(error_code=Result.INVALID_GOAL, error_string="goal not installed")
            return self._monitor(goal_handle, goal)
        finally:
            self._goals.pop(uuid, None)

    def _monitor(self, goal_handle, goal):
        """Feedback at action_monitor_rate until the state thread ends the goal."""
        Result = self._fjt.Result
        feedback = self._fjt.Feedback()
        feedback.joint_names = list(self.command_names)
        period = 1.0 / self.monitor_rate
        order = self.order
        while rclpy.ok() and goal.outcome is None:
            time.sleep(period)
            sample = self.execution.last
            if goal.outcome is None and sample is not None and goal_handle.is_active:
                seconds_to_stamp(sample.t, feedback.header.stamp)
                f = feedback
                f.desired.positions = sample.q_d[order].tolist()
                f.desired.velocities = sample.v_d[order].tolist()
                f.desired.accelerations = sample.a_d[order].tolist()
                f.actual.positions = sample.q[order].tolist()
                f.actual.velocities = sample.v[order].tolist()
                f.error.positions = (sample.q_d - sample.q)[order].tolist()
                f.error.velocities = (sample.v_d - sample.v)[order].tolist()
                if hasattr(f, "index"):  # newer control_msgs
                    f.index = goal.next_point(sample.t)
                goal_handle.publish_feedback(f)
        outcome = goal.outcome
        if outcome is None:  # shutting down
            goal_handle.abort()
            return Result(error_code=Result.INVALID_GOAL, error_string="controller shutting down")
        if outcome.status == "succeeded":
            goal_handle.succeed()
        elif outcome.status == "canceled":
            # the cancel callback ends the goal here before rclpy marks it CANCELING
            deadline = time.monotonic() + 1.0
            while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
                time.sleep(0.001)
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return Result(error_code=outcome.code, error_string=outcome.text)


def main(args=None):
    run_node(IdController, args)


if __name__ == "__main__":
    main()
