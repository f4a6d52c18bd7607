"""Simulation step against MuJoCo's ``mj_step`` by motion class (issue 35: "step ≤ MuJoCo's in
every motion class"), on panda and ur5, our classic and load-dependent laws against MuJoCo's
``frictionloss``.

    python3 bench/bench_motion_classes.py                  # the table
    python3 bench/bench_motion_classes.py --repeats 21 --blocks 5
    python3 bench/bench_motion_classes.py --profile        # where a step's time goes

The arms and MuJoCo's models are :mod:`bench_mujoco`'s (same URDF, contacts off, 1 ms,
frictionloss = the classic law's Coulomb level, damping = its viscous coefficient + the URDF
damping; limits on in both). Each class is a start state (q₀, q̇₀) and an effort:

* **moving** — every joint at ~0.5 rad/s (prismatic joints at a quarter of their range per
  0.1 s), alternating signs, from the mid-range pose; the effort is our inverse dynamics at
  q̈ = 0 with the law (friction and URDF damping fed forward) plus a velocity feedback
  ``kd (q̇₀ − q̇)`` that holds the speeds (computed outside the timing, as the PD's);
* **rest** — q̇ = 0, the effort g(q₀) ± half the Coulomb level (inside the friction bound:
  every joint stays stuck in ours; MuJoCo's soft friction creeps);
* **falling** — q̇ = 0, zero effort: joints whose gravity load exceeds their friction fall;
* **stop** — every joint on its lower stop, pushed into it (g(q₀) − 2 N·m or N);
* **mixed** — even joints at rest with an effort inside their bound (stuck), odd joints at
  ~0.5 rad/s with the effort that keeps them sliding (the same velocity feedback: zero on a
  joint that stays stuck);
* **pd** — :mod:`bench_mujoco`'s PD tracking of a sinusoidal reference (the controller outside
  the timing).

Every 100-step block restarts from the class's state (``Simulator.reset`` / ``mj_resetData``
+ the state: not timed); only the step call is timed (``perf_counter_ns`` around it — MuJoCo's
includes writing the effort into ``qfrc_applied``, as in bench_mujoco: a full-slice write where
the joint orders agree). A round times
``--blocks`` blocks of each column (ours with each law, MuJoCo's), interleaved, over all classes
and robots; ``--repeats`` rounds (a slow spell of the machine hits both sides of a ratio). Per
step index, the median over blocks (every block is the same computation: a preempted step
drops out), averaged over the block: the times over all rounds, and each round's ratio — the
table gives the median and interquartile range of those per-round ratios.
The last columns say what the class did at the end of a block: ours — joints stuck (q̇ = 0),
held on a stop, sliding; MuJoCo — joints with |q̇| < 1e-3 and with an active limit.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import mujoco  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.kernels.dynamics import crba_entry, rnea_entry  # noqa: E402
from robot_dynamics.kernels.fd import sim_step_entry  # noqa: E402
from bench_mujoco import (COULOMB, H, LOAD_DEPENDENT, VISCOUS, Rollout, effort_index,  # noqa: E402
                          mid_pose, mujoco_model)
from conftest import PANDA, UR5, erd_urdf  # noqa: E402

BLOCK = 100  # steps per block, each restarted from the class's state
CLASSES = ("moving", "rest", "falling", "stop", "mixed", "pd")
LAWS = ("classic", "load_dependent")


def speeds(model):
    """~0.5 rad/s on every joint, alternating signs; at most a quarter of a finite range per
    block (the fingers' 4 cm)."""
    rng = np.asarray(model.upper_limits, float) - np.asarray(model.lower_limits, float)
    s = np.minimum(0.5, np.where(np.isfinite(rng), 0.25 * rng / (BLOCK * H), 0.5))
    return s * np.where(np.arange(model.nv) % 2 == 0, 1.0, -1.0)


def feed_forward(model, data, q, v, fr):
    """The effort that keeps (q, v) at q̈ = 0: inverse dynamics with the law + URDF damping."""
    return rd.inverse_dynamics(model, data, q, v, np.zeros(model.nv), fr) + \
        np.asarray(model.damping) * v


class Case:
    """A class on a robot: the start state and, per law, the effort: ``tau[law]`` (nv,)
    constant over the block, or ``ctl[law]`` a controller ``(k, q, q̇) → τ`` (moving, mixed:
    the feed-forward plus velocity feedback; pd: the PD), else None."""

    def __init__(self, kind, model, frictions):
        n = model.nv
        data = model.create_data()
        q0, _ = mid_pose(model)
        v0 = np.zeros(n)
        sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        self.kind, self.ro = kind, None
        tau, ctl = {}, {}
        kd = 10.0 * np.maximum(np.diag(rd.mass_matrix(model, data, q0)), 1e-3)
        for law, fr in frictions.items():
            if kind == "moving":
                v0 = speeds(model)
                tau[law] = feed_forward(model, data, q0, v0, fr)
            elif kind == "rest":
                tau[law] = rd.gravity_torques(model, data, q0) + 0.5 * COULOMB * sign
            elif kind == "falling":
                tau[law] = np.zeros(n)
            elif kind == "stop":
                q0 = np.where(np.isfinite(model.lower_limits), model.lower_limits, q0)
                tau[law] = rd.gravity_torques(model, data, q0) - 2.0
            elif kind == "mixed":
                v0 = np.where(np.arange(n) % 2 == 1, speeds(model), 0.0)
                tau[law] = feed_forward(model, data, q0, v0, fr)
                rest = v0 == 0.0
                tau[law][rest] = (rd.gravity_torques(model, data, q0)[rest]
                                  + 0.5 * COULOMB * sign[rest])
            elif kind == "pd":
                self.ro = Rollout(model, BLOCK)
                q0 = self.ro.q0
                tau[law] = None
                ctl[law] = self.ro.tau
            if kind in ("moving", "mixed"):
                ctl[law] = (lambda k, q, v, u=tau[law], v0=v0: u + kd * (v0 - v))
            ctl.setdefault(law, None)
        self.q0, self.v0, self.tau, self.ctl = q0, v0, tau, ctl


def block_ours(sim, case, law, blocks):
    """The µs of every step of ``blocks`` blocks, (blocks, BLOCK) (restarts not timed)."""
    clock = time.perf_counter_ns
    out = np.empty((blocks, BLOCK))
    tau, ro = case.tau[law], case.ctl[law]
    for b in range(blocks):
        sim.reset(case.q0, case.v0)
        step, row = sim.step, out[b]
        if ro is None:
            for k in range(BLOCK):
                t0 = clock()
                step(tau)
                row[k] = clock() - t0
        else:
            for k in range(BLOCK):
                u = ro(k, sim.q, sim.v)
                t0 = clock()
                step(u)
                row[k] = clock() - t0
    return out / 1e3


def block_mujoco(m, d, dofs, qadr, case, blocks):
    """:func:`block_ours` for ``mj_step`` (the classic law's effort)."""
    clock = time.perf_counter_ns
    out = np.empty((blocks, BLOCK))
    tau, ro = case.tau["classic"], case.ctl["classic"]
    applied, at = d.qfrc_applied, effort_index(dofs)
    mj_step = mujoco.mj_step
    for b in range(blocks):
        mujoco.mj_resetData(m, d)
        d.qpos[qadr] = case.q0
        d.qvel[dofs] = case.v0
        row = out[b]
        if ro is None:
            for k in range(BLOCK):
                t0 = clock()
                applied[at] = tau
                mj_step(m, d)
                row[k] = clock() - t0
        else:
            for k in range(BLOCK):
                u = ro(k, d.qpos[qadr], d.qvel[dofs])
                t0 = clock()
                applied[at] = u
                mj_step(m, d)
                row[k] = clock() - t0
    return out / 1e3


def outcome_ours(sim):
    stuck = int(np.count_nonzero((sim.v == 0.0) & ~sim.at_limit))
    held = int(np.count_nonzero(sim.at_limit))
    return f"{stuck}/{held}/{sim.model.nv - stuck - held}"


def outcome_mujoco(m, d, dofs):
    still = int(np.count_nonzero(np.abs(d.qvel[dofs]) < 1e-3))
    limits = int(np.count_nonzero(d.efc_type == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT))
    return f"{still}/{limits}"


class Robot:
    def __init__(self, label, relpath):
        path = erd_urdf(relpath)
        self.label = label
        self.model = model = rd.load_urdf(path)
        self.frictions = {
            "classic": rd.friction_from_config({"default": {"model": "classic",
                                                            "coulomb": COULOMB,
                                                            "viscous": VISCOUS}}, model),
            "load_dependent": rd.friction_from_config({"default": LOAD_DEPENDENT}, model)}
        self.sims = {law: rd.Simulator(model, fr, dt=H) for law, fr in self.frictions.items()}
        self.m, self.dofs, self.qadr = mujoco_model(path, model, COULOMB, VISCOUS)
        self.d = mujoco.MjData(self.m)
        self.cases = {kind: Case(kind, model, self.frictions) for kind in CLASSES}


def per_step(runs):
    """µs per step of a pile of blocks (m, BLOCK): the mean over the block of each step's
    median over the blocks — every block restarts from the same state, so step k is the same
    computation in each; the median drops the steps a busy machine preempted."""
    return float(np.median(runs, axis=0).mean())


def table(robots, repeats, blocks):
    keys = [(c, r.label) for c in CLASSES for r in robots]
    whos = LAWS + ("mujoco",)
    times = {(c, lab, who): [] for c, lab in keys for who in whos}
    by_label = {r.label: r for r in robots}
    for rep in range(repeats + 1):  # the first round warms up (not recorded)
        for c, lab in keys:
            r = by_label[lab]
            case = r.cases[c]
            out = [(law, block_ours(r.sims[law], case, law, blocks)) for law in LAWS]
            out.append(("mujoco", block_mujoco(r.m, r.d, r.dofs, r.qadr, case, blocks)))
            if rep:
                for who, t in out:
                    times[(c, lab, who)].append(t)
    print(f"\nµs per step over a {BLOCK}-step block restarted from the class's state: the mean "
          f"over the block of each step's median over {repeats} × {blocks} blocks; the three "
          f"columns' blocks interleaved. Ratio = ours / mj_step in each round (its {blocks} "
          f"blocks per column): the median and interquartile range over the {repeats} rounds")
    print(f"{'class':<8} {'robot':<6} {'law':<15} {'ours µs':>8} {'mj_step µs':>10} "
          f"{'ratio':>6}  {'ratio IQR':<12} ours stuck/stop/sliding, mj still/limits")
    rows = []
    for c, lab in keys:
        r = by_label[lab]
        mj_runs = times[(c, lab, "mujoco")]
        mj = per_step(np.concatenate(mj_runs))
        for law in LAWS:
            runs = times[(c, lab, law)]
            ours = per_step(np.concatenate(runs))
            rounds = np.array([per_step(a) / per_step(b) for a, b in zip(runs, mj_runs)])
            q1, q3 = np.percentile(rounds, [25, 75])
            sim = r.sims[law]
            block_ours(sim, r.cases[c], law, 1)  # the end state of one block, for the outcome
            block_mujoco(r.m, r.d, r.dofs, r.qadr, r.cases[c], 1)
            print(f"{c:<8} {lab:<6} {law:<15} {ours:8.2f} {mj:10.2f} {np.median(rounds):6.2f}  "
                  f"{q1:.2f}–{q3:.2f}    {outcome_ours(sim):<10} "
                  f"{outcome_mujoco(r.m, r.d, r.dofs)}")
            rows.append((c, lab, law, ours, mj, np.median(rounds)))
    return rows


def entry_block(sim, case, law):
    """:func:`block_ours` for the compiled entry alone: the state copied out of the work array
    between the timed calls, the controller's effort computed outside them."""
    clock = time.perf_counter_ns
    tau, ctl = case.tau[law], case.ctl[law]
    row = np.empty((1, BLOCK))
    sim.reset(case.q0, case.v0)
    mb, fr, sp, w = sim._mb, sim._fr, sim._sp, sim._work
    qn, vn = sim._q_new, sim._v_new
    q, v = sim.q, sim.v
    for k in range(BLOCK):
        u = tau if ctl is None else ctl(k, q, v)
        t0 = clock()
        sim_step_entry(mb, fr, sp, q, v, u, w)
        row[0, k] = clock() - t0
        q, v = qn.copy(), vn.copy()
    return row / 1e3


def parts(r, repeats):
    """The compiled pieces of a step on robot ``r`` at the moving class's start state, beside
    mj_step alone (from that state under its feed-forward, 300 steps), interleaved: µs per
    call (medians over ``repeats`` rounds of 300 calls)."""
    m, case = r.model, r.cases["moving"]
    w = m.create_data()._work
    q, v, a = case.q0.copy(), case.v0.copy(), np.zeros(m.nv)
    calls = {"placements + RNEA (rnea_entry)": lambda: rnea_entry(m._mb, q, v, a, w),
             "placements + CRBA (crba_entry)": lambda: crba_entry(m._mb, q, w),
             "mj_step alone": lambda: mujoco.mj_step(r.m, r.d)}
    times = {k: [] for k in calls}
    clock = time.perf_counter_ns
    for _ in range(repeats):
        mujoco.mj_resetData(r.m, r.d)  # from the class's state, under its feed-forward
        r.d.qpos[r.qadr], r.d.qvel[r.dofs] = q, v
        r.d.qfrc_applied[r.dofs] = case.tau["classic"]
        for k, fn in calls.items():
            t0 = clock()
            for _ in range(300):
                fn()
            times[k].append((clock() - t0) / 300 / 1e3)
    return {k: float(np.median(t)) for k, t in times.items()}


def profile(robots, repeats):
    """Per class, robot and law: ``Simulator.step`` against its compiled entry alone
    on the same trajectory (each call's state copied out of the work array between the timed
    calls), as :func:`per_step` over ``repeats`` × 3 blocks of each, alternating; the bare costs
    of a numba call of seven array arguments and of copying a joint vector, of MuJoCo's effort
    write, and the compiled pieces of a step (:func:`parts`)."""
    from numba import njit

    @njit(cache=False)
    def empty(a, b, c, d, e, f, g):
        return 0

    x = np.zeros(9)
    empty(x, x, x, x, x, x, x)
    clock = time.perf_counter_ns
    bare, copy = [], []
    for _ in range(21):
        t0 = clock()
        for _ in range(1000):
            empty(x, x, x, x, x, x, x)
        t1 = clock()
        for _ in range(1000):
            x.copy()
        t2 = clock()
        bare.append((t1 - t0) / 1e6)
        copy.append((t2 - t1) / 1e6)
    print(f"\nbare numba call of 7 array arguments {np.median(bare):.2f} µs, a vector's copy "
          f"{np.median(copy):.2f} µs (medians of 21 × 1000 calls)")
    for r in robots:  # what the mj_step column holds beside mj_step itself
        applied, tau = r.d.qfrc_applied, np.zeros(r.model.nv)
        write = {}
        for name, at in (("[dofs]", r.dofs), ("[effort_index(dofs)]", effort_index(r.dofs))):
            ts = []
            for _ in range(21):
                t0 = clock()
                for _ in range(1000):
                    applied[at] = tau
                ts.append((clock() - t0) / 1e6)
            write[name] = np.median(ts)
        print(f"{r.label}: MuJoCo's effort write, qfrc_applied" + ", ".join(
            f"{k} = τ {t:.2f} µs" for k, t in write.items()))
        print(f"{r.label}, moving class's start state: " + ", ".join(
            f"{k} {t:.2f} µs" for k, t in parts(r, repeats).items()))
    print(f"{'class':<8} {'robot':<6} {'law':<15} {'step µs':>8} {'entry µs':>9} "
          f"{'Python µs':>9}")
    for r in robots:
        for c in CLASSES:
            for law in LAWS:
                sim, case = r.sims[law], r.cases[c]
                a, b = [], []
                for _ in range(repeats):
                    for _ in range(3):  # a block of each, alternating
                        a.append(block_ours(sim, case, law, 1))
                        b.append(entry_block(sim, case, law))
                a, b = per_step(np.concatenate(a)), per_step(np.concatenate(b))
                print(f"{c:<8} {r.label:<6} {law:<15} {a:8.2f} {b:9.2f} {a - b:9.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--robots", default="panda,ur5")
    args = ap.parse_args()
    print(f"MuJoCo {mujoco.__version__}")
    robots = [Robot(lab, {"panda": PANDA, "ur5": UR5}[lab]) for lab in args.robots.split(",")]
    if args.profile:
        profile(robots, args.repeats)
    else:
        table(robots, args.repeats, args.blocks)
