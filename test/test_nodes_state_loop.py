"""The controller's state thread (nodes/state_loop.py): same answers as the executor path, a
callback error does not stop it, and it ends with the node."""
import threading
import time

import numpy as np
import pytest

from ros_helpers import DOMAIN_ID, NodeProcess, RosProbe

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

import rclpy  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.ros.common import STATE_QOS  # noqa: E402
from robot_dynamics.parsers.resources import robot_path  # noqa: E402

ROBOT = "planar_2r"


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=int(DOMAIN_ID) + 1)  # not the node processes' domain
    yield ctx
    rclpy.shutdown(context=ctx)


@pytest.mark.parametrize("state_thread", [True, False])
def test_controller_answers_a_state_with_the_core_effort(state_thread):
    """At rest with no trajectory the controller holds the first state: τ = ID(q, 0, 0) with
    friction, which at rest and q̈ = 0 is the gravity torque — on either path."""
    model = rd.load_urdf(robot_path(ROBOT))
    proc = NodeProcess("id_controller", {"robot": ROBOT, "stale_timeout": 30.0,
                                         "state_thread": state_thread})
    probe = RosProbe(f"state_loop_probe_{int(state_thread)}")
    try:
        efforts = probe.collect(Float64MultiArray, "/effort_controller/commands")
        pub = probe.node.create_publisher(JointState, "/joint_states", STATE_QOS)
        q = np.array([0.4, -0.9])
        msg = JointState()
        msg.name, msg.position, msg.velocity = list(model.joint_names), list(q), [0.0, 0.0]
        deadline = time.monotonic() + 30
        while not efforts and time.monotonic() < deadline:
            pub.publish(msg)
            probe.wait_for(lambda: bool(efforts), 0.2)
        assert efforts, proc.log
        g = rd.gravity_torques(model, model.create_data(), q)
        np.testing.assert_allclose(efforts[-1].data, g, atol=1e-9)
        assert np.abs(g).max() > 1.0  # a non-trivial answer
        assert "no state thread" not in proc.log
    finally:
        probe.close()
        proc.stop()


def test_state_loop_survives_a_failing_callback_and_stops_with_close(context):
    from robot_dynamics.ros.state_loop import StateLoop

    owner = rclpy.create_node("owner", context=context)
    seen, errors = [], []
    got = threading.Event()

    def callback(msg):
        if msg.data == "boom":
            raise ValueError("bad message")
        seen.append(msg.data)
        got.set()

    from std_msgs.msg import String

    ticks = []
    loop = StateLoop(owner, String, "/loop_test", STATE_QOS, callback, errors.append,
                     periodic=lambda: ticks.append(time.monotonic()), period=0.01)
    assert loop.alive() and loop.topic == "/loop_test"
    assert loop.node.get_name() == "owner_state_loop"
    pub = owner.create_publisher(String, "/loop_test", STATE_QOS)
    deadline = time.monotonic() + 20
    while not got.is_set() and time.monotonic() < deadline:  # until discovery completes
        pub.publish(String(data="hello"))
        got.wait(0.1)
    assert seen and seen[0] == "hello"
    pub.publish(String(data="boom"))
    pub.publish(String(data="after"))
    deadline = time.monotonic() + 5
    while "after" not in seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "after" in seen, (seen, errors)
    assert len(errors) == 1 and isinstance(errors[0], ValueError)
    # the periodic function runs on the loop's thread whether messages come or not
    deadline = time.monotonic() + 5
    while len(ticks) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(ticks) >= 5 and np.all(np.diff(ticks) >= 0.0099)
    loop.close()
    assert not loop.alive()
    n_ticks = len(ticks)
    time.sleep(0.05)
    assert len(ticks) == n_ticks  # and stopped with it
    owner.destroy_node()



def test_controller_falls_back_to_the_executor_without_the_wait_set_api(context, monkeypatch):
    """An rclpy without the wait-set calls: the state loop refuses at construction, and the
    controller subscribes joint_states through its executor instead (and says so)."""
    import rclpy.action  # noqa: F401 - imported with the real extension before the patch
    from rclpy.impl import implementation_singleton
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.id_controller import IdController

    class WithoutWaitSet:  # the C extension as an older rclpy has it, seen by the state loop
        def __getattr__(self, name):
            if name == "WaitSet":
                raise AttributeError("module 'rclpy._rclpy_pybind11' has no attribute 'WaitSet'")
            return getattr(real, name)

    # only the state loop looks the extension up at construction; rclpy's own modules (the
    # action server's wait sets) keep theirs
    real = implementation_singleton.rclpy_implementation
    monkeypatch.setattr(implementation_singleton, "rclpy_implementation", WithoutWaitSet())
    node = IdController(context=context,
                        parameter_overrides=[Parameter("robot", value=ROBOT)])
    try:
        assert node.state_loop is None
        assert "/joint_states" in [sub.topic_name for sub in node.subscriptions]
    finally:
        node.destroy_node()
    monkeypatch.undo()
    node = IdController(context=context, parameter_overrides=[Parameter("robot", value=ROBOT)])
    try:  # with the API: the state thread serves joint_states, the executor does not
        assert node.state_loop is not None and node.state_loop.alive()
        assert "/joint_states" not in [sub.topic_name for sub in node.subscriptions]
    finally:
        node.destroy_node()
    assert not node.state_loop.alive()


def test_controller_renamed_and_remapped_like_a_launch_file_does():
    """launch_ros starts a node with ``-r __node:=<name>`` and topic remaps, process-wide: the
    state thread follows the controller's remapped topic and keeps a name of its own."""
    model = rd.load_urdf(robot_path(ROBOT))
    proc = NodeProcess("id_controller", {"robot": ROBOT, "stale_timeout": 30.0},
                       remaps={"__node": "arm_ctrl", "/joint_states": "/arm/joint_states"})
    probe = RosProbe("remap_probe")
    try:
        efforts = probe.collect(Float64MultiArray, "/effort_controller/commands")
        pub = probe.node.create_publisher(JointState, "/arm/joint_states", STATE_QOS)
        msg = JointState()
        msg.name, msg.position, msg.velocity = list(model.joint_names), [0.2, 0.5], [0.0, 0.0]
        deadline = time.monotonic() + 30
        while not efforts and time.monotonic() < deadline:
            pub.publish(msg)
            probe.wait_for(lambda: bool(efforts), 0.2)
        assert efforts, proc.log
        g = rd.gravity_torques(model, model.create_data(), np.array([0.2, 0.5]))
        np.testing.assert_allclose(efforts[-1].data, g, atol=1e-9)
        names = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            names = probe.node.get_node_names()
            if "arm_ctrl" in names and "arm_ctrl_state_loop" in names:
                break
            time.sleep(0.1)
        assert "arm_ctrl" in names and "arm_ctrl_state_loop" in names, names
        assert names.count("arm_ctrl") == 1, names
    finally:
        probe.close()
        proc.stop()
