"""The three nodes' parameters as plain data: the single source of every declaration.

Each node declares its parameters from its table here, by name (``common.declare(node,
"rate")``: type, default, range, choices, read-only flag and description all come from the
row), so nothing is written twice. ``robot-dynamics <node> --help`` prints the same tables
without starting rclpy (a pip user has no ``ros2 param describe``, and starting a node that
loads a robot to answer ``--help`` is slow and has side effects): this module imports no ROS.
``test/test_cli.py`` starts each node and checks that what it declared is exactly its table
(per-joint rows expanded over the robot's joints).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from robot_dynamics.parsers.resources import robot_help

#: marks a per-joint row: its name (and description) holds this once, one parameter per joint
JOINT = "<joint>"
#: marks a default that the node computes from the robot (e.g. the URDF joint order)
DYNAMIC = "<from the robot>"


@dataclass(frozen=True)
class Param:
    """One declared parameter. ``type`` is the ROS 2 parameter type name (as ``ros2 param
    describe`` prints it); ``low``/``high`` the declared range (None: no range); ``choices``
    the values a string may take (checked at start-up; the node checks live changes against
    the same tuple); ``default=DYNAMIC`` marks a default computed at start-up (described in
    ``description``, passed to ``declare`` by the node). A name containing :data:`JOINT`
    (``constraints.<joint>.goal``) stands for one parameter per joint of the robot."""

    name: str
    type: str
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    read_only: bool = False
    choices: tuple | None = None

    @property
    def per_joint(self) -> bool:
        return JOINT in self.name

    def for_joint(self, joint: str) -> "Param":
        """The concrete row of a per-joint template for ``joint``."""
        return replace(self, name=self.name.replace(JOINT, joint),
                       description=self.description.replace(JOINT, joint))

    def joint_of(self, name: str) -> str | None:
        """The joint that ``name`` instantiates this template for, or None."""
        if not self.per_joint:
            return None
        head, tail = self.name.split(JOINT, 1)
        if len(name) > len(head) + len(tail) and name.startswith(head) and name.endswith(tail):
            return name[len(head):len(name) - len(tail)]
        return None


def find(table, name: str) -> Param | None:
    """The row of ``table`` that declares ``name`` (a per-joint template instantiated for the
    joint it names), or None."""
    for p in table:
        if p.name == name:
            return p
    for p in table:
        joint = p.joint_of(name)
        if joint is not None:
            return p.for_joint(joint)
    return None


def expand(table, joints) -> tuple:
    """``table`` with each per-joint template replaced by one row per joint of ``joints``."""
    return tuple(q for p in table for q in ([p.for_joint(j) for j in joints] if p.per_joint
                                            else [p]))


def row(table, name: str) -> Param:
    """The row named exactly ``name`` (KeyError if the table has none)."""
    for p in table:
        if p.name == name:
            return p
    raise KeyError(name)


def check_choice(name, value, choices):
    """``value`` if it is one of ``choices``, else ValueError naming the parameter."""
    if value not in choices:
        raise ValueError(f"parameter {name}: expected one of {' | '.join(choices)}, "
                         f"got {value!r}")
    return value


def override_problem(p: Param, text: str):
    """What a node refuses at start-up in the override ``-p NAME:=text`` of row ``p``, told from
    the table alone: a value of the wrong type (:func:`override_type`, :func:`type_problem`), a
    number out of the row's range (the words rclpy's refusal takes in
    ``common.parameter_error_text``), a string not among its choices. None when the table alone
    cannot tell: the node checks the rest (per-joint lengths, files, values whose YAML type
    this cannot tell for sure). ``robot-dynamics
    <node>`` asks this before the node and the compiled kernels it needs are loaded (minutes on
    a cold numba cache)."""
    given = override_type(text)
    if given is not None and not type_fits(p.type, given):
        return type_problem(p.name, p.type, text, given)
    if p.low is not None and p.type in ("double", "integer"):
        try:
            x = float(text)
        except ValueError:  # not a number: rclpy's type check names it
            return None
        if x == x and abs(x) != float("inf") and not p.low <= x <= p.high:
            return (f"parameter {p.name}: {text} is out of range "
                    f"[{_fmt_value(p.low)}, {_fmt_value(p.high)}]")
    if p.choices is not None and p.type == "string":
        value = text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text
        try:
            check_choice(p.name, value, p.choices)
        except ValueError as exc:
            return str(exc)
    return None


#: rcl's words for true and false in a -p value (rcl_yaml_param_parser, parse.c get_value)
_TRUE = ("Y", "y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
_FALSE = ("N", "n", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
#: strtol(value, &end, 0) reading the whole text: decimal, 0x hexadecimal, 0 octal
_INTEGER = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
#: strtod reading the whole text (decimal forms, inf, nan), and YAML's .inf/.nan spellings
_DOUBLE = re.compile(r"[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?"
                     r"|[nN][aA][nN])|[+-]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
#: a plain YAML scalar rcl surely reads as a string (no YAML syntax, not a number or a bool)
_WORD = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*")


def _scalar_type(text: str):
    """The ROS type rcl gives the plain scalar ``text`` (bool, integer, double, string), or None
    when this cannot tell for sure."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[0] not in text[1:-1]:
        return "string"  # quoted: a string whatever it holds
    if text in _TRUE or text in _FALSE:
        return "bool"
    if _INTEGER.fullmatch(text):
        body = text.lstrip("+-")
        base = 16 if body[:2] in ("0x", "0X") else 8 if body[:1] == "0" and body != "0" else 10
        # beyond int64 strtol fails (ERANGE) and strtod reads it: a double
        return "integer" if -2**63 <= int(body, base) < 2**63 else "double"
    if _DOUBLE.fullmatch(text):
        value = float(text.replace(".inf", "inf").replace(".Inf", "inf").replace(".INF", "inf")
                      .replace(".nan", "nan").replace(".NaN", "nan").replace(".NAN", "nan"))
        if abs(value) == float("inf") and "n" not in text.lower():
            return "string"  # strtod overflows (1e400): rcl keeps the text
        return "double"
    if _WORD.fullmatch(text):
        return "string"
    return None


