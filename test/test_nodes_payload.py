"""Payloads over ROS (issue 32): the payload parameters of the simulator, id_controller and
dynamics_model, set at run time over real DDS (SetParameters, one parameter at a time, and
SetParametersAtomically), checked against the core with the same payload."""
import math
import subprocess
import sys
import time

import numpy as np
import pytest

from ros_helpers import ENV, NodeProcess, RosProbe, held_controller

from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.parsers.resources import robot_path  # noqa: E402
from robot_dynamics.ros.common import STATE_QOS, load_friction, stamp_to_seconds  # noqa: E402

ROBOT = "planar_2r"
LINK = "tool"
#: the held state the controller and dynamics_model see (moving: friction has a direction)
Q, V = [0.7, -0.5], [0.5, -0.4]
PAYLOAD = {"payload.link": LINK, "payload.mass": 2.0, "payload.com": [0.05, 0.0, 0.02],
           "payload.inertia": [0.004, 0.0, 0.0, 0.004, 0.0, 0.002]}


def _model(payload=None):
    model = rd.load_urdf(robot_path(ROBOT))
    if payload:
        xx, xy, xz, yy, yz, zz = payload["payload.inertia"]
        model.set_payload(payload["payload.link"], payload["payload.mass"],
                          payload["payload.com"],
                          np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
    return model


def _set_atomically(probe, node_name, timeout=20.0, **values):
    """SetParametersAtomically on ``/<node_name>``: (successful, reason)."""
    from rcl_interfaces.srv import SetParametersAtomically
    from rclpy.parameter import Parameter

    client = probe.node.create_client(SetParametersAtomically,
                                      f"/{node_name}/set_parameters_atomically")
    assert client.wait_for_service(timeout_sec=timeout)
    future = client.call_async(SetParametersAtomically.Request(
        parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]))
    assert probe.wait_for(future.done, timeout), "SetParametersAtomically did not answer"
    probe.node.destroy_client(client)
    result = future.result().result
    return result.successful, result.reason


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("payload_probe")
    yield p
    p.close()


# -- simulator: the plant carries the payload ----------------------------------------------------
@pytest.fixture(scope="module")
def sim():
    node = NodeProcess("simulator", {"robot": ROBOT, "mode": "fast", "limits": False,
                                     "audit_period": 0.2, "initial_positions": [0.4, -0.3],
                                     "friction_config": "none"},
                       remaps={"/joint_states": "/sim_states"})
    assert node.wait_log("simulating", 60), node.log
    yield node
    node.stop()


def _pairs(states, h):
    """(q_mid, v_mid, measured q̈) of consecutive states (one step apart) of ``states``."""
    out = []
    for s1, s2 in zip(states, states[1:]):
        t1, t2 = stamp_to_seconds(s1.header.stamp), stamp_to_seconds(s2.header.stamp)
        if abs(t2 - t1 - h) > 0.1 * h:
            continue
        q1, q2 = np.array(s1.position), np.array(s2.position)
        v1, v2 = np.array(s1.velocity), np.array(s2.velocity)
        out.append((0.5 * (q1 + q2), 0.5 * (v1 + v2), (v2 - v1) / h))
    return out


