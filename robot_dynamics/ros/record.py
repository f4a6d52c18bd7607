"""``robot-dynamics record``: a friction-identification run from the simulator node into a
ROS 2 bag.

    robot-dynamics record --robot arm7 --duration 20 --out run_bag
    robot-dynamics record --robot arm7 --actuators arm7_actuators --out act_bag

Starts the simulator (lock-step) and the friction-aware id_controller as real rclpy nodes (in a
namespace of the run, as ``robot-dynamics sim``), sends a Fourier excitation trajectory (by
default designed for a well-conditioned friction regressor:
robot_dynamics.identification.design_excitation), records /joint_states (position, velocity,
applied effort) and writes them to a bag with rosbags (sqlite3). Then:

    robot-dynamics identify arm7 run_bag -o friction.yaml --plot fit.png
    robot-dynamics identify arm7 act_bag -o friction.yaml --actuators arm7_actuators

``--actuators`` gives both nodes the actuator model (the nodes' ``actuators`` parameter:
armature, gear-mesh and motor friction, motor torque limits), so the run carries what
``identify --actuators`` / ``--terms armature,gear_mesh`` fits; default none (friction only).

Exit codes as ``robot-dynamics sim``: 0 done, 2 a user mistake (unknown robot, friction or
actuators file, bad duration, ``--out`` exists or its folder is missing), found before
simulating; 130 / 143 interrupted by SIGINT / SIGTERM (nodes destroyed, no bag written).
(``scripts/record_sim_bag.py`` in the source tree runs the same.)
"""
from __future__ import annotations

import os
import sys

import numpy as np

from robot_dynamics.errors import OneLineParser
from robot_dynamics.parsers.resources import robot_help
from robot_dynamics.ros.demo.arguments import MAX_STEPS, number
from robot_dynamics.ros.params import SIMULATOR, find
from robot_dynamics.ros.demo.config import UsageError, check_config_names
from robot_dynamics.ros.demo.session import (Interrupted, Progress, Signals, private_namespace,
    private_remaps, record_published_states)