def override_type(text: str):
    """The ROS 2 parameter type rcl gives the value ``text`` of ``-p NAME:=text`` (it reads it
    as YAML: rcl_yaml_param_parser's get_value tries bool words, then strtol, then strtod, else
    a string; quoted: a string; ``[a, b]``: an array of one element type), as the table names
    types (``double``, ``integer_array``...). None when this cannot tell for sure (YAML syntax,
    spaces, an empty or mixed list): the node then checks the value itself."""
    if text.startswith("[") and text.endswith("]"):
        items = [item.strip() for item in text[1:-1].split(",")]
        kinds = {_scalar_type(item) for item in items}
        if not text[1:-1].strip() or len(kinds) != 1 or None in kinds:
            return None
        return kinds.pop() + "_array"
    return _scalar_type(text)


#: the order in which rclpy reads the value slots of rcl's parameter variant (rcl_variant_t):
#: the first slot set is the parameter's value
_SLOT_ORDER = ("bool", "integer", "double", "string", "bool_array", "integer_array",
               "double_array", "string_array")


def applied_override(values):
    """The text of the value a node gets from several ``-p [NODE:]NAME:=TEXT`` of one name,
    ``values`` being their (NODE or '', TEXT) in command-line order, or None when this cannot
    tell (a text whose type :func:`override_type` cannot tell). Not simply the last one: rcl
    (rcl_yaml_param_parser) keeps one value per type and scope, a later value of the same type
    replacing the earlier, and rclpy reads a scope's value slots in the order bool, integer,
    double, string, then the arrays (``-p x:=1 -p x:=a`` gives the integer 1, ``-p x:=a
    -p x:=1`` too); the scopes (``/**`` for a bare NAME, the node's name) apply in the order
    they first appear, a later one replacing an earlier. Measured with rclpy 9.1.2."""
    if len(values) == 1:
        return values[0][1]
    scopes = {}  # scope -> {type: text}, in order of first appearance
    for scope, text in values:
        kind = override_type(text)
        if kind is None:
            return None
        scopes.setdefault(scope, {})[kind] = text
    slots = list(scopes.values())[-1]
    return slots[min(slots, key=_SLOT_ORDER.index)]


