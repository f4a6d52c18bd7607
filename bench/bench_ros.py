"""ROS 2 benchmark: simulator real-time factor and controller latency, over real DDS on loopback.

    python3 bench/bench_ros.py

1. Simulator core: one simulated second of arm7 (7 dof, bundled load-dependent friction) at 1 kHz
   under a tracking controller — real-time factor = simulated / wall time.
2. simulator node in ``fast`` mode (no controller): simulated seconds per wall second, publishing
   every step and every 20th step (``publish_every``).
3. id_controller latency: a probe publishes JointState messages and times the effort command that
   answers each (JointState → effort, including both DDS hops): p50, p99.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.nodes.composition import demo_trajectory  # noqa: E402
from robot_dynamics.resources import config_path, robot_path  # noqa: E402


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
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.nodes.common import STATE_QOS, stamp_to_seconds

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

    ctrl = NodeProcess("id_controller", {"robot": "arm7", "stale_timeout": 10.0})
    try:
        import threading

        efforts = []
        arrived = threading.Event()

        def on_effort(_msg):
            efforts.append(time.perf_counter())
            arrived.set()

        probe.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                       on_effort, STATE_QOS)
        pub = probe.node.create_publisher(JointState, "/joint_states", STATE_QOS)
        model = rd.load_urdf(robot_path("arm7"))
        msg = JointState()
        msg.name = list(model.joint_names)
        msg.position, msg.velocity = [0.1] * 7, [0.2] * 7
        deadline = time.time() + 60
        while not efforts and time.time() < deadline:
            pub.publish(msg)
            time.sleep(0.05)
        lat = []
        for k in range(2000):
            n = len(efforts)
            arrived.clear()
            t0 = time.perf_counter()
            pub.publish(msg)
            arrived.wait(0.5)  # no busy loop: the probe's executor thread needs the GIL
            if len(efforts) > n:
                lat.append(efforts[n] - t0)
            time.sleep(0.001)
        lat = np.array(lat) * 1e3
        print(f"id_controller JointState→effort round trip ({len(lat)} samples): "
              f"p50 {np.percentile(lat, 50):.3f} ms, p99 {np.percentile(lat, 99):.3f} ms")
    finally:
        ctrl.stop()
        probe.close()


if __name__ == "__main__":
    core_rtf()
    node_rates()
