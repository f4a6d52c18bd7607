"""Long chains with load-dependent friction: failed steps and time per `Simulator.step` (issue 35,
"a cliff at 48 joints").

Run: ``PYTHONPATH=$PWD python3 bench/bench_cliff.py [--joints 24 48 60 100] [--states 5]``
(issue 35's closing measurement: ``--joints 10 25 50 100 200 --states 50 --timeout 60``).

A serial chain of 1 kg / 0.1 m links (axes cycling x, y, z), every joint with the load-dependent
law (coulomb 0.5, k1 0.01, k2 0.002, k3 0.001, no viscous term), zero effort, q and q̇ uniform in
[−1, 1] (seeded), one ``Simulator.step`` (dt 1e-3) from each state. Prints per chain the failed
steps (SimulationError), the mean and worst wall time per step, the iterations of the step's
last friction solve (mean) and its method (count of steps), then the exponent p of a
least-squares fit mean time ∝ n^p over the chains, and p between neighbouring chains.
``--timeout`` (seconds) ends a chain's remaining states once one step took that long (today's
code can take minutes per step past 47 joints). No timing is asserted anywhere (CPU time on a
shared machine is noisy; the wall time is what a user waits).

Measured on 2 shared, heavily loaded cores (wall ms per step, failed of 5, seed 0):

    joints   before (7db0b22)                          after (switch to Newton, work cap)
    24       0 / 5, 0.1 ms                             0 / 5, 0.1 ms
    48       0 / 5, 4.2 ms (worst 18.6)                0 / 5, 3.1 ms (worst 12.7)
    60       1 / 1, 600 s, then stopped (--timeout)    0 / 5, 16 ms (worst 34)
    100      first step unfinished after 14 min        0 / 5, 52 ms (worst 68)

Issue 35's closing measurement, 50 states per chain (seed 0), same loaded machine; "before" is
4748e3e (Newton refactored at every iteration within a step), "after" keeps Newton's matrix
on long chains while its steps contract by CHORD (the chord rule an instant already had):

    joints   failed   before: mean / worst ms   after: mean / worst ms   method (after)
    10       0 / 50     0.1 /   1.6               0.0 /   0.1             fixed_point 50
    25       0 / 50     0.3 /   4.3               0.1 /   0.2             fixed_point 50
    50       0 / 50     1.6 /   5.2               1.2 /   5.6             fixed_point 50
    100      0 / 50    12.4 /  23.2               8.9 /  14.2             fixed_point 50
    200      0 / 50   130.7 / 372.4              92.0 / 358.2             fixed_point 50

(a second "after" run on the same code: 0.8, 4.9 and 52.5 ms at 50, 100 and 200 joints — the
machine's load moves these by up to 2x; the deterministic count: a cold solve of a 200-joint
chain factors Newton's matrix 3.8 times instead of 10.2, at about 9 ms each.) Every step
converged, every one by the fixed point (the seed's iteration, handing over to Newton past 48
joints), none by the difference-Jacobian fallback.

Without the recursions below, the cost per step was not linear: mean time ∝ n^2.5 to n^2.9
fitted over 10–200 joints, n^3.4 between 100 and 200. Dense linear algebra of size n did it: on
a serial chain every joint is every other's ancestor, so M_FF is full and the tree-pattern
factorisations have no zeros to skip — the LTL of M_FF + Λ for each stick/slip assignment (n³/6,
4.5 ms at 200) and the LU of Newton's matrix at the handover (n³/3, 9 ms at 200), with a
200×200 matrix (320 kB) no longer in cache; each iteration is n² (the reactions W(a) over related
joints, M_FF a), as are M and the wrench directors D (n × n × 6).

Step 2 by articulated-body recursions (kernels/articulated_step.py: Newton's method on
Featherstone's ABA with the laws' force-side projections, the prescribed accelerations of stuck
joints and joints on a stop, no M, no directors; from kernels/articulated_step.ARTICULATED_MIN
= 12 joints — from ARTICULATED_LOADED_MIN = 3 where a law reads its reactions, since branch
artsmall —, the dense solve below that and wherever the recursions cannot answer). Issue 35's
closing measurement again, same loaded machine, 50 states per chain (seed 0); "before" is
ab140ce run alongside (the table predates artsmall: its 10-joint row stepped dense):

    joints   failed   before: mean / worst ms   after: mean / worst ms   method (after)
    10       0 / 50     0.0 /   0.0               0.0 /   0.1             fixed_point 50 (dense)
    25       0 / 50     0.1 /   0.3               0.1 /   0.1             newton 50
    50       0 / 50     0.8 /   1.1               0.1 /   0.3             newton 50
    100      0 / 50     4.2 /   6.3               0.3 /   0.4             newton 50
    200      0 / 50    48.8 / 153.8               0.7 /   2.4             newton 50

mean time per step ∝ n^1.1 (least squares over 10–200; pairwise 1.1, 1.0, 0.9, 1.4) against
n^2.5 before (pairwise 1.9, 2.4, 2.4, 3.5); a second pair of runs on a quieter machine: before
0.0 / 0.1 / 0.7 / 4.6 / 50.8 ms (n^2.5), after 0.0 / 0.0 / 0.1 / 0.3 / 0.7 ms (n^1.2). "newton" is the report's mark of the recursions
(info[1] 2, as the instant's kernels/articulated.py; a fallback to the dense solve would
report its fixed_point): every step converged, on the recursions. Finer timings, dense / articulated, mean ms per step from the same 50 states:
6 joints 0.021 / 0.017, 10 joints 0.020 / 0.019, 16 joints 0.053 / 0.038, 25 joints
0.11 / 0.05, 50 joints 0.53 / 0.11, 100 joints 4.0 / 0.27.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))

import robot_dynamics as rd  # noqa: E402
from conftest import chain_urdf  # noqa: E402

FRICTION = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.0, "k1": 0.01,
                        "k2": 0.002, "k3": 0.001}}


def chain(n: int):
    model = rd.build_model(rd.parse_urdf(chain_urdf(n)))
    return model, rd.friction_from_config(FRICTION, model)


def states(n: int, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)) for _ in range(count)]


def one_step(model, friction, q, v, sim=None):
    """(ok, wall seconds, message, report) of one step from (q, v) under zero effort; the
    report is the friction solve's of the step's last pass (None when it failed)."""
    sim = sim or rd.Simulator(model, friction, dt=1e-3)
    sim.reset(q, v)
    t0 = time.perf_counter()
    try:
        sim.step(np.zeros(model.nv))
        ok, msg = True, ""
    except rd.SimulationError as exc:
        ok, msg = False, str(exc).split("failed, even on 1/16 steps: ")[-1].split(";")[0]
    wall = time.perf_counter() - t0
    return ok, wall, msg, (sim.report if ok else None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--joints", type=int, nargs="*", default=[24, 48, 60, 100])
    ap.add_argument("--states", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    model, friction = chain(3)
    one_step(model, friction, *states(3, 1)[0])  # the compiled kernels' load out of the timings
    print(f"{'joints':>6}{'failed':>9}{'mean ms':>11}{'worst ms':>11}{'iter':>6}   method"
          "   first failure")
    rows = []
    for n in args.joints:
        model, friction = chain(n)
        sim = rd.Simulator(model, friction, dt=1e-3)
        one_step(model, friction, *states(n, 1, seed=99)[0], sim=sim)  # this size's first call
        fails, times, first, methods, iters = 0, [], "", Counter(), []
        for q, v in states(n, args.states):
            ok, dt, msg, report = one_step(model, friction, q, v, sim)
            times.append(dt)
            if ok:
                methods[report.method] += 1
                iters.append(report.iterations)
            else:
                fails += 1
                first = first or msg
            if dt > args.timeout:
                break
        rows.append((n, np.mean(times)))
        method = " ".join(f"{m} {c}" for m, c in methods.most_common())
        print(f"{n:>6}{fails:>5} / {len(times):<3}{1e3 * np.mean(times):>11.1f}"
              f"{1e3 * max(times):>11.1f}{np.mean(iters) if iters else np.nan:>6.1f}   {method}"
              f"   {first[:90]}", flush=True)
    if len(rows) >= 2:  # the cost's growth: mean time ∝ n^p, p fitted to the chains measured
        n, t = np.log([r[0] for r in rows]), np.log([r[1] for r in rows])
        p = np.polyfit(n, t, 1)[0]
        pairs = ", ".join(f"{n0}->{n1}: {np.log(t1 / t0) / np.log(n1 / n0):.1f}"
                          for (n0, t0), (n1, t1) in zip(rows, rows[1:]))
        print(f"mean time per step ~ n^{p:.1f} (least squares over the chains; pairwise {pairs})")


if __name__ == "__main__":
    main()
