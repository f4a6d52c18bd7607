"""Dynamics benchmark: ours vs Pinocchio in the same process, as ratios (robust on noisy machines).

    python3 bench/bench_dynamics.py            # panda, ur5, talos (32 dof tree), scaling to 100 dof

Prints per-call times (median of repeated blocks), ratios ours / Pinocchio for rnea, friction-aware
inverse dynamics (vs pin.rnea), friction-aware forward dynamics (vs pin.aba), batched inverse
dynamics per sample over 10 000 samples (vs pin.rnea in a loop), memory per Data, peak memory of
the batch API, cost growth on generated chains, and start-up (import, first call) times.
Pinocchio is a test/benchmark-only dependency.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import pinocchio as pin  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.algorithm.batch import inverse_dynamics_batch  # noqa: E402
from conftest import PANDA, UR5, PinMap, chain_urdf, erd_urdf  # noqa: E402

FRICTION = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.1, "k1": 0.01,
                        "k2": 0.002, "k3": 0.001}}


def per_call(fn, reps=2000, blocks=7) -> float:
    fn()
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return float(np.median(times)) * 1e6


def paired(ours, ref, reps, blocks=9):
    """(ours µs, ref µs, ratio): blocks of the two calls alternate and the ratio is the median of
    the per-block ratios, so a slow spell of the machine hits both sides of a ratio alike."""
    ours()
    ref()
    a, b = [], []
    for _ in range(blocks):
        for fn, out in ((ours, a), (ref, b)):
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            out.append((time.perf_counter() - t0) / reps)
    a, b = np.array(a), np.array(b)
    return float(np.median(a)) * 1e6, float(np.median(b)) * 1e6, float(np.median(a / b))


def bench_robot(name, path):
    model = rd.load_urdf(path)
    data = model.create_data()
    fr = rd.friction_from_config(FRICTION, model)
    pm = PinMap(model, path)
    rng = np.random.default_rng(0)
    q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    pq, pv, pa = pm.q(q), pm.v(v), pm.v(a)
    tau = rd.inverse_dynamics(model, data, q, v, a, fr)
    ptau = pm.v(tau)
    t, ratio = {}, {}
    for key, ours, ref_key, ref in (
            ("rnea", lambda: rd.rnea(model, data, q, v, a),
             "pin.rnea", lambda: pin.rnea(pm.pmodel, pm.pdata, pq, pv, pa)),
            ("id+friction", lambda: rd.inverse_dynamics(model, data, q, v, a, fr),
             "pin.rnea", lambda: pin.rnea(pm.pmodel, pm.pdata, pq, pv, pa)),
            ("mass_matrix", lambda: rd.mass_matrix(model, data, q),
             "pin.crba", lambda: pin.crba(pm.pmodel, pm.pdata, pq)),
            ("fd+friction", lambda: rd.forward_dynamics(model, data, q, v, tau, fr),
             "pin.aba", lambda: pin.aba(pm.pmodel, pm.pdata, pq, pv, ptau))):
        t[key], t[ref_key], ratio[key] = paired(ours, ref, 300 if key == "fd+friction" else 2000)
    N = 10_000
    Q, V, A = (rng.uniform(-1, 1, (N, model.nv)) for _ in range(3))
    inverse_dynamics_batch(model, Q[:10], V[:10], A[:10], fr)
    batch = per_call(lambda: inverse_dynamics_batch(model, Q, V, A, fr), 1, 5) / N
    tracemalloc.start()  # separately: tracing slows the timed run
    inverse_dynamics_batch(model, Q, V, A, fr)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    PQ = [pm.q(x) for x in Q]
    PV = [pm.v(x) for x in V]
    PA = [pm.v(x) for x in A]
    t0 = time.perf_counter()
    for k in range(N):
        pin.rnea(pm.pmodel, pm.pdata, PQ[k], PV[k], PA[k])
    pin_loop = (time.perf_counter() - t0) / N * 1e6
    data_bytes = data._work.nbytes + data.S.nbytes  # the rest are views
    print(f"\n{name} ({model.nv} dof)")
    for k, val in t.items():
        print(f"  {k:<14} {val:9.2f} µs")
    print(f"  ratio rnea / pin.rnea                 {ratio['rnea']:6.2f}  (target ≤ 2.0)")
    print(f"  ratio ID+friction / pin.rnea          {ratio['id+friction']:6.2f}  (target ≤ 2.0)")
    print(f"  ratio mass_matrix / pin.crba          {ratio['mass_matrix']:6.2f}")
    print(f"  ratio FD+friction / pin.aba           {ratio['fd+friction']:6.2f}  (target ≤ 3.0)")
    print(f"  batched ID+friction per sample        {batch:6.2f} µs; pin.rnea loop {pin_loop:.2f} µs;"
          f" ratio {batch / pin_loop:.2f} (target ≤ 0.5)")
    print(f"  memory per Data {data_bytes / 1024:.1f} KiB; batch peak (N={N}) "
          f"{peak / 2**20:.1f} MiB")


def scaling():
    print("\nscaling on generated chains (µs per call)")
    print("   dof    rnea  id+fric  fd+fric")
    for n in (10, 25, 50, 100):
        model = rd.load_urdf(chain_urdf(n))
        data = model.create_data()
        fr = rd.friction_from_config(FRICTION, model)
        q, v, a = (np.random.default_rng(n).uniform(-0.5, 0.5, n) for _ in range(3))
        tau = rd.inverse_dynamics(model, data, q, v, a, fr)
        r = per_call(lambda: rd.rnea(model, data, q, v, a), 300, 3)
        i = per_call(lambda: rd.inverse_dynamics(model, data, q, v, a, fr), 300, 3)
        f = per_call(lambda: rd.forward_dynamics(model, data, q, v, tau, fr), 30, 3)
        print(f"  {n:4d} {r:8.1f} {i:8.1f} {f:8.1f}")


def startup():
    code = ("import time; t0=time.perf_counter(); import robot_dynamics as rd; t1=time.perf_counter();"
            "import numpy as np; m=rd.load_urdf(rd.resources.robot_path('arm7'));"
            "from robot_dynamics.parsers import resources; d=m.create_data(); z=np.zeros(7);"
            "t2=time.perf_counter(); rd.rnea(m,d,z,z,z); rd.mass_matrix(m,d,z); t3=time.perf_counter();"
            "print(f'{(t1-t0)*1e3:.0f} {(t3-t2)*1e3:.0f}')")
    code = code.replace("rd.resources.robot_path", "__import__('robot_dynamics.parsers.resources', "
                        "fromlist=['x']).robot_path")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
    print(f"\nstart-up (fresh process, numba cache warm): import {out[0]} ms, first rnea+crba "
          f"{out[1]} ms")


if __name__ == "__main__":
    bench_robot("panda", erd_urdf(PANDA))
    bench_robot("ur5", erd_urdf(UR5))
    bench_robot("talos (tree)", erd_urdf("talos_data/robots/talos_reduced.urdf"))
    scaling()
    startup()
