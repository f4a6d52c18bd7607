"""Simulator and id_controller as separate processes over DDS: the arm tracks a trajectory.

The simulator runs lock-step (it steps once per effort command), so the closed loop is the same
1 kHz loop on any machine, however slow.
"""
import numpy as np
import pytest

from ros_helpers import NodeProcess, RosProbe

from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory as TrajMsg  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.ros.common import STATE_QOS, TRAJECTORY_QOS, stamp_to_seconds  # noqa: E402
from robot_dynamics.ros.demo.scenario import demo_trajectory, trajectory_msg  # noqa: E402
from robot_dynamics.parsers.resources import robot_path  # noqa: E402

ROBOT = "arm7"
SETTLE = 1.0


def run_closed_loop(friction_compensation: bool):
    model = rd.load_urdf(robot_path(ROBOT))
    traj = demo_trajectory(model, ROBOT, move_time=1.0)
    sim = NodeProcess("simulator", {"robot": ROBOT, "mode": "lockstep",
                                    "initial_positions": traj.positions[0].tolist()})
    ctrl = NodeProcess("id_controller", {"robot": ROBOT, "stale_timeout": 5.0,
                                         "friction_compensation": friction_compensation})
    probe = RosProbe("closed_loop_probe")
    try:
        states = probe.collect(JointState, "/joint_states", STATE_QOS)
        pub = probe.node.create_publisher(TrajMsg, "/id_controller/joint_trajectory", TRAJECTORY_QOS)
        assert probe.wait_for(lambda: len(states) > 10, timeout=60), sim.log + ctrl.log
        # the controller's trajectory subscription is volatile (as joint_trajectory_controller's):
        # a message published before it matched would be lost
        assert probe.wait_for(lambda: pub.get_subscription_count() > 0, timeout=60), ctrl.log
        pub.publish(trajectory_msg(model, traj))
        assert ctrl.wait_log("tracking a trajectory", timeout=30), ctrl.log
        t_sent = stamp_to_seconds(states[-1].header.stamp)
        t_end = t_sent + traj.duration + SETTLE + 0.5
        ok = probe.wait_for(lambda: stamp_to_seconds(states[-1].header.stamp) > t_end, timeout=240)
        assert ok, f"simulation stalled at {stamp_to_seconds(states[-1].header.stamp)}\n{sim.log}"
        assert sim.alive() and ctrl.alive()
        last = states[-1]
        names = list(last.name)
        q = np.array([last.position[names.index(j)] for j in model.joint_names])
        efforts = np.array([list(s.effort) for s in states])
        return np.abs(q - traj.positions[-1]).max(), efforts
    finally:
        probe.close()
        ctrl.stop()
        sim.stop()


@pytest.mark.slow
def test_tracks_trajectory_with_friction_compensation_and_worse_without():
    err_on, efforts_on = run_closed_loop(True)
    assert err_on < 1e-3, f"final tracking error {err_on:.2e} rad with friction compensation"
    assert np.all(np.isfinite(efforts_on))
    err_off, _ = run_closed_loop(False)
    assert err_off > 3 * err_on and err_off > 1e-3, (err_on, err_off)
