"""Where a rollout-step's time goes (issue 35): the step kernel itself against what is around it.

    PYTHONPATH=. python3 bench/profile_rollouts.py [--rollouts 64] [--steps 1500] [--blocks 5]

On the task of ``bench_rollouts.py`` (arm7, load-dependent friction, computed torque; and open
loop, the same efforts replayed), one worker, per rollout-step [µs] of CPU time (``--clock
wall``: wall time), median over ``--blocks`` blocks (the variants of a block run back to
back, so a slow spell hits them alike):

* ``_step`` alone: an njit loop of :func:`robot_dynamics.kernels.fd._step` with the efforts of a
  recorded run (the applied ones: re-saturating them changes nothing), the state carried in two
  vectors — the kernel itself;
* ``+ controller``: the same loop with :func:`.rollout.controller_kernel` before each step (the
  closed loop's law);
* ``sim_run_entry``: the rollout's compiled call as ``Simulator.run`` makes it (controller, step,
  the output rows);
* ``Simulator.run``: the call with its Python around it (packing the controller, the rows'
  copies);
* ``run_one``: the whole rollout (spec check, payload, the scaled friction model, the
  worker's Simulator renewed, reset, controller, run, summary);
* ``run_rollouts``: the batch (workers=1, trajectories=False).

Then the Python set-up of one rollout piece by piece [µs per rollout and per rollout-step].
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from numba import njit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from bench_rollouts import study  # noqa: E402
from robot_dynamics.kernels.fd import Q_NEW, V_NEW, _step  # noqa: E402
from robot_dynamics.kernels.layout import scratch_views, work_views  # noqa: E402
from robot_dynamics.kernels.rollout import controller_kernel, sim_run_entry  # noqa: E402
from robot_dynamics.kernels.friction import ID_OUT  # noqa: E402
from robot_dynamics.simulation import rollouts as ro  # noqa: E402
from robot_dynamics.simulation.simulator import Simulator  # noqa: E402

clock = time.process_time  # --clock wall: time.perf_counter


@njit(cache=True)
def steps_only(mb, fr, sp, q0, v0, U, w):
    """_step N times with the efforts U[k], the state carried in q, v."""
    q, v = q0.copy(), v0.copy()
    vecs = scratch_views(mb, w)[6]
    f = work_views(mb, w)[4]
    for k in range(U.shape[0]):
        if _step(mb, fr, sp, q, v, U[k], w, mb, sp[:0], w, f[:0]) & 3:
            return k
        for i in range(q.shape[0]):
            q[i] = vecs[Q_NEW, i]
            v[i] = vecs[V_NEW, i]
    return U.shape[0]


@njit(cache=True)
def controller_and_steps(mb, fr, sp, ctl, q0, v0, N, w):
    """controller_kernel, then _step, N times (no output rows)."""
    q, v = q0.copy(), v0.copy()
    vecs = scratch_views(mb, w)[6]
    u = vecs[ID_OUT]
    f = work_views(mb, w)[4]
    for k in range(N):
        controller_kernel(mb, ctl, k, q, v, w, u)
        if _step(mb, fr, sp, q, v, u, w, mb, sp[:0], w, f[:0]) & 3:
            return k
        for i in range(q.shape[0]):
            q[i] = vecs[Q_NEW, i]
            v[i] = vecs[V_NEW, i]
    return N


@njit(cache=True)
def controller_only(mb, ctl, Q, V, w):
    """controller_kernel at the recorded states (row k − 1's state at step k)."""
    n = Q.shape[1]
    u = scratch_views(mb, w)[6][ID_OUT]
    s = 0.0
    for k in range(1, Q.shape[0]):
        controller_kernel(mb, ctl, k, Q[k - 1], V[k - 1], w, u)
        for i in range(n):
            s += u[i]
    return s


def sim_for(plant, spec):
    """run_one's set-up (the payload stays on until ``done`` is called)."""
    ctx = ro._context(plant)
    model = ctx.model
    link = spec.payload_link or model.link_names[-1]
    if spec.payload_mass > 0:
        model.set_payload(link, float(spec.payload_mass), spec.payload_com)
    sim = Simulator(model, ctx.friction(float(spec.friction_scale)), plant.dt,
                    saturate=plant.saturate, limits=plant.limits)
    sim.reset(spec.q0, spec.v0)
    ctl = ro.build_controller(spec, ctx.nominal)

    def done():
        if spec.payload_mass > 0:
            model.set_payload(link, None)
    return sim, ctl, done


def kernel_block(plant, specs, recorded):
    """One block: seconds of each variant over every spec."""
    t = dict.fromkeys(("_step alone", "+ controller", "controller alone", "sim_run_entry",
                       "Simulator.run", "run_one", "run_rollouts"), 0.0)
    for spec, rec in zip(specs, recorded):
        sim, ctl, done = sim_for(plant, spec)
        try:
            q0, v0 = np.array(sim.q), np.array(sim.v)
            packed = ctl.pack(sim.model)
            N = int(spec.steps)
            U = np.ascontiguousarray(rec["tau"])
            t0 = clock()
            steps_only(sim._mb, sim._fr, sim._sp, q0, v0, U, sim._work)
            t1 = clock()
            sim.reset(spec.q0, spec.v0)
            controller_and_steps(sim._mb, sim._fr, sim._sp, packed, q0, v0, N, sim._work)
            t2 = clock()
            controller_only(sim._mb, packed, np.ascontiguousarray(rec["q"]),
                            np.ascontiguousarray(rec["v"]), sim._work)
            t3 = clock()
            sim.reset(spec.q0, spec.v0)
            rows = np.empty((N, 5, sim.model.nv))
            t4 = clock()
            sim_run_entry(sim._mb, sim._fr, sim._sp, packed, q0, v0, 0, sim._work, rows)
            t5 = clock()
            sim.reset(spec.q0, spec.v0)
            t6 = clock()
            sim.run(steps=N, controller=ctl)
            t7 = clock()
        finally:
            done()
        t["_step alone"] += t1 - t0
        t["+ controller"] += t2 - t1
        t["controller alone"] += t3 - t2
        t["sim_run_entry"] += t5 - t4
        t["Simulator.run"] += t7 - t6
    t0 = clock()
    for spec in specs:
        ro.run_one(plant, spec, False)
    t["run_one"] = clock() - t0
    t0 = clock()
    ro.run_rollouts(plant, specs, workers=1, trajectories=False)
    t["run_rollouts"] = clock() - t0
    return t


def setup_block(plant, specs):
    """One block: seconds of each piece of run_chunk's Python around the compiled call, as
    run_chunk does it (a payload replaced from one rollout to the next when it changes,
    removed at the end; the worker's Simulator renewed with the rollout's friction; the
    controller's array packed once per chunk and rewritten)."""
    ctx = ro._context(plant)
    model = ctx.model
    t = dict.fromkeys(("spec.check", "set payload", "friction model (scaled)",
                       "Simulator renewed", "reset", "controller (packed)",
                       "run: rows etc.", "summarize (audit)"), 0.0)
    ctx._friction.clear()  # each rollout's scale is new, as in a batch
    ctx.end()  # (as a new chunk)
    loaded = payload = None
    for spec in specs:
        c = [clock()]
        spec.check()
        c.append(clock())
        link = (spec.payload_link or model.link_names[-1]) if spec.payload_mass > 0 else None
        if loaded is not None and link != loaded:
            model.set_payload(loaded, None)
            loaded = payload = None
        key = ro._payload_key(spec)
        if link is not None and (key is None or key != payload):
            model.set_payload(link, float(spec.payload_mass), spec.payload_com)
            loaded, payload = link, key
        c.append(clock())
        fr = ctx.friction(float(spec.friction_scale))
        c.append(clock())
        sim = ctx.sim
        if sim is None or not sim._renew(fr):
            sim = Simulator(model, fr, plant.dt, saturate=plant.saturate, limits=plant.limits)
            ctx.sim = sim
        c.append(clock())
        sim.reset(spec.q0, spec.v0)
        c.append(clock())
        ctl = ro._packed_controller(ctx, spec)
        packed = ctl.pack(model)
        c.append(clock())
        rows = np.empty((int(spec.steps), 5, model.nv))
        k0 = clock()
        sim_run_entry(sim._mb, sim._fr, sim._sp, packed, np.array(sim.q), np.array(sim.v), 0,
                      sim._work, rows)
        k1 = clock()
        sim.reset(spec.q0, spec.v0)
        r0 = clock()
        rows, _ = sim._run_rows(int(spec.steps), ctl)
        r1 = clock()
        c.append(c[-1] + (r1 - r0) - (k1 - k0))  # run without its compiled call
        s0 = clock()
        ro.summarize(spec, {"q": rows[:, 0]}, sim)
        c.append(c[-1] + clock() - s0)
        for key, a, b in zip(t, c[:-1], c[1:]):
            t[key] += b - a
    p0 = clock()
    if loaded is not None:
        model.set_payload(loaded, None)
    t["set payload"] += clock() - p0
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollouts", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="this process's CPU time (default: steadier on a shared machine) or "
                         "wall time")
    a = ap.parse_args()
    global clock
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    s = study(a.rollouts, a.steps)
    plant, specs = s.plant, s.specs
    total = a.rollouts * a.steps
    print(f"arm7, {a.rollouts} rollouts × {a.steps} steps, {a.clock} time; load average "
          f"{os.getloadavg()}")
    recorded = ro.run_rollouts(plant, specs, workers=1)[0]
    open_specs = [ro.RolloutSpec(q0=sp.q0, q_ref=None, steps=sp.steps, controller="open_loop",
                                 tau=rec["tau"], friction_scale=sp.friction_scale,
                                 payload_mass=sp.payload_mass, payload_com=sp.payload_com)
                  for sp, rec in zip(specs, recorded)]
    for name, batch in (("computed torque", specs), ("open loop", open_specs)):
        kernel_block(plant, batch[:2], recorded[:2])  # warm
        blocks = [kernel_block(plant, batch, recorded) for _ in range(a.blocks)]
        print(f"\n{name}: µs per rollout-step, median of {a.blocks} blocks")
        for key in blocks[0]:
            print(f"  {key:18s} {1e6 * statistics.median(b[key] for b in blocks) / total:7.3f}")
        around = statistics.median(b["run_rollouts"] - b["sim_run_entry"] for b in blocks)
        print(f"  around the compiled call (run_rollouts − sim_run_entry): "
              f"{1e6 * around / total:.3f} µs per rollout-step, {1e6 * around / a.rollouts:.0f} "
              "µs per rollout")
        blocks = [setup_block(plant, batch) for _ in range(a.blocks)]
        print("  Python around the compiled call, per rollout [µs] (per rollout-step):")
        for key in blocks[0]:
            m = statistics.median(b[key] for b in blocks)
            print(f"    {key:24s} {1e6 * m / a.rollouts:9.1f}  ({1e6 * m / total:.4f})")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
