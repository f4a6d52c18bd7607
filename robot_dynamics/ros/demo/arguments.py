"""The command line of ``robot-dynamics sim``: its parser (with the number checks and the
one-line error that ``robot-dynamics record`` shares) and ``main``."""
from __future__ import annotations

import argparse
import math
import sys
import textwrap

from robot_dynamics.errors import HelpFormatter, NumbersAction, OneLineParser
from robot_dynamics.parsers.resources import robot_help
from robot_dynamics.ros.demo.config import UsageError
from robot_dynamics.ros.demo.run import DemoOptions, run_demo
from robot_dynamics.ros.demo.scenarios import PRESS_FORCES
from robot_dynamics.ros.demo.session import Interrupted, Signals

MODES_HELP = """\
simulation modes:
  lockstep  the simulator publishes a state, waits for the command computed from it, then
            steps: runs as fast as the loop allows and is deterministic (same command
            sequence, same recorded states on every run). The default here, and the mode the
            tracking tolerance's default is stated for. The simulator node alone
            (`robot-dynamics simulator`, `ros2 run`) and sim.launch.py default to realtime,
            as a real arm's clock runs; sim defaults to lockstep to judge the run.
  realtime  simulated time follows the wall clock, commands are applied whenever they arrive
            (as on a real arm): a slow or loaded machine delays commands and the simulator
            overruns or falls behind (a tick catches up at most 5 ms of steps, the rest are
            dropped); the run is then reported invalid. Not deterministic.
  fast      as fast as possible without waiting for commands (each is applied when it
            arrives, typically several steps late): shows what controller latency does;
            tracks much worse than lockstep. Not deterministic.

friction: the simulated plant and the controller's model each have a friction model
  (--plant-friction, --model-friction; --friction sets both). A value is a bundled name
  (arm7_friction, ...), a YAML path, or 'none'; default: the robot's bundled <robot>_friction,
  else the URDF's <dynamics friction> as Coulomb friction. A YAML's 'default:' law reaches
  mimic followers too, which makes the simulator step in Python (give them 'none').
  Different values study model mismatch (e.g. --model-friction none: no compensation model).

validity (exit 1 with the reason when the run is not valid): max tracking error above
  --tolerance (revolute, rad) / --tolerance-prismatic (m); effort saturated at the effort limit
  (the URDF's, or N·motor_torque_limit of --actuators when lower); a joint at its position
  limit; in realtime mode overruns, stale commands or more than 5 % of the steps dropped; any
  step error.
scenarios (--scenario):
  none      the demo trajectory on the plain robot (the default).
  payload   the plant (simulator node) picks up --payload-mass kg on --payload-link (default
            the robot's last link) at the start of the second move, set through its
            parameters payload.link, payload.mass, payload.com (as `ros2 param set` would). The
            demo runs three times: without a payload (the reference), with the controller not
            told, and with the controller and dynamics_model told at the same instant. Reported
            for each from the pick-up on: tracking error (max, RMS) and the friction share of
            the motor effort (friction effort RMS / motor effort RMS); --plot draws the not-told
            and told runs side by side. The exit status judges the reference and told runs.
  press     the tool (--press-link, default tool0, else the link farthest out) goes onto a
            flat surface (a compliant plane with its own Coulomb friction, 3 cm from it at
            the start; --press-surface overhead: above the tool, pressed up against, the
            default; table: below it, pressed down on), presses with each of --press-forces
            N in turn (default 0 10 25 50) and at each slides 10 cm along it and back
            (--move-time: seconds per slide, default 1). Reported per force: the contact's
            normal force and, per joint, the plant's friction effort |τf| and its share of
            the motor effort, over the middle of the slides (the joints moving): the
            load-dependent friction changing with the pressing force (overhead, the reaction
            adds to the arm's weight: it grows; on a table the table carries part of the
            weight: the friction of the joints that carry it falls first); --plot draws them
            side by side. The exit status judges the run (not its tracking error: the
            reference is inside the surface by design) and that the tool stayed on the
            surface while pressing.

exit codes: 0 valid run, 1 invalid run, 2 usage error, 130/143 interrupted by SIGINT/SIGTERM."""




