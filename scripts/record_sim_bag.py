#!/usr/bin/env python3
"""Record a friction-identification run from the simulator node into a ROS 2 bag.

    python3 scripts/record_sim_bag.py --robot arm7 --duration 20 --out run_bag

Starts the simulator (lock-step) and the friction-aware id_controller as real rclpy nodes,
sends a Fourier excitation trajectory (by default designed for a well-conditioned friction
regressor: robot_dynamics.identification.design_excitation), records /joint_states (position,
velocity, applied effort) and writes them to a bag with rosbags (sqlite3). Then:

    robot-dynamics identify arm7 run_bag -o friction.yaml --plot fit.png
"""
from __future__ import annotations

import argparse

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--robot", default="arm7")
    parser.add_argument("--friction", default="", help="friction YAML used by the simulator")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--out", default="run_bag")
    parser.add_argument("--excitation", default="designed", choices=["designed", "random"],
                        help="Fourier coefficients optimised for identifiability (default) or "
                             "random ones")
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from robot_dynamics import load_urdf
    from robot_dynamics.identification import design_excitation, fourier_excitation
    from robot_dynamics.identification.io import save_bag
    from robot_dynamics.nodes.common import STATE_QOS, stamp_to_seconds
    from robot_dynamics.nodes.id_controller import IdController
    from robot_dynamics.nodes.simulator import SimulatorNode
    from robot_dynamics.resources import robot_path
    from robot_dynamics.trajectory import JointTrajectory

    model = load_urdf(robot_path(args.robot))
    if args.excitation == "designed":
        t, Q, V, A, conds = design_excitation(model, duration=args.duration, rate=50.0)
        print("designed excitation: regressor condition numbers "
              + " ".join(f"{c:.3g}" for c in conds))
    else:
        t, Q, V, A = fourier_excitation(model, duration=args.duration, rate=50.0)
    traj = JointTrajectory(t, Q, V, A)
    common = [Parameter("robot", value=args.robot), Parameter("friction_config", value=args.friction)]
    rclpy.init()
    try:
        sim = SimulatorNode(parameter_overrides=common + [
            Parameter("mode", value="lockstep"), Parameter("audit_period", value=0.0),
            Parameter("initial_positions", value=Q[0].tolist()),
            Parameter("initial_velocities", value=V[0].tolist())])
        ctrl = IdController(parameter_overrides=common + [Parameter("stale_timeout", value=5.0)])
        rec = rclpy.create_node("bag_recorder")
        rows = []
        rec.create_subscription(JointState, "/joint_states", lambda m: rows.append(
            (stamp_to_seconds(m.header.stamp), list(m.position), list(m.velocity),
             list(m.effort))), STATE_QOS)
        ctrl.set_trajectory(traj, start=0.0)
        ex = SingleThreadedExecutor()
        for n in (sim, ctrl, rec):
            ex.add_node(n)
        while sim.sim.t < args.duration:
            ex.spin_once(timeout_sec=0.05)
    finally:
        rclpy.shutdown()
    ts = np.array([r[0] for r in rows])
    keep = np.concatenate([[True], np.diff(ts) > 0])  # the first state may be repeated
    save_bag(args.out, model, ts[keep], *(np.array([r[k] for r in rows])[keep] for k in (1, 2, 3)))
    print(f"wrote {keep.sum()} JointState samples to {args.out}")


if __name__ == "__main__":
    main()
