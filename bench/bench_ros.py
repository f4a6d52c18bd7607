"""ROS 2 benchmark: simulator real-time factor and controller latency, over real DDS on loopback.

    python3 bench/bench_ros.py

1. Simulator core: one simulated second of arm7 (7 dof, bundled load-dependent friction) at 1 kHz
   under a tracking controller — real-time factor = simulated / wall time.
2. simulator node in ``fast`` mode (no controller): simulated seconds per wall second, publishing
   every step and every 20th step (``publish_every``).
3. id_controller latency: a probe publishes JointState messages and times the effort command that
   answers each (JointState → effort, including both DDS hops): p50, p99, with the controller's
   joint_states served by its own thread (default) and by the executor.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.ros.demo.scenario import demo_trajectory  # noqa: E402
from robot_dynamics.parsers.resources import config_path, robot_path  # noqa: E402


def core_rtf():
    model = rd.load_urdf(robot_path("arm7"))
    fr = rd.friction_from_config(config_path("arm7_friction"), model)
    traj = demo_trajectory(model, "arm7", 1.0)
    data = model.create_data()
    sim = rd.Simulator(model, fr, dt=1e-3)

    def ctrl(t, q, v):
        qd, vd, ad = traj.sample(t)
        return rd.inverse_dynamics(model, data, q, v, ad + 40 * (vd - v) + 400 * (qd - q), fr)

    sim.reset(traj.positions[0])
    sim.run(0.05, ctrl)  # compile / load caches
    sim.reset(traj.positions[0])
    t0 = time.perf_counter()
    sim.run(3.0, ctrl)
    wall = time.perf_counter() - t0
    print(f"simulator core, arm7 + friction + controller at 1 kHz: RTF {3.0 / wall:.1f} "
          f"({wall / 3000 * 1e6:.0f} µs per step incl. the controller)")


def node_rates():
    from ros_helpers import NodeProcess, RosProbe
    from sensor_msgs.msg import JointState

    from robot_dynamics.ros.common import STATE_QOS, stamp_to_seconds

    probe = RosProbe("bench_probe")
    for every in (1, 20):
        sim = NodeProcess("simulator", {"robot": "arm7", "mode": "fast", "audit_period": 0.0,
                                        "publish_every": every})
        try:
            states = probe.collect(JointState, "/joint_states", STATE_QOS)
            probe.wait_for(lambda: len(states) > 20, 60)
            s0, t0 = stamp_to_seconds(states[-1].header.stamp), time.perf_counter()
            time.sleep(5.0)
            s1, t1 = stamp_to_seconds(states[-1].header.stamp), time.perf_counter()
            print(f"simulator node (fast mode, arm7 + friction, a state every {every} step(s)): "
                  f"RTF {(s1 - s0) / (t1 - t0):.2f}")
        finally:
            sim.stop()
        time.sleep(1.0)

    probe.close()
    for state_thread in (True, False):
        ctrl = NodeProcess("id_controller", {"robot": "arm7", "stale_timeout": 10.0,
                                             "state_thread": state_thread})
        try:
            lat = round_trips(rd.load_urdf(robot_path("arm7")).joint_names, 2000)
            how = "its own thread" if state_thread else "the executor"
            print(f"id_controller JointState→effort round trip, joint_states served by {how} "
                  f"({len(lat)} samples): p50 {np.percentile(lat, 50):.3f} ms, "
                  f"p99 {np.percentile(lat, 99):.3f} ms")
        finally:
            ctrl.stop()


def round_trips(joint_names, count):
    """Latencies [ms] of JointState → effort command, from a probe that adds as little as it can:
    one thread publishes a pre-serialised JointState and waits on the command subscription alone
    (rclpy's wait set, as rclpy.wait_for_message does); no executor on this side."""
    import rclpy
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    from rclpy.serialization import serialize_message
    from ros_helpers import DOMAIN_ID
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.ros.common import STATE_QOS

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(DOMAIN_ID))
    node = rclpy.create_node("latency_probe", context=context, start_parameter_services=False)
    try:
        sub = node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                       lambda _m: None, STATE_QOS, raw=True)
        pub = node.create_publisher(JointState, "/joint_states", STATE_QOS)
        wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
        msg = JointState()
        msg.name = list(joint_names)
        msg.position, msg.velocity = [0.1] * len(joint_names), [0.2] * len(joint_names)
        raw = serialize_message(msg)

        def drain():
            while sub.handle.take_message(sub.msg_type, True) is not None:
                pass

        def answer(timeout):
            deadline = time.perf_counter() + timeout
            while (left := deadline - time.perf_counter()) > 0:
                wait_set.clear_entities()
                wait_set.add_subscription(sub.handle)
                wait_set.wait(int(left * 1e9))
                if sub.handle.take_message(sub.msg_type, True) is not None:
                    return time.perf_counter()
            return None

        deadline = time.time() + 60
        while time.time() < deadline:  # discovery: until the controller answers
            pub.publish(raw)
            if answer(0.05):
                break
        time.sleep(0.3)
        drain()
        lat = []
        for _ in range(count):
            t0 = time.perf_counter()
            pub.publish(raw)
            t1 = answer(0.5)
            if t1 is not None:
                lat.append(t1 - t0)
            time.sleep(0.001)
            drain()
        return np.array(lat) * 1e3
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


if __name__ == "__main__":
    core_rtf()
    node_rates()
