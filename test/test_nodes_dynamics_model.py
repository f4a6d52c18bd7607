"""dynamics_model as a real node: its outputs equal the core's for the published state."""
import time

import numpy as np
import pytest

from ros_helpers import NodeProcess, RosProbe

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.nodes.common import STATE_QOS, load_friction  # noqa: E402
from robot_dynamics.nodes.dynamics_model import compute_outputs  # noqa: E402
from robot_dynamics.resources import robot_path  # noqa: E402

ROBOT = "arm7"


@pytest.fixture(scope="module")
def setup():
    node = NodeProcess("dynamics_model", {"robot": ROBOT, "publish_rate": 20.0})
    probe = RosProbe("dynamics_probe")
    yield node, probe
    probe.close()
    node.stop()


def test_outputs_equal_core(setup):
    node, probe = setup
    model = rd.load_urdf(robot_path(ROBOT))
    friction = load_friction("", ROBOT, model)
    rng = np.random.default_rng(3)
    q, v = rng.uniform(-1, 1, model.nv), rng.uniform(-0.5, 0.5, model.nv)
    grav = probe.collect(Float64MultiArray, "/dynamics_model/gravity", 10)
    bias = probe.collect(Float64MultiArray, "/dynamics_model/bias", 10)
    fric = probe.collect(Float64MultiArray, "/dynamics_model/friction", 10)
    mass = probe.collect(Float64MultiArray, "/dynamics_model/mass_matrix", 10)
    last = model.joint_names[-1]
    wrench = probe.collect(WrenchStamped, f"/dynamics_model/wrench/{last}", 10)
    pub = probe.node.create_publisher(JointState, "/joint_states", STATE_QOS)
    msg = JointState()
    msg.name = list(model.joint_names)
    msg.position, msg.velocity = q.tolist(), v.tolist()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (grav and bias and fric and mass and wrench):
        pub.publish(msg)
        time.sleep(0.05)
    assert grav and bias and fric and mass and wrench, node.log
    ref = compute_outputs(model, model.create_data(), q, v, friction)
    np.testing.assert_allclose(grav[-1].data, ref["gravity"], atol=1e-9)
    np.testing.assert_allclose(bias[-1].data, ref["bias"], atol=1e-9)
    np.testing.assert_allclose(fric[-1].data, ref["friction"], atol=1e-9)
    M = np.array(mass[-1].data).reshape(model.nv, model.nv)
    np.testing.assert_allclose(M, ref["mass_matrix"], atol=1e-9)
    assert [d.label for d in mass[-1].layout.dim] == ["rows", "cols"]
    w = wrench[-1].wrench
    got = [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]
    np.testing.assert_allclose(got, ref["wrenches"][-1], atol=1e-9)
    assert wrench[-1].header.frame_id == model.link_names[-1]
    assert np.abs(ref["friction"]).max() > 0  # the friction estimate is not trivially zero


def test_bad_state_rejected_and_node_keeps_running(setup):
    node, probe = setup
    model = rd.load_urdf(robot_path(ROBOT))
    pub = probe.node.create_publisher(JointState, "/joint_states", STATE_QOS)
    msg = JointState()
    msg.name = list(model.joint_names)
    msg.position = [float("inf")] + [0.0] * (model.nv - 1)
    msg.velocity = [0.0] * model.nv
    for _ in range(10):
        pub.publish(msg)
        time.sleep(0.05)
    assert node.wait_log("rejected JointState: JointState.position is not finite", 10), node.log
    assert node.alive()