def type_fits(declared: str, given: str) -> bool:
    """Whether a node takes a value of type ``given`` for a parameter declared ``declared``: the
    same type, or an integer for a double (``-p rate:=500``; common.declare converts it)."""
    return given == declared or (declared, given) == ("double", "integer")


def type_problem(name: str, declared: str, shown: str, given: str) -> str:
    """The one line for parameter ``name`` (declared of type ``declared``) given the value
    ``shown`` (as written, or as rclpy shows it) of type ``given``: the early refusal
    (:func:`override_problem`) and the node's own (``common.parameter_error_text``, rclpy's
    InvalidParameterTypeException) say the same."""
    text = f"parameter {name}: expected type {declared}, got {shown!r} of type {given}"
    if declared == "double_array" or (declared.endswith("_array")
                                      and not given.endswith("_array")):
        return text + array_hint(name, shown, declared[:-len("_array")].upper())
    if declared == "string":
        return text + f" (quote it: {name}:=\"'{shown}'\")"
    if declared == "bool":
        return text + " (true or false)"
    return text


def array_hint(name, given, element):
    """The end of the message for ``given`` (the text rclpy shows) set on the ``element``-array
    parameter ``name``: the list to write. A double array shows numbers: the ones given, as
    floats, or else the parameter's default (``kp:=[400.0]``)."""
    if element != "DOUBLE":
        return f": write a list, {name}:=[{given}]"
    listed = given.startswith("[") and given.endswith("]")
    try:
        numbers = [float(x) for x in (given[1:-1] if listed else given).split(",")]
    except ValueError:  # words, booleans, quoted strings
        numbers = None
    if numbers is not None and not listed:  # a number where a list is declared
        return f": write a list, {name}:=[{', '.join(map(repr, numbers))}]"
    if numbers is not None:  # integers: rclpy takes only floats for a double array
        return f": write the numbers as floats, {name}:=[{', '.join(map(repr, numbers))}]"
    row = next((r for _, _, table in NODES.values() for r in [find(table, name)]
                if r is not None and r.type == "double_array"), None)
    example = row.default if row is not None and isinstance(row.default, list) else [0.0]
    return (f": the values must be numbers, e.g. {name}:="
            f"[{', '.join(repr(float(x)) for x in example)}]")


ROBOT = (
    Param("robot_description", "string", "",
          "URDF XML of the robot (as robot_state_publisher takes it); wins over 'robot'",
          read_only=True),
    Param("robot", "string", "arm7", robot_help(), read_only=True),
    Param("validate", "string", "strict",
          "URDF physics check: 'strict' refuses unphysical moving bodies; 'warn' loads them and "
          "logs one warning per problem (a singular mass matrix loads under both, with a "
          "warning; the simulator then refuses it)", read_only=True,
          choices=("strict", "warn")),
    Param("mimic", "bool", True,
          "URDF <mimic> joints follow their leaders (one coordinate per independent joint; "
          "/joint_states of the simulator names the followers too); false: independent",
          read_only=True),
    Param("friction_config", "string", "",
          "friction YAML: bundled name or path; 'none' for no friction; empty = '<robot>_friction'"
          " when the robot is a bundled one (robot_description, if set, is its file's text), "
          "else the URDF's <dynamics friction> as Coulomb friction (none where it is 0). A "
          "'default:' entry applies to mimic followers too; a follower with friction makes the "
          "simulator step in Python (give it 'none' to keep the compiled step)",
          read_only=True),
    Param("actuators", "string", "",
          "actuator YAML (gear ratio, rotor inertia → armature, gear-mesh efficiency, motor "
          "torque limit and friction per joint; robot_dynamics.friction.actuators): bundled name (e.g. "
          "arm7_actuators) or path; empty or 'none' = no actuator model", read_only=True),
)

