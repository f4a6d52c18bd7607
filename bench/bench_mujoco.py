"""Simulation step against MuJoCo, friction-aware forward dynamics against ``pin.aba``: ratios
measured in one process, the timed blocks of the compared calls interleaved (robust on a loaded
machine: a slow spell hits both sides of a ratio alike).

    python3 bench/bench_mujoco.py                 # panda, ur5 steps + creep; panda, talos FD
    python3 bench/bench_mujoco.py --steps-only    # or --fd-only, --blocks N

**Steps.** The same URDF (example-robot-data) in both simulators: MuJoCo loads it with visuals
and collisions stripped, contacts disabled, 1 ms step, its default (semi-implicit Euler, implicit
damping) integrator; joint ``frictionloss`` = our classic law's Coulomb level and ``damping`` =
its viscous coefficient plus the URDF damping (which our simulator applies too). Both arms track
the same sinusoidal reference with the same PD + constant gravity feed-forward (joints reverse,
stick and slip); only the step call is timed (``perf_counter_ns`` around it; the controller is
outside), mean per step over a block, median over blocks. MuJoCo's step includes writing the
effort into ``qfrc_applied`` (a full-slice write where the joint orders agree: ``effort_index``);
ours takes it as the argument. By motion class (moving, at rest, falling, on a stop, mixed):
``bench_motion_classes.py``.

``run`` is :meth:`Simulator.run` with the compiled PD controller (``rd.PD``): the whole rollout
in one compiled call, per step.

``(mimic)``: the arm loaded with ``mimic=True`` (Panda: the second finger follows the first,
8 coordinates; its friction on the leaders only), the compiled step in mimic coordinates;
MuJoCo's URDF import keeps the fingers independent (its 9 dof).

**Creep.** Every joint's Coulomb friction above the largest gravity effort at a pose, zero motor
effort, 2 s from rest: the largest joint drift. MuJoCo's friction is a soft constraint: it creeps.

**FD.** ``forward_dynamics`` with a load-dependent law vs ``pin.aba`` over 200 random states of
each class: *sliding* (every joint moving), *stuck* (v = 0 on half the joints, efforts within
their stiction bound: they stay stuck), *mixed* (v = 0 on half, random efforts: some stick, some
break away). Our call includes its argument checks and report; the stuck/breaking counts of the
classes are printed. Issue 35's mixed-class work (one-pass screens of each new stick/slip
assignment, chord steps on to tol, a screen's sticks and releases together, bounds on values),
old and new code alternately at load 1.5, ``--blocks 9``, two runs each: panda sliding
2.34–2.48 → 2.33–2.44, stuck 2.12–2.14 → 2.05–2.11, mixed 3.13–3.17 → 2.94–2.96 (5.8 → 5.2
iterations); talos_reduced 1.95–1.97 → 1.92, 1.68 → 1.75–1.76, 3.37–3.46 → 2.90–3.12 (8.0 →
6.1). Session 25 predicts the first stick/slip assignment (kernels/articulated.py
``predict_release``, whose plain step is the solve's first iterate): 3.1 iterations on talos,
2.45 on panda (mixed). The ratios of one run move
by ±0.1–0.2 with the load: compare runs made alternately.
"""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test"))

import mujoco  # noqa: E402
import pinocchio as pin  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from conftest import PANDA, UR5, PinMap, erd_urdf, fd_states  # noqa: E402

TALOS = "talos_data/robots/talos_reduced.urdf"
COULOMB, VISCOUS = 0.5, 0.1  # classic law (N·m or N, N·m·s/rad or N·s/m)
LOAD_DEPENDENT = {"model": "load_dependent", "coulomb": COULOMB, "viscous": VISCOUS, "k1": 0.01,
                  "k2": 0.002, "k3": 0.001}
H = 1e-3


def mujoco_model(path, model, coulomb, viscous):
    """The URDF in MuJoCo: no visuals/collisions, contacts off, 1 ms; joint frictionloss and
    damping set per joint (our joint order: ``dofs`` maps ours → MuJoCo's dof index)."""
    xml = open(path).read()
    xml = re.sub(r"<(visual|collision)\b.*?</\1>", "", xml, flags=re.S)
    xml = re.sub(r"<mimic\b[^>]*/>", "", xml)  # independent joints, as our model without mimic
    xml = re.sub(r"<robot([^>]*)>", r'<robot\1><mujoco><compiler discardvisual="true" '
                 r'fusestatic="false" balanceinertia="false"/></mujoco>', xml, count=1)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = H
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    dofs = np.array([m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]
                     for name in model.joint_names])
    qadr = np.array([m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]
                     for name in model.joint_names])
    assert m.nv == model.nv, (m.nv, model.nv)
    m.dof_frictionloss[dofs] = coulomb
    m.dof_damping[dofs] = viscous + np.asarray(model.damping)
    m.dof_armature[:] = 0.0
    return m, dofs, qadr


def mid_pose(model):
    """A pose inside the limits away from the aligned-axes singularity of the mid-range pose,
    and the half ranges."""
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -1.0)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, 1.0)
    half = 0.5 * (hi - lo)
    return 0.5 * (lo + hi) + 0.3 * half * np.cos(np.arange(model.nv)), half


