"""Batched rollouts (robot_dynamics.simulation.rollouts, issue 35): the batch's answer, with one
worker or two (forked or spawned), is bit for bit each rollout run alone with Simulator.run on a
freshly loaded model — written out here by hand, not through the module's own helpers."""
import copy
import dataclasses

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.control.trajectory import minimum_jerk
from robot_dynamics.parsers.resources import config_path, robot_path
from robot_dynamics.simulation.rollouts import (Plant, RolloutSpec, run_rollouts,
                                                scaled_friction_config)

STEPS = 120
LOAD_DEPENDENT = ("coulomb", "viscous", "k1", "k2", "k3")


def friction_yaml():
    with open(config_path("arm7_friction"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def scaled_by_hand(scale):
    """arm7's friction YAML with every load_dependent coefficient × scale."""
    cfg = copy.deepcopy(friction_yaml())
    for entry in [cfg["default"], *cfg["joints"].values()]:
        for key in LOAD_DEPENDENT:
            if key in entry:
                entry[key] = float(entry[key]) * scale
    return cfg


def reference(n=7):
    traj = minimum_jerk(np.zeros(n), np.full(n, 0.3), 0.1)
    Q, V, A = (np.array(x) for x in zip(*(traj.sample(k * 1e-3) for k in range(STEPS + 1))))
    return Q, V, A


def specs():
    Q, V, A = reference()
    rng = np.random.default_rng(5)
    out = []
    for i, (scale, mass, controller) in enumerate([(1.0, 0.0, "computed_torque"),
                                                   (0.5, 3.0, "computed_torque"),
                                                   (2.0, 0.0, "pd"), (0.0, 8.0, "computed_torque"),
                                                   (1.5, 1.0, "pd")]):
        q0 = 0.02 * rng.standard_normal(7)
        out.append(RolloutSpec(q0=q0, q_ref=Q, v_ref=V, a_ref=A, steps=STEPS,
                               kp=np.full(7, 400.0) * (1 + 0.1 * i), kd=np.full(7, 40.0),
                               controller=controller, friction_scale=scale, payload_mass=mass,
                               payload_com=(0.0, 0.0, 0.05)))
    return out


def alone(spec):
    """One rollout by hand: a fresh model, its payload, the scaled friction, Simulator.run."""
    model = rd.load_urdf(robot_path("arm7"))
    if spec.payload_mass:
        model.set_payload("link_7", spec.payload_mass, spec.payload_com)
    nominal = rd.friction_from_config(friction_yaml(), model)
    plant_friction = (None if spec.friction_scale == 0 else
                      rd.friction_from_config(scaled_by_hand(spec.friction_scale), model))
    sim = rd.Simulator(model, plant_friction, 1e-3)
    sim.reset(spec.q0)
    if spec.controller == "pd":
        ctl = rd.PD(spec.kp, spec.kd, spec.q_ref, spec.v_ref, gravity_compensation=True)
    else:
        ctl = rd.ComputedTorque(spec.kp, spec.kd, spec.q_ref, spec.v_ref, spec.a_ref,
                                friction=nominal)
    out = sim.run(steps=spec.steps, controller=ctl)
    e = out["q"] - spec.q_ref[1:spec.steps + 1]
    return out, {"rms_error": np.sqrt(np.mean(e ** 2)), "max_error": np.abs(e).max(),
                 "saturation": sim.saturated_steps / spec.steps,
                 "motor_work": sim.audit.motor_work, "energy_residual": sim.audit.residual}


@pytest.fixture(scope="module")
def by_hand():
    return [alone(s) for s in specs()]


@pytest.mark.parametrize("workers, start", [(1, None), (2, None), (3, None), (2, "fork"),
                                            (2, "spawn")])
def test_batch_is_each_rollout_alone_bit_for_bit(by_hand, workers, start):
    """Any workers: this process alone, threads (no start method: the compiled rollouts
    release the GIL), forked or spawned processes — each rollout the same bits as alone."""
    plant = Plant("arm7", "arm7_friction", 1e-3)
    seen = []
    trajectories, summaries = run_rollouts(plant, specs(), workers=workers, start_method=start,
                                           chunks_per_worker=2,
                                           progress=lambda done, total: seen.append(done))
    assert sorted(seen) == seen and seen[-1] == len(by_hand)
    assert len(trajectories) == len(by_hand)
    for i, ((out, summary), (ref, mine)) in enumerate(zip(zip(trajectories, summaries),
                                                          by_hand)):
        for key in ("t", "q", "v", "tau", "tau_friction", "tau_limit"):
            assert np.array_equal(out[key], ref[key]), (i, key)
        assert summary["status"] == "ok"
        for key, value in mine.items():
            assert summary[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (i, key)
    # the payload and the friction scale matter (the comparison above is not vacuous)
    assert not np.array_equal(trajectories[0]["q"], trajectories[1]["q"])
    assert summaries[3]["friction_dissipation"] == 0.0 < summaries[0]["friction_dissipation"]


def test_summaries_only_and_order_kept():
    plant = Plant("arm7", "arm7_friction", 1e-3)
    s = specs()[::-1]
    trajectories, summaries = run_rollouts(plant, s, workers=2, trajectories=False,
                                           chunks_per_worker=1)
    assert trajectories == [None] * len(s)
    _, again = run_rollouts(plant, s, workers=1)
    assert summaries == again


def test_friction_scale_scales_the_magnitudes():
    model = rd.load_urdf(robot_path("arm7"))
    cfg = scaled_friction_config(friction_yaml(), 2.5, model)
    nominal = rd.friction_from_config(friction_yaml(), model)
    scaled = rd.friction_from_config(cfg, model)
    q, v = np.full(7, 0.3), np.linspace(-1, 1, 7)
    W = np.random.default_rng(0).standard_normal((7, 6)) * 20
    assert np.allclose(scaled.magnitudes(model, W, q, v), 2.5 * nominal.magnitudes(model, W, q, v),
                       rtol=1e-12)
    assert scaled_friction_config(friction_yaml(), 0.0, model) == {"default": {"model": "none"}}


@pytest.mark.parametrize("field, value, words", [
    ("friction_scale", -0.5, "friction_scale must be a finite number ≥ 0"),
    ("payload_mass", float("nan"), "payload_mass must be a finite number ≥ 0"),
    ("controller", "lqr", "controller must be one of"),
    ("steps", -3, "steps must be a whole number ≥ 0"),
])
def test_bad_spec_is_one_line_naming_the_field(field, value, words):
    spec = specs()[0]
    setattr(spec, field, value)
    with pytest.raises(rd.InputError) as exc:
        run_rollouts(Plant("arm7", None), [spec], workers=1)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_open_loop_rollouts_apply_the_given_efforts_step_by_step():
    """controller 'open_loop' (controls, as mujoco.rollout takes them): each rollout is its
    efforts applied by hand, one Simulator.step per row (the last row held), bit for bit, with
    one worker or two; no reference, no tracking error."""
    rng = np.random.default_rng(7)
    steps = 80
    model = rd.load_urdf(robot_path("arm7"))
    data = model.create_data()
    runs = []
    for i in range(3):
        q0 = 0.1 * rng.standard_normal(7)
        g = rd.rnea(model, data, q0, np.zeros(7), np.zeros(7))
        tau = g + 3.0 * rng.standard_normal((steps - 20 * i, 7))  # shorter: last row held
        runs.append(RolloutSpec(q0=q0, q_ref=None, steps=steps, controller="open_loop",
                                tau=tau, friction_scale=1.0 + 0.5 * i))
    plant = Plant("arm7", "arm7_friction", 1e-3)
    one, summaries = run_rollouts(plant, runs, workers=1)
    two, _ = run_rollouts(plant, runs, workers=2, start_method="fork", chunks_per_worker=1)
    for spec, out, again, summary in zip(runs, one, two, summaries):
        sim = rd.Simulator(model, rd.friction_from_config(
            scaled_by_hand(spec.friction_scale), model), 1e-3)
        sim.reset(spec.q0)
        for k in range(steps):
            sim.step(spec.tau[min(k, len(spec.tau) - 1)])
            assert np.array_equal(out["q"][k], sim.q) and np.array_equal(out["v"][k], sim.v), k
        assert np.array_equal(out["tau"][-1], spec.tau[-1])  # held (no saturation here)
        assert all(np.array_equal(out[key], again[key]) for key in out)
        assert summary["status"] == "ok" and np.isnan(summary["rms_error"])
        assert summary["motor_work"] == pytest.approx(sim.audit.motor_work, rel=1e-12)
    assert not np.array_equal(one[0]["q"], one[1]["q"])


@pytest.mark.parametrize("changes, words", [
    ({"controller": "open_loop"}, "tau (the efforts) goes with controller 'open_loop'"),
    ({"tau": np.zeros(7)}, "tau (the efforts) goes with controller 'open_loop'"),
    ({"q_ref": None}, "q_ref: controller 'computed_torque' needs a reference"),
    ({"controller": "open_loop", "tau": np.where(np.arange(21).reshape(3, 7) == 7, np.inf, 1.0)},
     "tau: not finite at row 1, joint index 0"),
    ({"controller": "open_loop", "tau": np.zeros((2, 2, 7))}, "tau: expected (steps, nv)"),
])
def test_bad_open_loop_spec_is_one_line(changes, words):
    spec = specs()[0]
    for field, value in changes.items():
        setattr(spec, field, value)
    with pytest.raises(rd.InputError) as exc:
        run_rollouts(Plant("arm7", None), [spec], workers=1)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_bad_plant_and_workers():
    with pytest.raises(rd.ModelError, match="no_such_robot"):
        Plant("no_such_robot")
    with pytest.raises(rd.InputError, match="dt must be a positive"):
        Plant("arm7", None, dt=-1.0)
    with pytest.raises(rd.InputError, match="workers must be a whole number"):
        run_rollouts(Plant("arm7", None), specs()[:1], workers=0)
    with pytest.raises(rd.InputError, match=r"^workers: 100000 on \d+ cores; at most \d+ \(4 a "
                                            "core"):  # (a thread per rollout, 9× slower at 1000)
        run_rollouts(Plant("arm7", None), specs()[:2], workers=100000)


def test_threads_raise_what_a_rollout_raised_and_leave_the_models_as_built(monkeypatch):
    """A rollout that raises (not a diverging simulation: a bug, an interrupt) stops the
    threaded batch with that exception; every thread's Model is left without payload."""
    import robot_dynamics.simulation.rollouts as rollouts

    plant = Plant("arm7", "arm7_friction", 1e-3)
    s = specs()
    real = rollouts._rollout

    def flaky(ctx, plant, spec, trajectory):
        if spec is s[2]:
            raise RuntimeError("rollout 2 broke")
        return real(ctx, plant, spec, trajectory)

    monkeypatch.setattr(rollouts, "_rollout", flaky)
    with pytest.raises(RuntimeError, match="rollout 2 broke"):
        run_rollouts(plant, s, workers=2)
    monkeypatch.setattr(rollouts, "_rollout", real)
    built = rd.load_urdf(robot_path("arm7"))
    for ctx in [rollouts._context(plant)] + rollouts._SPARE[plant.key()]:
        assert np.array_equal(ctx.model.inertias, built.inertias)
    _, summaries = run_rollouts(plant, s, workers=2)  # and the next batch runs
    assert all(x["status"] == "ok" for x in summaries)


def open_loop_alone(spec):
    """An open-loop rollout by hand: a fresh model and Simulator, a PD without gains whose
    feed-forward is the efforts (run_rollouts' open loop), Simulator.run."""
    model = rd.load_urdf(robot_path("arm7"))
    sim = rd.Simulator(model, rd.friction_from_config(scaled_by_hand(spec.friction_scale), model),
                       1e-3)
    sim.reset(spec.q0)
    return sim.run(steps=spec.steps, controller=rd.PD(0.0, 0.0, spec.q0, feedforward=spec.tau))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_reused_worker_carries_nothing_from_one_rollout_into_the_next(workers):
    """A worker keeps its Simulator (its friction swapped, reset), its packed controllers (one
    array, its gains — or open loop its held state and efforts — rewritten) and its Model from
    one rollout to the next (issue 35): each rollout is still the same bits as alone, whatever
    ran before it — the batch in two orders, gains, payloads, friction scales and initial
    states all different, or the payload of the last one; open-loop efforts of one shape; a
    reference changed in place between two batches."""
    Q, V, A = reference()
    rng = np.random.default_rng(11)
    closed = [RolloutSpec(q0=0.03 * rng.standard_normal(7), q_ref=Q, v_ref=V, a_ref=A,
                          steps=STEPS, kp=rng.uniform(100.0, 600.0, 7),
                          kd=float(rng.uniform(10.0, 60.0)), controller=controller,
                          friction_scale=scale, payload_mass=mass, payload_com=(0.0, 0.0, 0.05))
              for controller, scale, mass in [("computed_torque", 0.7, 2.0), ("pd", 1.3, 0.0),
                                              ("computed_torque", 0.0, 6.0),
                                              ("computed_torque", 1.9, 0.0), ("pd", 0.4, 4.0)]]
    plant = Plant("arm7", "arm7_friction", 1e-3)
    twin = dataclasses.replace(closed[0], kp=300.0, friction_scale=1.1)  # its payload kept
    for batch in (closed, closed[::-1], closed[1::2] + closed[::2], [closed[0], twin, closed[2]]):
        trajectories, summaries = run_rollouts(plant, batch, workers=workers)
        for i, (spec, out) in enumerate(zip(batch, trajectories)):
            ref, mine = alone(spec)
            assert all(np.array_equal(out[key], ref[key]) for key in ref), i
            assert summaries[i]["rms_error"] == pytest.approx(mine["rms_error"], rel=1e-12)
    Q[1:] += 0.05  # in place: the next batch packs the new reference
    again, _ = run_rollouts(plant, closed[:2], workers=workers)
    for spec, out in zip(closed[:2], again):
        assert np.array_equal(out["q"], alone(spec)[0]["q"])
    model = rd.load_urdf(robot_path("arm7"))
    g = rd.rnea(model, model.create_data(), np.zeros(7), np.zeros(7), np.zeros(7))
    runs = [RolloutSpec(q0=0.1 * rng.standard_normal(7), q_ref=None, steps=60,
                        controller="open_loop", tau=g + 3.0 * rng.standard_normal((60, 7)),
                        friction_scale=scale) for scale in (1.0, 0.5, 2.0)]
    for batch in (runs, runs[::-1]):
        trajectories, _ = run_rollouts(plant, batch, workers=workers)
        for spec, out in zip(batch, trajectories):
            ref = open_loop_alone(spec)
            assert all(np.array_equal(out[key], ref[key]) for key in ref)
    assert not np.array_equal(trajectories[0]["q"], trajectories[1]["q"])


def test_a_packed_controller_rewritten_is_the_spec_controllers_array():
    """The array a worker rewrites from one rollout to the next (gains; open loop: the held
    state and the efforts) is, bit for bit, the one the spec's own controller packs."""
    from robot_dynamics.simulation import rollouts

    ctx = rollouts._Context(Plant("arm7", "arm7_friction", 1e-3))
    rng = np.random.default_rng(3)
    batch = specs() + [RolloutSpec(q0=0.1 * rng.standard_normal(7), q_ref=None, steps=9,
                                   controller="open_loop", tau=rng.standard_normal((9, 7)))
                       for _ in range(3)]
    for spec in batch:
        mine = rollouts._packed_controller(ctx, spec).pack(ctx.model)
        theirs = rollouts.build_controller(spec, ctx.nominal).pack(ctx.model)
        assert mine.tobytes() == theirs.tobytes()


def test_a_step_handed_back_to_python_uses_the_specs_own_law(monkeypatch):
    """A step the compiled rollout hands back (here: step 10 of each run, as if its solve had
    failed) is taken in Python with the controller's NumPy law: through a worker's rewritten
    packed array (controllers.Prepacked), the same bits as Simulator.run with the spec's own
    controller, closed loop and open loop."""
    import robot_dynamics.simulation.simulator as simulator
    from robot_dynamics.kernels.rollout import DONE, SOLVE_FAILED

    real = simulator.sim_run_entry

    def failing_at_10(mb, fr, sp, ctl, q, v, k0, w, out):
        if k0 == 0 and len(out) > 10:
            assert real(mb, fr, sp, ctl, q, v, 0, w, out[:10]) == 4 * 10 + DONE
            return 4 * 10 + SOLVE_FAILED
        return real(mb, fr, sp, ctl, q, v, k0, w, out)

    monkeypatch.setattr(simulator, "sim_run_entry", failing_at_10)
    rng = np.random.default_rng(2)
    closed = specs()[:3]
    opened = [RolloutSpec(q0=0.05 * rng.standard_normal(7), q_ref=None, steps=40,
                          controller="open_loop", tau=20.0 * rng.standard_normal((40, 7)),
                          friction_scale=1.0) for _ in range(2)]
    trajectories, _ = run_rollouts(Plant("arm7", "arm7_friction", 1e-3), closed + opened,
                                   workers=1)
    for spec, out in zip(closed, trajectories):
        ref, _ = alone(spec)
        assert all(np.array_equal(out[key], ref[key]) for key in ref)
    for spec, out in zip(opened, trajectories[len(closed):]):
        ref = open_loop_alone(spec)
        assert all(np.array_equal(out[key], ref[key]) for key in ref)


def test_a_batch_leaves_no_rows_buffer_nor_references_held():
    """After a batch the cached plant holds its Simulator only: not the rows buffer (steps ×
    5 × nv floats) nor, through the packed controllers, the specs' reference arrays."""
    import gc
    import weakref

    from robot_dynamics.simulation import rollouts

    plant = Plant("arm7", "arm7_friction", 1e-3)
    batch = specs()[:2]
    seen = weakref.ref(batch[0].q_ref)
    run_rollouts(plant, batch, workers=1, trajectories=False)
    ctx = rollouts._context(plant)
    assert ctx.rows_for(0).base is None and ctx.rows_for(0).size == 0 and not ctx.packed
    del batch
    gc.collect()
    assert seen() is None


def test_an_executor_of_threads_gives_each_rollout_alone():
    """``executor``: any object with ``submit``; one of threads (concurrent.futures'
    ThreadPoolExecutor, a Dask worker with several threads) runs chunks at once in one process,
    and the compiled rollout releases the GIL. Each thread reuses a plant of its own (its
    Model, Simulator, packed controllers, rows buffer: rollouts._context): shared, two chunks
    stepped one Simulator and rewrote one packed controller at once (18 of 60 rollouts
    differed), and set payloads on one Model. The same bits as the rollouts alone."""
    import concurrent.futures as cf

    plant = Plant("arm7", "arm7_friction", 1e-3)
    batch = specs() + [dataclasses.replace(s, kp=2.0 * s.kp) for s in specs()]
    ref = [alone(spec)[0] for spec in batch]
    with cf.ThreadPoolExecutor(2) as executor:
        for _ in range(2):
            got, summaries = run_rollouts(plant, batch, executor=executor, chunks_per_worker=3)
            assert all(x["status"] == "ok" for x in summaries)
            for i, (out, mine) in enumerate(zip(got, ref)):
                assert all(np.array_equal(out[key], mine[key]) for key in mine), i
