"""Trajectory execution with the semantics of ros2_controllers' joint_trajectory_controller (JTC).

ROS-free: the controller node feeds it parsed ``trajectory_msgs/JointTrajectory`` contents and
``FollowJointTrajectory`` goal fields, and calls :meth:`TrajectoryExecution.update` with every
joint state. What it implements (JTC's documented behaviour, ros2_controllers userdoc):

* **Validation at goal time** (:func:`validate_trajectory`): joint names known, unique and — unless
  ``allow_partial_joints_goal`` — complete; points present; ``positions`` of every point sized like
  ``joint_names`` (``velocities``/``accelerations`` empty or sized); ``time_from_start`` strictly
  increasing and not all zero; finite values inside the joint position limits; zero velocity at
  the last point (unless ``allow_nonzero_velocity_at_trajectory_end``); a non-zero header stamp
  must not end in the past, nor start more than FUTURE_LIMIT (an hour) ahead of the joint
  states' clock (a stamp of another clock would wait for ever). A rejection carries a
  FollowJointTrajectory error code (INVALID_JOINTS for joint-name problems,
  OLD_HEADER_TIMESTAMP, INVALID_GOAL otherwise) and a one-line reason.
* **The reference** is a :class:`~robot_dynamics.control.trajectory.JointTrajectory` in the joint-state
  clock. A new trajectory starts at its header stamp (zero = now) from the *current reference*
  (position, velocity, acceleration of the trajectory being tracked, or the held position); the
  first point is reached over its own ``time_from_start``, never as a step. Points at or before
  the splice time are dropped (they are in the past). The trajectory is prepared off the control
  thread, so states may arrive meanwhile; as JTC, its first segment then starts at the first
  sample that tracks it, from the current reference there (:meth:`TrajectoryExecution.update`).
  Joints left out of a partial goal keep the current reference position. The state at start-up
  (first joint state) is the first reference.
* **Tolerances** (:class:`SegmentTolerances`): path tolerance while moving (and on the first
  sample), goal tolerance (position, velocity — ``stopped_velocity_tolerance`` by default) once
  the last point's time has passed, ``goal_time`` (0 = wait for ever). Per-joint defaults come from
  parameters named like JTC's; a goal's ``JointTolerance`` entries override them (0 = keep the
  default, -1 = no check, other negatives = an invalid goal). Acceleration tolerances are accepted
  but not checked: the controller has no measured acceleration (JTC skips them likewise when the
  hardware gives none).
* **Outcomes**: path violation → PATH_TOLERANCE_VIOLATED, goal time exceeded →
  GOAL_TOLERANCE_VIOLATED; both hold the measured position. Success → SUCCESSFUL, the last point
  stays the reference. Cancel → hold the measured position. A new goal preempts the active one,
  which is aborted with INVALID_GOAL "Current goal preempted by new incoming action." (as JTC);
  the new trajectory continues from the current reference.
"""
from __future__ import annotations

import array
import math
from dataclasses import dataclass, field, replace

import numpy as np

from robot_dynamics.errors import InputError
from robot_dynamics.control.trajectory import JointTrajectory, finite_difference_velocities

# control_msgs/action/FollowJointTrajectory Result.error_code
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
#: a trajectory's header stamp may start it at most this far ahead of the joint states' clock
#: [s]: further is a stamp of another clock (wall time, 1.8e9 s, against a simulator's)
FUTURE_LIMIT = 3600.0
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

#: JointTolerance's "erase" value: no check for this joint and quantity
ERASE = -1.0
#: slack on the joint position limits [rad or m] (planners put points exactly on them)
LIMIT_SLACK = 1e-6


