"""simulator in fast mode with publish_every: states come every k steps of simulated time."""
import numpy as np
import pytest

from ros_helpers import NodeProcess, RosProbe

from sensor_msgs.msg import JointState  # noqa: E402

from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402

from robot_dynamics.nodes.common import stamp_to_seconds  # noqa: E402


@pytest.mark.parametrize("every", [10])
def test_fast_mode_publishes_every_kth_step(every):
    node = NodeProcess("simulator", {"robot": "planar_2r", "mode": "fast", "rate": 1000.0,
                                     "publish_every": every, "friction_config": "none",
                                     "audit_period": 0.0})
    probe = RosProbe("decimation_probe")
    try:
        assert node.wait_log("simulating", 30), node.log
        # a deep queue: fast mode publishes faster than this probe takes messages
        states = probe.collect(JointState, "/joint_states",
                               QoSProfile(depth=100000, reliability=ReliabilityPolicy.RELIABLE))
        assert probe.wait_for(lambda: len(states) > 40, timeout=30), node.log
        stamps = np.array([stamp_to_seconds(s.header.stamp) for s in states[5:]])
        gaps = np.diff(stamps)
        # consecutive received states are k steps apart (a lost sample would show as 2k)
        assert np.median(gaps) == pytest.approx(every * 1e-3, abs=1e-9)
        assert np.all(np.abs(gaps / (every * 1e-3) - np.round(gaps / (every * 1e-3))) < 1e-6)
    finally:
        probe.close()
        node.stop()
