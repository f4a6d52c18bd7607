"""The pip-mode composition: what ``sim.launch.py`` starts, in one process, plus a demo.

``robot-dynamics sim`` runs simulator + id_controller + dynamics_model (real rclpy nodes talking
over DDS, one executor), sends a demo trajectory to the controller, and reports tracking error,
friction dissipation and the energy audit, optionally with a plot. robot_state_publisher and
rviz2 are not on PyPI, so they are not started here; in a ROS 2 install use
``ros2 launch robot_dynamics sim.launch.py`` for the full composition.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

DEMO_POSES = {  # rest-to-rest moves for the bundled robots, within their joint limits
    "arm7": [[0.0, 0.3, 0.0, -1.2, 0.0, 0.9, 0.0],
             [0.8, -0.2, 0.5, -1.8, 0.4, 1.4, -0.6],
             [-0.5, 0.6, -0.4, -0.9, -0.3, 0.5, 0.7]],
}


@dataclass
class Recording:
    t: list = field(default_factory=list)
    q: list = field(default_factory=list)
    v: list = field(default_factory=list)
    tau: list = field(default_factory=list)
    tau_friction: list = field(default_factory=list)

    def arrays(self):
        return {k: np.asarray(getattr(self, k)) for k in ("t", "q", "v", "tau", "tau_friction")}


def demo_trajectory(model, robot: str, move_time: float = 2.0):
    """Waypoints visited by rest-to-rest minimum-jerk moves, as one JointTrajectory."""
    from ..trajectory import JointTrajectory

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


def trajectory_msg(model, traj):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory as Msg, JointTrajectoryPoint

    msg = Msg()
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


def run_demo(robot="arm7", friction="", mode="lockstep", move_time=2.0, settle=1.0,
             friction_compensation=True, plot=None, log=print, validate="strict"):
    """Run the composition on ``robot`` and return a summary dict (also printed via ``log``)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory as TrajMsg

    from .. import load_urdf
    from ..resources import robot_path
    from .common import STATE_QOS, TRAJECTORY_QOS, stamp_to_seconds
    from .dynamics_model import DynamicsModelNode
    from .id_controller import IdController
    from .simulator import SimulatorNode

    model = load_urdf(robot_path(robot), validate=validate)
    traj = demo_trajectory(model, robot, move_time)
    common = [Parameter("robot", value=robot), Parameter("friction_config", value=friction),
              Parameter("validate", value=validate)]
    own_context = not rclpy.ok()
    if own_context:
        rclpy.init()
    nodes = []
    try:
        sim = SimulatorNode(parameter_overrides=common + [
            Parameter("mode", value=mode),
            Parameter("initial_positions", value=traj.positions[0].tolist()),
            Parameter("audit_period", value=0.0)])
        ctrl = IdController(parameter_overrides=common + [
            Parameter("friction_compensation", value=bool(friction_compensation)),
            Parameter("stale_timeout", value=5.0)])
        dyn = DynamicsModelNode(parameter_overrides=common + [Parameter("publish_rate", value=10.0)])
        driver = rclpy.create_node("demo_driver")
        nodes = [sim, ctrl, dyn, driver]
        rec = Recording()

        def on_state(msg):
            rec.t.append(stamp_to_seconds(msg.header.stamp))
            rec.q.append(list(msg.position))
            rec.v.append(list(msg.velocity))
            rec.tau.append(list(msg.effort))
            rec.tau_friction.append(sim.sim.tau_friction.copy())

        driver.create_subscription(JointState, "/joint_states", on_state, STATE_QOS)
        pub = driver.create_publisher(TrajMsg, "/id_controller/joint_trajectory", TRAJECTORY_QOS)
        executor = SingleThreadedExecutor()
        for n in nodes:
            executor.add_node(n)
        pub.publish(trajectory_msg(model, traj))  # transient local: reaches ctrl once matched
        t_end = traj.duration + settle
        wall0 = time.monotonic()
        while ctrl.traj_start is None or sim.sim.t < ctrl.traj_start + t_end:
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() - wall0 > 30.0 * t_end + 60.0:
                raise RuntimeError(f"demo did not finish (sim at t={sim.sim.t:.3f} s, trajectory "
                                   f"{'not received' if ctrl.traj_start is None else 'running'})")
        t0 = ctrl.traj_start
        wall = time.monotonic() - wall0
        data = rec.arrays()
        audit = sim.sim.audit
    finally:
        for n in nodes:
            n.destroy_node()
        if own_context and rclpy.ok():
            rclpy.shutdown()

    qd = np.array([traj.sample(t - t0)[0] for t in data["t"]])
    err = np.abs(qd - data["q"])
    summary = {
        "robot": robot,
        "samples": len(data["t"]),
        "sim_time": float(data["t"][-1]),
        "wall_time": wall,
        "real_time_factor": float(data["t"][-1]) / wall,
        "final_error": float(err[-1].max()),
        "max_error": float(err.max()),
        "friction_dissipation": float(audit.friction_dissipation),
        "motor_work": float(audit.motor_work),
        "energy_residual": float(audit.relative_residual),
        "audit": audit,
    }
    log(f"robot {robot}: {summary['samples']} states, {summary['sim_time']:.2f} s simulated in "
        f"{wall:.2f} s (x{summary['real_time_factor']:.1f} real time, mode {mode})")
    log(f"tracking error: final {summary['final_error']:.2e} rad, max {summary['max_error']:.2e} rad"
        f" (friction compensation {'on' if friction_compensation else 'off'})")
    log(f"friction dissipation {summary['friction_dissipation']:.4f} J, motor work "
        f"{summary['motor_work']:.4f} J")
    log(f"energy audit: {audit}")
    if plot:
        save_plot(plot, model, data, qd)
        log(f"plot saved to {os.path.abspath(plot)}")
    return summary