#: the payload a node's model carries (issue 32; robot_dynamics.ros.payload): every node has
#: them, live (``ros2 param set``), as Franka's SetLoad and UR's set_payload
PAYLOAD = (
    Param("payload.link", "string", "",
          "link carrying the payload (any link of the robot; a fixed one, e.g. tool0, loads the "
          "body that moves it); '' = no payload. The payload is the set payload.link, "
          "payload.mass, payload.com, payload.inertia: a change (one at a time or several with "
          "SetParametersAtomically) is applied at once when the set is valid, else refused"),
    Param("payload.mass", "double", 0.0,
          "payload mass [kg], 0 to 1e4; 0 = no payload"),
    Param("payload.com", "double_array", [0.0, 0.0, 0.0],
          "payload centre of mass [m], 3 numbers in the link frame (each within 10 m)"),
    Param("payload.inertia", "double_array", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
          "payload inertia [kg·m²] about its centre of mass, link-frame axes: ixx ixy ixz iyy "
          "iyz izz (all 0: a point mass); positive semi-definite, I1 + I2 >= I3, each entry "
          "within 1e4"),
    Param("payload_file", "string", "",
          "YAML file with a 'payload:' section (one entry or a list: link, mass, com, inertia; "
          "robot_dynamics.payload_from_config), applied with the payload.* set (which replaces "
          "the file's entry on the same link); '' = none; live: the file is read again when set"),
)

SIMULATOR = ROBOT + (
    Param("rate", "double", 1000.0, "integration rate [Hz] (step = 1/rate)", 10.0, 100000.0,
          read_only=True),
    Param("mode", "string", "realtime", "realtime | fast | lockstep (live); realtime as a real "
          "arm's clock runs (the sim demo runs its simulator in lockstep, deterministic)",
          choices=("realtime", "fast", "lockstep")),
    Param("limits", "bool", True, "joint position limits of the URDF as hard stops (false: no "
          "stops)", read_only=True),
    Param("initial_positions", "double_array", [0.0], "initial joint positions (URDF order); "
          "[0.0] means all zero, or the nearest limit where a joint's range excludes 0; live: "
          "used by the next ~/reset"),
    Param("initial_velocities", "double_array", [0.0], "initial joint velocities; [0.0] = zero;"
          " live: used by the next ~/reset"),
    Param("lockstep_timeout", "double", 0.5,
          "lockstep: re-publish the state after this many seconds without a command", 0.001, 60.0),
    Param("audit_period", "double", 1.0,
          "simulated seconds between energy-audit reports (0: never)", 0.0, 3600.0),
    Param("publish_every", "integer", 1,
          "fast mode: steps integrated per published state (a JointState per 1 kHz step caps "
          "fast mode at the rate rclpy can publish)", 1, 100000),
    Param("publish_clock", "bool", True, "publish /clock (sim time)"),
    Param("external_wrench_duration", "double", 0.0,
          "seconds of simulated time a wrench on ~/external_wrench is applied (0: until "
          "replaced or cleared) (live: for the wrenches received after the change)", 0.0, 1e6),
    Param("command_topic", "string", "/effort_controller/commands",
          "effort command input (Float64MultiArray, URDF joint order)", read_only=True),
    Param("command_timeout", "double", 0.1,
          "seconds without a fresh command (of simulated time, and of wall time: fast mode "
          "outruns a live controller) after which stale_command_behavior applies (0: never)",
          0.0, 3600.0),
    Param("stale_command_behavior", "string", "zero",
          "effort once commands are stale: zero | brake (hold the position where they went "
          "stale, gravity-compensated, within the effort limits)", choices=("zero", "brake")),
    Param("brake_bandwidth", "double", 20.0,
          "brake: closed-loop bandwidth ω of the position hold [rad/s] (critically damped; "
          "with brake, at most 0.2·rate)",
          0.1, 1000.0),
    Param("wait_for_command", "bool", False,
          "do not start the simulation (time frozen, state re-published) until the first effort "
          "command", read_only=True),
    Param("on_error", "string", "hold",
          "when a step fails: hold (keep the last good state) | reset (back to the initial "
          "state)", choices=("hold", "reset")),
    Param("overrun_threshold", "double", 0.01,
          "realtime: a tick finding the simulation more than this many seconds behind the wall "
          "clock (after one step) is an overrun", 0.0, 10.0),
) + PAYLOAD

