"""``robot-dynamics sweep``: a robustness study of the tracking task over friction scale, payload,
initial-state perturbation and controller gains (:mod:`robot_dynamics.simulation.sweep`):
a table of the distribution per factor level, a CSV of every rollout, optionally a plot.

Every option is checked before any rollout runs (one line naming it, exit 2).
"""
from __future__ import annotations

import math
import sys
import textwrap
import time

from robot_dynamics.errors import (HelpFormatter, InputError, ModelError, NumbersAction,
                                   OneLineParser, check_writable)

FACTOR_OPTIONS = (("friction_scale", "--friction-scale"), ("payload_mass", "--payload"),
                  ("perturbation", "--perturbation"), ("gain_scale", "--gain-scale"))

EPILOG = """
factor values (--friction-scale, --payload, --perturbation, --gain-scale):
  grid design (default): comma-separated levels, e.g. 0.5,1,2, or lo:hi:n for n evenly spaced
  levels; every combination of levels is run --repeats times.
  random design (--samples N): lo:hi, drawn uniformly per rollout, or one value (held).
  Rollout i draws its random factors, then its initial-state direction, from
  numpy.random.default_rng([seed, i]): the results do not depend on --workers or the cluster.

the task: from the zero pose (clipped to the limits) a minimum-jerk move by --move on every
joint (within 90 % of the joint ranges) in --move-time s, held until --duration s, at step --dt.
  friction-scale s  the plant's friction coefficients × s (the controller compensates the
                    nominal friction: s is a model error); 0 = no friction
  payload m [kg]    a point mass on --payload-link (default: the last body's link) at
                    --payload-com; the controller's rigid-body model includes it
  perturbation σ    initial state q_start + σ·u (u standard normal, clipped), at rest [rad]
  gain-scale g      Kp·g², Kd·g from the robot's config/<robot>_controller.yaml (else 400, 40)

per rollout (CSV): rms_error, max_error [rad] (state after step k vs reference at k+1),
saturation (fraction of steps with a joint at its effort limit), motor_work, motor_gross,
friction_dissipation, energy_residual [J] (the simulator's energy audit), status (ok or failed:
the simulation error). The table: median [p5, p95] per factor level (random designs: --bins
equal bins per factor).

where it runs: --workers local workers (default: every core; threads of this process where the
rollouts step in the compiled loop, else processes); --cluster local starts a Dask
LocalCluster of --workers processes; --scheduler ADDRESS uses a running Dask scheduler (its
workers need robot_dynamics; pip install 'robot_dynamics[cluster]'). Same numbers everywhere.

exit status: 0 done (failed rollouts are counted in the table, not an error), 2 bad input,
130 interrupted (Ctrl-C: no table or CSV written).

example:
  robot-dynamics sweep --robot arm7 --friction-scale 0.5,1,2 --payload 0,5 --perturbation 0.05 \\
      --repeats 4 --duration 1.5 --csv sweep.csv --plot sweep.png"""


