"""Batched rollouts (issue 35): throughput of ``run_rollouts`` with 1 worker (in this process)
against 2 worker processes, and the cost per rollout-step against ``mujoco.rollout``.

    PYTHONPATH=. python3 bench/bench_rollouts.py [--rollouts 64] [--steps 1500] [--blocks 5]

**Workers.** arm7 with its bundled load-dependent friction tracks a minimum-jerk move with the
friction-compensating computed-torque controller (the ``robot-dynamics sweep`` task), each
rollout a different friction scale, payload and initial state. One block runs every rollout once
with ``workers=1`` and once with ``workers=2`` (two threads of this process, the compiled
rollouts releasing the GIL; ``--start-method fork``: this process and a forked worker, a fresh
one each time, its start-up counted), the two timed back to back; the ratio is taken per block, median over
blocks (a slow spell of the shared machine hits both sides of a ratio alike). The load average
is printed: with other jobs on the two cores, the second worker only gets what they leave; so
are the CPU seconds of each side (this process and its workers, ``getrusage``), whose ratio
bounds the speed-up two free cores would give.

**MuJoCo.** The same URDF in MuJoCo (``bench_mujoco.mujoco_model``: visuals and collisions
stripped, contacts off, 1 ms, joint ``frictionloss`` = the bundled friction's Coulomb levels,
``damping`` = viscous + URDF damping), ``mujoco.rollout.rollout`` over the same number of
rollouts and steps, open loop (``mjSTATE_QFRC_APPLIED``), one thread and two (``data`` a list
of two MjData); its controls are, per rollout, the efforts its computed torque applies on the
nominal plant (each arm's own: replayed open loop, they drive it along its move — rollout 0's
efforts from every initial state, as before, let the arms fall onto their stops and stick in
ours, another motion class). MuJoCo's friction loss is a soft constraint. Against it, ours on
MuJoCo's task: the same controls open loop (``RolloutSpec(controller="open_loop", tau=…)``),
with the bundled load-dependent law and with the classic law of MuJoCo's own frictionloss and
damping, on 1 worker and 2 (threads). These six variants run in ``--blocks`` rounds, each round
every variant once, their order rotated from round to round, in this one process; per
rollout-step the median over rounds, and ours/MuJoCo as the median of the per-round ratios (ours
on n workers against MuJoCo on n threads of the same round); wall time, or with ``--clock cpu``
this process's CPU time (both threads' on 2: the cost of each side, which a loaded machine
does not inflate as it does the wall time).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.parsers.resources import robot_path  # noqa: E402
from robot_dynamics.simulation.sweep import make_study  # noqa: E402
from robot_dynamics.simulation.rollouts import run_rollouts  # noqa: E402


def study(rollouts, steps):
    return make_study("arm7", friction_scale=(0.5, 2.0), payload_mass=(0.0, 5.0),
                      perturbation=(0.0, 0.05), samples=rollouts, seed=1,
                      duration=steps * 1e-3)


def _cpu():
    """CPU seconds of this process and of its finished children (getrusage: µs, where
    os.times counts 10 ms ticks)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def bench_workers(s, blocks, start_method=None):
    run_rollouts(s.plant, s.specs[:2], workers=1)  # warm: kernels and the plant loaded
    ratios, one, two, cpu_one, cpu_two = [], [], [], [], []
    for _ in range(blocks):
        c0, t0 = _cpu(), time.perf_counter()
        _, a = run_rollouts(s.plant, s.specs, workers=1, trajectories=False)
        c1, t1 = _cpu(), time.perf_counter()
        _, b = run_rollouts(s.plant, s.specs, workers=2, trajectories=False,
                            start_method=start_method)
        c2, t2 = _cpu(), time.perf_counter()
        assert repr(a) == repr(b)  # same numbers (NaN of failed rollouts too), any workers
        one.append(t1 - t0)
        two.append(t2 - t1)
        cpu_one.append(c1[0] - c0[0])
        cpu_two.append(c2[0] - c1[0] + c2[1] - c1[1])  # the parent's and the workers'
        ratios.append((t1 - t0) / (t2 - t1))
    return one, two, ratios, cpu_one, cpu_two


