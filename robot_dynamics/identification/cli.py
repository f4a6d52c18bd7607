"""``robot-dynamics identify <robot> <log> -o friction.yaml [--plot FILE]``.

Fits a friction law per joint (:mod:`.fit`), prints coefficients ± standard error, 95 %
intervals, condition numbers, residual RMS and the held-out comparison with the other law, and
writes the YAML — unless a coefficient is unidentifiable from the log (then it says which
excitation is missing and exits 3; ``--force`` writes the identifiable subset, the rest as 0).
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import InputError, ModelError

EPILOG_TAIL = """
accelerations (--accelerations):
  step    (default) each row is a control period: q̈ = Δq̇/Δt, and the simulator's step is
          replayed — joint wrench at its mid-step state, friction at the row's velocity, rows
          where a joint starts, stops or reverses dropped (exact for the simulator node's
          lock-step logs, to the friction solve's 1e-10; needs clean logged velocities)
  savgol  zero-phase Savitzky–Golay derivative of q̇ (noisy or differentiated velocities)

exit status: 0 written, 2 bad input, 3 unidentifiable coefficients (nothing written; --force).
See docs/identification.md."""


def _progress(done, total, width=30):
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} joints")
    sys.stderr.flush()
    if done == total:
        sys.stderr.write("\n")


def build_parser():
    from .io import FORMATS

    parser = argparse.ArgumentParser(
        prog="robot-dynamics identify", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fit joint friction laws to a recorded run (seed 004 eq. 2.7.5: "
                    "τ = fn∥ − τf, fn from Newton–Euler).", epilog=FORMATS + "\n" + EPILOG_TAIL)
    parser.add_argument("robot", help="bundled robot name, URDF path or .urdf.xacro path")
    parser.add_argument("--validate", default="strict", choices=["strict", "warn"],
                        help="URDF physics check: refuse (strict) or warn about unphysical bodies")
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
                             "%(default)s)")
    parser.add_argument("--accelerations", default="step", choices=["step", "savgol"],
                        help="how rows become regressor states, see below (default: "
                             "%(default)s)")
    parser.add_argument("--balance-tolerance", type=float, default=None,
                        help="relative precision of each row's effort balance, added to the "
                             "intervals as a worst case (0: none) (default: the simulator's "
                             "friction-solve tolerance, 1e-10)")
    parser.add_argument("--force", action="store_true",
                        help="write the YAML even with unidentifiable coefficients (as 0)")
    parser.add_argument("--plot", default=None, help="save measured vs predicted friction (PNG)")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from .. import load_urdf
    from ..resources import robot_path
    from .fit import fit
    from .io import load_bag, load_csv

    try:
        if args.min_velocity < 0:
            raise InputError(f"--min-velocity must be ≥ 0, got {args.min_velocity}")
        if args.balance_tolerance is not None and not 0 <= args.balance_tolerance < 1:
            raise InputError(f"--balance-tolerance must be in [0, 1), got "
                             f"{args.balance_tolerance}")
        model = load_urdf(robot_path(args.robot), validate=args.validate)
        log = args.log
        if log.endswith((".csv", ".npz")):
            rec = load_csv(log, model)
        else:
            rec = load_bag(log, model, args.topic)
        print(f"{len(rec['t'])} samples of {model.nv} joints from {log}", file=sys.stderr)
        _progress(0, model.nv)
        tolerance = ({} if args.balance_tolerance is None else
                     {"balance_tolerance": args.balance_tolerance})
        result = fit(model, rec["q"], rec["v"], rec["tau"], rec.get("a"), t=rec["t"],
                     law=args.law, min_velocity=args.min_velocity, method=args.accelerations,
                     progress=_progress, **tolerance)
    except (InputError, ModelError) as exc:
        print(f"robot-dynamics identify: {exc}", file=sys.stderr)
        return 2
    print(result.summary())
    missing = result.unidentifiable
    if missing and not args.force:
        print(f"robot-dynamics identify: not writing {args.output}: unidentifiable from this log: "
              + "; ".join(f"{j}.{k} ({why})" for j, k, why in missing)
              + " — record with the designed excitation (scripts/record_sim_bag.py, "
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
    if args.plot:
        _plot(args.plot, rec, result)
        print(f"plot saved to {args.plot}")
    return 0


def _plot(path, rec, result):
    """Per joint: measured friction τf = fn∥ − τ of the used rows and the fitted law's τf."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    joints = result.joints
    fig, axes = plt.subplots(len(joints), 1, figsize=(10, 1.8 * len(joints)), sharex=True,
                             squeeze=False)
    t = rec["t"]
    for ax, j in zip(axes[:, 0], joints):
        if j.measured is not None:
            ax.plot(t[j.rows], j.measured, ".", ms=1, alpha=0.4, label="measured τf")
            ax.plot(t[j.rows], j.predicted, ".", ms=0.6, label=f"fitted {result.law}")
        ax.set_ylabel(j.joint, fontsize=8)
        ax.set_title(f"residual RMS {j.residual_rms:.3g}", fontsize=7, loc="right")
    axes[0, 0].legend(fontsize=7, markerscale=8)
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