def build_parser():
    from robot_dynamics.parsers.resources import robot_help

    p = OneLineParser(
        prog="robot-dynamics sweep", formatter_class=HelpFormatter,
        description=textwrap.fill(
            "Robustness study: many simulated rollouts of a tracking task over friction scale, "
            "payload, initial-state perturbation and controller gains; prints the distribution "
            "per factor level, writes a CSV (and a plot).", 90), epilog=EPILOG)
    p.add_argument("--robot", default="arm7", help=robot_help() + " (default: %(default)s)")
    p.add_argument("--friction", default="default",
                   help="nominal friction: a YAML file, a bundled config name, or none "
                        "(default: the robot's bundled <robot>_friction, else none)")
    p.add_argument("--controller", default="computed_torque", choices=["computed_torque", "pd"],
                   help="computed_torque (friction-compensating) or pd (with gravity "
                        "compensation) (default: %(default)s)")
    p.add_argument("--friction-scale", default="1", metavar="VALUES",
                   help="friction scale levels or range (default: %(default)s)")
    p.add_argument("--payload", default="0", metavar="KG",
                   help="payload mass levels or range [kg] (default: %(default)s)")
    p.add_argument("--payload-link", default=None, metavar="LINK",
                   help="link carrying the payload (default: the last body's link)")
    p.add_argument("--payload-com", action=NumbersAction, default=(0.0, 0.0, 0.0),
                   help="payload centre of mass in the link frame [m], as X,Y,Z or X Y Z "
                        "(default: 0,0,0)")
    p.add_argument("--perturbation", default="0", metavar="RAD",
                   help="initial-state perturbation σ levels or range [rad], at most 2π "
                        "(default: %(default)s)")
    p.add_argument("--gain-scale", default="1", metavar="VALUES",
                   help="controller gain scale g levels or range (default: %(default)s)")
    p.add_argument("--samples", type=int, default=None, metavar="N",
                   help="random design of N rollouts (default: the grid)")
    p.add_argument("--repeats", type=int, default=1, metavar="R",
                   help="grid: rollouts per cell (each its own perturbation draw) (default: "
                        "%(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--bins", type=int, default=3,
                   help="random design: table bins per factor, 1 to 100 (default: "
                        "%(default)s)")
    p.add_argument("--duration", type=float, default=1.5, metavar="S",
                   help="simulated time per rollout [s], at most 2e6 steps of --dt "
                        "(default: %(default)s)")
    p.add_argument("--move-time", type=float, default=1.0, metavar="S",
                   help="duration of the move [s], at least 10 steps of --dt; longer than "
                        "--duration: the rollouts track its beginning (default: %(default)s)")
    p.add_argument("--move", type=float, default=0.4, metavar="RAD",
                   help="move of every joint in the positive direction, in (0, 2π] [rad; m "
                        "for a prismatic joint] (default: %(default)s)")
    p.add_argument("--dt", type=float, default=1e-3, metavar="S",
                   help="simulation step [s] (default: %(default)s)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="local workers, or the --cluster local size, at most 4 a core "
                        "(default: every core)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on the Dask scheduler at ADDRESS (tcp://host:8786)")
    where.add_argument("--cluster", default=None, choices=["local"],
                       help="local: start a Dask LocalCluster of --workers processes")
    p.add_argument("--csv", default="sweep.csv", metavar="PATH",
                   help="per-rollout CSV to write (default: %(default)s)")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="box plots of the RMS error per factor level (matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def _values(option, text, random):
    """A factor's option as a list of floats: "a,b,c"; "lo:hi" (random designs) or "lo:hi:n"
    (grid: n evenly spaced levels)."""
    import numpy as np

    from robot_dynamics.simulation.sweep import MAX_ROLLOUTS

    try:
        parts = [float(x) for x in text.split(":" if ":" in text else ",")]
    except ValueError:
        raise InputError(f"{option}: expected numbers, got {text!r}") from None
    if ":" not in text:
        if random and len(parts) > 1:  # levels a,b would be read as a range
            raise InputError(f"{option}: a random design (--samples) takes a range lo:hi or one "
                             f"value, got the levels {text!r}")
        return parts
    if random and len(parts) == 2:
        return parts
    if not random and len(parts) == 3 and parts[2].is_integer() and parts[2] > MAX_ROLLOUTS:
        raise InputError(f"{option}: {text!r} asks {parts[2]:g} levels; at most "
                         f"{MAX_ROLLOUTS:.0e} rollouts in all")  # (linspace would fill memory)
    if not random and len(parts) == 3 and parts[2].is_integer() and parts[2] >= 1:
        return [float(x) for x in np.linspace(parts[0], parts[1], int(parts[2]))]
    raise InputError(f"{option}: {text!r} is not a "
                     + ("range lo:hi" if random else "level list a,b or lo:hi:n"))