class GoalRejected(InputError):
    """A trajectory or goal that must be refused; ``code`` is a FollowJointTrajectory error code."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# -- validation ---------------------------------------------------------------------------------
@dataclass
class TrajectoryCommand:
    """A validated trajectory: ``joints`` are model indices of its columns, times relative to
    ``stamp`` (0 = start when received)."""

    joints: np.ndarray
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    stamp: float = 0.0

    def __len__(self):
        return len(self.times)


def _as_matrix(name, rows, width, needed):
    """Per-point value lists → (K, width) array; None when every row is empty (optional field)."""
    if isinstance(rows, np.ndarray) and rows.ndim == 2:
        if rows.shape[1] == width:
            return rows.astype(float, copy=False)
        if rows.shape[1] == 0 and not needed:
            return None
        raise GoalRejected(INVALID_GOAL, f"Mismatch between joint_names size ({width}) and "
                                         f"{name} ({rows.shape[1]}) at point #0.")
    sizes = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    if not needed and not sizes.any():
        return None
    bad = np.flatnonzero(sizes != width)
    if len(bad):
        k = int(bad[0])
        if not needed:  # an optional field must be empty everywhere or sized everywhere
            if sizes[k] == 0:
                raise GoalRejected(INVALID_GOAL, f"{name} given for some points but not point "
                                                 f"#{k}: give them for every point or none")
        raise GoalRejected(INVALID_GOAL, f"Mismatch between joint_names size ({width}) and "
                                         f"{name} ({int(sizes[k])}) at point #{k}.")
    if width and all(isinstance(r, array.array) and r.typecode == "d" for r in rows[:1]):
        try:  # rclpy gives array('d') per point: one join instead of 100 000 conversions
            return np.frombuffer(b"".join(rows), dtype=float).reshape(len(rows), width).copy()
        except (TypeError, ValueError):
            pass
    return np.array(rows, dtype=float).reshape(len(rows), width)


def validate_trajectory(joint_names, times, positions, velocities=None, accelerations=None, *,
                        controller_joints, stamp=0.0, now=None, allow_partial=False,
                        allow_nonzero_end_velocity=False, lower=None, upper=None,
                        effort_given=False) -> TrajectoryCommand:
    """Check a trajectory as JTC does at goal time; return it in arrays or raise GoalRejected.

    ``positions``/``velocities``/``accelerations`` are per-point sequences (or (K, m) arrays),
    ``times`` the points' ``time_from_start`` [s], ``stamp`` the header stamp [s] (0 = now),
    ``now`` the current time in the same clock (for the stale-stamp check).
    """
    names = list(joint_names)
    controller_joints = list(controller_joints)
    index = {n: i for i, n in enumerate(controller_joints)}
    if not names:
        raise GoalRejected(INVALID_JOINTS, "Empty joint names on incoming trajectory.")
    unknown = [n for n in names if n not in index]
    if unknown:
        raise GoalRejected(INVALID_JOINTS, f"Incoming joint {unknown[0]} doesn't match the "
                                           f"controller's joints {controller_joints}.")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise GoalRejected(INVALID_JOINTS, f"Joint(s) {dup} appear more than once in joint_names.")
    if not allow_partial and len(names) != len(controller_joints):
        missing = [n for n in controller_joints if n not in names]
        raise GoalRejected(INVALID_JOINTS, f"Joints on incoming trajectory don't match the "
                                           f"controller joints: missing {missing} (partial goals "
                                           f"need allow_partial_joints_goal).")
    t = np.asarray(times, dtype=float).ravel()
    if len(t) == 0:
        raise GoalRejected(INVALID_GOAL, "Empty trajectory received.")
    m = len(names)
    P = _as_matrix("positions", positions, m, True)
    if len(P) != len(t):
        raise GoalRejected(INVALID_GOAL, f"{len(t)} times for {len(P)} points")
    V = _as_matrix("velocities", velocities if velocities is not None else [()] * len(t), m, False)
    A = _as_matrix("accelerations", accelerations if accelerations is not None else [()] * len(t),
                   m, False)
    if effort_given:
        pass  # effort fields are accepted and ignored: the controller computes the effort itself
    if not np.all(np.isfinite(t)):
        raise GoalRejected(INVALID_GOAL, "time_from_start is not finite")
    if t[0] < 0:
        raise GoalRejected(INVALID_GOAL, f"point #0 has a negative time_from_start ({t[0]} s)")
    steps = np.diff(t)
    if np.any(steps <= 0):
        k = int(np.flatnonzero(steps <= 0)[0]) + 1
        raise GoalRejected(INVALID_GOAL, f"Time between points {k - 1} and {k} is not strictly "
                                         f"increasing, it is {t[k - 1]:f} and {t[k]:f} "
                                         f"respectively")
    if t[-1] <= 0:
        raise GoalRejected(INVALID_GOAL, "every point has time_from_start 0: nothing says how "
                                         "fast to get there (give the first point its time)")
    for name, arr in (("positions", P), ("velocities", V), ("accelerations", A)):
        if arr is not None and not math.isfinite(float(arr.sum())):
            k, j = map(int, np.argwhere(~np.isfinite(arr))[0])
            raise GoalRejected(INVALID_GOAL, f"point #{k}: {name} of joint {names[j]} is not "
                                             f"finite ({arr[k, j]})")
    cols = np.array([index[n] for n in names], dtype=np.int64)
    if lower is not None and upper is not None:
        lo = np.asarray(lower, float)[cols] - LIMIT_SLACK
        hi = np.asarray(upper, float)[cols] + LIMIT_SLACK
        out = (P < lo) | (P > hi)
        if out.any():
            k, j = map(int, np.argwhere(out)[0])
            low, high = lo[j] + LIMIT_SLACK, hi[j] - LIMIT_SLACK
            raise GoalRejected(INVALID_GOAL, f"point #{k}: position {P[k, j]:.6g} of joint "
                                             f"{names[j]} is outside its limits "
                                             f"[{low:.6g}, {high:.6g}]")
    if V is not None and not allow_nonzero_end_velocity:
        bad = np.flatnonzero(np.abs(V[-1]) > np.finfo(np.float32).eps)
        if len(bad):
            j = int(bad[0])
            raise GoalRejected(INVALID_GOAL, f"Velocity of last trajectory point of joint "
                                             f"{names[j]} is not zero: {V[-1, j]:.15f}")
    stamp = float(stamp)
    if stamp != 0.0 and now is not None and stamp + t[-1] < now:
        raise GoalRejected(OLD_HEADER_TIMESTAMP, f"Received trajectory with non-zero start time "
                                                 f"({stamp:f}) that ends in the past "
                                                 f"({stamp + t[-1]:f})")
    if stamp != 0.0 and now is not None and stamp - now > FUTURE_LIMIT:
        # a stamp of another clock (wall time against the simulator's): it would wait for years
        raise GoalRejected(INVALID_GOAL, f"header stamp {stamp:f} s is {stamp - now:.3g} s ahead "
                                         f"of the joint states' clock ({now:f} s): stamp it on "
                                         "that clock (use_sim_time with a simulator), or 0 for "
                                         "now")
    return TrajectoryCommand(cols, t, P, V, A, stamp)


# -- tolerances ---------------------------------------------------------------------------------
@dataclass
class StateTolerance:
    """Per-joint bounds on |desired − actual|; 0 = not checked."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def zeros(cls, n):
        return cls(np.zeros(n), np.zeros(n), np.zeros(n))

    def copy(self):
        return StateTolerance(self.position.copy(), self.velocity.copy(), self.acceleration.copy())

    def violations(self, error_q, error_v):
        """Indices of joints outside the tolerance (acceleration: no measurement, not checked)."""
        bad = ((self.position > 0) & (np.abs(error_q) > self.position)) | \
              ((self.velocity > 0) & (np.abs(error_v) > self.velocity))
        return np.flatnonzero(bad)


