"""What the three nodes share: typed parameters, robot and friction loading, JointState matching.

Callbacks go message → numpy → core → message; everything here is the message/parameter side.
"""
from __future__ import annotations

import array
import gc
import math
import re
import sys
import warnings

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from robot_dynamics.parsers.urdf import load_urdf
from robot_dynamics.errors import InputError, ModelError
from robot_dynamics.parsers.resources import bundled_robot, config_path, robot_path
from robot_dynamics.ros.params import (DYNAMIC, NODES, ROBOT, check_choice, find,
                                       type_fits, type_problem)

#: /joint_states and effort commands: reliable, keep last few (a controller wants the newest).
STATE_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                       depth=10)
#: A trajectory must not be lost by a late subscriber: transient local.
TRAJECTORY_QOS = QoSProfile(reliability=ReliabilityPolicy.RELIABLE,
                            history=HistoryPolicy.KEEP_LAST, depth=1,
                            durability=DurabilityPolicy.TRANSIENT_LOCAL)


_UNSET = object()


def parameter_row(node, name):
    """The row of ``node``'s table (``params.NODES[node.parameter_table]``) that declares
    ``name`` (a per-joint template instantiated for its joint); ValueError if there is none."""
    row = find(NODES[node.parameter_table][2], name)
    if row is None:
        raise ValueError(f"parameter {name}: not in the {node.parameter_table} table "
                         "(robot_dynamics/nodes/params.py)")
    return row


def declare(node, name, default=_UNSET):
    """Declare parameter ``name`` from the node's table in :mod:`.params` (the node class names
    it: ``parameter_table``): its type, default, description, range (numbers), choices
    (strings: one of them, else ValueError) and read-only flag. ``default`` only for a row whose
    default is computed at start-up (``params.DYNAMIC``, e.g. the URDF joint order). A float
    parameter given as an integer (``-p rate:=500``, or live: ``ros2 param set /simulator
    command_timeout 1``) is read as a float, as a user writing it means. Returns the value."""
    p = parameter_row(node, name)
    if (p.default is DYNAMIC) != (default is not _UNSET):
        raise TypeError(f"parameter {name}: a default is passed to declare() exactly when the "
                        "table's is DYNAMIC")
    if default is _UNSET:  # a list default is copied: the table's row is shared by every node
        default = list(p.default) if isinstance(p.default, list) else p.default
    desc = ParameterDescriptor(description=p.description, read_only=p.read_only)
    if not getattr(node, "_live_sets_as_at_start_up", False):
        _live_sets_as_at_start_up(node)
    override = getattr(node, "_parameter_overrides", {}).get(name)
    if p.type == "double" and override is not None and override.type_ == Parameter.Type.INTEGER:
        node._parameter_overrides[name] = Parameter(name, value=float(override.value))
    if p.low is not None:
        if p.type == "integer":
            desc.integer_range = [IntegerRange(from_value=int(p.low), to_value=int(p.high),
                                               step=0)]
        else:
            desc.floating_point_range = [FloatingPointRange(from_value=float(p.low),
                                                            to_value=float(p.high), step=0.0)]
    value = node.declare_parameter(name, default, desc).value
    if p.choices is not None:
        check_choice(name, value, p.choices)
    return value