class Progress:
    """Rollouts done on stderr: a bar on a terminal, else a plain line every tenth."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self.shown = -1
        self.done = 0

    def __call__(self, done, total):
        self.done = done
        elapsed = time.monotonic() - self.start
        if self.tty:
            filled = int(30 * done / max(total, 1))
            self.stream.write(f"\r  [{'#' * filled}{'.' * (30 - filled)}] {done}/{total} "
                              f"rollouts {elapsed:.1f} s")
            if done == total:
                self.stream.write("\n")
        else:
            tenth = int(10 * done / max(total, 1))
            if tenth == self.shown and done != total:
                return
            self.shown = tenth
            self.stream.write(f"  {done}/{total} rollouts ({elapsed:.1f} s)\n")
        self.stream.flush()


def main(argv) -> int:
    from robot_dynamics.cli.main import error

    args = build_parser().parse_args(argv)
    random = args.samples is not None
    try:
        factors = {name: _values(option, getattr(args, name if name != "payload_mass"
                                                  else "payload"), random)
                   for name, option in FACTOR_OPTIONS}
        for name, option in FACTOR_OPTIONS:
            if any(v < 0 or not math.isfinite(v) for v in factors[name]):
                raise InputError(f"{option}: values must be finite and ≥ 0, got "
                                 f"{args.__dict__[name if name != 'payload_mass' else 'payload']}")
        com = list(args.payload_com)
        # the payload's and --bins' limits: make_study's checks speak, before the robot loads
        # (their "payload_mass: ..." named by _named)
        for option, value in (("--samples", args.samples), ("--workers", args.workers)):
            if value is not None and value < 1:
                raise InputError(f"{option}: expected a whole number ≥ 1, got {value}")
        for option, value in (("--repeats", args.repeats), ("--bins", args.bins)):
            if value < 1:
                raise InputError(f"{option}: expected a whole number ≥ 1, got {value}")
        from robot_dynamics.simulation.rollouts import workers_refusal

        if args.workers is not None and args.scheduler is None:  # (a scheduler has its own)
            why = workers_refusal(args.workers)
            if why is not None:
                raise InputError(why)  # "workers: ...", named --workers by _named
        if args.seed < 0:
            raise InputError(f"--seed: expected a whole number ≥ 0, got {args.seed}")
        for option, value in (("--duration", args.duration), ("--move-time", args.move_time),
                              ("--dt", args.dt)):
            if not (math.isfinite(value) and value > 0):
                raise InputError(f"{option}: expected a positive number of seconds, got {value}")
        # --move: make_study's check speaks (its "move: ..." named --move by _named)
        from robot_dynamics.ros.params import NODES, find

        row = find(NODES["simulator"][2], "rate")
        lowest = row.low  # [Hz]
        if args.dt < 1.0 / row.high:  # 1e-12 would be 1.5e12 steps: memory, then hours
            raise InputError(f"--dt: {args.dt:g} s is shorter than {1.0 / row.high:g} s "
                             f"({row.high:g} Hz, the simulator node's highest rate)")
        if args.dt > 1.0 / lowest:
            raise InputError(f"--dt: {args.dt:g} s is longer than {1.0 / lowest:g} s ({lowest:g} "
                             "Hz, the simulator node's lowest rate): the rollouts would be a few "
                             "steps of nothing")
        if args.duration < args.dt:
            raise InputError(f"--duration: {args.duration:g} s is less than one step "
                             f"(--dt {args.dt:g} s)")
        from robot_dynamics.simulation.sweep import move_time_refusal, steps_refusal

        # before the warning below: a move no rollout can finish is refused, not warned of
        why = steps_refusal(args.duration, args.dt) or move_time_refusal(args.move_time, args.dt)
        if why is not None:
            raise InputError(why)  # "duration: ...", "move_time: ...": named by _named
        if min(factors["gain_scale"]) <= 0:
            raise InputError("--gain-scale: values must be > 0")
        if args.move_time > args.duration:
            print(f"robot-dynamics sweep: warning: --move-time {args.move_time:g} s is longer "
                  f"than --duration {args.duration:g} s: the rollouts end before the move does "
                  "(they track its beginning)",
                  file=sys.stderr)
        check_writable(args.csv, "--csv")
        if args.plot is not None:
            check_writable(args.plot, "--plot", image=True)
    except (InputError, ModelError) as exc:
        return error("sweep", _named(exc))
    from robot_dynamics.parsers.resources import config_path, robot_path

    try:  # unknown robot or friction file: before anything heavy
        robot_path(args.robot)
    except ModelError as exc:
        return error("sweep", f"--robot: {exc}")
    friction = None if args.friction == "none" else args.friction
    try:
        if friction not in (None, "default"):
            friction = config_path(friction, "friction")
    except ModelError as exc:
        return error("sweep", f"--friction: {exc}")
    from robot_dynamics.simulation.sweep import make_study, dask_client
    from robot_dynamics.simulation.rollouts import default_workers, run_rollouts
    from robot_dynamics.simulation.sweep import SweepResult

    options = dict(friction=friction, samples=args.samples, repeats=args.repeats,
                   seed=args.seed, controller=args.controller, duration=args.duration,
                   move_time=args.move_time, move=args.move, dt=args.dt,
                   payload_link=args.payload_link, payload_com=com, bins=args.bins, **factors)
    try:
        study = make_study(args.robot, **options)
    except (InputError, ModelError) as exc:
        return error("sweep", _named(exc))
    workers = args.workers or default_workers()
    scheduler = "local" if args.cluster == "local" else args.scheduler
    where = (f"{workers} local worker{'s' if workers > 1 else ''}" if scheduler is None else
             f"a Dask LocalCluster of {workers} processes" if scheduler == "local" else
             f"the Dask scheduler at {scheduler}")
    steps = study.specs[0].steps if study.specs else 0
    print(f"robot-dynamics sweep: {_count(len(study.specs), 'rollout')} of {steps} steps "
          f"({args.robot}, {args.controller}) on {where}", file=sys.stderr)
    progress = None if args.quiet else Progress()
    start = time.monotonic()
    client = cluster = None
    try:
        if scheduler is not None:
            client, cluster = dask_client(scheduler, workers)
        _, summaries = run_rollouts(study.plant, study.specs, workers=workers, executor=client,
                                    trajectories=False, progress=progress)
    except (InputError, ModelError) as exc:
        text = _named(exc)
        if args.cluster and text.startswith("--scheduler:"):  # (distributed missing)
            text = "--cluster local:" + text[len("--scheduler:"):]
        return error("sweep", text)
    except OSError as exc:  # a scheduler address nobody answers
        return error("sweep", f"--scheduler {scheduler}: {exc}")
    except KeyboardInterrupt:  # Ctrl-C (the threads stop after their rollout): one line
        done = "" if progress is None else f" after {progress.done} of {len(study.specs)} rollouts"
        print(f"\nrobot-dynamics sweep: interrupted by SIGINT{done}; no table or CSV written",
              file=sys.stderr)
        return 130
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    elapsed = time.monotonic() - start
    result = SweepResult(study, summaries)
    print(result.table())
    result.write_csv(args.csv)
    failed = int((~result.ok).sum())
    print(f"{_count(len(summaries), 'rollout')} ({failed} failed) in {elapsed:.1f} s, "
          f"{len(summaries) * steps / max(elapsed, 1e-9):.3g} steps/s; CSV: {args.csv}")
    if args.plot is not None:
        try:
            result.plot(args.plot)
            print(f"plot: {args.plot}")
        except ImportError:
            print("robot-dynamics sweep: matplotlib is not installed: no plot", file=sys.stderr)
    return 0


#: API names of the factors → the command's options (the study's messages name the former)
_OPTION_NAMES = {"friction_scale": "--friction-scale", "payload_mass": "--payload",
                 "perturbation": "--perturbation", "gain_scale": "--gain-scale",
                 "payload_link": "--payload-link", "payload_com": "--payload-com",
                 "samples": "--samples", "repeats": "--repeats", "seed": "--seed",
                 "duration": "--duration", "move_time": "--move-time", "move": "--move",
                 "dt": "--dt", "bins": "--bins", "scheduler": "--scheduler",
                 "workers": "--workers"}


def _named(exc) -> str:
    """The message with the API's name of an option replaced by the command's."""
    text = str(exc)
    head, sep, rest = text.partition(":")
    if sep and head in _OPTION_NAMES:
        return _OPTION_NAMES[head] + sep + rest
    return text


def _count(n, noun):
    """``1 rollout``, ``2 rollouts``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