class Rollout:
    """The common reference and PD of the step benchmark."""

    def __init__(self, model, steps):
        self.q0, half = mid_pose(model)
        t = H * np.arange(1, steps + 1)[:, None]
        amp = 0.2 * np.minimum(half, 1.0)
        freq = 0.5 + 0.1 * np.arange(model.nv)
        self.qd = self.q0 + amp * np.sin(2 * np.pi * freq * t)
        self.vd = amp * 2 * np.pi * freq * np.cos(2 * np.pi * freq * t)
        scale = np.maximum(np.diag(rd.mass_matrix(model, model.create_data(), self.q0)), 1e-3)
        self.kp, self.kd = 100.0 * scale, 10.0 * scale
        self.g0 = rd.gravity_torques(model, model.create_data(), self.q0)

    def tau(self, k, q, v):
        return self.g0 + self.kp * (self.qd[k] - q) + self.kd * (self.vd[k] - v)


def time_ours(sim, ro, steps):
    sim.reset(ro.q0)
    total = 0
    clock = time.perf_counter_ns
    for k in range(steps):
        tau = ro.tau(k, sim.q, sim.v)
        t0 = clock()
        sim.step(tau)
        total += clock() - t0
    return total / steps / 1e3


def time_run(sim, ro, steps):
    sim.reset(ro.q0)
    pd = rd.PD(ro.kp, ro.kd, ro.qd, ro.vd, feedforward=ro.g0)
    t0 = time.perf_counter_ns()
    sim.run(controller=pd, steps=steps)
    return (time.perf_counter_ns() - t0) / steps / 1e3


def effort_index(dofs):
    """How the timed effort write indexes ``qfrc_applied``: a full slice when our joint order is
    MuJoCo's (the cheapest write: ~0.2 µs, where indexing by an index array took ~1 µs of a
    ~6 µs mj_step on panda), else the index array."""
    return slice(None) if np.array_equal(dofs, np.arange(len(dofs))) else dofs


def time_mujoco(m, d, dofs, qadr, ro, steps):
    mujoco.mj_resetData(m, d)
    d.qpos[qadr] = ro.q0
    total = 0
    clock = time.perf_counter_ns
    applied = d.qfrc_applied
    at = effort_index(dofs)
    for k in range(steps):
        tau = ro.tau(k, d.qpos[qadr], d.qvel[dofs])
        t0 = clock()
        applied[at] = tau
        mujoco.mj_step(m, d)
        total += clock() - t0
    return total / steps / 1e3


def agreement(model, path):
    """Frictionless, 0.2 s of the same PD rollout: the largest joint difference (the two
    integrators differ at O(h); this checks that the two models are the same arm)."""
    ro = Rollout(model, 200)
    sim = rd.Simulator(model, None, dt=H)
    m, dofs, qadr = mujoco_model(path, model, 0.0, 0.0)
    d = mujoco.MjData(m)
    sim.reset(ro.q0)
    d.qpos[qadr] = ro.q0
    err = 0.0
    for k in range(200):
        sim.step(ro.tau(k, sim.q, sim.v))
        d.qfrc_applied[dofs] = ro.tau(k, d.qpos[qadr], d.qvel[dofs])
        mujoco.mj_step(m, d)
        err = max(err, float(np.abs(sim.q - d.qpos[qadr]).max()))
    return err


def creep(model, path):
    """Friction above gravity everywhere, zero effort, 2 s from rest at a pose: (ours, MuJoCo)
    largest joint drift."""
    data = model.create_data()
    q0, _ = mid_pose(model)
    c = 2.0 * np.abs(rd.gravity_torques(model, data, q0)) + 0.1
    fr = rd.friction_from_config({"joints": {name: {"model": "classic", "coulomb": float(ci)}
                                             for name, ci in zip(model.joint_names, c)}}, model)
    sim = rd.Simulator(model, fr, dt=H)
    sim.reset(q0)
    zero = np.zeros(model.nv)
    out = sim.run(2.0)
    ours = float(np.abs(out["q"] - q0).max())
    m, dofs, qadr = mujoco_model(path, model, 0.0, 0.0)
    m.dof_frictionloss[dofs] = c
    m.dof_damping[:] = 0.0
    d = mujoco.MjData(m)
    d.qpos[qadr] = q0
    for _ in range(2000):
        mujoco.mj_step(m, d)
    del zero
    return ours, float(np.abs(d.qpos[qadr] - q0).max())