#: the most simulator steps a sim run may take, all runs of a scenario together: every state is
#: recorded for the verdict (~1 kB each with its reference, 7 joints) and lockstep steps about
#: 800 times a second on a 2-core machine (1 kHz: 44 s simulated in 55 s of wall), so 2e6
#: steps is ~2 GB and ~40 min; 1e12 s of moves would otherwise run on for ages
MAX_STEPS = 2_000_000
#: the fewest simulator steps of one move (or slide): a shorter move falls between the states
#: (--move-time 1e-9 judged a valid run of an arm that never moved)
MIN_MOVE_STEPS = 10


def timing_refusal(args):
    """The one line refusing ``--move-time``/``--settle`` (with ``--rate``, ``--scenario``,
    ``--press-forces``) when a move would be shorter than :data:`MIN_MOVE_STEPS` steps or the
    runs longer than :data:`MAX_STEPS` steps; None when they fit. Told before anything heavy
    (no model, no rclpy): the simulated time is the demo's moves (:data:`.scenario.DEMO_MOVES`
    of --move-time each) or the press path's (``press_duration``), plus --settle."""
    from robot_dynamics.control.press import press_duration
    from robot_dynamics.ros.demo.scenario import DEMO_MOVES, demo_timing
    from robot_dynamics.ros.demo.scenarios import PAYLOAD_RUNS

    if args.scenario == "press":
        move_time = args.move_time or 1.0
        settle = 0.5 if args.settle is None else args.settle
        forces = len(args.press_forces or PRESS_FORCES)
        moves = press_duration(forces, move_time) / move_time
        what = f"the press path of {forces} forces, {moves:g} × --move-time {move_time:g} s"
    else:
        move_time, settle = demo_timing(args.robot, args.move_time, args.settle)
        moves = DEMO_MOVES
        what = f"{moves} moves of --move-time {move_time:g} s"
    runs = len(PAYLOAD_RUNS) if args.scenario == "payload" else 1
    if move_time * args.rate < MIN_MOVE_STEPS:
        return (f"--move-time: {move_time:g} s is shorter than {MIN_MOVE_STEPS} steps of the "
                f"simulator ({MIN_MOVE_STEPS / args.rate:g} s at --rate {args.rate:g} Hz): the "
                "moves would fall between its states")
    seconds = moves * move_time + settle
    steps = runs * seconds * args.rate
    if steps <= MAX_STEPS:
        return None
    option = "--settle" if settle > moves * move_time else "--move-time"
    given = settle if option == "--settle" else move_time
    of_runs = f" in each of {runs} runs" if runs > 1 else ""
    return (f"{option}: {given:g} s makes the run {steps:.3g} steps ({what} + --settle "
            f"{settle:g} s = {seconds:.6g} s at --rate {args.rate:g} Hz{of_runs}); at most "
            f"{MAX_STEPS:.0e} steps ({MAX_STEPS / runs / args.rate:.6g} s of simulation at that "
            "rate): every state is recorded for the verdict (~1 kB each) and lockstep takes "
            "about 40 min for 2e6 steps")


def rate(text):
    """--rate: a number in the simulator's parameter range."""
    from robot_dynamics.ros.params import SIMULATOR, find

    row = find(SIMULATOR, "rate")
    value = number(float, 0.0)(text)
    if not row.low <= value <= row.high:
        raise argparse.ArgumentTypeError(f"must be in [{row.low:g}, {row.high:g}] Hz: {text!r}")
    return value


#: the loosest tracking tolerances of the verdict: half a turn (a revolute joint pointing the
#: other way) and 1 m (metres, not millimetres?); --tolerance 1e300 was taken and judged nothing
MAX_TOLERANCE = math.pi
MAX_TOLERANCE_PRISMATIC = 1.0


def tolerance(high, shown, unit, what):
    """--tolerance, --tolerance-prismatic: a number in (0, ``high``] (``shown`` in the message)."""
    def parse(text):
        value = number(float, 0.0)(text)
        if value > high:
            raise argparse.ArgumentTypeError(
                f"must be in (0, {shown}] {unit} ({what}): {text!r}")
        return value
    return parse