ID_CONTROLLER = ROBOT + (
    Param("joint_names", "string_array", DYNAMIC,
          "joint order of the effort command and the action feedback (defaults to the URDF "
          "order)", read_only=True),
    Param("kp", "double_array", [400.0],
          "position gains K_p [1/s²], one per joint or one for all"),
    Param("kd", "double_array", [40.0], "velocity gains K_d [1/s], one per joint or one for all"),
    Param("friction_compensation", "bool", True, "add the friction map and the URDF's joint "
          "damping d∘q̇ (which the simulator applies) to the computed torque"),
    Param("friction_smoothing_velocity", "double", 0.01,
          "ε [rad/s or m/s]: friction compensation direction tanh(w/ε) of the direction "
          "velocity w (0 = sign(w), switching)", 0.0, 10.0),
    Param("friction_error_gain", "double", 500.0,
          "Λ [1/s]: the position error's share of the direction velocity "
          "w = (1−β)(q̇_d + Λ(q_d − q)) + β·q̇ (0 = reference velocity only)", 0.0, 1e6),
    Param("friction_velocity_blend", "double", 0.0,
          "β: measured velocity's share of the friction compensation direction velocity w "
          "(0 = from the reference only, no chatter at rest; 1 = measured velocity only, "
          "the plain inverse dynamics law)", 0.0, 1.0),
    Param("stale_timeout", "double", 0.1, "seconds without a valid JointState before holding",
          0.001, 60.0),
    Param("stale_behavior", "string", "gravity",
          "what to command when the state is stale: gravity | zero", choices=("gravity", "zero")),
    Param("command_topic", "string", "/effort_controller/commands",
          "std_msgs/Float64MultiArray effort command topic", read_only=True),
    Param("joint_states_topic", "string", "/joint_states", "JointState input topic",
          read_only=True),
    Param("state_thread", "bool", True,
          "serve joint_states from a dedicated thread instead of the executor (lower latency: "
          "see robot_dynamics.ros.state_loop)", read_only=True),
    # joint_trajectory_controller's trajectory parameters (same names and defaults)
    Param("allow_partial_joints_goal", "bool", False,
          "accept trajectories for a subset of the joints (the others keep their reference)"),
    Param("allow_nonzero_velocity_at_trajectory_end", "bool", False,
          "accept trajectories whose last point has a velocity"),
    Param("action_monitor_rate", "double", 20.0,
          "FollowJointTrajectory feedback and status rate [Hz]", 0.1, 1000.0, read_only=True),
    Param("state_publish_rate", "double", 50.0,
          "~/controller_state rate [Hz] (control_msgs/JointTrajectoryControllerState: "
          "reference, feedback, error and output effort, as joint_trajectory_controller's; "
          "when control_msgs is installed); 0: not published", 0.0, 1000.0, read_only=True),
    Param("constraints.goal_time", "double", 0.0,
          "default time [s] allowed after the last point to be within the goal tolerance "
          "(0 = no limit)", 0.0, 3600.0),
    Param("constraints.stopped_velocity_tolerance", "double", 0.01,
          "default goal velocity tolerance [rad/s or m/s] of every joint (0 = not checked)",
          0.0, 1000.0),
    Param(f"constraints.{JOINT}.trajectory", "double", 0.0,
          f"default path position tolerance of {JOINT} [rad or m] (0 = not checked)",
          0.0, 1000.0),
    Param(f"constraints.{JOINT}.goal", "double", 0.0,
          f"default goal position tolerance of {JOINT} [rad or m] (0 = not checked)",
          0.0, 1000.0),
) + PAYLOAD