@dataclass
class SegmentTolerances:
    """JTC's SegmentTolerances: ``path`` while moving, ``goal`` at the end, ``goal_time`` [s]
    allowed after the last point's time to get within ``goal`` (0 = no limit)."""

    path: StateTolerance
    goal: StateTolerance
    goal_time: float = 0.0

    @classmethod
    def from_parameters(cls, joint_names, trajectory, goal, stopped_velocity_tolerance=0.01,
                        goal_time=0.0):
        """Defaults as JTC reads them: ``constraints.<joint>.trajectory``/``.goal`` (mappings
        joint → value; missing = 0), ``constraints.stopped_velocity_tolerance`` (the goal
        velocity bound of every joint), ``constraints.goal_time``."""
        n = len(joint_names)
        path, end = StateTolerance.zeros(n), StateTolerance.zeros(n)
        for i, name in enumerate(joint_names):
            path.position[i] = float(trajectory.get(name, 0.0))
            end.position[i] = float(goal.get(name, 0.0))
        end.velocity[:] = float(stopped_velocity_tolerance)
        return cls(path, end, float(goal_time))

    def copy(self):
        return SegmentTolerances(self.path.copy(), self.goal.copy(), self.goal_time)


def resolve_tolerance(default: float, requested: float, what: str) -> float:
    """JointTolerance semantics: > 0 overrides, 0 keeps the default, -1 erases (no check)."""
    requested = float(requested)
    if not math.isfinite(requested):
        raise GoalRejected(INVALID_GOAL, f"{what} is not finite ({requested})")
    if requested > 0:
        return requested
    if abs(requested - ERASE) < np.finfo(np.float32).eps:
        return 0.0
    if requested < 0:
        raise GoalRejected(INVALID_GOAL, f"{what} is {requested}: a tolerance is > 0, 0 (the "
                                         f"default) or -1 (no check)")
    return float(default)