def number(kind, low=None, strict_low=True):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"not finite: {text!r}")
        if low is not None and (value <= low if strict_low else value < low):
            raise argparse.ArgumentTypeError(
                f"must be {'>' if strict_low else '≥'} {low}: {text!r}")
        return value
    return parse


def build_parser():
    parser = OneLineParser(
        prog="robot-dynamics sim", formatter_class=HelpFormatter,
        description=textwrap.fill(
            "Simulator + friction-aware id_controller + dynamics_model over DDS, with a demo "
            "trajectory that judges itself (the nodes of sim.launch.py; robot_state_publisher "
            "and rviz2 need a ROS 2 install: use `ros2 launch robot_dynamics sim.launch.py`).",
            90),
        epilog=MODES_HELP)
    parser.add_argument("--robot", default="arm7",
                        help=f"{robot_help()} (default arm7)")
    parser.add_argument("--validate", default="strict", choices=["strict", "warn"],
                        help="URDF physics check: refuse (strict) or warn about unphysical bodies "
                             "(default strict)")
    parser.add_argument("--friction", default="",
                        help="friction of both the plant and the controller's model (bundled "
                             "name, YAML path or 'none'); default: a bundled robot's own, "
                             "else the URDF's <dynamics friction> as Coulomb friction")
    parser.add_argument("--plant-friction", default=None,
                        help="friction of the simulated plant (default: --friction)")
    parser.add_argument("--model-friction", default=None,
                        help="friction model of the controller (and dynamics_model); default: "
                             "the plant's")
    parser.add_argument("--actuators", default=None,
                        help="actuator config of plant and controller: gear ratio, rotor "
                             "inertia (armature), gear-mesh efficiency, motor limits and "
                             "friction (bundled name, YAML path or 'none'); default: the "
                             "robot's <robot>_actuators when bundled")
    parser.add_argument("--controller-config", default=None,
                        help="id_controller params YAML, path or bundled name (default: "
                             "config/<robot>_controller.yaml when bundled)")
    parser.add_argument("--mode", default="lockstep", choices=["lockstep", "realtime", "fast"],
                        help="see 'simulation modes' below (default lockstep)")
    parser.add_argument("--move-time", type=number(float, 0.0), default=None,
                        help="seconds per demo move, at least 10 steps of --rate (default: "
                             "the robot's, else 2); the run may take at most 2e6 steps in all")
    parser.add_argument("--settle", type=number(float, 0.0, strict_low=False), default=None,
                        help="seconds simulated after the last move (default 1; the run may "
                             "take at most 2e6 steps in all)")
    parser.add_argument("--no-friction-compensation", action="store_true",
                        help="controller ignores friction (to see what compensation buys)")
    parser.add_argument("--tolerance", default=0.01,
                        type=tolerance(MAX_TOLERANCE, "π", "rad",
                                       "half a turn: a looser one judges nothing"),
                        help="max tracking error of revolute joints [rad], at most π (default "
                             "0.01)")
    parser.add_argument("--rate", type=rate, default=1000.0,
                        help="the simulator's integration rate [Hz], its step 1/rate; the "
                             "controller answers every state (default 1000)")
    parser.add_argument("--tolerance-prismatic", default=0.001,
                        type=tolerance(MAX_TOLERANCE_PRISMATIC, "1", "m",
                                       "metres, not millimetres?"),
                        help="max tracking error of prismatic joints [m], at most 1 (default "
                             "0.001)")
    parser.add_argument("--scenario", default="none", choices=["none", "payload", "press"],
                        help="see 'scenarios' below (default none)")
    parser.add_argument("--payload-mass", type=number(float, 0.0), default=None,
                        help="payload scenario: mass picked up [kg] (default 3)")
    parser.add_argument("--payload-link", default=None,
                        help="payload scenario: link carrying it (default the robot's last "
                             "link)")
    parser.add_argument("--payload-com", action=NumbersAction, default=None,
                        help="payload scenario: its centre of mass in the link frame [m], as "
                             "X,Y,Z or X Y Z (default 0,0,0)")
    parser.add_argument("--press-forces", type=number(float, 0.0, strict_low=False), nargs="+",
                        default=None, metavar="F",
                        help="press scenario: the pressing forces, in turn [N] (default 0 10 "
                             "25 50)")
    parser.add_argument("--press-surface", default=None, choices=["overhead", "table"],
                        help="press scenario: the surface above the tool (overhead, the "
                             "default) or below it (table)")
    parser.add_argument("--press-link", default=None,
                        help="press scenario: the link whose origin presses (default tool0, "
                             "else the link fixed farthest out on the robot's last body)")
    parser.add_argument("--plot", default=None, help="save a plot here (.png, .pdf, .svg)")
    parser.add_argument("--global-topics", action="store_true",
                        help="use /joint_states, /effort_controller/commands, ... as "
                             "sim.launch.py does, and the plain node names /simulator, ... "
                             "(default: the nodes and their topics in a namespace of the run, "
                             "/robot_dynamics_sim_<pid>_<random>, so nothing else on the ROS "
                             "domain can disturb the run)")
    return parser


