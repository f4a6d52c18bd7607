"""Friction-aware computed-torque control of a real arm running ros2_control.

    ros2 launch robot_dynamics hardware.launch.py robot_description_file:=/path/robot.urdf
        friction:=/path/friction.yaml actuators:=/path/actuators.yaml
        controller_params:=/path/gains.yaml

Expects the arm's ros2_control setup to run a joint_state_broadcaster (→ /joint_states) and an
effort controller (forward_command_controller/ForwardCommandController or
effort_controllers/JointGroupEffortController) named ``effort_controller`` (its commands topic
is /effort_controller/commands); both topics can be remapped with the arguments below. Starts
id_controller and dynamics_model only — no simulator, no robot_state_publisher (the hardware
setup already has one). Both nodes are required: when one exits, the launch stops the other (no
orphaned controller without its monitor, or the reverse); a missing URDF file starts nothing.
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGUMENTS = [
    ("robot_description_file", "", "URDF of the real arm (plain URDF; expand xacro first)"),
    ("robot", "arm7", "bundled robot name, used when robot_description_file is empty"),
    ("friction", "", "friction YAML (path or bundled name), or 'none'"),
    ("actuators", "", "actuator YAML (gear ratio, rotor inertia, gear-mesh efficiency, motor "
                      "limits; path or bundled name); empty or 'none': no actuator model"),
    ("controller_params", "", "id_controller parameter YAML (kp, kd, joint_names, ...)"),
    ("joint_states_topic", "/joint_states", "joint_state_broadcaster output"),
    ("command_topic", "/effort_controller/commands", "effort controller's command topic"),
    ("use_sim_time", "false", "follow /clock instead of the system clock"),
]


def _nodes(context):
    cfg = {name: LaunchConfiguration(name).perform(context) for name, _, _ in ARGUMENTS}
    urdf = ""
    if cfg["robot_description_file"]:
        if not os.path.isfile(cfg["robot_description_file"]):
            raise RuntimeError("hardware.launch.py: robot_description_file "
                               f"'{cfg['robot_description_file']}' does not exist")
        with open(cfg["robot_description_file"], encoding="utf-8") as fh:
            urdf = fh.read()
    common = {"robot_description": urdf, "robot": cfg["robot"], "friction_config": cfg["friction"],
              "actuators": cfg["actuators"],
              "use_sim_time": cfg["use_sim_time"].lower() in ("1", "true", "yes"),
              "joint_states_topic": cfg["joint_states_topic"]}
    controller = [common, {"command_topic": cfg["command_topic"]}]
    if cfg["controller_params"]:
        controller.insert(0, cfg["controller_params"])
    return [
        Node(package="robot_dynamics", executable="id_controller", name="id_controller",
             output="screen", parameters=controller, on_exit=Shutdown()),
        Node(package="robot_dynamics", executable="dynamics_model", name="dynamics_model",
             output="screen", parameters=[common], on_exit=Shutdown()),
    ]


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=desc)
         for name, default, desc in ARGUMENTS]
        + [OpaqueFunction(function=_nodes)]
    )
