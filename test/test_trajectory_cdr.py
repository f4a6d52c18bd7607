"""Serialized JointTrajectory read into arrays: the same as rclpy's deserialization, or None."""
import numpy as np
import pytest

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics.ros.id_controller import trajectory_fields  # noqa: E402
from robot_dynamics.ros.trajectory_cdr import parse_trajectory  # noqa: E402


def _msg(n, K, vel=False, acc=False, effort=False, frame="", names_len=5, seed=0):
    rng = np.random.default_rng(seed)
    m = JointTrajectory(joint_names=[f"j{i}" + "x" * (names_len + i) for i in range(n)])
    m.header.frame_id = frame
    m.header.stamp.sec, m.header.stamp.nanosec = 17, 250_000_000
    for k in range(K):
        p = JointTrajectoryPoint(positions=rng.normal(size=n).tolist())
        if vel:
            p.velocities = rng.normal(size=n).tolist()
        if acc:
            p.accelerations = rng.normal(size=n).tolist()
        if effort:
            p.effort = rng.normal(size=n).tolist()
        t = 0.1 * (k + 1) + 1e-3
        p.time_from_start = Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))
        m.points.append(p)
    return m


@pytest.mark.parametrize("n,K,vel,acc,effort,frame,names_len", [
    (2, 1, False, False, False, "", 1), (2, 2, True, False, False, "x", 2),
    (3, 3, True, True, False, "base", 3), (7, 5, False, False, False, "world", 0),
    (7, 1000, True, True, False, "", 4), (1, 7, False, True, True, "ab", 1),
    (6, 9, True, False, True, "abc", 2),
])
def test_same_arrays_as_rclpy(n, K, vel, acc, effort, frame, names_len):
    m = _msg(n, K, vel, acc, effort, frame, names_len)
    got = parse_trajectory(serialize_message(m))
    assert got is not None
    names, times, P, V, A, eff, stamp = got
    ref = trajectory_fields(m)
    assert names == ref[0] and eff == ref[5] and stamp == ref[6]
    np.testing.assert_array_equal(times, ref[1])
    for mine, theirs in ((P, ref[2]), (V, ref[3]), (A, ref[4])):
        np.testing.assert_array_equal(mine, np.array([list(r) for r in theirs]).reshape(K, -1))


def test_other_layouts_are_left_to_rclpy():
    m = _msg(3, 4, vel=True)
    m.points[2].velocities = []  # points of different sizes
    assert parse_trajectory(serialize_message(m)) is None
    assert parse_trajectory(b"\x00\x00\x00\x00" + serialize_message(_msg(2, 3))[4:]) is None  # BE
    assert parse_trajectory(serialize_message(_msg(2, 3))[:120]) is None  # truncated
    assert parse_trajectory(serialize_message(JointTrajectory())) is None  # no points