def bench_steps(label, relpath, blocks, steps=1000):
    path = erd_urdf(relpath)
    model = rd.load_urdf(path)
    ro = Rollout(model, steps)
    classic = rd.friction_from_config({"default": {"model": "classic", "coulomb": COULOMB,
                                                   "viscous": VISCOUS}}, model)
    ld = rd.friction_from_config({"default": LOAD_DEPENDENT}, model)
    sims = {"none": rd.Simulator(model, None, dt=H),
            "classic": rd.Simulator(model, classic, dt=H),
            "load_dependent": rd.Simulator(model, ld, dt=H)}
    m0, dofs, qadr = mujoco_model(path, model, 0.0, 0.0)
    m1, _, _ = mujoco_model(path, model, COULOMB, VISCOUS)
    m0.dof_damping[dofs] = np.asarray(model.damping)
    d0, d1 = mujoco.MjData(m0), mujoco.MjData(m1)
    has_run = hasattr(rd, "PD")
    cases = [(f"step {k}", (lambda s=s: time_ours(s, ro, steps))) for k, s in sims.items()]
    if has_run:
        cases += [(f"run {k}", (lambda s=s: time_run(s, ro, steps))) for k, s in sims.items()]
    coupled = rd.load_urdf(path, mimic=True)
    if coupled.coupling is not None:  # the user's arm with its mimic joints (compiled step)
        ro_m = Rollout(coupled, steps)
        ld_m = rd.friction_from_config({"default": LOAD_DEPENDENT, "joints": {
            f: {"model": "none"} for f in coupled.followers}}, coupled.full)
        for k, fr in (("none", None), ("load_dependent", ld_m)):
            sim = rd.Simulator(coupled, fr, dt=H)
            cases.append((f"step {k} (mimic)", lambda s=sim: time_ours(s, ro_m, steps)))
    cases += [("mj_step none", lambda: time_mujoco(m0, d0, dofs, qadr, ro, steps)),
              ("mj_step frictionloss", lambda: time_mujoco(m1, d1, dofs, qadr, ro, steps))]
    for _, fn in cases:  # warm-up (compilation, caches)
        fn()
    times = {k: [] for k, _ in cases}
    for _ in range(blocks):
        for k, fn in cases:
            times[k].append(fn())
    t = {k: np.array(v) for k, v in times.items()}
    ref = t["mj_step frictionloss"]
    print(f"\n{label} ({model.nv} dof): µs per step (median of {blocks} interleaved blocks of "
          f"{steps} steps), ratio to mj_step with frictionloss (median of per-block ratios)")
    for k in t:
        print(f"  {k:<28} {np.median(t[k]):8.2f} µs   ratio {np.median(t[k] / ref):5.2f}")
    err = agreement(model, path)
    ours, theirs = creep(model, path)
    print(f"  same arm: frictionless PD rollout, 0.2 s, max |q_ours − q_mujoco| = {err:.2e} rad")
    print(f"  creep at rest, friction > gravity, 2 s: ours {ours:.1e}, MuJoCo {theirs:.1e} "
          "(max joint drift, rad or m)")


# … and forward dynamics without it, the problem pin.aba solves (issue 33 gave forward_dynamics
# the keyword too, default True: it inverts inverse_dynamics' default)
FD_NO_DAMPING = ({"damping": False}
                 if "damping" in inspect.signature(rd.forward_dynamics).parameters else {})


def bench_fd(label, relpath, blocks, count=200):
    path = erd_urdf(relpath)
    model = rd.load_urdf(path)
    data = model.create_data()
    fr = rd.friction_from_config({"default": LOAD_DEPENDENT}, model)
    pm = PinMap(model, path)
    print(f"\n{label} ({model.nv} dof): forward_dynamics with load-dependent friction vs pin.aba, "
          f"{count} states per class, median of {blocks} interleaved blocks")
    for kind in ("sliding", "stuck", "mixed"):
        states = fd_states(model, fr, kind, count, seed=len(kind))
        pstates = [(pm.q(q), pm.v(v), pm.v(t)) for q, v, t in states]
        stuck = breaking = iters = 0
        for q, v, tau in states:
            rd.forward_dynamics(model, data, q, v, tau, fr, **FD_NO_DAMPING)
            rep = data.fd_report
            stuck += len(rep.stuck)
            breaking += len(rep.breaking_away)
            iters += rep.iterations

        def ours():
            for q, v, tau in states:
                rd.forward_dynamics(model, data, q, v, tau, fr, **FD_NO_DAMPING)

        def ref():
            for q, v, tau in pstates:
                pin.aba(pm.pmodel, pm.pdata, q, v, tau)

        a, b = [], []
        for _ in range(blocks):
            for fn, acc in ((ours, a), (ref, b)):
                t0 = time.perf_counter_ns()
                fn()
                acc.append((time.perf_counter_ns() - t0) / count / 1e3)
        a, b = np.array(a), np.array(b)
        print(f"  {kind:<8} ours {np.median(a):7.2f} µs  aba {np.median(b):6.2f} µs  ratio "
              f"{np.median(a / b):5.2f}   (per state: stuck {stuck / count:.1f}, breaking away "
              f"{breaking / count:.1f}, iterations {iters / count:.1f})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blocks", type=int, default=7)
    ap.add_argument("--steps-only", action="store_true")
    ap.add_argument("--fd-only", action="store_true")
    args = ap.parse_args()
    print(f"MuJoCo {mujoco.__version__}, Pinocchio {pin.__version__}")
    if not args.fd_only:
        bench_steps("panda", PANDA, args.blocks)
        bench_steps("ur5", UR5, args.blocks)
    if not args.steps_only:
        bench_fd("panda", PANDA, args.blocks)
        bench_fd("talos_reduced", TALOS, args.blocks)
