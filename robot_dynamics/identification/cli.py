"""``robot-dynamics identify <robot> <log> -o friction.yaml [--plot FILE]``.

``<log>``: a ROS 2 bag (directory, .db3 or .mcap) with sensor_msgs/JointState on ``--topic``, a
CSV (``t``, ``q_<joint>``, ``v_<joint>``, ``tau_<joint>``) or an NPZ file. Accelerations are
differentiated from the velocities with a zero-phase Savitzky–Golay filter.
"""
from __future__ import annotations

import argparse
import os
import sys

import yaml

from ..errors import InputError, ModelError


def _progress(done, total, width=30):
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} joints")
    sys.stderr.flush()
    if done == total:
        sys.stderr.write("\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="robot-dynamics identify",
                                     description="Fit joint friction laws to a recorded run.")
    parser.add_argument("robot", help="bundled robot name or URDF path")
    parser.add_argument("log", help="ROS 2 bag, CSV or NPZ log")
    parser.add_argument("-o", "--output", required=True, help="friction YAML to write")
    parser.add_argument("--law", default="load_dependent", choices=["load_dependent", "classic"])
    parser.add_argument("--topic", default="/joint_states")
    parser.add_argument("--min-velocity", type=float, default=0.05,
                        help="exclude samples slower than this [rad/s or m/s]")
    parser.add_argument("--plot", default=None, help="save measured vs predicted friction (PNG)")
    args = parser.parse_args(argv)
    from .. import load_urdf
    from ..resources import robot_path
    from .fit import fit
    from .io import load_bag, load_csv  # after --help: these load numba
    try:
        model = load_urdf(robot_path(args.robot))
        log = args.log
        if log.endswith((".csv", ".npz")):
            rec = load_csv(log, model)
        else:
            rec = load_bag(log, model, args.topic)
        print(f"{len(rec['t'])} samples of {model.nv} joints from {log}", file=sys.stderr)
        _progress(0, model.nv)
        result = fit(model, rec["q"], rec["v"], rec["tau"], rec.get("a"), t=rec["t"],
                     law=args.law, min_velocity=args.min_velocity, progress=_progress)
    except (InputError, ModelError) as exc:
        print(f"robot-dynamics identify: {exc}", file=sys.stderr)
        return 2
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(f"# identified by robot-dynamics identify from {os.path.basename(log)}\n")
        for line in result.summary().splitlines():
            fh.write(f"# {line}\n")
        yaml.safe_dump(result.config, fh, sort_keys=False)
    print(result.summary())
    print(f"wrote {args.output}")
    if args.plot:
        _plot(args.plot, model, rec, result)
        print(f"plot saved to {args.plot}")
    return 0


def _plot(path, model, rec, result):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .. import friction_from_config
    from ..batch import inverse_dynamics_batch
    from .differentiate import accelerations

    A = rec.get("a")
    if A is None:
        A = accelerations(rec["t"], rec["v"])
    fr = friction_from_config(result.config, model)
    tau_pred, tauf = inverse_dynamics_batch(model, rec["q"], rec["v"], A, fr, return_friction=True)
    frictionless = tau_pred + tauf
    measured = frictionless - rec["tau"]  # τf = fn∥ − τ
    fig, axes = plt.subplots(model.nv, 1, figsize=(10, 1.8 * model.nv), sharex=True, squeeze=False)
    for i, ax in enumerate(axes[:, 0]):
        ax.plot(rec["t"], measured[:, i], ".", ms=1, alpha=0.4, label="measured τf")
        ax.plot(rec["t"], tauf[:, i], lw=0.8, label="identified law")
        ax.set_ylabel(model.joint_names[i], fontsize=8)
    axes[0, 0].legend(fontsize=7)
    axes[-1, 0].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
