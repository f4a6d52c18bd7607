"""The demo: poses visited by rest-to-rest moves, their timing, the trajectory and its
trajectory_msgs message."""
from __future__ import annotations

import os

import numpy as np

from robot_dynamics.ros.demo.config import bundled_config

#: rest-to-rest moves of the bundled robots, within their joint limits (others: around the
#: middle of the limits)
DEMO_POSES = {
    "arm7": [[0.0, 0.3, 0.0, -1.2, 0.0, 0.9, 0.0],
             [0.8, -0.2, 0.5, -1.8, 0.4, 1.4, -0.6],
             [-0.5, 0.6, -0.4, -0.9, -0.3, 0.5, 0.7]],
    # the fingers hold half open while the arm moves: see "arm7_gripper's fingers" in README
    "arm7_gripper": [[0.0, 0.3, 0.0, -1.2, 0.0, 0.9, 0.0, 0.02, 0.02],
                     [0.8, -0.2, 0.5, -1.8, 0.4, 1.4, -0.6, 0.02, 0.02],
                     [-0.5, 0.6, -0.4, -0.9, -0.3, 0.5, 0.7, 0.02, 0.02]],
}
#: the demo's moves: its three poses, then back home (demo_trajectory)
DEMO_MOVES = 3
#: seconds per demo move and of settling after the last one, per bundled robot (default 2, 1)
DEMO_TIMING = {}
DEFAULT_MOVE_TIME, DEFAULT_SETTLE = 2.0, 1.0
#: the demo trajectory's header stamp [s of simulated time]: it starts at once
START = 1e-9


def demo_timing(robot: str, move_time=None, settle=None):
    """(seconds per move, seconds of settling): the ones given, else the robot's, else the
    defaults."""
    timing = DEMO_TIMING.get(robot, {})
    move_time = move_time or timing.get("move_time", DEFAULT_MOVE_TIME)
    settle = timing.get("settle", DEFAULT_SETTLE) if settle is None else settle
    return move_time, settle


def demo_trajectory(model, robot: str, move_time: float = DEFAULT_MOVE_TIME):
    """Waypoints visited by rest-to-rest minimum-jerk moves, as one JointTrajectory."""
    from robot_dynamics.control.trajectory import JointTrajectory

    poses = DEMO_POSES.get(robot)
    if poses is None or len(poses[0]) != model.nv:
        lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -1.0)
        hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, 1.0)
        mid, half = 0.5 * (lo + hi), 0.25 * (hi - lo)
        poses = [mid, mid + 0.5 * half, mid - 0.5 * half]
    poses = np.asarray(poses, dtype=float)
    poses = np.vstack([poses, poses[:1]])  # come back home
    times = np.arange(len(poses)) * move_time
    # zero velocity and acceleration at every waypoint: quintic pieces = minimum-jerk moves
    return JointTrajectory(times, poses, np.zeros_like(poses), np.zeros_like(poses))


def trajectory_msg(model, traj, start=None):
    """trajectory_msgs/JointTrajectory of ``traj``; header stamp ``start`` [s] (None: now)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory as Msg, JointTrajectoryPoint

    from robot_dynamics.ros.common import seconds_to_stamp

    msg = Msg()
    if start is not None:
        seconds_to_stamp(start, msg.header.stamp)
    msg.joint_names = list(model.joint_names)
    for k, t in enumerate(traj.times):
        p = JointTrajectoryPoint()
        p.positions = traj.positions[k].tolist()
        p.velocities = traj.velocities[k].tolist()
        p.accelerations = traj.accelerations[k].tolist()
        sec = int(t)
        p.time_from_start = Duration(sec=sec, nanosec=int(round((t - sec) * 1e9)))
        msg.points.append(p)
    return msg


def loop_closure_note(robot: str):
    """A warning line when ``robot`` has a bundled loop-closure file (``<robot>_loop.yaml``,
    e.g. the five-bar): the nodes simulate the URDF tree, the loop open; None otherwise."""
    path = bundled_config(robot, "_loop")
    if path is None:
        return None
    name = os.path.splitext(os.path.basename(path))[0][:-len("_loop")]
    return (f"note: {name} is a closed chain ({os.path.basename(path)}); the nodes "
            "simulate its URDF tree with the loop open (each branch on its own); the closed "
            "mechanism is robot_dynamics.formulations.closed_loop")