def check_out(path):
    """The bag folder must not exist (rosbags refuses to overwrite) and its parent must."""
    if os.path.exists(path):
        raise UsageError(f"--out {path}: exists; remove it or choose another name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--out {path}: folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"--out {path}: folder {parent} is not writable")


#: the simulator node's rate here (its default, not set): one recorded state a step
RATE = float(find(SIMULATOR, "rate").default)


def record(args, log=print, signals=None):
    """The run ``args`` ask for, into the bag ``args.out``; ``signals``: the
    :class:`~robot_dynamics.ros.demo.session.Signals` the caller installed (None: none)."""
    from robot_dynamics.parsers.resources import robot_path

    # what a user can mistype, before anything compiles the kernels (minutes on a cold cache)
    path = robot_path(args.robot)
    check_config_names(args.friction, args.friction, args.actuators)
    check_out(args.out)

    from robot_dynamics.ros.demo.run import import_rclpy

    rclpy = import_rclpy()  # (a one-line UsageError when its libraries are not found)
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions

    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.errors import ModelError
    from robot_dynamics.identification import design_excitation, fourier_excitation
    from robot_dynamics.identification.io import save_bag
    from robot_dynamics.ros.common import load_actuators, load_friction
    from robot_dynamics.control.trajectory import JointTrajectory

    signals = Signals() if signals is None else signals
    model = load_urdf(path)
    friction = load_friction(args.friction, args.robot, model)  # an unknown file: one line now
    try:  # the nodes' start-up step: a bad file is one line now, not a node dying later
        load_actuators(args.actuators, model, friction)
    except (ModelError, ValueError) as exc:
        raise ModelError(f"--actuators: {exc}") from None
    check_out(args.out)
    if args.excitation == "designed":
        t, Q, V, A, conds = design_excitation(model, duration=args.duration, rate=50.0)
        log("designed excitation: regressor condition numbers "
            + " ".join(f"{c:.3g}" for c in conds))
    else:
        t, Q, V, A = fourier_excitation(model, duration=args.duration, rate=50.0)
    traj = JointTrajectory(t, Q, V, A)
    common = [Parameter("robot", value=args.robot),
              Parameter("friction_config", value=args.friction),
              Parameter("actuators", value=args.actuators)]
    # the nodes and their topics in a namespace of this run (as robot-dynamics sim): nothing
    # else on the ROS domain disturbs the run, its topics or its nodes' parameters
    namespace = private_namespace()
    rclpy.init(args=["--ros-args", "-r", f"__ns:={namespace}"] + private_remaps(namespace),
               signal_handler_options=SignalHandlerOptions.NO)
    nodes = []
    try:
        from robot_dynamics.ros.id_controller import IdController
        from robot_dynamics.ros.simulator import SimulatorNode

        ctrl = IdController(parameter_overrides=common + [Parameter("stale_timeout", value=5.0)])
        nodes.append(ctrl)
        ctrl.set_trajectory(traj, start=0.0)
        sim = SimulatorNode(parameter_overrides=common + [
            Parameter("mode", value="lockstep"), Parameter("audit_period", value=0.0),
            Parameter("publish_clock", value=False),
            Parameter("initial_positions", value=Q[0].tolist()),
            Parameter("initial_velocities", value=V[0].tolist())])
        nodes.insert(0, sim)
        rec = record_published_states(sim)
        ex = SingleThreadedExecutor()
        for n in nodes:
            ex.add_node(n)
        progress = Progress(args.duration)
        while sim.sim.t < args.duration:
            signals.spin_once(ex, 0.05)
            progress.update(sim.sim.t)
        progress.close()
    finally:
        for n in nodes:
            n.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    data = rec.arrays()
    ts = data["t"]
    keep = np.concatenate([[True], np.diff(ts) > 0])  # the first state may be repeated
    save_bag(args.out, model, ts[keep], data["q"][keep], data["v"][keep], data["tau"][keep])
    log(f"wrote {keep.sum()} JointState samples to {args.out}")


def main(argv=None):
    parser = OneLineParser(prog="robot-dynamics record", description="record a friction-identification "
                     "run of the simulator node into a ROS 2 bag (then: robot-dynamics identify)")
    parser.add_argument("--robot", default="arm7",
                        help=f"{robot_help()} (default arm7)")
    parser.add_argument("--friction", default="",
                        help="friction of the simulated arm and the controller's model: bundled "
                             "name, YAML path or 'none' (default: the robot's <robot>_friction "
                             "when bundled)")
    parser.add_argument("--actuators", default="",
                        help="actuator config of both nodes (gear ratio, rotor inertia → "
                             "armature, gear-mesh efficiency, motor limits and friction): "
                             "bundled name (arm7_actuators), YAML path or 'none' (default: "
                             "none, friction only: unlike sim, which takes a bundled robot's "
                             "<robot>_actuators, a recording identifies friction alone unless "
                             "asked)")
    parser.add_argument("--duration", type=number(float, 0.0), default=20.0,
                        help=f"simulated seconds, at most {MAX_STEPS / RATE:g} (default 20)")
    parser.add_argument("--out", default="run_bag",
                        help="bag folder to create (default run_bag; must not exist)")
    parser.add_argument("--excitation", default="designed", choices=["designed", "random"],
                        help="Fourier coefficients optimised for identifiability (default) or "
                             "random ones")
    args = parser.parse_args(argv)
    if args.duration * RATE > MAX_STEPS:  # 1e12 was numpy's MemoryError (364 TiB) traceback
        parser.error(f"--duration: {args.duration:g} s is {args.duration * RATE:.4g} steps at "
                     f"the simulator's {RATE:g} Hz; at most {MAX_STEPS:.0e} "
                     f"({MAX_STEPS / RATE:g} s): every state is kept in memory until the bag "
                     "is written (~1 kB each), as sim's")
    try:
        with Signals() as signals:
            from robot_dynamics.errors import InputError, ModelError

            try:
                record(args, signals=signals)
            except (ModelError, InputError, UsageError) as exc:
                print(f"robot-dynamics record: {' '.join(str(exc).split())}", file=sys.stderr)
                return 2
    except Interrupted as exc:
        print(f"robot-dynamics record: interrupted by {exc}; nodes shut down, no bag written",
              file=sys.stderr)
        return exc.code
    return 0

