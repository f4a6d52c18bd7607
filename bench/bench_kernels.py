"""Per-component cost of the dynamics kernels, timed inside one compiled loop (no dispatch).

    python3 bench/bench_kernels.py            # panda (9 dof) and talos_reduced (32 dof tree)

The fixed cost of every forward-dynamics call and simulator step (kernels/fd.py) is the sum of
these pieces: placements, the RNEA passes (bias b and fn(q, q̇, 0)), the CRBA (composite
inertias, then M from them) or, with friction, the composite inertias, the wrench directors
pl_α (seed 004 eq. 2.3.7) and M = S A from them, and the world poses. Prints µs per call (best
of repeated blocks of compiled calls: the minimum is the robust figure on a shared machine).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
from numba import njit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.kernels.dynamics import (composite_inertias, directors_core,
    mass_from_composite, mass_from_directors, placements_kernel, rnea_passes, world_kernel)
from robot_dynamics.kernels.layout import (model_gravity, model_relations, model_views,
    scratch_views, work_views)
from conftest import PANDA, erd_urdf  # noqa: E402

TALOS = "talos_data/robots/talos_reduced.urdf"
PARTS = ("placements", "rnea_passes", "composite_inertias", "mass_from_composite",
         "directors_core", "mass_from_directors", "CRBA (composite + M)",
         "composite + directors + M", "world_kernel")


@njit
def _loop(mb, q, v, w, reps, part):
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    R, p, vel, acc, f, _, _, X, Ic, oMi, M = work_views(mb, w)
    rel = model_relations(mb)
    gravity = model_gravity(mb)
    D, motion, vecs = scratch_views(mb, w)[1], scratch_views(mb, w)[5], scratch_views(mb, w)[6]
    zero, bias = vecs[22], vecs[17]
    for i in range(n):
        zero[i] = 0.0
    placements_kernel(kinds, axes, R0, p0, q, R, p)
    rnea_passes(parents, I6, S, gravity, v, zero, R, p, vel, acc, f, bias)
    composite_inertias(parents, I6, R, p, X, Ic)
    directors_core(parents, S, R, p, X, Ic, D, motion, rel)
    s = 0.0
    for _ in range(reps):
        if part == 0:
            placements_kernel(kinds, axes, R0, p0, q, R, p)
        elif part == 1:
            rnea_passes(parents, I6, S, gravity, v, zero, R, p, vel, acc, f, bias)
        elif part == 2:
            composite_inertias(parents, I6, R, p, X, Ic)
        elif part == 3:
            mass_from_composite(parents, S, X, Ic, M)
        elif part == 4:
            directors_core(parents, S, R, p, X, Ic, D, motion, rel)
        elif part == 5:
            mass_from_directors(S, D, rel, M)
        elif part == 6:
            composite_inertias(parents, I6, R, p, X, Ic)
            mass_from_composite(parents, S, X, Ic, M)
        elif part == 7:
            composite_inertias(parents, I6, R, p, X, Ic)
            directors_core(parents, S, R, p, X, Ic, D, motion, rel)
            mass_from_directors(S, D, rel, M)
        else:
            world_kernel(parents, R, p, oMi)
        s += M[0, 0] + D[0, 0, 0] + Ic[0, 0, 0] + bias[0] + oMi[0, 0, 3]
    return s


def main() -> None:
    reps, blocks = 4000, 15
    for label, urdf in (("panda", PANDA), ("talos_reduced", TALOS)):
        model = rd.load_urdf(erd_urdf(urdf))
        data = model.create_data()
        rng = np.random.default_rng(3)
        q, v = rng.uniform(-2, 2, model.nv), rng.normal(size=model.nv)
        print(f"{label} ({model.nv} dof), µs per call:")
        for part, name in enumerate(PARTS):
            _loop(model._mb, q, v, data._work, 10, part)
            best = np.inf
            for _ in range(blocks):
                t0 = time.perf_counter()
                _loop(model._mb, q, v, data._work, reps, part)
                best = min(best, (time.perf_counter() - t0) / reps * 1e6)
            print(f"  {name:28s} {best:7.3f}")


if __name__ == "__main__":
    main()