def options_from_args(args) -> DemoOptions:
    """The :class:`~.run.DemoOptions` of parsed arguments."""
    return DemoOptions(
        robot=args.robot, friction=args.friction, mode=args.mode, move_time=args.move_time,
        settle=args.settle, friction_compensation=not args.no_friction_compensation,
        plot=args.plot, plant_friction=args.plant_friction, model_friction=args.model_friction,
        controller_config=args.controller_config, tolerance=args.tolerance,
        tolerance_prismatic=args.tolerance_prismatic, global_topics=args.global_topics,
        validate=args.validate, actuators=args.actuators, rate=args.rate,
        scenario=args.scenario, payload_link=args.payload_link,
        payload_mass=3.0 if args.payload_mass is None else args.payload_mass,
        payload_com=tuple(args.payload_com or (0.0, 0.0, 0.0)),
        press_forces=tuple(args.press_forces or PRESS_FORCES), press_link=args.press_link,
        press_surface=args.press_surface or "overhead")


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    given = [name for name in ("payload_mass", "payload_link", "payload_com")
             if getattr(args, name) is not None]
    if given and args.scenario != "payload":
        parser.error(f"--{given[0].replace('_', '-')} needs --scenario payload")
    if args.scenario == "payload":  # the simulator node would refuse them 2 s into the run
        from robot_dynamics.multibody.model import com_refusal, mass_refusal

        why = None if args.payload_mass is None else mass_refusal(args.payload_mass)
        if why is not None:
            parser.error(f"--payload-mass: {why}")
        why = None if args.payload_com is None else com_refusal(args.payload_com)
        if why is not None:
            parser.error(f"--payload-com: {why}")
    given = [name for name in ("press_forces", "press_link", "press_surface")
             if getattr(args, name) is not None]
    if given and args.scenario != "press":
        parser.error(f"--{given[0].replace('_', '-')} needs --scenario press")
    why = timing_refusal(args)
    if why is not None:
        parser.error(why)
    try:
        with Signals() as signals:
            from robot_dynamics.errors import InputError, ModelError

            try:
                summary = run_demo(options_from_args(args), signals=signals)
            except (ModelError, InputError, UsageError, OSError) as exc:
                text = " ".join(str(exc).split())
                print(f"robot-dynamics sim: {text}", file=sys.stderr)
                return 2
            except RuntimeError as exc:  # the run could not complete (no trajectory, stalled)
                print(f"robot-dynamics sim: {' '.join(str(exc).split())}", file=sys.stderr)
                return 1
    except Interrupted as exc:
        print(f"robot-dynamics sim: interrupted by {exc}; nodes shut down", file=sys.stderr)
        return exc.code
    if not summary["valid"]:
        print(f"robot-dynamics sim: invalid run: {'; '.join(summary['reasons'])}",
              file=sys.stderr)
        return 1
    return 0