def goal_tolerances(defaults: SegmentTolerances, joint_names, path_tolerance=(),
                    goal_tolerance=(), goal_time_tolerance=0.0) -> SegmentTolerances:
    """A goal's tolerances over the defaults. ``path_tolerance``/``goal_tolerance`` are
    sequences of (name, position, velocity, acceleration) — control_msgs/JointTolerance."""
    out = defaults.copy()
    out.goal_time = resolve_tolerance(defaults.goal_time, goal_time_tolerance,
                                      "goal_time_tolerance")
    index = {n: i for i, n in enumerate(joint_names)}
    for field_name, entries, target in (("path_tolerance", path_tolerance, out.path),
                                        ("goal_tolerance", goal_tolerance, out.goal)):
        for name, pos, vel, acc in entries:
            if name not in index:
                raise GoalRejected(INVALID_JOINTS, f"joint '{name}' specified in goal."
                                                   f"{field_name} does not exist")
            i = index[name]
            where = f"goal.{field_name} of joint {name}"
            target.position[i] = resolve_tolerance(target.position[i], pos, f"{where}: position")
            target.velocity[i] = resolve_tolerance(target.velocity[i], vel, f"{where}: velocity")
            target.acceleration[i] = resolve_tolerance(target.acceleration[i], acc,
                                                       f"{where}: acceleration")
    return out


#: where effort_demand samples each segment (fractions of it): its ends, the middle (the largest
#: velocity) and where a quintic between rest points accelerates most (0.21, 0.79)
DEMAND_FRACTIONS = (0.0, 0.21, 0.5, 0.79)


