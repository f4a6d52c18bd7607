"""Coverage of the fit's 95 % intervals on logs this project's step replay does not describe
(issue 33): the bundled arm7 with the load-dependent friction of config/arm7_friction.yaml,
tracked by friction-aware computed torque along a random Fourier excitation (one seed per
recording) in :class:`robot_dynamics.Simulator` at 1 kHz, logged every 1, 2 and 5 steps, with
Gaussian noise σ_q = 1e-5 rad on q and σ_τ = 0.02 N·m on τ.

    PYTHONPATH=. python3 bench/bench_identification_coverage.py --recordings 20 --duration 20
    ... --velocities given         # the simulator's exact q̇ in the log (issue 33's experiment)
    ... --velocities differentiated  # v = np.gradient(q_noisy, t) in the log
    ... --velocities none          # no v in the log: fit(model, q, None, tau, t=t)

Prints, per stride, the share of (recording, joint, coefficient) cases whose 95 % interval holds
the true coefficient, the median |error|/SE and the worst, and the binomial bound: with nominal
95 % coverage and independent cases, P[Binomial(n, 0.95) < k] for the count measured.
(Coefficients of one joint are correlated estimates: the spread of the count is somewhat wider.)
Joints whose estimates are conditional (a coefficient dropped for conditioning) are not counted.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import yaml
from scipy.stats import binom
from scipy.stats import t as student_t

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.identification import fit, fourier_excitation  # noqa: E402
from test_identification_coverage import record  # noqa: E402


def simulate(model, friction, duration, seed):
    """A noise-free computed-torque log along a Fourier excitation (the test's recorder)."""
    t, Q, V, A = fourier_excitation(model, duration=duration + 0.5, rate=50.0, seed=seed)
    return record(model, friction, t, Q, V, A, duration)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--recordings", type=int, default=20)
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--strides", default="1,2,5")
    p.add_argument("--sigma-q", type=float, default=1e-5)
    p.add_argument("--sigma-tau", type=float, default=0.02)
    p.add_argument("--velocities", default="none",
                   choices=["given", "differentiated", "none"])
    p.add_argument("--method", default=None, help="fit(method=...) (default: fit's default)")
    p.add_argument("--law", default="load_dependent")
    args = p.parse_args()
    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
    friction = rd.friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), model)
    cfg = yaml.safe_load(open(os.path.join(REPO, "config", "arm7_friction.yaml")))
    truth = {j: cfg.get("joints", {}).get(j, cfg["default"]) for j in model.joint_names}
    strides = [int(s) for s in args.strides.split(",")]
    cases = {s: [] for s in strides}  # (inside, |err|/se, inside without the
    # reconstruction term, SE / SE without it)
    kw = {} if args.method is None else {"method": args.method}
    for rec in range(args.recordings):
        t0 = time.time()
        run = simulate(model, friction, args.duration, seed=rec)
        rng = np.random.default_rng(1000 + rec)
        for s in strides:
            idx = np.arange(s - 1, len(run["t"]), s)
            q = run["q"][idx] + rng.normal(scale=args.sigma_q, size=(len(idx), model.nv))
            tau = run["tau"][idx] + rng.normal(scale=args.sigma_tau, size=(len(idx), model.nv))
            v = (run["v"][idx] if args.velocities == "given" else None
                 if args.velocities == "none" else np.gradient(q, run["t"][idx], axis=0))
            try:
                res = fit(model, q, v, tau, t=run["t"][idx], law=args.law, **kw)
            except Exception as exc:  # noqa: BLE001
                print(f"  recording {rec} stride {s}: {type(exc).__name__}: {exc}")
                continue
            for j in res.joints:
                if j.assumed_zero:
                    continue
                q975 = student_t.ppf(0.975, max(j.samples - len(j.coefficients), 1))
                for k, (lo, hi) in j.intervals.items():
                    true = truth[j.joint][k]
                    se = j.standard_errors[k]
                    # the noise-only SE (before the state reconstruction's term, fit step 4)
                    noise = np.sqrt(max(se ** 2 - j.reconstruction_errors.get(k, 0.0) ** 2, 0))
                    half = q975 * noise + j.resolution.get(k, 0.0)
                    u, x = j.unconstrained[k], j.coefficients[k]
                    lo0, hi0 = max(u - half, 0.0), max(u + half, 0.0)
                    cases[s].append((lo <= true <= hi,
                                     abs(j.coefficients[k] - true) / se if se > 0 else np.inf,
                                     min(lo0, x) <= true <= max(hi0, x),
                                     se / noise if noise > 0 else 1.0))
        print(f"recording {rec}: {time.time() - t0:.0f} s; running coverage "
              + ", ".join(f"stride {s}: {np.mean([c[0] for c in cases[s]]):.3f}"
                          for s in strides if cases[s]), flush=True)
    print(f"\n{args.recordings} recordings × {args.duration:g} s, σ_q {args.sigma_q:g}, "
          f"σ_τ {args.sigma_tau:g}, velocities {args.velocities}, method "
          f"{args.method or 'default'}")
    for s in strides:
        c, z, c0, g = (np.array([x[m] for x in cases[s]]) for m in range(4))
        n, k = len(c), int(c.sum())
        print(f"stride {s}: coverage {k}/{n} = {k / max(n, 1):.3f}; |err|/SE median "
              f"{np.median(z):.2f}, max {z.max():.1f}; P[Bin({n}, 0.95) ≤ {k}] = "
              f"{binom.cdf(k, n, 0.95):.2g}; without the state reconstruction's term "
              f"{c0.mean():.3f}; SE / SE without it: median {np.median(g):.3f}, "
              f"90th percentile {np.percentile(g, 90):.2f}, max {g.max():.2f}")


if __name__ == "__main__":
    main()
