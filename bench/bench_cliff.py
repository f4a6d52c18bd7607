"""Long chains with load-dependent friction: failed steps and time per `Simulator.step` (issue 35,
"a cliff at 48 joints").

Run: ``PYTHONPATH=$PWD python3 bench/bench_cliff.py [--joints 24 48 60 100] [--states 5]``.

A serial chain of 1 kg / 0.1 m links (axes cycling x, y, z), every joint with the load-dependent
law (coulomb 0.5, k1 0.01, k2 0.002, k3 0.001, no viscous term), zero effort, q and q̇ uniform in
[−1, 1] (seeded), one ``Simulator.step`` (dt 1e-3) from each state. Prints per chain the failed
steps (SimulationError), the mean and worst wall time per step and the friction solve's method.
``--timeout`` (seconds) ends a chain's remaining states once one step took that long (today's
code can take minutes per step past 47 joints). No timing is asserted anywhere (CPU time on a
shared machine is noisy; the wall time is what a user waits).

Measured on 2 shared, heavily loaded cores (wall ms per step, failed of 5, seed 0):

    joints   before (7db0b22)                          after (switch to Newton, work cap)
    24       0 / 5, 0.1 ms                             0 / 5, 0.1 ms
    48       0 / 5, 4.2 ms (worst 18.6)                0 / 5, 3.1 ms (worst 12.7)
    60       1 / 1, 600 s, then stopped (--timeout)    0 / 5, 16 ms (worst 34)
    100      first step unfinished after 14 min        0 / 5, 52 ms (worst 68)
"""
from __future__ import annotations

import argparse
import os
import sys
import time

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
    """(ok, wall seconds, message) of one step from (q, v) under zero effort."""
    sim = sim or rd.Simulator(model, friction, dt=1e-3)
    sim.reset(q, v)
    t0 = time.perf_counter()
    try:
        sim.step(np.zeros(model.nv))
        ok, msg = True, ""
    except rd.SimulationError as exc:
        ok, msg = False, str(exc).split("failed, even on 1/16 steps: ")[-1].split(";")[0]
    return ok, time.perf_counter() - t0, msg


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--joints", type=int, nargs="*", default=[24, 48, 60, 100])
    ap.add_argument("--states", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    model, friction = chain(3)
    one_step(model, friction, *states(3, 1)[0])  # the compiled kernels' load out of the timings
    print(f"{'joints':>6}{'failed':>9}{'mean ms':>11}{'worst ms':>11}   first failure")
    for n in args.joints:
        model, friction = chain(n)
        sim = rd.Simulator(model, friction, dt=1e-3)
        one_step(model, friction, *states(n, 1, seed=99)[0], sim=sim)  # this size's first call
        fails, times, first = 0, [], ""
        for q, v in states(n, args.states):
            ok, dt, msg = one_step(model, friction, q, v, sim)
            times.append(dt)
            if not ok:
                fails += 1
                first = first or msg
            if dt > args.timeout:
                break
        print(f"{n:>6}{fails:>5} / {len(times):<3}{1e3 * np.mean(times):>11.1f}"
              f"{1e3 * max(times):>11.1f}   {first[:90]}", flush=True)


if __name__ == "__main__":
    main()