def test_simulator_payload_set_at_run_time_changes_the_motion_as_the_core_predicts(sim, probe):
    """With zero effort, every step's acceleration is forward dynamics of the plain arm until
    the payload is set (one parameter at a time: link first, nothing changes; then the mass),
    and of the arm with the payload from then on; the energy audit still closes."""
    states = probe.collect(JointState, "/sim_states")
    audits = probe.collect(Float64MultiArray, "/simulator/energy_audit", 10)
    assert probe.wait_for(lambda: len(states) > 100, 60), sim.log
    plain, loaded = _model(), _model(PAYLOAD)
    d0, d1 = plain.create_data(), loaded.create_data()
    zero = np.zeros(plain.nv)
    n_before = len(states)
    results = probe.set_parameters("simulator", **PAYLOAD)  # SetParameters: one at a time
    assert all(ok for ok, _ in results.values()), results
    assert sim.wait_log("payload: 2 kg on 'tool'", 10), sim.log
    n_set = len(states)
    assert probe.wait_for(lambda: len(states) > n_set + 300, 60), sim.log
    verdicts, before = [], []  # per consecutive pair told apart: 0 plain, 1 loaded
    pairs = _pairs(states, 1e-3)
    n_plain = len(_pairs(states[:n_before], 1e-3))  # received before the request: plain
    for k, (q, v, a) in enumerate(pairs):
        a0 = rd.forward_dynamics(plain, d0, q, v, zero).copy()
        a1 = rd.forward_dynamics(loaded, d1, q, v, zero).copy()
        # a step's q̈ against q̈ at its midpoint: O(h) of the jerk (the arm whirls at 10 rad/s)
        tol = 1e-2 * (1.0 + max(np.abs(a0).max(), np.abs(a1).max()))
        e0, e1 = np.abs(a - a0).max(), np.abs(a - a1).max()
        assert min(e0, e1) < tol, (q, v, a, a0, a1)
        if np.abs(a1 - a0).max() > 4 * tol:  # the payload tells them apart (mostly)
            verdicts.append(int(e1 < e0))
            before.append(k < n_plain)
    assert len(verdicts) > 0.5 * len(pairs), (len(verdicts), len(pairs))
    verdicts = np.array(verdicts)
    first = int(np.argmax(verdicts))
    assert verdicts[0] == 0 and verdicts[-1] == 1, verdicts
    assert np.all(verdicts[first:] == 1), "the plain dynamics came back after the payload"
    assert not np.any(verdicts[np.array(before)]), "loaded before the request"
    # the audit's reference moved with the energy the change gave the state: still balanced
    n_audits = len(audits)
    assert probe.wait_for(lambda: len(audits) > n_audits + 2, 30), sim.log
    # (absolute: ~1e-4 J between changes, up to ~1.5e-2 J once the change's step is in —
    # its velocity products are placed by the q̈ of the unloaded steps before; the payload's
    # own energy at the change is joules, the arm whirling through ±15 J of potential; the
    # relative residual is noisy where the flows vanish)
    labels = audits[-1].layout.dim[0].label.split("|")
    residuals = [dict(zip(labels, x.data))["residual"] for x in audits]
    assert max(map(abs, residuals)) < 0.1, residuals


def test_simulator_refuses_bad_payload_values_and_keeps_its_payload(sim, probe):
    """Bad values: refused with a reason naming the parameter, logged, the node simulates on
    with the payload it had (the earlier test set it)."""
    applied = sim.log.count("]: payload: ")  # a line per change applied
    cases = {"payload.mass": (float("nan"), "parameter payload.mass"),
             "payload.com": ([0.0, float("inf"), 0.0], "parameter payload.com"),
             "payload.link": ("tol", "did you mean 'tool'")}
    for name, (value, needle) in cases.items():
        ((ok, reason),) = probe.set_parameters("simulator", **{name: value}).values()
        assert not ok and needle in reason and "\n" not in reason, reason
        assert sim.wait_log(f"rejected parameter change: {reason}", 10), sim.log
    ok, reason = _set_atomically(probe, "simulator", **{"payload.mass": 3.0,
                                                        "payload.inertia": [1.0, 0.0, 0.0,
                                                                            0.0, 0.0, 0.0]})
    assert not ok and reason.startswith("parameter payload.inertia: ") and "triangle" in reason
    assert sim.alive()
    assert sim.log.count("]: payload: ") == applied  # nothing applied, nothing removed
    states = probe.collect(JointState, "/sim_states")
    assert probe.wait_for(lambda: len(states) > 100, 30), sim.log
    loaded = _model(PAYLOAD)
    data = loaded.create_data()
    for q, v, a in _pairs(states, 1e-3):
        assert np.all(np.isfinite(a))
        a1 = rd.forward_dynamics(loaded, data, q, v, np.zeros(2))
        assert np.abs(a - a1).max() < 2e-3 * (1.0 + np.abs(a1).max())


# -- id_controller: its feed-forward and friction compensation carry the payload ---------------
@pytest.fixture(scope="module")
def controller():
    node = held_controller(ROBOT, "/held")
    yield node
    node.stop()


def _held_state():
    msg = JointState()
    msg.name, msg.position, msg.velocity = ["shoulder", "elbow"], list(Q), list(V)
    return msg


def _effort(probe, pub, efforts, settle=0.3, timeout=20.0):
    """The controller's effort for the held state, once it is the same twice in a row after
    ``settle`` seconds (an effort computed before a change may still be on its way)."""
    deadline = time.monotonic() + timeout
    time.sleep(settle)
    last = None
    while time.monotonic() < deadline:
        n = len(efforts)
        pub.publish(_held_state())
        if probe.wait_for(lambda: len(efforts) > n, 0.3):
            tau = np.array(efforts[-1].data)
            if last is not None and np.array_equal(tau, last):
                return tau
            last = tau
    raise AssertionError("no steady effort from the controller")