DYNAMICS_MODEL = ROBOT + (
    Param("publish_rate", "double", 50.0, "outputs per second [Hz] (live)", 0.1, 10000.0),
    Param("acceleration", "string", "zero",
          "acceleration used for wrenches/friction: zero | forward_dynamics (from the measured "
          "efforts, less the URDF damping d·q̇, as inverse dynamics adds it) (live)",
          choices=("zero", "forward_dynamics")),
    Param("markers", "bool", True, "publish friction arrows (MarkerArray) (live)"),
    Param("marker_scale", "double", 0.05, "arrow length per N·m (or N) [m] (live)", 0.0, 100.0),
    Param("joint_states_topic", "string", "/joint_states", "JointState input topic",
          read_only=True),
) + PAYLOAD

#: node name → (one-line summary, topics, parameters)
NODES = {
    "simulator": (
        "friction-aware forward simulation of the robot under effort commands",
        "subscribes /effort_controller/commands (std_msgs/Float64MultiArray) and "
        "~/external_wrench (geometry_msgs/WrenchStamped: frame_id <link> or <link>@world); "
        "publishes /joint_states, /clock, /diagnostics (diagnostic_msgs/DiagnosticArray), "
        "~/energy_audit; services ~/reset, ~/clear_external_wrench (std_srvs/Trigger)",
        SIMULATOR),
    "id_controller": (
        "friction-aware computed-torque control (seed 004 §2.7 in the loop)",
        "subscribes /joint_states and ~/joint_trajectory (trajectory_msgs/JointTrajectory); "
        "publishes /effort_controller/commands; when control_msgs is installed: action "
        "~/follow_joint_trajectory and ~/controller_state "
        "(control_msgs/JointTrajectoryControllerState)",
        ID_CONTROLLER),
    "dynamics_model": (
        "the robot's dynamics at the measured state, for monitoring and RViz",
        "subscribes /joint_states and ~/external_wrench (geometry_msgs/WrenchStamped, as the "
        "simulator's); publishes ~/gravity, ~/bias, ~/mass_matrix, ~/friction, "
        "~/wrench/<joint> (with the external wrenches), ~/friction_markers, "
        "~/external_wrench_markers",
        DYNAMICS_MODEL),
}


def _fmt_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if value != DYNAMIC else value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt_value(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def format_help(node: str, width: int = 100) -> str:
    """The ``--help`` text of ``robot-dynamics <node>``: usage, topics, every parameter."""
    import textwrap

    summary, topics, params = NODES[node]
    lines = [f"usage: robot-dynamics {node} [--ros-args [-p NAME:=VALUE ...] "
             "[--params-file FILE] [-r FROM:=TO ...]]", "",
             f"The {node} node: {summary}.", ""]
    lines += textwrap.wrap(topics, width)
    lines += ["", "parameters (name  type  default  [range]  {choices}  [read-only]):"]
    for p in params:
        head = f"  {p.name}  {p.type}  {_fmt_value(p.default)}"
        if p.low is not None:
            head += f"  [{_fmt_value(p.low)}, {_fmt_value(p.high)}]"
        if p.choices:
            head += "  {" + " | ".join(p.choices) + "}"
        if p.read_only:
            head += "  read-only"
        lines.append(head)
        text = p.description
        if p.per_joint:
            text += (f"; one parameter per joint, {JOINT} = its name (e.g. "
                     f"{p.name.replace(JOINT, 'joint_a1')}; in a --params-file nested as "
                     f"{p.name.split('.')[0]}: {{joint_a1: {{{p.name.rsplit('.', 1)[-1]}: "
                     f"...}}}})")
        lines += textwrap.wrap(text, width, initial_indent=" " * 6, subsequent_indent=" " * 6)
    lines += ["", f"example: robot-dynamics {node} --ros-args -p robot:=arm7"]
    return "\n".join(lines)


def own_words(rest) -> list:
    """A node's arguments before any ``--ros-args`` (after it, the words are ROS's)."""
    return list(rest[:rest.index("--ros-args")] if "--ros-args" in rest else rest)


def wants_help(rest) -> bool:
    """``-h``/``--help`` before any ``--ros-args``."""
    return any(word in ("-h", "--help") for word in own_words(rest))
