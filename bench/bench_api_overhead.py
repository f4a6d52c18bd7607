"""Per-call cost of the public entry points' guards, on panda (9 dof): model/Data/friction
identity, the layout test, the overflow check.

    python3 bench/bench_api_overhead.py

For rnea, mass_matrix, forward_dynamics (no friction and load-dependent friction) and
friction-aware inverse_dynamics, prints the time of the public call and of the bare compiled
call it makes (same inputs, same work arrays, output copied as the public call does): their
difference is everything the Python entry point adds. Then the public calls with the same
inputs as lists, read-only and strided arrays. Minimum over interleaved blocks (noisy machines).
"""
from __future__ import annotations

import os
import sys
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.kernels.dynamics import crba_entry, rnea_entry  # noqa: E402
from robot_dynamics.kernels.fd import fd_entry  # noqa: E402
from robot_dynamics.kernels.friction import id_entry  # noqa: E402
from conftest import PANDA, erd_urdf  # noqa: E402

FRICTION = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.1, "k1": 0.01,
                        "k2": 0.005, "k3": 0.002}}


def best(stmts, env, number, repeat=300):
    """Minimum µs per call of each statement, their blocks interleaved (the machine's load
    changes between blocks, not within a pair)."""
    timers = [timeit.Timer(s, globals=env) for s in stmts]
    times = [[] for _ in stmts]
    for _ in range(repeat):
        for t, out in zip(timers, times):
            out.append(t.timeit(number) / number * 1e6)
    return [min(t) for t in times]


def odd(stmt, kind):
    """``stmt`` with its vector arguments replaced by the layout ``kind`` (L, R or S)."""
    return stmt.replace("q, v, a", f"*{kind}").replace("(m, d, q)", f"(m, d, {kind}[0])")


def main():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    fr = rd.friction_from_config(FRICTION, model)
    rng = np.random.default_rng(0)
    q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    ro = [x.copy() for x in (q, v, a)]
    for x in ro:
        x.setflags(write=False)
    strided = [np.repeat(x, 2)[::2] for x in (q, v, a)]
    env = dict(rd=rd, m=model, d=data, fr=fr, q=q, v=v, a=a, mb=model._mb, w=data._work,
               nf=model._no_friction[2], pf=fr._packed[2], rnea_entry=rnea_entry,
               crba_entry=crba_entry, fd_entry=fd_entry, id_entry=id_entry,
               L=[x.tolist() for x in (q, v, a)], R=ro, S=strided)
    rows = [
        ("rnea", "rd.rnea(m, d, q, v, a)", "rnea_entry(mb, q, v, a, w); d.tau.copy()"),
        ("mass_matrix", "rd.mass_matrix(m, d, q)", "crba_entry(mb, q, w); d.M.copy()"),
        ("forward_dynamics", "rd.forward_dynamics(m, d, q, v, a)",
         "fd_entry(mb, nf, q, v, a, 1e-9, 1e-10, 50, w, True); d._acc.copy()"),
        ("forward_dynamics+friction", "rd.forward_dynamics(m, d, q, v, a, fr)",
         "fd_entry(mb, pf, q, v, a, 1e-9, 1e-10, 50, w, True); d._acc.copy()"),
        ("inverse_dynamics+friction", "rd.inverse_dynamics(m, d, q, v, a, fr)",
         "id_entry(mb, pf, q, v, a, 1e-6, True, w); d._id_out.copy()"),
    ]
    print(f"panda, nv={model.nv}; µs per call (minimum over interleaved blocks)")
    print(f"{'':28s}{'public':>9s}{'compiled':>10s}{'added':>8s}"
          f"{'lists':>9s}{'read-only':>11s}{'strided':>9s}")
    for name, public, bare in rows:
        t_pub, t_bare = best([public, bare], env, 200)
        try:
            layouts = best([odd(public, k) for k in ("L", "R", "S")], env, 20, repeat=50)
        except TypeError:  # before issue 12: read-only arrays raised numba's TypeError
            layouts = [float("nan")] * 3
        print(f"{name:28s}{t_pub:9.2f}{t_bare:10.2f}{t_pub - t_bare:8.2f}"
              f"{layouts[0]:9.2f}{layouts[1]:11.2f}{layouts[2]:9.2f}")


if __name__ == "__main__":
    main()
