"""The three nodes' parameters as plain data: what ``robot-dynamics <node> --help`` prints.

A pip user has no ``ros2 param describe``, and starting rclpy (and a node that loads a robot) to
answer ``--help`` is slow and has side effects, so the tables live here with no ROS import.
They are transcribed from the nodes' ``declare(...)`` calls (``common.declare`` and
``common.declare_robot_parameters``); ``test/test_cli.py`` starts each node and compares what it
declared (name, type, default, read-only, range) with these tables, so a parameter added to a
node without its row here fails a test.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    """One declared parameter. ``type`` is the ROS 2 parameter type name (as ``ros2 param
    describe`` prints it); ``low``/``high`` the declared range (None: no range);
    ``default=DYNAMIC`` marks a default computed at start-up (described in ``description``)."""

    name: str
    type: str
    default: object
    description: str
    low: float | None = None
    high: float | None = None
    read_only: bool = False


#: marks a default that the node computes from the robot (e.g. the URDF joint order)
DYNAMIC = "<from the robot>"

ROBOT = (
    Param("robot_description", "string", "",
          "URDF XML of the robot (as robot_state_publisher takes it); wins over 'robot'"),
    Param("robot", "string", "arm7", "bundled robot name (arm7, planar_2r, rrp, ...), URDF path, "
          "or .urdf.xacro path (expanded with xacro)"),
    Param("validate", "string", "strict",
          "URDF physics check: 'strict' refuses unphysical moving bodies and a singular mass "
          "matrix; 'warn' loads them and logs one warning per problem", read_only=True),
    Param("friction_config", "string", "",
          "friction YAML: bundled name or path; 'none' for no friction; empty = '<robot>_friction'"
          " when bundled, else none"),
)

SIMULATOR = ROBOT + (
    Param("rate", "double", 1000.0, "integration rate [Hz] (step = 1/rate)", 10.0, 100000.0),
    Param("mode", "string", "realtime", "realtime | fast | lockstep"),
    Param("initial_positions", "double_array", [0.0],
          "initial joint positions (URDF order); [0.0] means all zero"),
    Param("initial_velocities", "double_array", [0.0], "initial joint velocities; [0.0] = zero"),
    Param("lockstep_timeout", "double", 0.5,
          "lockstep: re-publish the state after this many seconds without a command", 0.001, 60.0),
    Param("audit_period", "double", 1.0,
          "simulated seconds between energy-audit reports (0: never)", 0.0, 3600.0),
    Param("publish_every", "integer", 1,
          "fast mode: steps integrated per published state (a JointState per 1 kHz step caps "
          "fast mode at the rate rclpy can publish)", 1, 100000),
    Param("publish_clock", "bool", True, "publish /clock (sim time)"),
    Param("command_topic", "string", "/effort_controller/commands",
          "effort command input (Float64MultiArray, URDF joint order)"),
)

ID_CONTROLLER = ROBOT + (
    Param("joint_names", "string_array", DYNAMIC,
          "joint order of the effort command (defaults to the URDF order)", read_only=True),
    Param("kp", "double_array", [400.0],
          "position gains K_p [1/s²], one per joint or one for all"),
    Param("kd", "double_array", [40.0], "velocity gains K_d [1/s], one per joint or one for all"),
    Param("friction_compensation", "bool", True, "add the friction map to the computed torque"),
    Param("friction_smoothing_velocity", "double", 0.0,
          "friction direction tanh(q̇/ε) instead of sign(q̇) [rad/s or m/s]; 0 = sign, with the "
          "commanded q̈'s direction at rest (a small ε removes compensation chatter at rest on a "
          "real arm)", 0.0, 10.0),
    Param("stale_timeout", "double", 0.1, "seconds without a valid JointState before holding",
          0.001, 60.0),
    Param("stale_behavior", "string", "gravity",
          "what to command when the state is stale: gravity | zero"),
    Param("command_topic", "string", "/effort_controller/commands",
          "std_msgs/Float64MultiArray effort command topic"),
    Param("joint_states_topic", "string", "/joint_states", "JointState input topic"),
    Param("state_thread", "bool", True,
          "serve joint_states from a dedicated thread instead of the executor (lower latency: "
          "see robot_dynamics.nodes.state_loop)", read_only=True),
    Param("goal_tolerance", "double", 0.01,
          "max |q_d − q| [rad or m] for a FollowJointTrajectory goal to succeed at its end",
          1e-6, 10.0),
)

DYNAMICS_MODEL = ROBOT + (
    Param("publish_rate", "double", 50.0, "outputs per second [Hz]", 0.1, 10000.0),
    Param("acceleration", "string", "zero",
          "acceleration used for wrenches/friction: zero | forward_dynamics (from the measured "
          "efforts)"),
    Param("markers", "bool", True, "publish friction arrows (MarkerArray)"),
    Param("marker_scale", "double", 0.05, "arrow length per N·m (or N) [m]", 0.0, 100.0),
    Param("joint_states_topic", "string", "/joint_states", "JointState input topic"),
)

#: node name → (one-line summary, topics, parameters)
NODES = {
    "simulator": (
        "friction-aware forward simulation of the robot under effort commands",
        "subscribes /effort_controller/commands (std_msgs/Float64MultiArray); publishes "
        "/joint_states, /clock, ~/energy_audit; service ~/reset (std_srvs/Trigger)",
        SIMULATOR),
    "id_controller": (
        "friction-aware computed-torque control (seed 004 §2.7 in the loop)",
        "subscribes /joint_states and ~/joint_trajectory (trajectory_msgs/JointTrajectory); "
        "publishes /effort_controller/commands; action ~/follow_joint_trajectory when "
        "control_msgs is installed",
        ID_CONTROLLER),
    "dynamics_model": (
        "the robot's dynamics at the measured state, for monitoring and RViz",
        "subscribes /joint_states; publishes ~/gravity, ~/bias, ~/mass_matrix, ~/friction, "
        "~/wrench/<joint>, ~/friction_markers",
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
    lines += ["", "parameters (name  type  default  [range]  [read-only]):"]
    for p in params:
        head = f"  {p.name}  {p.type}  {_fmt_value(p.default)}"
        if p.low is not None:
            head += f"  [{_fmt_value(p.low)}, {_fmt_value(p.high)}]"
        if p.read_only:
            head += "  read-only"
        lines.append(head)
        lines += textwrap.wrap(p.description, width, initial_indent=" " * 6,
                               subsequent_indent=" " * 6)
    lines += ["", f"example: robot-dynamics {node} --ros-args -p robot:=arm7"]
    return "\n".join(lines)