def test_controller_payload_changes_its_effort_by_the_payloads_inverse_dynamics(controller,
                                                                                probe):
    """At a held moving state (kp = kd = 0, friction along the measured velocity) the effort is
    the friction-aware inverse dynamics: setting the payload changes it by exactly the
    payload's share, gravity and friction parts both; removing it (mass 0) restores it."""
    efforts = probe.collect(Float64MultiArray, "/held_commands")
    pub = probe.node.create_publisher(JointState, "/held_states", STATE_QOS)
    plain, loaded = _model(), _model(PAYLOAD)
    q, v, zero = np.array(Q), np.array(V), np.zeros(2)
    oracle = {}
    for key, model in (("plain", plain), ("loaded", loaded)):
        friction = load_friction("", ROBOT, model)
        data = model.create_data()
        tau = rd.inverse_dynamics(model, data, q, v, zero, friction=friction).copy()
        oracle[key] = (tau, data.tau_friction.copy(), rd.gravity_torques(model, data, q).copy())
    tau0 = _effort(probe, pub, efforts, settle=0.0)
    np.testing.assert_allclose(tau0, oracle["plain"][0], rtol=1e-9, atol=1e-9)
    ok, reason = _set_atomically(probe, "id_controller", **PAYLOAD)
    assert ok, reason
    tau1 = _effort(probe, pub, efforts)
    np.testing.assert_allclose(tau1 - tau0, oracle["loaded"][0] - oracle["plain"][0],
                               rtol=1e-9, atol=1e-9)
    # both parts of the payload's share are there, and large against the tolerance
    d_gravity = oracle["loaded"][2] - oracle["plain"][2]
    d_friction = oracle["loaded"][1] - oracle["plain"][1]
    assert np.abs(d_gravity).min() > 0.1 and np.abs(d_friction).max() > 1e-3, (d_gravity,
                                                                               d_friction)
    assert controller.wait_log("payload: 2 kg on 'tool'", 5), controller.log

    # bad values: refused, logged, the payload kept (the effort is still the loaded one)
    for values, needle in (({"payload.com": [float("nan"), 0.0, 0.0]}, "parameter payload.com"),
                           ({"payload.mass": -1.0}, "parameter payload.mass"),
                           ({"payload.mass": 5.0, "payload.link": "tool9"},
                            "parameter payload.link"),
                           ({"payload_file": "/no/such/payload.yaml"},
                            "parameter payload_file: /no/such/payload.yaml: no such")):
        ok, reason = _set_atomically(probe, "id_controller", **values)
        assert not ok and reason.startswith(needle) and "\n" not in reason, (values, reason)
        assert controller.wait_log(f"rejected parameter change: {reason}", 10), controller.log
    assert controller.alive()
    np.testing.assert_array_equal(_effort(probe, pub, efforts), tau1)

    ((ok, _),) = probe.set_parameters("id_controller", **{"payload.mass": 0.0}).values()
    assert ok and controller.wait_log("payload: none", 5), controller.log
    np.testing.assert_allclose(_effort(probe, pub, efforts), tau0, rtol=1e-12, atol=1e-12)
    assert all(math.isfinite(x) for m in efforts for x in m.data)


# -- dynamics_model: the reactions it publishes carry the payload (here from a file) ----------
def test_dynamics_model_payload_file_changes_what_it_publishes(probe, tmp_path):
    path = tmp_path / "gripper_load.yaml"
    path.write_text("payload:\n  link: tool\n  mass: 2.0\n  com: [0.05, 0.0, 0.02]\n"
                    "  inertia: {ixx: 0.004, iyy: 0.004, izz: 0.002}\n")
    node = NodeProcess("dynamics_model", {"robot": ROBOT, "joint_states_topic": "/dm_states",
                                          "markers": False})
    try:
        assert node.wait_log("robot 'planar_2r'", 60), node.log
        gravity = probe.collect(Float64MultiArray, "/dynamics_model/gravity", 10)
        pub = probe.node.create_publisher(JointState, "/dm_states", STATE_QOS)
        plain, loaded = _model(), _model(PAYLOAD)
        g0 = rd.gravity_torques(plain, plain.create_data(), np.array(Q))
        g1 = rd.gravity_torques(loaded, loaded.create_data(), np.array(Q))

        def latest(expected):
            def seen():
                pub.publish(_held_state())
                return bool(gravity) and np.allclose(gravity[-1].data, expected, rtol=1e-12,
                                                     atol=1e-12)
            return probe.wait_for(seen, 20)

        assert latest(g0), (gravity[-1:], g0, node.log)
        ((ok, reason),) = probe.set_parameters("dynamics_model",
                                               payload_file=str(path)).values()
        assert ok, reason
        assert latest(g1), (gravity[-1:], g1, node.log)
        ((ok, reason),) = probe.set_parameters("dynamics_model", payload_file="").values()
        assert ok and latest(g0), reason
        path.write_text("payload:\n  link: tool\n  mass: -2.0\n")
        ((ok, reason),) = probe.set_parameters("dynamics_model",
                                               payload_file=str(path)).values()
        assert not ok and reason.startswith("parameter payload_file: ") and "mass" in reason
        assert node.wait_log("rejected parameter change: parameter payload_file", 10), node.log
        assert node.alive() and latest(g0)
    finally:
        node.stop()