def effort_demand(model, reference, friction=None, damping=True, samples=200):
    """What a reference asks of the drives beyond their effort limits: ``(joint, t, τ, limit)``
    where |τ|/limit is largest, or None when it stays within the limits (or there are none).
    Sampled at :data:`DEMAND_FRACTIONS` of each segment and the last point, at most ``samples``
    times (a trajectory streamed on the topic, one or two points, costs a few evaluations). τ is
    the friction-aware inverse dynamics of the reference (seed 004 §2.7), its motor effort with
    the URDF damping ``d∘q̇`` unless ``damping=False`` (inverse dynamics' ``damping``): the
    feed-forward a controller must send; a trajectory too fast for the arm saturates the drives
    and lags."""
    from robot_dynamics.algorithm.inverse_dynamics import inverse_dynamics

    limits = np.asarray(model.effort_limits, dtype=float)
    lim = np.where((limits > 0) & np.isfinite(limits), limits, np.inf)
    if not np.isfinite(lim).any():
        return None
    T = np.asarray(reference.times, dtype=float)
    times = np.append((T[:-1, None] + np.diff(T)[:, None] * DEMAND_FRACTIONS).ravel(), T[-1])
    if len(times) > samples:
        times = times[np.linspace(0, len(times) - 1, samples).round().astype(int)]
    data = model.create_data()
    worst = (1.0, None)
    for t in times:
        q, v, a = reference.sample(t)
        tau = inverse_dynamics(model, data, q, v, a, friction, damping=bool(damping))
        ratio = np.abs(tau) / lim
        j = int(np.argmax(ratio))
        if ratio[j] > worst[0]:
            worst = (float(ratio[j]), (model.joint_names[j], float(t), float(tau[j]),
                                       float(lim[j])))
    return worst[1]


class SplicedReference:
    """``before`` until ``t_splice``, ``after`` from then on: a trajectory whose header stamp is
    in the future keeps the current reference going until it starts; a re-started first segment
    (:meth:`TrajectoryExecution._restart`) leads to the trajectory's first point."""

    def __init__(self, before, after: JointTrajectory, t_splice: float):
        self.before, self.after, self.t_splice = before, after, float(t_splice)
        self.times = after.times

    @property
    def duration(self) -> float:
        return self.after.duration

    def sample(self, t: float):
        return (self.before if t < self.t_splice else self.after).sample(t)


# -- execution ----------------------------------------------------------------------------------
@dataclass
class Outcome:
    """How a goal ended: ``status`` is 'succeeded', 'aborted' or 'canceled'."""

    status: str
    code: int
    text: str


@dataclass
class GoalExecution:
    """One accepted goal (or topic trajectory): its tolerances and, once ended, its outcome."""

    tolerances: SegmentTolerances
    source: str = "action"  # 'action' or 'topic'
    outcome: Outcome | None = None
    sampled: bool = False  # JTC checks the path tolerance on the first sample, whatever the time
    point_times: np.ndarray | None = None  # the points' stamp times (for feedback.index)

    def next_point(self, t: float) -> int:
        """Index (in the trajectory as sent) of the next point to reach at time ``t``."""
        if self.point_times is None or not len(self.point_times):
            return 0
        return int(min(np.searchsorted(self.point_times, t, side="right"),
                       len(self.point_times) - 1))

    @property
    def done(self) -> bool:
        return self.outcome is not None


@dataclass
class Sample:
    """What the last update saw: stamp time, reference and measured state (for feedback)."""

    t: float
    q_d: np.ndarray
    v_d: np.ndarray
    a_d: np.ndarray
    q: np.ndarray
    v: np.ndarray


