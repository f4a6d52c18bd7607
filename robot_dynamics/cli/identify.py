"""``robot-dynamics identify <robot> <log> -o friction.yaml [--terms armature,gear_mesh]
[--actuators FILE] [--actuators-output FILE] [--plot FILE]``.

Fits a friction law per joint (:mod:`.fit`), prints coefficients ± standard error, 95 %
intervals, condition numbers, residual RMS and the held-out comparison with the other law, and
writes the YAML — unless a coefficient is unidentifiable from the log (then it says which
excitation is missing and exits 3; ``--force`` writes the identifiable subset, the rest as 0).
With actuator terms (issue 16) it also fits each joint's armature and gear-mesh coefficients
and writes them to an actuators YAML (:func:`robot_dynamics.friction.actuators.actuators_from_config`).
"""
from __future__ import annotations

import argparse
import math
import os
import sys

from robot_dynamics.errors import InputError, ModelError, OneLineParser, check_writable
from robot_dynamics.parsers.resources import robot_help

EPILOG_TAIL = """
accelerations (--accelerations):
  auto    (default) step for a log of this project's simulator written at every step (its rows
          satisfy the step's integration q_k − q_{k−1} = Δt(q̇_{k−1} + q̇_k)/2 to roundoff),
          filter for every other log
  filter  zero-phase Savitzky–Golay fit (0.2 s, degree 4) of q (and q̇ when logged): q̇, q̈ with
          the noise averaged and no delay; the effort's own delay (a zero-order hold, a
          sensor) fitted per joint and compensated; HAC intervals over at least the window
  step    each row is a control period: q̈ = Δq̇/Δt, and the simulator's step is
          replayed — joint wrench at its mid-step state, friction at the row's velocity, rows
          where a joint starts, stops or reverses dropped (exact for the simulator node's
          lock-step logs, to the friction solve's 1e-10; needs clean logged velocities)
  savgol  zero-phase Savitzky–Golay derivative of q̇ (noisy or differentiated velocities)

actuator terms (--terms, --actuators; docs/identification.md "Actuators"):
  armature   reflected rotor inertia N²·J [kg·m²]: column sign(q̇)·q̈
  gear_mesh  gear-mesh friction on the transmitted effort n∥ (robot_dynamics.friction.gear_mesh):
             c_f·|n∥| while the motor drives the load (n∥·q̇ > 0), c_b·|n∥| while the load
             drives it (n∥·q̇ < 0); written as efficiency_forward η_f = 1/(1 + c_f) and
             efficiency_backward η_b = 1 − c_b
  The fitted values go to --actuators-output (default: beside -o, <name>_actuators.yaml), with
  the other fields of --actuators FILE (gear ratio, motor torque limit) carried over. Motor-side
  Coulomb/viscous friction is not separable from the law's coulomb/viscous (same columns): it is
  in the friction YAML and not written to the actuators YAML. A joint never back-driven (or never
  motoring) has that coefficient unidentifiable: refused unless --force (written as 0: η = 1).

A joint whose effort beyond the rigid-body dynamics does not oppose its motion (friction's
always does) makes the log suspect (units, sign, motor side, robot): refused unless --force.

Every coefficient is fitted with the bound ≥ 0 (friction never delivers power): one held at 0
is reported as such, with its unconstrained estimate; one the log contradicts (its unconstrained
estimate more than 5 standard errors below 0) refuses the YAML unless --force. No written value
is negative.

exit status: 0 written, 2 bad input, 3 unidentifiable coefficients, a log whose efforts are
not friction or contradict physical coefficients (nothing written; --force).
See docs/identification.md (share/robot_dynamics/docs/ in an install); record a run with
robot-dynamics record."""


_BAR_OPEN = [False]  # a progress bar is drawn on stderr without its newline yet


def _progress(done, total, width=30):
    """An updating bar on a terminal; otherwise a line per fitted joint."""
    if not sys.stderr.isatty():
        if done:
            sys.stderr.write(f"  {done}/{total} joints fitted\n")
        return
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} joints")
    sys.stderr.flush()
    _BAR_OPEN[0] = done < total
    if done == total:
        sys.stderr.write("\n")