# -- start-up and --help ------------------------------------------------------------------------
@pytest.mark.parametrize("node", ["simulator", "id_controller", "dynamics_model"])
def test_help_lists_the_payload_parameters(node, capsys):
    # the executables' --help, in this process (a node's `python -m` start prints the same
    # table through run_node: test_cli.py; a subprocess here cost ~4 s a node)
    from robot_dynamics.cli.main import main

    assert main([node, "--help"]) == 0
    out = capsys.readouterr().out
    for line in ("  payload.link  string  ''", "  payload.mass  double  0.0",
                 "  payload.com  double_array  [0.0, 0.0, 0.0]",
                 "  payload.inertia  double_array  [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
                 "  payload_file  string  ''"):
        assert line in out, (line, out)


def test_bad_start_up_payload_is_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "robot_dynamics.ros.dynamics_model",
                          "--ros-args", "-p", f"robot:={ROBOT}", "-p", "payload.link:=tool",
                          "-p", "payload.mass:=2.0", "-p", "payload.com:=[0.0, 0.0, 50.0]"],
                         env=ENV, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.strip().splitlines()[-1].startswith(
        "robot-dynamics dynamics_model: parameter payload.com: 50 m from the link origin"), \
        out.stderr


# -- the semantics of the set, in process (no DDS needed to tell them) ------------------------
def test_payload_set_semantics_in_process(tmp_path):
    """The model carries what the parameters describe: payload_file's entries plus the
    payload.* set, which replaces the file's entry on its link; moving the payload one
    parameter at a time moves it; every value is checked even while the mass is 0; a refused
    call changes nothing."""
    import rclpy
    from rclpy.parameter import Parameter

    from ros_helpers import DOMAIN_ID
    from robot_dynamics.ros.dynamics_model import DynamicsModelNode

    path = tmp_path / "loads.yaml"
    path.write_text("payload:\n  - {link: tool, mass: 1.0}\n  - {link: upper_arm, mass: 0.5, "
                    "com: [0.1, 0.0, 0.0]}\n")
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(DOMAIN_ID))
    try:
        node = DynamicsModelNode(context=context, parameter_overrides=[
            Parameter("robot", value=ROBOT), Parameter("payload_file", value=str(path))])
        model = node.model

        def carried():
            return {k: (p.mass, p.com.tolist()) for k, p in model.payloads.items()}

        def set_(**values):
            return node.set_parameters_atomically(
                [Parameter(k.replace("__", "."), value=v) for k, v in values.items()])

        assert carried() == {"tool": (1.0, [0.0, 0.0, 0.0]), "upper_arm": (0.5, [0.1, 0.0, 0.0])}
        assert set_(payload__link="tool").successful  # mass 0: the file's entry stays
        assert carried()["tool"] == (1.0, [0.0, 0.0, 0.0])
        assert set_(payload__mass=2.0).successful  # the set replaces the file's entry
        assert carried() == {"tool": (2.0, [0.0, 0.0, 0.0]), "upper_arm": (0.5, [0.1, 0.0, 0.0])}
        assert set_(payload_file="").successful
        assert carried() == {"tool": (2.0, [0.0, 0.0, 0.0])}
        assert set_(payload__link="forearm").successful  # one parameter: the payload moves
        assert carried() == {"forearm": (2.0, [0.0, 0.0, 0.0])}
        # what the node computes with is the core's model with the same payload
        ref = _model()
        ref.set_payload("forearm", 2.0)
        q, v, a = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([1.0, -1.0])
        np.testing.assert_array_equal(rd.rnea(model, model.create_data(), q, v, a),
                                      rd.rnea(ref, ref.create_data(), q, v, a))
        assert set_(payload__mass=0.0).successful and carried() == {}
        before = {n: node.get_parameter(n).value for n in ("payload.link", "payload.mass")}
        result = set_(payload__inertia=[0.0, 0.0, 0.0, 0.0, 0.0, 1.0])  # mass 0: still checked
        assert not result.successful and result.reason.startswith("parameter payload.inertia:")
        result = set_(payload__mass=1.0, payload__com=[0.0, 0.0, 12.0])  # refused as a whole
        assert not result.successful and "parameter payload.com: 12 m" in result.reason
        assert carried() == {} and before == {
            n: node.get_parameter(n).value for n in ("payload.link", "payload.mass")}
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
