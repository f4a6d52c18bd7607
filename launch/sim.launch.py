"""Simulated arm with friction-aware computed-torque control, dynamics monitor, and RViz.

    ros2 launch robot_dynamics sim.launch.py [robot:=arm7] [friction:=arm7_friction]
        [actuators:=arm7_actuators] [rviz:=true] [use_sim_time:=true] [mode:=realtime]

Nodes: simulator (publishes /joint_states and /clock), id_controller (efforts on
/effort_controller/commands, trajectories on /id_controller/joint_trajectory and, with
control_msgs, the FollowJointTrajectory action), dynamics_model (gravity, bias, friction, mass
matrix, joint wrenches), robot_state_publisher (TF from the same URDF) and, optionally, rviz2.
The pip-only equivalent, without robot_state_publisher and rviz2, is `robot-dynamics sim`.

Works on a ros-base install: robot_state_publisher and rviz2 are looked up in the ament index
first and started only when installed (the launch log says what it skipped and why). The checks
(robot's URDF readable, optional packages installed) run before the first process starts, so a
failed check starts nothing; simulator, id_controller, dynamics_model and robot_state_publisher
are required: when one of them exits, the launch shuts everything down (no orphaned nodes).
"""
import os

from ament_index_python.packages import PackageNotFoundError, get_package_prefix
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

ARGUMENTS = [
    ("robot", "arm7", "bundled robot (arm7, arm7_gripper, planar_2r, rrp) or a URDF file path"),
    ("friction", "", "friction YAML: bundled name (e.g. arm7_friction), a path, or 'none'; "
                     "empty = the robot's bundled <robot>_friction.yaml"),
    ("actuators", "", "actuator YAML (gear ratio, rotor inertia, gear-mesh efficiency, motor "
                      "limits): bundled name (e.g. arm7_actuators), a path, or 'none'; empty = "
                      "the robot's bundled <robot>_actuators.yaml when it exists"),
    ("controller_params", "", "id_controller parameter YAML (gains); empty = bundled "
                              "<robot>_controller.yaml when it exists"),
    ("mode", "realtime", "simulator mode: realtime | fast | lockstep"),
    ("rate", "1000.0", "simulation rate [Hz]"),
    ("rviz", "true", "start rviz2 with config/robot_dynamics.rviz"),
    ("use_sim_time", "true", "all nodes follow the simulator's /clock"),
]


def _urdf_path(share, robot):
    return robot if os.path.isfile(robot) else os.path.join(share, "urdf", robot + ".urdf")


def _executable(package, executable):
    """Path of an installed ROS executable (where launch_ros looks), or None when the package
    is not in the ament index or does not install that executable."""
    try:
        path = os.path.join(get_package_prefix(package), "lib", package, executable)
    except PackageNotFoundError:
        return None
    return path if os.access(path, os.X_OK) else None


def _nodes(context):
    share = FindPackageShare("robot_dynamics").perform(context)
    cfg = {name: LaunchConfiguration(name).perform(context) for name, _, _ in ARGUMENTS}
    urdf_path = _urdf_path(share, cfg["robot"])
    if not os.path.isfile(urdf_path):
        raise RuntimeError(f"sim.launch.py: robot '{cfg['robot']}': no such URDF ({urdf_path})")
    with open(urdf_path, encoding="utf-8") as fh:
        urdf = fh.read()
    sim_time = cfg["use_sim_time"].lower() in ("1", "true", "yes")
    actuators = cfg["actuators"]
    if not actuators:  # the robot's bundled actuator config, when there is one
        bundled = os.path.join(share, "config", f"{cfg['robot']}_actuators.yaml")
        actuators = bundled if os.path.isfile(bundled) else ""
    elif not os.path.isfile(actuators) and actuators.lower() != "none":
        bundled = os.path.join(share, "config", actuators + ".yaml")
        if not os.path.isfile(bundled):
            raise RuntimeError(f"sim.launch.py: actuators '{actuators}': no such file "
                               f"({bundled})")
    common = {"robot_description": urdf, "friction_config": cfg["friction"],
              "actuators": actuators, "robot": cfg["robot"], "use_sim_time": sim_time}
    controller_params = [common]
    gains = cfg["controller_params"] or os.path.join(share, "config",
                                                     f"{cfg['robot']}_controller.yaml")
    if os.path.isfile(gains):
        controller_params.insert(0, gains)
    required = [  # when one exits, the launch stops the others: nothing is left running
        Node(package="robot_dynamics", executable="simulator", name="simulator", output="screen",
             parameters=[common, {"mode": cfg["mode"], "rate": float(cfg["rate"]),
                                  "use_sim_time": False,
                                  # the arm does not fall while the controller starts, and
                                  # brakes to a hold if the controller goes silent
                                  "wait_for_command": True,
                                  "stale_command_behavior": "brake"}], on_exit=Shutdown()),
        Node(package="robot_dynamics", executable="id_controller", name="id_controller",
             output="screen", parameters=controller_params, on_exit=Shutdown()),
        Node(package="robot_dynamics", executable="dynamics_model", name="dynamics_model",
             output="screen", parameters=[common], on_exit=Shutdown()),
    ]
    optional = []
    if _executable("robot_state_publisher", "robot_state_publisher"):
        optional.append(Node(
            package="robot_state_publisher", executable="robot_state_publisher",
            name="robot_state_publisher", output="screen",
            parameters=[{"robot_description": urdf, "use_sim_time": sim_time}], on_exit=Shutdown()))
    else:
        optional.append(LogInfo(msg="sim.launch.py: robot_state_publisher is not installed: no TF "
                                    "(apt install ros-$ROS_DISTRO-robot-state-publisher)"))
    want_rviz = cfg["rviz"].lower() in ("1", "true", "yes")
    if want_rviz and _executable("rviz2", "rviz2"):
        optional.append(Node(
            package="rviz2", executable="rviz2", name="rviz2", output="log",
            arguments=["-d", os.path.join(share, "config", "robot_dynamics.rviz")],
            parameters=[{"use_sim_time": sim_time}]))
    elif want_rviz:
        optional.append(LogInfo(msg="sim.launch.py: rviz2 is not installed, not starting it "
                                    "(apt install ros-$ROS_DISTRO-rviz2, or pass rviz:=false)"))
    return required + optional


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=desc)
         for name, default, desc in ARGUMENTS]
        + [OpaqueFunction(function=_nodes)]
    )