def _live_sets_as_at_start_up(node):
    """Live sets (``ros2 param set``, a SetParameters call) read and refused as the start-up
    reads and refuses ``-p`` values: an integer for a double parameter (``ros2 param set
    /dynamics_model publish_rate 20`` sends an INTEGER) is read as the float, as :func:`declare`
    reads an override (rclpy refused it); a value of the wrong type or out of range is refused
    in the start-up's words (params.type_problem: "parameter markers: expected type bool, got
    '3' of type integer", not rclpy's "Wrong parameter type, expected '1' got '2'"), and the
    node's log says so, as for the refusals of its own checks (:func:`on_set_parameters`).
    Both parameter services call ``set_parameters_atomically`` (in-process callers
    ``set_parameters``: both are reworded); the integers are widened by a pre-set callback
    (rclpy ≥ Iron), before rclpy checks the type."""
    node._live_sets_as_at_start_up = True
    table = NODES[node.parameter_table][2]

    def widen(params):
        out = []
        for param in params:
            row = find(table, param.name)
            if (row is not None and row.type == "double"
                    and param.type_ == Parameter.Type.INTEGER):
                param = Parameter(param.name, value=float(param.value))
            out.append(param)
        return out

    if hasattr(node, "add_pre_set_parameters_callback"):
        node.add_pre_set_parameters_callback(widen)
    atomically, one_by_one = node.set_parameters_atomically, node.set_parameters

    def reword(result, parameter_list):
        if not result.successful:
            reason = _refusal_words(table, parameter_list, result.reason)
            if reason != result.reason:
                result.reason = reason
                node.get_logger().warning(f"rejected parameter change: {reason}")
        return result

    node.set_parameters_atomically = lambda params: reword(atomically(params), params)
    node.set_parameters = lambda params: [reword(result, [param]) for param, result
                                          in zip(params, one_by_one(params))]


def _refusal_words(table, parameter_list, reason):
    """rclpy's refusal ``reason`` of a set of ``parameter_list`` in the start-up's words (a
    wrong type, a value out of range); any other reason as it is."""
    m = re.match(r"Parameter (\S+) out of range\.? Min: (\S+), Max: (\S+), value: (\S+)$", reason)
    if m:
        return f"parameter {m[1]}: {m[4]} is out of range [{m[2]}, {m[3]}]"
    if reason.startswith("Wrong parameter type"):
        for param in parameter_list:  # rclpy stops at the first one it refuses
            row = find(table, param.name)
            given = param.type_.name.lower()
            if row is not None and not type_fits(row.type, given):
                return type_problem(param.name, row.type, str(_as_written(param.value)), given)
    return reason


