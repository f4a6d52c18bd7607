"""The launch files, parsed with the real ``launch``/``launch_ros`` (skipped where not installed:
they are not on PyPI; a ROS 2 install or a source checkout on PYTHONPATH provides them)."""
import os

import pytest

launch = pytest.importorskip("launch")
launch_ros = pytest.importorskip("launch_ros")

from conftest import REPO  # noqa: E402


@pytest.fixture()
def ament_prefix(tmp_path, monkeypatch):
    """An ament index that points robot_dynamics' share directory at this checkout."""
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "robot_dynamics").write_text("")
    os.symlink(REPO, tmp_path / "share" / "robot_dynamics")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    return tmp_path


def _load(name):
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    src = PythonLaunchDescriptionSource(os.path.join(REPO, "launch", name))
    return src.get_launch_description(launch.LaunchContext())


def _expand(ld, overrides):
    """Declare arguments with their defaults (plus overrides) and run the OpaqueFunction."""
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    context = launch.LaunchContext()
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    for arg in args:
        default = "".join(s.perform(context) for s in arg.default_value)
        context.launch_configurations[arg.name] = overrides.get(arg.name, default)
    nodes = []
    for e in ld.entities:
        if isinstance(e, OpaqueFunction):
            nodes += e.execute(context) or []
    return args, nodes, context


def test_sim_launch_declares_documented_arguments_and_nodes(ament_prefix):
    ld = _load("sim.launch.py")
    args, nodes, context = _expand(ld, {"robot": "planar_2r", "rviz": "false"})
    names = {a.name for a in args}
    assert {"robot", "friction", "rviz", "use_sim_time", "mode"} <= names
    assert all(a.description and "no description" not in a.description for a in args)
    executables = [n.node_executable for n in nodes]
    assert executables == ["simulator", "id_controller", "dynamics_model",
                           "robot_state_publisher", "rviz2"]
    rviz = nodes[-1]
    assert not rviz.condition.evaluate(context)  # rviz:=false disables it
    # robot_state_publisher gets the URDF text of the chosen robot (launch_ros keeps parameter
    # names and values as substitution tuples; there is no public accessor)
    params = {"".join(s.perform(context) for s in k): v
              for k, v in nodes[3]._Node__parameters[0].items()}
    urdf = "".join(s.perform(context) for s in params["robot_description"])
    # launch_ros carries string values YAML-quoted (so "true" stays a string); the node sees:
    import yaml

    with open(os.path.join(REPO, "urdf", "planar_2r.urdf"), encoding="utf-8") as fh:
        assert yaml.safe_load(urdf) == fh.read()


def test_hardware_launch_remaps_topics(ament_prefix):
    ld = _load("hardware.launch.py")
    args, nodes, _ = _expand(ld, {"command_topic": "/arm/effort_controller/commands"})
    assert [n.node_executable for n in nodes] == ["id_controller", "dynamics_model"]
    assert {"robot_description_file", "friction", "command_topic", "joint_states_topic"} <= {
        a.name for a in args}