@dataclass
class TrajectoryExecution:
    """The active reference of a controller and the goal it serves.

    Not thread-safe by itself: the node guards :meth:`install`, :meth:`hold`, :meth:`cancel` and
    :meth:`update` with one lock. :meth:`prepare` is pure (reads an immutable reference) and may
    run without it, on another thread.
    """

    joint_names: list
    defaults: SegmentTolerances
    reference: JointTrajectory | None = None
    end_time: float = -math.inf
    goal: GoalExecution | None = None
    holding: bool = True
    #: (reference replaced, command) of a just-installed trajectory that starts now: the first
    #: update re-starts its first segment at its own time (states may arrive while preparing)
    pending: tuple | None = None
    last: Sample | None = None
    log: list = field(default_factory=list)  # events for the node to log (drained by it)

    @property
    def nv(self):
        return len(self.joint_names)

    # -- building a reference (no lock needed) ----------------------------------------------
    def prepare(self, command: TrajectoryCommand, now: float, reference=None):
        """The reference for ``command`` received at ``now``: from the current reference's state
        at the splice time max(stamp, now) to the points after it (JTC's trajectory replacement).
        ``reference`` defaults to the active one. A splice in the future keeps ``reference``
        until then (:class:`SplicedReference`)."""
        ref = self.reference if reference is None else reference
        if ref is None:
            raise GoalRejected(INVALID_GOAL, "no joint state received yet: nothing to start from")
        t0 = command.stamp if command.stamp > 0 else now
        ts = max(t0, now)
        q0, v0, a0 = ref.sample(ts)
        T = t0 + command.times
        keep = T > ts
        if not keep.any():
            raise GoalRejected(OLD_HEADER_TIMESTAMP, f"every point of the trajectory is in the "
                                                     f"past (last at {T[-1]:f}, now {ts:f})")
        first = int(np.argmax(keep))
        n, cols = self.nv, command.joints
        K = len(T) - first + 1
        Q = np.empty((K, n))
        Q[:] = q0  # joints left out of a partial goal keep the current reference position
        Q[1:, cols] = command.positions[first:]
        times = np.concatenate(([ts], T[first:]))
        if command.velocities is not None:
            V = np.zeros((K, n))
            V[0] = v0
            V[1:, cols] = command.velocities[first:]
        else:
            V = finite_difference_velocities(times, Q, v_start=v0)
        A = None
        if command.accelerations is not None:
            A = np.zeros((K, n))
            A[0] = a0
            A[1:, cols] = command.accelerations[first:]
        new = JointTrajectory(times, Q, V, A)
        return SplicedReference(ref, new, ts) if ts > now else new

    # -- changing the reference (under the node's lock) -------------------------------------
    def install(self, reference, goal: GoalExecution, command=None) -> GoalExecution | None:
        """Track ``reference`` (from :meth:`prepare` of ``command``) for ``goal``; returns the
        goal it preempted (ended), if any."""
        old = self._end_goal(
            Outcome("aborted", INVALID_GOAL, "Current goal preempted by new incoming action."
                    if goal.source == "action" else
                    "Current goal preempted by a trajectory on the joint_trajectory topic."))
        previous = self.reference
        self.reference, self.end_time = reference, reference.duration
        self.goal, self.holding = goal, False
        self.pending = None
        if command is not None:
            t0 = command.stamp if command.stamp > 0 else float(reference.times[0])
            goal.point_times = t0 + command.times
            if not isinstance(reference, SplicedReference):  # it starts now: see _restart
                self.pending = (previous, replace(command, stamp=t0))
        return old

    def hold(self, q, t: float):
        """Hold position ``q`` from time ``t`` on (zero velocity)."""
        self.reference = JointTrajectory([t], np.asarray(q, float)[None, :])
        self.end_time, self.holding = t, True
        self.pending = None

    def _restart(self, t: float):
        """The just-installed reference, its first segment starting at ``t`` from the previous
        reference's state there: prepared at an earlier state's time ``ts``, it would continue
        the previous reference's position and velocity at ``t`` but not its acceleration (off
        by the splice segment's jerk × (t − ts): an effort step of M·that)."""
        (previous, command), self.pending = self.pending, None
        new = self.reference
        if previous is None or t <= new.times[0] or len(new.times) < 2:
            return
        if t < new.times[1]:  # the first point is still ahead: one new segment to it
            q0, v0, a0 = previous.sample(t)
            head = JointTrajectory(
                [t, new.times[1]], [q0, new.positions[1]], [v0, new.velocities[1]],
                [a0, new.accelerations[1]] if new.has_acc else None)
            self.reference = SplicedReference(head, new, new.times[1])
            return
        try:  # preparing took longer than the way to the first point: prepare it again (on
            # the same time line: the command's stamp is the prepared start)
            self.reference = self.prepare(command, t, previous)
        except GoalRejected:  # every point is in the past now: the prepared one still ends it
            pass

    def cancel(self, goal: GoalExecution) -> bool:
        """Cancel ``goal`` if it is the active one: hold the measured position (JTC)."""
        if goal is not self.goal or goal.done:
            return False
        self._end_goal(Outcome("canceled", SUCCESSFUL, "Goal canceled: holding position."))
        if self.last is not None:
            self.hold(self.last.q, self.last.t)
        return True

    def preempt_and_hold(self) -> GoalExecution | None:
        """End the active goal (preempted by an action goal that could not start) and hold the
        measured position; returns the goal ended, if any."""
        old = self._end_goal(Outcome("aborted", INVALID_GOAL,
                                     "Current goal preempted by new incoming action."))
        if self.last is not None:
            self.hold(self.last.q, self.last.t)
        return old

    def _end_goal(self, outcome: Outcome):
        goal = self.goal
        if goal is not None and not goal.done:
            goal.outcome = outcome
            self.log.append((goal.source, outcome))
            self.goal = None
            return goal
        self.goal = None
        return None

    # -- the control step (under the node's lock) --------------------------------------------
    def update(self, t: float, q, v):
        """Reference (q_d, q̇_d, q̈_d) at stamp time ``t`` for the measured (q, q̇), after the
        tolerance checks (which may end the goal and switch to holding)."""
        if self.reference is None:
            self.hold(q, t)  # the first state seen is the first reference
        elif self.pending is not None:
            self._restart(t)
        if isinstance(self.reference, SplicedReference) and t >= self.reference.t_splice:
            self.reference = self.reference.after  # the splice is past: drop the old part
        q_d, v_d, a_d = self.reference.sample(t)
        goal = self.goal
        if goal is not None and not self.holding:
            e_q, e_v = q_d - q, v_d - v
            tol = goal.tolerances
            moving = t < self.end_time
            if moving or not goal.sampled:
                bad = tol.path.violations(e_q, e_v)
                if len(bad):
                    self._violation(PATH_TOLERANCE_VIOLATED, "Aborted due to path tolerance "
                                    "violation: " + self._describe(bad, e_q, e_v, tol.path), q, t)
                    q_d, v_d, a_d = self.reference.sample(t)
            goal.sampled = True
            if not moving and not self.holding:
                bad = tol.goal.violations(e_q, e_v)
                late = t - self.end_time
                if not len(bad):
                    self._end_goal(Outcome("succeeded", SUCCESSFUL, "Goal successfully reached!"))
                    self.holding = True  # keep the last point as the reference
                elif tol.goal_time > 0 and late > tol.goal_time:
                    self._violation(GOAL_TOLERANCE_VIOLATED,
                                    f"Aborted due to goal_time_tolerance exceeding by {late:f} "
                                    f"seconds: " + self._describe(bad, e_q, e_v, tol.goal), q, t)
                    q_d, v_d, a_d = self.reference.sample(t)
        self.last = Sample(t, q_d, v_d, a_d, q, v)
        return q_d, v_d, a_d

    def _violation(self, code, text, q, t):
        self._end_goal(Outcome("aborted", code, text))
        self.hold(q, t)

    def _describe(self, bad, e_q, e_v, tol: StateTolerance) -> str:
        parts = []
        for i in bad[:3]:
            name = self.joint_names[i]
            if tol.position[i] > 0 and abs(e_q[i]) > tol.position[i]:
                parts.append(f"{name} position error {e_q[i]:+.4g} (tolerance {tol.position[i]:g})")
            if tol.velocity[i] > 0 and abs(e_v[i]) > tol.velocity[i]:
                parts.append(f"{name} velocity error {e_v[i]:+.4g} (tolerance {tol.velocity[i]:g})")
        return "; ".join(parts)
