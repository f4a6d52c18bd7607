"""External wrenches over ROS (issue 32): ``~/external_wrench`` on the simulator and dynamics_model.

In-process (the node's methods called directly): the simulator node passes the held wrench to
``Simulator.step`` as ``fext`` — the core's point_force/sensor_wrench of the message — and
nothing when none is held; duration, replacement, zero and the clear service. Over real DDS: the arm moves
as forward dynamics with ``fext`` predicts; dynamics_model's joint reactions change as rnea with ``fext`` predicts and its markers are
published; bad messages are refused with a log line naming the field and the nodes keep running.
"""
import re
import time

import numpy as np
import pytest

from ros_helpers import DOMAIN_ID, NodeProcess, RosProbe

import rclpy  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.algorithm.external import point_force, sensor_wrench  # noqa: E402
from robot_dynamics.algorithm.forward_dynamics import forward_dynamics  # noqa: E402
from robot_dynamics.parsers.resources import robot_path  # noqa: E402
from robot_dynamics.ros.common import STATE_QOS, load_friction, stamp_to_seconds  # noqa: E402
from robot_dynamics.ros.dynamics_model import compute_outputs  # noqa: E402

def wrench(frame_id, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0)):
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = map(float, torque)
    return msg


# -- in-process: what the simulator node hands to Simulator.step ----------------------------------
@pytest.fixture
def sim_node():
    from robot_dynamics.ros.simulator import SimulatorNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=(int(DOMAIN_ID) + 2) % 200)
    made = []

    def make(**params):
        params = {"robot": "planar_2r", "friction_config": "none", "audit_period": 0.0,
                  "initial_positions": [0.4, -0.3], "mode": "lockstep", **params}
        made.append(SimulatorNode(context=ctx, parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()]))
        return made[-1]

    yield make
    for n in made:
        n.destroy_node()
    rclpy.shutdown(context=ctx)


class RecordingStep:
    """Stands in for Simulator.step(tau, fext=None): records the fext of each call (the state
    stays put) — the node's side of the contract, testable before the core's step lands."""

    def __init__(self, sim):
        self.sim, self.calls = sim, []

    def __call__(self, tau, **kwargs):
        self.calls.append(kwargs.get("fext", "absent") if kwargs else "absent")
        self.sim.t += self.sim.dt


def test_simulator_node_passes_the_held_wrench_as_fext(sim_node):
    node = sim_node(external_wrench_duration=0.003)
    step = node.sim.step = RecordingStep(node.sim)
    model = node.model
    node.advance(2)
    assert step.calls == ["absent", "absent"]  # no wrench: today's call, fext not passed

    node.on_external_wrench(wrench("tool", force=(0.0, 5.0, 0.0), torque=(0.0, 0.0, 0.2)))
    node.on_external_wrench(wrench("upper_arm@world", force=(-2.0, 1.0, 0.0)))
    node.advance(1)
    q = node.sim.q
    expected = sensor_wrench(model, "tool", [0, 5, 0, 0, 0, 0.2])
    expected = point_force(model, model.create_data(), q, "upper_arm", [-2, 1, 0],
                           fext=expected)
    np.testing.assert_allclose(step.calls[-1], expected, atol=1e-12)
    assert np.abs(expected).max() > 1  # both rows loaded: not trivially zero
    node.advance(3)  # held 3 ms of simulated time, then dropped: the plain call again
    assert step.calls[-1] == "absent" and isinstance(step.calls[-2], np.ndarray)

    # duration 0: held until replaced; a zero wrench clears the link's; the service clears all
    node.external_wrench_duration = 0.0
    node.on_external_wrench(wrench("tool", force=(1.0, 0.0, 0.0)))
    node.on_external_wrench(wrench("tool", force=(0.0, 0.0, 3.0)))  # replaces
    node.advance(50)
    np.testing.assert_allclose(step.calls[-1], sensor_wrench(model, "tool", [0, 0, 3, 0, 0, 0]))
    node.on_external_wrench(wrench("tool"))
    node.advance(1)
    assert step.calls[-1] == "absent"
    node.on_external_wrench(wrench("forearm", force=(1.0, 0.0, 0.0)))
    response = node.on_clear_external_wrench(Trigger.Request(), Trigger.Response())
    assert response.success and response.message.startswith("1 external")
    node.advance(1)
    assert step.calls[-1] == "absent"