def _end_bar():
    """End an open progress bar's line (before an error message)."""
    if _BAR_OPEN[0]:
        sys.stderr.write("\n")
        _BAR_OPEN[0] = False


def build_parser():
    from robot_dynamics.identification.io import FORMATS

    parser = OneLineParser(
        prog="robot-dynamics identify", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fit joint friction laws to a recorded run (seed 004 eq. 2.7.5: "
                    "τ = fn∥ − τf, fn from Newton–Euler).", epilog=FORMATS + "\n" + EPILOG_TAIL)
    parser.add_argument("robot", help=robot_help())
    parser.add_argument("--validate", default="strict", choices=["strict", "warn"],
                        help="URDF physics check: refuse (strict) or warn about unphysical bodies "
                             "(default strict)")
    parser.add_argument("log", help="the run: ROS 2 bag directory, .csv or .npz (formats below)")
    parser.add_argument("-o", "--output", required=True, help="friction YAML to write")
    parser.add_argument("--law", default="load_dependent", choices=["load_dependent", "classic"],
                        help="law to fit: load_dependent (coulomb, viscous, k1..k3: seed 004 eq. "
                             "2.5.6/2.5.7) or classic (coulomb ±, viscous) (default: "
                             "%(default)s)")
    parser.add_argument("--topic", default="/joint_states",
                        help="bag topic with sensor_msgs/JointState (default: %(default)s)")
    parser.add_argument("--min-velocity", type=float, default=0.05,
                        help="exclude samples slower than this [rad/s or m/s] (default: "
                             "%(default)s); beyond it, each joint's low-speed band where the "
                             "log departs from the law is found and left out too")
    parser.add_argument("--no-low-speed-band", action="store_true",
                        help="keep every row from --min-velocity up (no data-derived "
                             "low-speed band, docs/identification.md)")
    parser.add_argument("--accelerations", default="auto",
                        choices=["auto", "filter", "step", "savgol"],
                        help="how rows become regressor states, see below (default: "
                             "%(default)s)")
    parser.add_argument("--balance-tolerance", type=float, default=None,
                        help="relative precision of each row's effort balance, added to the "
                             "intervals as a worst case (0: none) (default: the simulator's "
                             "friction-solve tolerance, 1e-10)")
    parser.add_argument("--damping", default="included", choices=["included", "excluded"],
                        help="whether the logged efforts contain the URDF joint damping d·q̇: "
                             "included (the motor's whole effort, as inverse_dynamics returns "
                             "it and the simulator applies it; MuJoCo, Drake) or excluded "
                             "(Pinocchio's rnea; inverse_dynamics(..., damping=False)) "
                             "(default: %(default)s)")
    parser.add_argument("--terms", default=None,
                        help="actuator terms fitted with the law, comma-separated: armature, "
                             "gear_mesh (default: none; both when --actuators is given)")
    parser.add_argument("--actuators", default=None, metavar="FILE",
                        help="actuators YAML of the robot, path or bundled name as in `sim "
                             "--actuators` (gear ratios, motor limits; see "
                             "config/arm7_actuators.yaml): carried over into the written one; "
                             "its armature is taken out of the balance when not fitted")
    parser.add_argument("--actuators-output", default=None, metavar="FILE",
                        help="actuators YAML to write with the fitted terms (default: beside -o "
                             "as <name>_actuators.yaml)")
    parser.add_argument("--force", action="store_true",
                        help="write the YAML even with unidentifiable coefficients (as 0)")
    parser.add_argument("--plot", default=None, help="save measured vs predicted friction (PNG)")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from robot_dynamics.parsers.resources import robot_path

    try:
        # what a user can mistype, checked before anything compiles the kernels (minutes on a
        # cold numba cache): the robot, the numbers, the outputs, the log
        robot = robot_path(args.robot)
        if args.min_velocity < 0:
            raise InputError(f"--min-velocity must be ≥ 0, got {args.min_velocity}")
        if args.balance_tolerance is not None and not 0 <= args.balance_tolerance < 1:
            raise InputError(f"--balance-tolerance must be in [0, 1), got "
                             f"{args.balance_tolerance}")
        check_writable(args.output, "-o")  # before the fit: its outputs can be written
        if args.actuators_output:
            check_writable(args.actuators_output, "--actuators-output")
        if args.plot:
            check_writable(args.plot, "--plot", image=True)
        if not os.path.exists(args.log):
            raise InputError(f"{args.log}: no such "
                             + ("file" if args.log.endswith((".csv", ".npz")) else
                                "bag (or .csv / .npz file)"))
        from robot_dynamics.parsers.urdf import load_urdf
        from robot_dynamics.identification.fit import fit
        from robot_dynamics.identification.io import load_bag, load_csv

        model = load_urdf(robot, validate=args.validate)
        terms, prior = _actuator_options(args, model)
        log = args.log
        if log.endswith((".csv", ".npz")):
            rec = load_csv(log, model)
        else:
            rec = load_bag(log, model, args.topic)
        print(f"{len(rec['t'])} samples of {model.nv} joints from {log}", file=sys.stderr)
        _progress(0, model.nv)
        tolerance = ({} if args.balance_tolerance is None else
                     {"balance_tolerance": args.balance_tolerance})
        result = fit(model, rec["q"], rec.get("v"), rec["tau"], rec.get("a"), t=rec["t"],
                     law=args.law, min_velocity=args.min_velocity, method=args.accelerations,
                     terms=terms, damping=args.damping == "included", progress=_progress,
                     low_speed_band=not args.no_low_speed_band, **tolerance)
    except (InputError, ModelError) as exc:
        _end_bar()
        print(f"robot-dynamics identify: {exc}", file=sys.stderr)
        return 2
    print(result.summary())
    suspect = result.not_friction
    contradicted = result.contradicted
    reasons = []  # one line however many apply
    if suspect:
        reasons.append(f"the efforts in {log} are not friction beyond the rigid-body dynamics of "
                       + model.name + ": " + "; ".join(f"{j}: {why}" for j, why in suspect)
                       + " — check τ's units (N·m, N), its sign convention, that it is "
                       "joint-side, and the robot, or pass --force")
    if contradicted:
        reasons.append("the log contradicts physical friction (every coefficient ≥ 0; these "
                       "are more than 5 standard errors below 0): "
                       + "; ".join(f"{j}.{k} unconstrained 95 % [{lo:.3g}, {hi:.3g}]"
                                   for j, k, (lo, hi) in contradicted)
                       + " — the model misses an effort the log holds or holds one the log "
                       "lacks (URDF damping: --damping), or τ's sign/units are wrong; --force "
                       "writes the coefficients held at 0")
    if reasons and not args.force:
        print(f"robot-dynamics identify: not writing {args.output}: " + " Also, ".join(reasons),
              file=sys.stderr)
        return 3
    missing = result.unidentifiable
    if missing and not args.force:
        print(f"robot-dynamics identify: not writing {args.output}: unidentifiable from this log: "
              + "; ".join(f"{j}.{k} ({why})" for j, k, why in missing)
              + " — record with the designed excitation (robot-dynamics record, "
              "robot_dynamics.identification.design_excitation) or pass --force to write the "
              "identifiable subset", file=sys.stderr)
        return 3
    import yaml

    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(f"# identified by robot-dynamics identify from {os.path.basename(log)}\n")
        if missing:
            fh.write("# --force: unidentifiable coefficients written as 0\n")
        for line in result.summary().splitlines():
            fh.write(f"# {line}\n")
        yaml.safe_dump(result.config, fh, sort_keys=False)
    print(f"wrote {args.output}")
    if terms:
        out = args.actuators_output or _beside(args.output)
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(f"# actuators identified by robot-dynamics identify from "
                     f"{os.path.basename(log)} (terms {', '.join(terms)})\n")
            if prior is not None:
                fh.write(f"# gear ratios and motor limits from {args.actuators}\n")
            fh.write("# motor-side Coulomb/viscous friction is in the friction law's coulomb and "
                     f"viscous\n# ({os.path.basename(args.output)}): not separable, not repeated "
                     "here\n")
            if missing:
                fh.write("# --force: unidentifiable coefficients written as 0 (armature 0, "
                         "efficiency 1)\n")
            for j in result.joints:
                values = ([("armature", j.coefficients["armature"], *j.intervals["armature"])]
                          if "armature" in j.coefficients else [])
                values += [(k, *x) for k, x in j.efficiencies.items()]
                for k, x, lo, hi in values:
                    d = _digits(x, 0.5 * (hi - lo))
                    fh.write(f"# {j.joint} {k} {x:.{d}g}, 95 % [{lo:.{d}g}, {hi:.{d}g}]\n")
            yaml.safe_dump(result.actuator_config(prior), fh, sort_keys=False)
        print(f"wrote {out}")
    if args.plot:
        _plot(args.plot, rec, result)
        print(f"plot saved to {args.plot}")
    return 0


def _digits(x, half):
    """Significant digits that show an interval of half-width ``half`` around ``x``."""
    if not half > 0 or not math.isfinite(half):
        return 6
    return 3 + max(int(math.ceil(math.log10(max(abs(x), 1e-300) / half))), 0)


def _beside(output):
    root, ext = os.path.splitext(output)
    return f"{root}_actuators{ext or '.yaml'}"


def _actuator_options(args, model):
    """(terms, prior Actuators or None) from --terms and --actuators; the prior's armature is
    set on ``model`` (taken out of the balance unless fitted)."""
    from robot_dynamics.friction.actuators import actuators_from_config
    from robot_dynamics.parsers.resources import config_path
    from robot_dynamics.identification.regressors import TERMS

    prior = None
    if args.actuators is not None:
        # a path, or a bundled name (arm7_actuators) as `sim --actuators` and the nodes take
        prior = actuators_from_config(config_path(args.actuators, "actuators"), model)
        prior.apply(model)
    if args.terms is None:
        terms = ("armature", "gear_mesh") if prior is not None else ()
    else:
        terms = tuple(x.strip() for x in args.terms.split(",") if x.strip())
        unknown = [x for x in terms if x not in TERMS]
        if unknown:
            raise InputError(f"--terms: unknown term(s) {unknown}; allowed: {sorted(TERMS)}")
    if prior is not None and "gear_mesh" not in terms:
        geared = [n for n, a in zip(prior.joint_names, prior.actuators)
                  if a is not None and a.gear is not None]
        if geared:
            raise InputError(f"{args.actuators}: joint {geared[0]!r} has a gear mesh, whose "
                             "friction would bias the law's coefficients: fit it (--terms "
                             "...,gear_mesh)")
    if args.actuators_output is not None and not terms:
        raise InputError("--actuators-output needs actuator terms to fit (--terms)")
    return terms, prior


def _plot(path, rec, result):
    """Per joint: measured friction τf = fn∥ − τ of the used rows and the fitted law's τf, in
    the joint's effort unit (N·m, N)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    joints = result.joints
    fig, axes = plt.subplots(len(joints), 1, figsize=(10, 1.8 * len(joints)), sharex=True,
                             squeeze=False)
    t = rec["t"]
    for ax, j in zip(axes[:, 0], joints):
        effort = j.effort_unit
        if j.measured is not None:
            ax.plot(t[j.rows], j.measured, ".", ms=1, alpha=0.4, label="measured τf")
            ax.plot(t[j.rows], j.predicted, ".", ms=0.6, label=f"fitted {result.law}")
        ax.set_ylabel(f"{j.joint}\nτf [{effort}]", fontsize=8)
        ax.set_title(f"residual RMS {j.residual_rms:.3g} {effort}", fontsize=7, loc="right")
    axes[0, 0].legend(fontsize=7, markerscale=8)
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