def save_plot(path, model, data, qd):
    """Joint tracking, and motor torque split into inertial / gravity / friction parts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..crba import gravity_torques

    mdata = model.create_data()
    g = np.array([gravity_torques(model, mdata, q) for q in data["q"]])
    friction_part = -data["tau_friction"]  # what the motor spends against friction
    inertial = data["tau"] - g - friction_part  # = M q̈ + C q̇ by the equations of motion
    n, t = model.nv, data["t"]
    fig, axes = plt.subplots(n, 2, figsize=(12, 2.0 * n), sharex=True, squeeze=False)
    for i in range(n):
        ax = axes[i, 0]
        ax.plot(t, qd[:, i], "k--", lw=1, label="reference")
        ax.plot(t, data["q"][:, i], lw=1.2, label="simulated")
        ax.set_ylabel(f"{model.joint_names[i]}\n[rad]", fontsize=8)
        ax = axes[i, 1]
        ax.plot(t, data["tau"][:, i], "k", lw=1, label="motor")
        ax.plot(t, inertial[:, i], lw=1, label="inertial (M q̈ + C q̇)")
        ax.plot(t, g[:, i], lw=1, label="gravity")
        ax.plot(t, friction_part[:, i], lw=1, label="friction")
        ax.set_ylabel("[N·m]", fontsize=8)
    axes[0, 0].legend(fontsize=7, loc="upper right")
    axes[0, 1].legend(fontsize=7, loc="upper right")
    axes[0, 0].set_title("joint tracking")
    axes[0, 1].set_title("motor effort split")
    axes[-1, 0].set_xlabel("t [s]")
    axes[-1, 1].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="robot-dynamics sim",
        description="Simulator + friction-aware id_controller + dynamics_model over DDS, with a "
                    "demo trajectory (the nodes of sim.launch.py; robot_state_publisher and rviz2 "
                    "need a ROS 2 install: use `ros2 launch robot_dynamics sim.launch.py`).")
    parser.add_argument("--robot", default="arm7",
                        help="bundled robot name, URDF path or .urdf.xacro path")
    parser.add_argument("--validate", default="strict", choices=["strict", "warn"],
                        help="URDF physics check: refuse (strict) or warn about unphysical bodies")
    parser.add_argument("--friction", default="",
                        help="friction YAML (bundled name or path), 'none'; default: the robot's")
    parser.add_argument("--mode", default="lockstep", choices=["lockstep", "realtime", "fast"])
    parser.add_argument("--move-time", type=float, default=2.0, help="seconds per demo move")
    parser.add_argument("--no-friction-compensation", action="store_true",
                        help="controller ignores friction (to see what compensation buys)")
    parser.add_argument("--plot", default=None, help="save a PNG plot here")
    args = parser.parse_args(argv)
    from ..errors import InputError, ModelError

    try:
        summary = run_demo(args.robot, args.friction, args.mode, args.move_time,
                           friction_compensation=not args.no_friction_compensation, plot=args.plot,
                           validate=args.validate)
    except (ModelError, InputError) as exc:
        print(f"robot-dynamics sim: {exc}", file=sys.stderr)
        return 2
    return 0 if np.isfinite(summary["final_error"]) else 1