def test_simulator_node_audit_books_the_wrenchs_work(sim_node, capfd):
    """~/energy_audit and its log line carry the external work (and the dissipations), so the
    published balance adds up to its residual with a wrench pushing the arm."""
    node = sim_node()
    published = []
    node.audit_pub.publish = published.append  # the message as it would leave the node
    node.on_external_wrench(wrench("tool@world", force=(0.0, 0.0, 40.0)))
    node.advance(200)
    node.report_audit()
    msg = published[-1]
    values = dict(zip(msg.layout.dim[0].label.split("|"), msg.data))
    audit = node.sim.audit
    assert values["external_work"] == audit.external_work and abs(audit.external_work) > 1e-3
    balance = (values["kinetic"] + values["potential"] - values["motor_work"]
               - values["external_work"] + values["friction_dissipation"]
               + values["damping_dissipation"] + values["limit_dissipation"])
    assert balance == pytest.approx(values["residual"], abs=1e-12)
    assert abs(values["relative_residual"]) < 1e-3  # as every audit of the suite (README)
    assert f"external work {audit.external_work:.6g} J" in capfd.readouterr().err


@pytest.mark.parametrize("msg, field", [
    (wrench("", force=(1, 0, 0)), "header.frame_id is empty"),
    (wrench("elbow_link", force=(1, 0, 0)), "header.frame_id: robot 'planar_2r' has no link"),
    (wrench("world", force=(1, 0, 0)), "header.frame_id: robot 'planar_2r' has no link or "
     "frame 'world' (links: base_link, forearm, tool, upper_arm); for world axes write "
     "'<link>@world'"),
    (wrench("tool", force=(1, float("nan"), 0)), "wrench.force.y is not finite"),
    (wrench("tool@world", torque=(0, 0, float("inf"))), "wrench.torque.z is not finite"),
])
def test_simulator_node_rejects_bad_wrench_naming_the_field(sim_node, capfd, msg, field):
    node = sim_node()
    node.on_external_wrench(msg)
    assert not node.wrenches
    err = capfd.readouterr().err
    assert "rejected external wrench: " + field in err, err
    assert len([ln for ln in err.splitlines() if "rejected external wrench" in ln]) == 1


# -- over DDS: the simulator ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def sim():
    node = NodeProcess("simulator", {"robot": "planar_2r", "mode": "fast", "audit_period": 0.0,
                                     "initial_positions": [0.4, -0.3], "friction_config": "none",
                                     "command_timeout": 0.0})
    probe = RosProbe("wrench_sim_probe")
    assert node.wait_log("simulating", 120), node.log
    yield node, probe
    probe.close()
    node.stop()


def test_simulator_rejects_bad_wrench_and_keeps_running(sim):
    node, probe = sim
    states = probe.collect(JointState, "/joint_states", STATE_QOS)
    pub = probe.node.create_publisher(WrenchStamped, "/simulator/external_wrench", 10)
    assert probe.wait_for(lambda: pub.get_subscription_count() > 0, 20)  # discovered
    for msg, needle in ((wrench("", force=(1, 0, 0)), "header.frame_id is empty"),
                        (wrench("nope", force=(1, 0, 0)),
                         "header.frame_id: robot 'planar_2r' has no link or frame 'nope'"),
                        (wrench("tool", force=(float("nan"), 0, 0)),
                         "wrench.force.x is not finite")):
        for _ in range(5):
            pub.publish(msg)
            time.sleep(0.05)
        assert node.wait_log(f"rejected external wrench: {needle}", 10), node.log
    n = len(states)
    assert probe.wait_for(lambda: len(states) > n + 20, 20) and node.alive(), node.log
    assert all(np.isfinite(s.position).all() for s in states)


