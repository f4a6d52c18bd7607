"""The launch files, parsed with the real ``launch``/``launch_ros`` (skipped where not installed:
they are not on PyPI; a ROS 2 install or a source checkout on PYTHONPATH provides them)."""
import os

import pytest

launch = pytest.importorskip("launch")
launch_ros = pytest.importorskip("launch_ros")

from conftest import REPO  # noqa: E402


@pytest.fixture()
def ament_prefix(tmp_path, monkeypatch):
    """An ament index that points robot_dynamics' share directory at this checkout (and knows no
    other package: a ros-base install without robot_state_publisher and rviz2)."""
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "robot_dynamics").write_text("")
    os.symlink(REPO, tmp_path / "share" / "robot_dynamics")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    return tmp_path


def _install(prefix, package, executable, script):
    """Register ``package`` in the prefix's ament index with ``lib/<package>/<executable>``, a
    shell script (as colcon installs a package's executables)."""
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / package).write_text("")
    exe = prefix / "lib" / package / executable
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(0o755)


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


def _log_messages(entities, context):
    from launch.actions import LogInfo

    return ["".join(sub.perform(context) for sub in e.msg) for e in entities
            if isinstance(e, LogInfo)]


def _executables(entities):
    from launch_ros.actions import Node

    return [e.node_executable for e in entities if isinstance(e, Node)]


def test_sim_launch_declares_documented_arguments_and_nodes(ament_prefix):
    _install(ament_prefix, "robot_state_publisher", "robot_state_publisher", "exit 0")
    _install(ament_prefix, "rviz2", "rviz2", "exit 0")
    ld = _load("sim.launch.py")
    args, nodes, context = _expand(ld, {"robot": "planar_2r"})
    names = {a.name for a in args}
    assert {"robot", "friction", "rviz", "use_sim_time", "mode"} <= names
    assert all(a.description and "no description" not in a.description for a in args)
    assert _executables(nodes) == ["simulator", "id_controller", "dynamics_model",
                                   "robot_state_publisher", "rviz2"]
    assert _log_messages(nodes, context) == []
    _, nodes, _ = _expand(ld, {"robot": "planar_2r", "rviz": "false"})
    assert _executables(nodes)[-1] == "robot_state_publisher"  # rviz:=false disables it
    # robot_state_publisher gets the URDF text of the chosen robot (launch_ros keeps parameter
    # names and values as substitution tuples; there is no public accessor)
    params = {"".join(s.perform(context) for s in k): v
              for k, v in nodes[3]._Node__parameters[0].items()}
    urdf = "".join(s.perform(context) for s in params["robot_description"])
    # launch_ros carries string values YAML-quoted (so "true" stays a string); the node sees:
    import yaml

    with open(os.path.join(REPO, "urdf", "planar_2r.urdf"), encoding="utf-8") as fh:
        assert yaml.safe_load(urdf) == fh.read()


def test_sim_launch_on_ros_base_skips_what_is_missing_and_says_so(ament_prefix):
    """Neither robot_state_publisher nor rviz2 in the ament index (a ros-base install)."""
    ld = _load("sim.launch.py")
    _, entities, context = _expand(ld, {})
    assert _executables(entities) == ["simulator", "id_controller", "dynamics_model"]
    messages = _log_messages(entities, context)
    assert len(messages) == 2
    assert "robot_state_publisher is not installed" in messages[0]
    assert "rviz2 is not installed" in messages[1]
    # rviz2 present but its executable missing (a broken install) counts as missing
    index = ament_prefix / "share" / "ament_index" / "resource_index" / "packages"
    (index / "rviz2").write_text("")
    _, entities, context = _expand(ld, {})
    assert "rviz2" not in _executables(entities)
    _, entities, context = _expand(ld, {"rviz": "false"})
    assert len(_log_messages(entities, context)) == 1  # nothing said about an rviz not asked for


def test_sim_launch_unknown_robot_fails_before_starting_anything(ament_prefix):
    ld = _load("sim.launch.py")
    with pytest.raises(RuntimeError, match="robot 'no_such_robot'"):
        _expand(ld, {"robot": "no_such_robot"})


def _run_launch(name, arguments, timeout=30.0):
    """Run a launch file with the real LaunchService; returns (return code, timed out)."""
    import threading

    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    service = launch.LaunchService()
    service.include_launch_description(IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(REPO, "launch", name)),
        launch_arguments=list(arguments.items())))
    fired = threading.Event()

    def stop():
        fired.set()
        service.shutdown()

    timer = threading.Timer(timeout, stop)
    timer.start()
    try:
        rc = service.run()
    finally:
        timer.cancel()
    return rc, fired.is_set()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:  # a zombie is not running
        return fh.read().split(")")[-1].split()[0] != "Z"


def _reap(pids):
    for pid in pids:
        if _alive(pid):
            os.kill(pid, 9)


@pytest.mark.parametrize("launch_file, required, failing", [
    ("sim.launch.py", ["simulator", "id_controller", "dynamics_model"], "robot_state_publisher"),
    ("hardware.launch.py", ["dynamics_model"], "id_controller"),
])
def test_a_required_node_exiting_stops_the_others(ament_prefix, tmp_path, launch_file, required,
                                                  failing):
    """No orphaned nodes: one node dies, the launch shuts down and no process is left running."""
    pidfile = tmp_path / "pids"
    for exe in required:
        _install(ament_prefix, "robot_dynamics", exe, f"echo $$ >> {pidfile}\nexec sleep 60")
    package = "robot_dynamics" if failing != "robot_state_publisher" else failing
    _install(ament_prefix, package, failing, f"sleep 1\necho $$ >> {pidfile}\nexit 3")
    pids = []
    try:
        rc, timed_out = _run_launch(launch_file, {"rviz": "false", "robot": "planar_2r"})
        pids = [int(p) for p in pidfile.read_text().split()]
        assert not timed_out, "the launch kept running after a required node exited"
        assert len(pids) == len(required) + 1  # every node had started
        assert [p for p in pids if _alive(p)] == []
    finally:
        _reap(pids)


def test_hardware_launch_remaps_topics(ament_prefix):
    ld = _load("hardware.launch.py")
    args, nodes, _ = _expand(ld, {"command_topic": "/arm/effort_controller/commands"})
    assert [n.node_executable for n in nodes] == ["id_controller", "dynamics_model"]
    assert {"robot_description_file", "friction", "command_topic", "joint_states_topic"} <= {
        a.name for a in args}
