"""External efforts: the cost of ``fext`` (issue 32's target: within 10 % of the same call
without it).

    python3 bench/bench_external.py            # panda and ur5 (example-robot-data)

Per robot, for rnea, friction-aware inverse dynamics and friction-aware forward dynamics (and
frictionless forward dynamics), the per-call time with ``fext`` (a non-zero (nv, 6) array) and
without (``fext=None``), from alternating short blocks: the fastest block of each (the least
disturbed on a shared machine) and their ratio. ``fext=None`` runs the code path that existed
before the argument (one ``is None`` test more).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from conftest import PANDA, UR5, erd_urdf, random_state  # noqa: E402

FRICTION = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.1, "k1": 0.01,
                        "k2": 0.002, "k3": 0.001}}


def paired(with_fext, without, reps, blocks=41):
    """(with µs, without µs, ratio with/without): short blocks alternate; the times are the
    fastest block of each (on a shared machine the least disturbed one) and the ratio theirs."""
    with_fext()
    without()
    a, b = [], []
    for _ in range(blocks):
        for fn, out in ((with_fext, a), (without, b)):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            out.append((time.perf_counter() - t0) / reps)
    a, b = np.array(a), np.array(b)
    return float(a.min()) * 1e6, float(b.min()) * 1e6, float(a.min() / b.min())


def main() -> None:
    print(f"{'robot':8s} {'call':28s} {'with fext µs':>12s} {'without µs':>11s} {'ratio':>6s}")
    for name in (PANDA, UR5):
        model = rd.load_urdf(erd_urdf(name))
        data = model.create_data()
        friction = rd.friction_from_config(FRICTION, model)
        q, v, a = random_state(model, 1)
        F = np.random.default_rng(0).normal(scale=10.0, size=(model.nv, 6))
        tau = rd.inverse_dynamics(model, data, q, v, a, friction)
        short = os.path.basename(name).split(".")[0]
        cases = [
            ("rnea", lambda: rd.rnea(model, data, q, v, a, F),
             lambda: rd.rnea(model, data, q, v, a), 500),
            ("inverse_dynamics (friction)",
             lambda: rd.inverse_dynamics(model, data, q, v, a, friction, fext=F),
             lambda: rd.inverse_dynamics(model, data, q, v, a, friction), 500),
            ("forward_dynamics (none)", lambda: rd.forward_dynamics(model, data, q, v, tau, fext=F),
             lambda: rd.forward_dynamics(model, data, q, v, tau), 300),
            ("forward_dynamics (friction)",
             lambda: rd.forward_dynamics(model, data, q, v, tau, friction, fext=F),
             lambda: rd.forward_dynamics(model, data, q, v, tau, friction), 200),
        ]
        for label, with_fext, without, reps in cases:
            w, wo, ratio = paired(with_fext, without, reps)
            print(f"{short:8s} {label:28s} {w:12.2f} {wo:11.2f} {ratio:6.3f}")


if __name__ == "__main__":
    main()