def test_wrench_moves_the_arm_as_forward_dynamics_predicts(sim):
    """Zero effort; a force on the tool in world axes: the velocity change over k steps while it
    is held equals k·dt times forward_dynamics(q, v, 0, fext), averaged over the window's two
    ends. The test owns the simulated time: the simulator is switched to lockstep (a step per
    command), reset to rest, given the wrench while it waits, then stepped by the test's zero
    commands. (In fast mode the free double pendulum swings on while the message travels, on a
    loaded machine into fast motion and onto a stop, where a 5-step average no longer stands.)"""
    node, probe = sim
    model = rd.load_urdf(robot_path("planar_2r"))
    data = model.create_data()
    states = probe.collect(JointState, "/joint_states",
                           QoSProfile(depth=100000, reliability=ReliabilityPolicy.RELIABLE))
    assert probe.set_parameters("simulator", mode="lockstep") == {"mode": (True, "")}
    reset = probe.node.create_client(Trigger, "/simulator/reset")
    assert reset.wait_for_service(timeout_sec=20)
    future = reset.call_async(Trigger.Request())
    assert probe.wait_for(future.done, 20) and future.result().success
    pub = probe.node.create_publisher(WrenchStamped, "/simulator/external_wrench", 10)
    force = (0.0, 0.0, 40.0)  # upward in world axes, at the tool frame's origin
    msg = wrench("tool@world", force=force)
    assert probe.wait_for(lambda: pub.publish(msg) or "external wrench on 'tool'" in node.log,
                          20), node.log
    t_on = float(re.search(r"t=([0-9.]+) s: external wrench on 'tool'", node.log).group(1))
    commands = probe.node.create_publisher(Float64MultiArray, "/effort_controller/commands",
                                           STATE_QOS)
    dt, k = 1e-3, 5
    for _ in range(k + 5):  # one zero command, one step, one state
        last = stamp_to_seconds(states[-1].header.stamp) if states else -1.0
        commands.publish(Float64MultiArray(data=[0.0, 0.0]))
        assert probe.wait_for(lambda: stamp_to_seconds(states[-1].header.stamp) > last, 20), \
            node.log
    seq = [s for s in states if stamp_to_seconds(s.header.stamp) > t_on + 0.5 * dt]
    t = np.array([stamp_to_seconds(s.header.stamp) for s in seq])
    i = next(j for j in range(len(seq) - k) if abs(t[j + k] - t[j] - k * dt) < 1e-9)
    ends = [(np.array(s.position), np.array(s.velocity)) for s in (seq[i], seq[i + k])]
    dv = (ends[1][1] - ends[0][1]) / (k * dt)
    with_wrench = np.mean([forward_dynamics(model, data, q, v, np.zeros(2),
                                            fext=point_force(model, data, q, "tool", force))
                           for q, v in ends], axis=0)
    without = np.mean([forward_dynamics(model, data, q, v, np.zeros(2)) for q, v in ends], axis=0)
    assert np.abs(with_wrench - without).max() > 5.0  # the wrench matters at this state
    np.testing.assert_allclose(dv, with_wrench, rtol=0.03,
                               atol=0.03 * np.abs(with_wrench).max())
    assert probe.set_parameters("simulator", mode="fast") == {"mode": (True, "")}
    clear = probe.node.create_client(Trigger, "/simulator/clear_external_wrench")
    assert clear.wait_for_service(timeout_sec=20)
    future = clear.call_async(Trigger.Request())
    assert probe.wait_for(future.done, 20) and future.result().success


# -- over DDS: dynamics_model ---------------------------------------------------------------------
STATES = "/wrench_test/joint_states"


@pytest.fixture(scope="module")
def model_node():
    # its own state topic: the simulator above (module scope) floods /joint_states
    node = NodeProcess("dynamics_model", {"robot": "arm7", "publish_rate": 20.0,
                                          "joint_states_topic": STATES})
    probe = RosProbe("wrench_model_probe")
    yield node, probe
    probe.close()
    node.stop()


