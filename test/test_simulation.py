"""Simulation core: energy audit closes, a moving joint stops exactly, audits are honest."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from conftest import bundled


def test_energy_audit_closes_over_10_s_of_driven_frictional_motion():
    model = rd.load_urdf(bundled("rrp.urdf"))
    fr = friction_from_config(bundled("../config/rrp_friction.yaml"), model)
    sim = rd.Simulator(model, fr, dt=1e-3)
    q0 = np.array([0.0, 0.3, 0.1])
    sim.reset(q0)
    ctrl_data = model.create_data()

    def controller(t, q, v):  # computed torque with friction along a periodic path
        w = np.array([1.1, 0.7, 1.5])
        qd = q0 + np.array([0.8, 0.4, 0.1]) * np.sin(w * t)
        vd = np.array([0.8, 0.4, 0.1]) * w * np.cos(w * t)
        ad = -np.array([0.8, 0.4, 0.1]) * w ** 2 * np.sin(w * t)
        a = ad + 40 * (vd - v) + 400 * (qd - q)
        return rd.inverse_dynamics(model, ctrl_data, q, v, a, friction=fr)

    sim.run(10.0, controller)
    audit = sim.audit
    assert audit.motor_work > 1.0 and audit.friction_dissipation > 1.0
    assert abs(audit.relative_residual) < 1e-3, str(audit)


def test_sliding_joint_stops_exactly_and_stays():
    """A spinning vertical joint decelerated by friction ends at rest, no creep, no reversal."""
    model = rd.load_urdf(bundled("rrp.urdf"))
    fr = friction_from_config(bundled("../config/rrp_friction.yaml"), model)
    sim = rd.Simulator(model, fr, dt=1e-3)
    sim.reset([0.0, 0.0, 0.1], [1.0, 0.0, 0.0])  # θ1 spins about the vertical axis
    out = sim.run(3.0, lambda t, q, v: rd.gravity_torques(model, sim.data, q) * [0, 1, 1])
    stop = np.flatnonzero(out["v"][:, 0] == 0.0)
    assert len(stop) and np.all(out["v"][stop[0]:, 0] == 0.0)
    assert np.all(out["v"][:, 0] >= 0.0)  # friction never reverses the motion
    assert np.ptp(out["q"][stop[0]:, 0]) == 0.0
    assert sim.audit.friction_dissipation > 0


def test_frictionless_fall_is_energy_conserving_to_second_order():
    model = rd.load_urdf(bundled("arm7.urdf"))
    q0 = np.random.default_rng(0).uniform(-1, 1, 7)
    residuals = []
    for dt in (2e-3, 1e-3):
        sim = rd.Simulator(model, None, dt=dt, limits=False)  # smooth: no stop impacts
        sim.reset(q0)
        sim.run(0.5)
        residuals.append(abs(sim.audit.relative_residual))
    assert residuals[1] < residuals[0] / 3  # halving the step divides the error by ~4
    assert residuals[1] < 1e-3


def test_audit_of_a_motion_that_ends_where_it_started_is_relative_to_the_energy_moved():
    """Frictionless, out and back to rest: the net flows (ΔT, ΔV, net motor work) are ~0, so the
    relative residual is taken against the energy that flowed through the motors either way —
    not a ~0 net (which printed "+1.00e+00 relative" for the five-bar's valid run)."""
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    data = model.create_data()
    q0 = np.zeros(model.nv)

    def controller(t, q, v):  # one period of a smooth excursion: starts and ends at rest at q0
        s = 0.5 * (1 - np.cos(2 * np.pi * t))
        qd, vd = q0 + 0.6 * s, np.full(model.nv, 0.6 * np.pi * np.sin(2 * np.pi * t))
        ad = np.full(model.nv, 1.2 * np.pi ** 2 * np.cos(2 * np.pi * t))
        return rd.inverse_dynamics(model, data, q, v, ad + 40 * (vd - v) + 400 * (qd - q))

    audits = []
    for compiled in (True, False):
        sim = rd.Simulator(model, None, dt=1e-3, compiled=compiled, limits=False)
        sim.reset(q0)
        sim.run(1.0, controller)
        sim.run(0.5, lambda t, q, v: rd.inverse_dynamics(model, data, q, v, 0 * q)
                + 40 * (0 - v) + 400 * (q0 - q))  # settle back at rest
        audits.append(sim.audit)
    a, ref = audits
    net = max(abs(a.motor_work), abs(a.kinetic) + abs(a.potential))
    assert a.motor_gross > 50 * net, str(a)  # the net flows say little of what moved
    assert a.motor_gross >= abs(a.motor_work)
    assert abs(a.relative_residual) < 1e-3, str(a)
    assert abs(a.residual) > 1e-3 * net  # against the net alone it would not look closed
    assert ref.motor_gross == pytest.approx(a.motor_gross, rel=1e-9)


def test_step_results_are_new_arrays_a_later_step_leaves_alone():
    """What a step exposes (q, q̇, τ applied, τf, stop reactions) are arrays of their own: the
    user may keep them — a later step (compiled, converted input, saturated, on a stop, the
    reference path) changes neither them nor the τ the user passed."""
    model = rd.load_urdf(bundled("rrp.urdf"))
    fr = friction_from_config(bundled("../config/rrp_friction.yaml"), model)
    names = ("q", "v", "tau_applied", "tau_friction", "tau_limit", "at_limit")
    efforts = [np.array([5.0, -3.0, 300.0]),  # d3 saturated at 100 N, driven onto its upper stop
               [5.0, -3.0, 300.0],  # a list: the converted path
               np.array([-5.0, 3.0, -20.0]),  # off the stop again
               np.array([0.0, 0.0, 0.0], dtype=np.float32)]
    for friction, compiled in ((None, True), (fr, True), (fr, False)):
        sim = rd.Simulator(model, friction, dt=1e-3, compiled=compiled)
        sim.reset([0.1, 0.2, 0.44])
        kept, acted = [], False
        for k in range(60):
            tau = efforts[min(k // 15, 3)]
            given = np.array(tau, dtype=float)
            sim.step(tau)
            assert np.array_equal(np.array(tau, dtype=float), given)  # τ not edited
            acted = acted or bool(sim.at_limit.any())
            now = {name: getattr(sim, name) for name in names}
            for name, x in now.items():  # none is a view of the work array, of the step's
                # parameters (sp: its published efforts) or of another
                assert not np.shares_memory(x, sim.data._work), name
                assert not np.shares_memory(x, sim._sp), name
                assert not any(np.shares_memory(x, y) for other, y in now.items()
                               if other != name), name
            kept.append((now, {name: x.copy() for name, x in now.items()}))
        assert acted and sim.saturated_steps > 0  # the stop and the saturation were exercised
        for now, values in kept:  # every step's arrays as they were when it ended
            for name in names:
                assert np.array_equal(now[name], values[name]), name
        assert not np.array_equal(kept[0][1]["q"], kept[-1][1]["q"])  # the arm did move


def test_step_takes_lists_and_int_arrays_as_the_same_float_efforts():
    """A τ that is not a float64 array (a list, ints) takes the converting path: the same
    states, efforts, friction and counters as the compiled call on the float64 array."""
    model = rd.load_urdf(bundled("rrp.urdf"))
    fr = friction_from_config(bundled("../config/rrp_friction.yaml"), model)
    efforts = [np.array([3, -2, 150]), np.array([-4, 1, -30]), np.array([0, 0, 0])]
    sims = {kind: rd.Simulator(model, fr, dt=1e-3) for kind in ("float", "list", "int")}
    for sim in sims.values():
        sim.reset([0.1, 0.2, 0.44])
    for k in range(45):
        tau = efforts[k // 15]
        sims["float"].step(tau.astype(np.float64))
        sims["list"].step(tau.tolist())
        sims["int"].step(tau)
        ref = sims["float"]
        for kind in ("list", "int"):
            sim = sims[kind]
            for name in ("q", "v", "tau_applied", "tau_friction", "tau_limit", "at_limit"):
                assert np.array_equal(getattr(sim, name), getattr(ref, name)), (kind, name, k)
            assert (sim.saturated_steps, sim.limit_steps) == (ref.saturated_steps,
                                                               ref.limit_steps), kind
    assert ref.saturated_steps > 0 and ref.limit_steps > 0


def test_reset_replays_a_run_to_the_bit():
    """The friction solve starts each step from the last step's q̈ (a guess the Simulator keeps):
    reset clears it with the audit, so the same commands from the same state give the same
    trajectory to the last bit; a fresh Simulator agrees too."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = friction_from_config(bundled("../config/arm7_friction.yaml"), model)
    q0 = np.linspace(-0.5, 0.5, model.nv)
    t = 1e-3 * np.arange(400)[:, None]
    taus = rd.gravity_torques(model, model.create_data(), q0) + 30.0 * np.sin(
        2 * np.pi * (0.5 + 0.3 * np.arange(model.nv)) * t)

    def trajectory(sim):
        sim.reset(q0)
        out = []
        for tau in taus:
            sim.step(tau)
            out.append(np.concatenate([sim.q, sim.v, sim.tau_friction]))
        return np.array(out)

    sim = rd.Simulator(model, fr, dt=1e-3)
    first = trajectory(sim)
    assert np.abs(first[:, model.nv:2 * model.nv]).max() > 0.1  # it moved
    np.testing.assert_array_equal(trajectory(sim), first)
    np.testing.assert_array_equal(trajectory(rd.Simulator(model, fr, dt=1e-3)), first)


def test_reset_leaves_no_report_of_the_steps_before_it():
    """After reset, as on a new Simulator, ``report`` is None until a step: it was the last
    step's solve report (the inline step's, left in Data) while ``joint_wrenches`` said None —
    on the inline step, the Python statement and a compiled run alike."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = friction_from_config(bundled("../config/arm7_friction.yaml"), model)
    q0 = np.linspace(-0.5, 0.5, model.nv)
    tau = rd.gravity_torques(model, model.create_data(), q0) + 5.0
    for compiled, advance in [(True, lambda sim: sim.step(tau)),
                              (False, lambda sim: sim.step(tau)),
                              (True, lambda sim: sim.run(steps=5))]:
        sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
        assert sim.report is None and sim.joint_wrenches is None
        sim.reset(q0)
        advance(sim)
        assert sim.report is not None and sim.joint_wrenches is not None, compiled
        sim.reset(q0)
        assert sim.report is None and sim.joint_wrenches is None, compiled
        advance(sim)  # and the next step reports again
        assert sim.report is not None and sim.joint_wrenches is not None, compiled


def test_joint_wrenches_of_laws_that_do_not_read_them():
    """Classic friction does not read the reactions: the compiled step skips the wrench
    directors, and ``joint_wrenches`` comes from RNEA at the step's answer — the same as with a
    load-dependent law of zero load coefficients, which computes them in the solve."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    classic = friction_from_config({"default": {"model": "classic", "coulomb": 0.5,
                                                "viscous": 0.1}}, model)
    loaded = friction_from_config({"default": {"model": "load_dependent", "coulomb": 0.5,
                                               "viscous": 0.1, "k1": 0.0, "k2": 0.0,
                                               "k3": 0.0}}, model)
    q0 = np.linspace(-0.4, 0.6, model.nv)
    tau = rd.gravity_torques(model, model.create_data(), q0) + 5.0
    out = []
    for fr in (classic, loaded, None):
        sim = rd.Simulator(model, fr, dt=1e-3)
        sim.reset(q0)
        for _ in range(50):
            sim.step(tau)
        out.append((sim.q, sim.joint_wrenches))
    np.testing.assert_allclose(out[0][0], out[1][0], atol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], atol=1e-9 * np.abs(out[1][1]).max())
    assert out[2][1] is not None and np.isfinite(out[2][1]).all()
    assert np.abs(out[2][1] - out[0][1]).max() > 1e-3  # friction changed the loads: compared