def on_set_parameters(node, live, apply, check=None):
    """A SetParameters callback: ``live`` maps each live parameter's name to a validator
    (value → the value to apply, or ValueError with the reason); every parameter of a call is
    validated before any is applied (``apply({name: value})``), so a call changes all or none.
    ``check(updates)`` (optional) then checks the call's values together (ValueError: the call
    is refused; e.g. the payload set, :mod:`.payload`). rclpy itself refuses read-only
    parameters, wrong types and values out of range."""
    from rcl_interfaces.msg import SetParametersResult

    def callback(params):
        updates = {}
        try:
            for p in params:
                if p.name in live:
                    updates[p.name] = live[p.name](p.value)
            if check is not None and updates:
                check(updates)
        except ValueError as exc:
            node.get_logger().warning(f"rejected parameter change: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        if updates:
            apply(updates)
            node.get_logger().info("parameters set: " + ", ".join(
                f"{k}={v!r}" for k, v in sorted(updates.items())))
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(callback)


def per_joint(name, values, n, *, nonnegative=False):
    """A parameter given as one number for all joints or one per joint → (n,) array."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 1:
        arr = np.full(n, float(arr.ravel()[0]))
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or (nonnegative and np.any(arr < 0)):
        kind = "non-negative" if nonnegative else "finite"
        raise ValueError(f"parameter {name}: expected 1 or {n} {kind} numbers, "
                         f"got {_as_written(values)}")
    return arr


def _as_written(values):
    """A parameter value as the user wrote it: rclpy's ``array('d', [...])`` and numpy arrays
    as a plain list (``[nan, 0.0]``)."""
    if isinstance(values, np.ndarray):
        return values.tolist()
    if isinstance(values, (array.array, tuple)):
        return [v.item() if isinstance(v, np.generic) else v for v in values]
    return values


def declare_robot_parameters(node):
    """The parameters every node uses to know the robot and its friction (``params.ROBOT``;
    read-only: a node is built for one robot)."""
    for p in ROBOT:
        declare(node, p.name)


def load_robot(node):
    """Build (model, friction) from the node's parameters. Raises ModelError with the reason.

    With ``validate:=warn`` each problem the URDF check finds (a Python warning) becomes one
    warning line of the node's log. The start-up log says where the robot is fixed: floating
    bases are not modelled.
    """
    xml = node.get_parameter("robot_description").value
    robot = node.get_parameter("robot").value
    validate = node.get_parameter("validate").value
    source = "robot_description" if xml.strip() else "robot"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = load_urdf(xml if xml.strip() else robot_path(robot), validate=validate,
                              mimic=node.get_parameter("mimic").value)
        except ModelError as exc:
            raise ModelError(f"parameter {source}: {exc}") from None
    log = node.get_logger()
    for w in caught:
        log.warning(str(w.message))
    log.info(f"robot {model.name!r}: {model.nv} joints, modelled fixed at its root link "
             f"{model.base_link!r} (floating bases are not modelled)")
    if getattr(model, "followers", None):
        log.info(f"mimic joints follow their leaders ({model.followers}): {model.nv} "
                 "independent coordinates")
    elif model.mimic:
        log.warning(f"<mimic> joints {sorted(model.mimic)} are modelled as independent joints "
                    "(parameter mimic is false)")
    try:
        spec = node.get_parameter("friction_config").value
        bundled = bundled_robot(robot, xml)
        friction = load_friction(spec, bundled, model)
    except (ModelError, ValueError) as exc:
        raise ModelError(f"parameter friction_config: {exc}") from None
    if bundled is None and not spec.strip():
        log.info(f"{model.name!r} is not a bundled robot and parameter friction_config is empty:"
                 + (" no friction" if friction is None else " the URDF's <dynamics friction> as "
                    f"Coulomb friction {np.round(model.urdf_friction, 4).tolist()}")
                 + " (a friction YAML sets it)")
    try:
        actuators, friction = load_actuators(node.get_parameter("actuators").value, model,
                                             friction)
    except (ModelError, ValueError) as exc:
        raise ModelError(f"parameter actuators: {exc}") from None
    if actuators is not None:
        log.info(f"actuators {actuators.source}: armature {np.round(model.armature, 4).tolist()}"
                 f" kg·m², effort limits {model.effort_limits.tolist()}")
    return model, friction


def load_actuators(spec: str, model, friction):
    """``(Actuators or None, friction)``: the actuator config ``spec`` (bundled name or path;
    '' or 'none': none) applied to ``model`` (armature, effort limits) and its gear and motor
    friction added to ``friction`` (:func:`robot_dynamics.friction.actuators.load_actuators`)."""
    from robot_dynamics.friction.actuators import load_actuators as load

    spec = (spec or "").strip()
    if spec.lower() in ("", "none"):
        return None, friction
    return load(config_path(spec, "actuators"), model, friction)


def load_friction(spec: str, bundled, model):
    """Friction model from a config name/path; None for 'none'. An empty ``spec``: the bundled
    robot's ``<bundled>_friction`` (``bundled``: :func:`~robot_dynamics.parsers.resources.bundled_robot`),
    else the URDF's own ``<dynamics friction>`` (:func:`urdf_friction`), else None."""
    from robot_dynamics.friction import friction_from_config

    spec = (spec or "").strip()
    if spec.lower() == "none":
        return None
    if not spec:
        path = None
        if bundled is not None:
            try:
                path = config_path(bundled + "_friction")
            except ModelError:  # a bundled robot without a friction file
                pass
        return urdf_friction(model) if path is None else friction_from_config(path, model)
    return friction_from_config(config_path(spec, "friction"), model)


def urdf_friction(model):
    """The URDF's ``<dynamics friction="…">`` as Coulomb friction (the classic law, no viscous
    part: the URDF's damping is the Simulator's), as Gazebo and MuJoCo's URDF import
    (frictionloss) read it; None when every joint declares 0."""
    from robot_dynamics.friction import friction_from_config

    # mimic coordinates: the laws are per joint of the URDF (friction_from_config maps them)
    full = model.full if getattr(model, "coupling", None) is not None else model
    levels = np.asarray(full.urdf_friction, dtype=float)
    if not np.any(levels > 0):
        return None
    joints = {name: {"model": "classic", "coulomb": float(x), "viscous": 0.0}
              for name, x in zip(full.joint_names, levels) if x > 0}
    return friction_from_config({"default": {"model": "none"}, "joints": joints}, model)


class JointStateMatcher:
    """Reads JointState messages into the model's joint order, by name.

    Extra joints (not in the model) are ignored; a missing joint, length mismatch, or non-finite
    value rejects the message with an :class:`InputError` saying which field and joint.
    """

    def __init__(self, joint_names):
        self.joint_names = list(joint_names)
        self._cache_names = None  # the name list the permutation below was built for
        self._perm = None

    def _permutation(self, names):
        if names != self._cache_names:  # msg.name is a list: no copy per message
            index = {n: i for i, n in enumerate(names)}
            if len(index) != len(names):
                raise InputError(f"JointState.name has duplicates: {list(names)}")
            missing = [n for n in self.joint_names if n not in index]
            if missing:
                raise InputError(f"JointState lacks joint(s) {missing} (got {list(names)})")
            self._perm = np.array([index[n] for n in self.joint_names])
            self._cache_names = list(names)
        return self._perm

    def read(self, msg, *, need_velocity=True, need_effort=False):
        """Return (q, v, effort-or-None) in model order."""
        names = msg.name
        perm = self._permutation(names)
        n = len(names)
        out = []
        for field, required in (("position", True), ("velocity", need_velocity),
                                ("effort", need_effort)):
            values = getattr(msg, field)
            if len(values) == 0 and not required:
                out.append(None)
                continue
            if len(values) != n:
                raise InputError(f"JointState.{field} has {len(values)} values for {n} names")
            arr = np.asarray(values, dtype=float)[perm]
            if not math.isfinite(arr.sum()):  # one reduction; the per-joint check only then
                bad = ~np.isfinite(arr)
                if bad.any():
                    raise InputError(f"JointState.{field} is not finite for joint(s) "
                                     f"{[self.joint_names[i] for i in np.flatnonzero(bad)]}")
            out.append(arr)
        return tuple(out)


def stamp_to_seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


def seconds_to_stamp(t: float, msg_time):
    """Write ``t`` seconds into a builtin_interfaces/Time (rounded to the nanosecond)."""
    ns = int(round(t * 1e9))
    msg_time.sec, msg_time.nanosec = divmod(ns, 1_000_000_000)
    return msg_time


def parameter_error_text(exc) -> str:
    """One line for a parameter value a node refuses (ValueError from its checks, or rclpy's
    ParameterException "<why>: <name>", its range message shortened to "<value> is out of
    range [min, max]")."""
    from rclpy.exceptions import ParameterException

    text = str(exc)
    if isinstance(exc, ParameterException) and ": " in text:
        why, pname = text.rsplit(": ", 1)
        why = why.split("Reason: ")[-1]
        # (rclpy writes "out of range. Min" for integers, "out of range Min" for doubles)
        m = re.match(r"Parameter \S+ out of range\.? Min: (\S+), Max: (\S+), value: (\S+)$", why)
        if m:
            why = f"{m[3]} is out of range [{m[1]}, {m[2]}]"
        m = re.match(r"Trying to set parameter '(\S+)' to '(.*)' of type '(\w+)', expecting "
                     r"type '(\w+)'$", why)
        if m:  # the words of the command line's early refusal (params.override_problem)
            return type_problem(m[1], m[4].lower(), m[2], m[3].lower())
        text = f"parameter {pname}: {why}"
    return text.splitlines()[0] if text else type(exc).__name__


def _construct(node_class):
    """``node_class()``; when its constructor raises, the half-built node is destroyed first
    (its publishers, services, state thread): never destroyed, it stays registered with the
    middleware (Jazzy then warns "Publisher already registered for node name")."""
    node = node_class.__new__(node_class)
    try:
        node.__init__()
    except BaseException:
        try:
            node.destroy_node()
        except Exception:  # noqa: BLE001 - Node.__init__ itself failed: nothing to destroy
            pass
        raise
    return node


def run_node(node_class, args=None):
    """Standard main(): init, spin until Ctrl-C, shut down cleanly."""
    import rclpy
    from rclpy.executors import (ExternalShutdownException, MultiThreadedExecutor,
                                 SingleThreadedExecutor)

    from rclpy.exceptions import ParameterException

    from robot_dynamics.ros.params import wants_help

    from robot_dynamics.ros import signals

    if wants_help((sys.argv if args is None else args)[1:]):  # (python -m ….nodes.<node> -h)
        from robot_dynamics.ros.params import format_help

        print(format_help(getattr(node_class, "node_name", node_class.__name__)))
        return
    # the first SIGINT/SIGTERM raises KeyboardInterrupt once, later ones are ignored: the
    # clean-up below always runs to its end (signals.py says why)
    signals.install()
    node = executor = None
    node_name = getattr(node_class, "node_name", node_class.__name__)
    try:
        rclpy.init(args=args)
        try:
            node = _construct(node_class)
        except (ValueError, ParameterException) as exc:
            if signals.received() is not None:  # interrupted while it was built: not a mistake
                raise KeyboardInterrupt from exc
            # a user mistake in the node's parameters: one line naming it, exit code 2
            name = getattr(node_class, "node_name", node_class.__name__)
            # (in the words and with the prefix of the command line's early refusals)
            print(f"robot-dynamics {name}: {parameter_error_text(exc)}", file=sys.stderr)
            rclpy.shutdown()
            sys.exit(2)
        node_name = node.get_name()  # read now: a signal's context shutdown may have
        # requested the node's destruction by the time the clean-up below runs
        # An action goal (own reentrant group) waits while callbacks go on: that needs two
        # threads. Otherwise one thread: rclpy's multi-threaded executor costs milliseconds of
        # latency per callback, too much for a 1 kHz loop.
        if getattr(node, "needs_threads", False):
            executor = MultiThreadedExecutor(num_threads=2)
        else:
            executor = SingleThreadedExecutor()
        executor.add_node(node)
        if signals.received() is not None:  # its KeyboardInterrupt was swallowed (raised in a
            raise KeyboardInterrupt  # __del__, say) before rclpy's handler could stop the spin
        signals.stop_by(node.context.try_shutdown)  # a signal now ends the spin, raises nothing
        # everything built so far (modules, model, compiled kernels) lives as long as the
        # process: out of the collector's sight, a full collection no longer walks it (pauses
        # of milliseconds, at the 99th percentile of a 1 kHz loop's latency)
        gc.collect()
        gc.freeze()
        try:
            executor.spin()
        except Exception:  # a callback racing a SIGTERM/SIGINT shutdown: not an error
            if rclpy.ok():
                raise
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        signals.hold()  # no KeyboardInterrupt inside the clean-up, not even a deferred one
        signals.stop_by(None)
        if executor is not None:  # its threads end before the node and the context go
            executor.shutdown(timeout_sec=2.0)
        if node is not None:
            closing = getattr(node, "closing_line", None)
            try:  # a last word, e.g. where the simulation got to (the node's Python state)
                last = closing() if closing is not None else None
            except Exception:  # noqa: BLE001 - it must not mask the exit
                last = None
            if not last and signals.received() is not None:  # every node says why it ends
                last = f"stopped by {signals.received_name()}"
            try:
                node.destroy_node()
            except Exception:  # noqa: BLE001 - its handle already destroyed: two signals
                # (a terminal's Ctrl-C and ros2 launch's) can have the context's shutdown
                # request the node's destruction first ("destruction was requested")
                if signals.received() is None:
                    raise
            if last:  # logged once the node is gone: its /rosout publisher's context may be
                rclpy.logging.get_logger(node_name).info(last)  # shut down by the signal
                signals.mark_said()
        if rclpy.ok():
            rclpy.shutdown()
        signals.finish()