def test_dynamics_model_reactions_include_the_wrench(model_node):
    from visualization_msgs.msg import Marker, MarkerArray

    node, probe = model_node
    model = rd.load_urdf(robot_path("arm7"))
    friction = load_friction("", "arm7", model)
    q, v = np.full(7, 0.3), np.full(7, 0.1)
    joint = model.joint_names[1]
    wrenches = probe.collect(WrenchStamped, f"/dynamics_model/wrench/{joint}", 10)
    marks = probe.collect(MarkerArray, "/dynamics_model/external_wrench_markers", 10)
    state = JointState(name=list(model.joint_names), position=q.tolist(), velocity=v.tolist())
    spub = probe.node.create_publisher(JointState, STATES, STATE_QOS)
    wpub = probe.node.create_publisher(WrenchStamped, "/dynamics_model/external_wrench", 10)
    local = wrench("tool0", force=(0.0, 0.0, -30.0), torque=(0.5, 0.0, 0.0))
    world = wrench("link_4@world", force=(10.0, 0.0, 0.0))
    for msg, needle in ((local, "external wrench on 'tool0'"),
                        (world, "external wrench on 'link_4'")):
        assert probe.wait_for(lambda: wpub.publish(msg) or needle in node.log, 30), node.log
    data = model.create_data()
    fext = sensor_wrench(model, "tool0", [0, 0, -30, 0.5, 0, 0])
    fext = point_force(model, data, q, "link_4", [10, 0, 0], fext=fext)
    ref = compute_outputs(model, data, q, v, friction, fext=fext)
    plain = compute_outputs(model, data, q, v, friction)
    n = len(wrenches)
    assert probe.wait_for(lambda: spub.publish(state) or (len(wrenches) > n + 1 and marks), 30), \
        node.log
    w = wrenches[-1].wrench
    got = [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]
    np.testing.assert_allclose(got, ref["wrenches"][1], atol=1e-9)
    assert np.abs(ref["wrenches"][1] - plain["wrenches"][1]).max() > 5.0  # the load shows
    assert marks[-1].markers[0].action == Marker.DELETEALL  # cleared wrenches disappear
    arrows = [m for m in marks[-1].markers if m.action == Marker.ADD]
    assert all(m.type == Marker.ARROW for m in arrows)
    assert {m.header.frame_id for m in arrows} == {"tool0", "link_4"}
    assert len(arrows) == 3  # tool0's force and torque, link_4's force
    tip = [m for m in arrows if m.header.frame_id == "tool0"][0].points[1]
    assert tip.z < 0 and abs(tip.x) < 1e-12 and abs(tip.y) < 1e-12  # along tool0's −z

    # zero clears the link's wrench: back to the plain reactions, one arrow left
    zero = wrench("tool0")
    assert probe.wait_for(lambda: wpub.publish(zero) or "on 'tool0' cleared" in node.log, 30)
    fext_world = point_force(model, data, q, "link_4", [10, 0, 0])
    ref2 = compute_outputs(model, data, q, v, friction, fext=fext_world)
    n = len(wrenches)
    assert probe.wait_for(lambda: spub.publish(state) or len(wrenches) > n + 1, 30)
    w = wrenches[-1].wrench
    got = [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]
    np.testing.assert_allclose(got, ref2["wrenches"][1], atol=1e-9)


def test_dynamics_model_rejects_bad_wrench_and_keeps_running(model_node):
    node, probe = model_node
    wpub = probe.node.create_publisher(WrenchStamped, "/dynamics_model/external_wrench", 10)
    bad = wrench("link_9", force=(1.0, 0.0, 0.0))
    needle = "rejected external wrench: header.frame_id: robot 'arm7' has no link or frame"
    assert probe.wait_for(lambda: wpub.publish(bad) or needle in node.log, 30), node.log
    time.sleep(0.2)
    assert node.alive()