def bench_mujoco(s, blocks, clock=time.perf_counter):
    import mujoco
    from mujoco import rollout

    from bench_mujoco import mujoco_model

    model = rd.load_urdf(robot_path("arm7"))
    fr = rd.friction_from_config(s.plant.friction, model)
    coulomb = np.array([law.coulomb for law in fr.laws])
    viscous = np.array([law.viscous for law in fr.laws])
    m, dofs, qadr = mujoco_model(robot_path("arm7"), model, coulomb, viscous)
    # the controls: per rollout, the efforts its computed torque applies on the nominal plant
    # (no friction scale, no payload) — replayed open loop, they drive each arm along its move
    nominal = [dataclasses.replace(sp, friction_scale=1.0, payload_mass=0.0) for sp in s.specs]
    taus = np.array([out["tau"] for out in run_rollouts(s.plant, nominal, workers=1)[0]])
    n, N = len(s.specs), s.specs[0].steps
    control = np.zeros((n, N, m.nv))
    control[:, :, dofs] = taus
    spec_bits = mujoco.mjtState.mjSTATE_QFRC_APPLIED.value
    d0 = mujoco.MjData(m)
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS.value
    x0 = np.zeros((n, mujoco.mj_stateSize(m, full)))
    for i, sp in enumerate(s.specs):
        d0.qpos[qadr] = sp.q0
        d0.qvel[:] = 0.0
        mujoco.mj_getState(m, d0, x0[i], full)
    # the variants, timed in rounds (each round runs every variant once, their order rotated
    # from one round to the next: a slow spell of the shared machine hits them alike)
    one, two = mujoco.MjData(m), [mujoco.MjData(m) for _ in range(2)]
    variants = {
        "mujoco 1": lambda: rollout.rollout(m, one, x0, control, control_spec=spec_bits),
        "mujoco 2": lambda: rollout.rollout(m, two, x0, control, control_spec=spec_bits)}
    for (law, workers), (plant, specs) in open_loop_tasks(s, taus, coulomb, viscous).items():
        variants[f"{law} {workers}"] = (lambda plant=plant, specs=specs, workers=workers:
                                        run_rollouts(plant, specs, workers=workers,
                                                     trajectories=False))
    for f in variants.values():
        f()  # warm
    times = {key: [] for key in variants}
    keys = list(variants)
    for r in range(blocks):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            t0 = clock()
            variants[key]()
            times[key].append((clock() - t0) / (n * N))
    return times


def open_loop_tasks(s, taus, coulomb, viscous):
    """Ours on MuJoCo's task: the same open-loop efforts from the same initial states
    (``controller="open_loop"``), with the bundled load-dependent law and with the classic law
    MuJoCo's frictionloss/damping state (its Coulomb levels and viscous coefficients), on 1
    worker and 2 (threads): (law, workers) → (plant, specs)."""
    from robot_dynamics.simulation.rollouts import Plant, RolloutSpec

    classic = {"default": {"model": "classic", "coulomb": 0.0, "viscous": 0.0},
               "joints": {f"joint_a{i + 1}": {"model": "classic", "coulomb": float(c),
                                              "viscous": float(v)}
                          for i, (c, v) in enumerate(zip(coulomb, viscous))}}
    N = s.specs[0].steps
    specs = [RolloutSpec(q0=sp.q0, q_ref=None, steps=N, controller="open_loop", tau=tau)
             for sp, tau in zip(s.specs, taus)]
    return {(law, workers): (Plant("arm7", friction, 1e-3), specs)
            for law, friction in (("load_dependent", s.plant.friction), ("classic", classic))
            for workers in (1, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollouts", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--no-mujoco", action="store_true")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="MuJoCo against ours: wall time (default) or this process's CPU time "
                         "(its threads' sum: on a loaded machine, what each side costs)")
    ap.add_argument("--start-method", default=None, choices=("fork", "spawn", "forkserver"),
                    help="2 workers as processes (default: threads)")
    a = ap.parse_args()
    s = study(a.rollouts, a.steps)
    total = a.rollouts * a.steps
    print(f"arm7, load-dependent friction, computed torque: {a.rollouts} rollouts × "
          f"{a.steps} steps; load average before: {os.getloadavg()}")
    one, two, ratios, cpu_one, cpu_two = bench_workers(s, a.blocks, a.start_method)
    print(f"workers=1: {statistics.median(one):.3f} s ({total / statistics.median(one):.4g} "
          f"steps/s, {1e6 * statistics.median(one) / total:.2f} µs per rollout-step)")
    print(f"workers=2: {statistics.median(two):.3f} s ({total / statistics.median(two):.4g} "
          f"steps/s, {1e6 * statistics.median(two) / total:.2f} µs per rollout-step)")
    print(f"speed-up 2 vs 1 worker: median {statistics.median(ratios):.2f} "
          f"(blocks: {', '.join(f'{r:.2f}' for r in ratios)})")
    c1, c2 = statistics.median(cpu_one), statistics.median(cpu_two)
    print(f"CPU seconds: 1 worker {c1:.3f}, 2 workers {c2:.3f} (threads, or parent + workers: "
          f"pool start, pickling; the same rollouts); on two free cores the speed-up would be "
          f"at most "
          f"2·{c1:.3f}/{c2:.3f} = {2 * c1 / c2:.2f}")
    if not a.no_mujoco:
        times = bench_mujoco(s, a.blocks, time.process_time if a.clock == "cpu"
                             else time.perf_counter)
        med = {key: statistics.median(t) for key, t in times.items()}
        print(f"mujoco.rollout (open loop, frictionloss), {a.clock} time, median of {a.blocks} "
              "rounds: "
              f"{1e6 * med['mujoco 1']:.2f} µs per rollout-step on 1 thread, "
              f"{1e6 * med['mujoco 2']:.2f} on 2")
        for key in times:
            if key.startswith("mujoco"):
                continue
            law, workers = key.split()
            ratios = [t / m for t, m in zip(times[key], times[f"mujoco {workers}"])]
            print(f"ours on the same task (open loop, the same efforts), {law} law, {workers} "
                  f"worker{'s' if workers != '1' else ''}: {1e6 * med[key]:.2f} µs per "
                  f"rollout-step; ours/MuJoCo median of per-round ratios "
                  f"{statistics.median(ratios):.2f} (rounds: "
                  f"{', '.join(f'{x:.2f}' for x in ratios)})")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
