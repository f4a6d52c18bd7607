"""The simulator at the edges (issue 12): effort saturation, joint limits as hard stops, and
never a silent wrong state — whatever the command."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from robot_dynamics.kernels.fd import SP_ARTICULATED
from conftest import bundled


@pytest.fixture(scope="module")
def arm7():
    model = rd.load_urdf(bundled("arm7.urdf"))
    return model, friction_from_config(bundled("../config/arm7_friction.yaml"), model)


def test_efforts_saturate_at_the_urdf_limits(arm7):
    model, fr = arm7
    sim = rd.Simulator(model, fr, dt=1e-3)
    q0 = np.linspace(-0.5, 0.5, model.nv)
    sim.reset(q0)
    cmd = np.array([1e3, -1e3, 10.0, -500.0, 0.0, 40.0, -1e300])
    sim.step(cmd)
    lim = model.effort_limits
    np.testing.assert_array_equal(sim.tau_applied, np.clip(cmd, -lim, lim))
    np.testing.assert_array_equal(sim.saturated, np.abs(cmd) >= lim)
    assert sim.saturated_steps == 1
    sim.step(np.zeros(model.nv))
    assert sim.saturated_steps == 1 and not sim.saturated.any()
    # the saturated command moves the arm exactly as the limit itself does
    ref = rd.Simulator(model, fr, dt=1e-3)
    ref.reset(q0)
    ref.step(np.clip(cmd, -lim, lim))
    ref.step(np.zeros(model.nv))
    np.testing.assert_array_equal(ref.q, sim.q)
    # saturate=False applies the command as given
    raw = rd.Simulator(model, fr, dt=1e-3, saturate=False)
    raw.reset(q0)
    raw.step(cmd * [1, 1, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(raw.tau_applied, cmd * [1, 1, 1, 1, 1, 1, 0])
    assert raw.saturated_steps == 0


def _check_verdicts(model, fr, sim, scale):
    """Every joint's stick/slip/stop state of the last step against the law at the loads the
    step used (``sim.joint_wrenches`` = W0 + Σ q̈_α pl_α, eq. 2.3.7)."""
    rep = sim.report
    assert rep.converged
    W = sim.joint_wrenches
    tf, u = sim.tau_friction, sim.v
    assert np.all(np.isfinite(W)) and np.all(np.isfinite(tf))
    # the equations hold to roundoff of the efforts in them (scale-aware, not absolute)
    assert rep.residual <= 1e-9 * scale, (rep.residual, scale)
    stuck = np.isin(model.joint_names, rep.stuck)
    on_stop = np.isin(model.joint_names, rep.at_limit)
    assert not (stuck & on_stop).any()
    bound = fr.bounds(model, W, sim.q, -np.sign(tf))
    # a stuck joint does not move and is held by at most its breakaway bound — never beyond
    assert np.all(u[stuck] == 0.0)
    assert np.all(np.abs(tf[stuck]) <= bound[stuck] * (1 + 1e-12)), (tf[stuck], bound[stuck])
    # a slipping joint feels the law's magnitude at its loads and velocity, against its motion
    slipping = ~stuck & ~on_stop & (u != 0.0)
    mag = fr.magnitudes(model, W, sim.q, u, np.sign(u))
    np.testing.assert_allclose(np.abs(tf[slipping]), mag[slipping], rtol=1e-9, atol=0)
    assert np.all(tf[slipping] * u[slipping] <= 0.0)
    # friction on a stop is within the law's bound; the stop only pushes
    assert np.all(np.abs(tf[on_stop]) <= np.maximum(bound, mag)[on_stop] * (1 + 1e-9))
    lower = on_stop & (sim.q <= 0.5 * (model.lower_limits + model.upper_limits))
    assert np.all(sim.tau_limit[lower] >= -1e-9 * scale)
    assert np.all(sim.tau_limit[on_stop & ~lower] <= 1e-9 * scale)
    return stuck


@pytest.mark.parametrize("limits", [True, False])
def test_stick_slip_verdicts_hold_at_every_magnitude(arm7, limits):
    """Issue 12: above ~1e6 N·m the step reported joints stuck with a holding friction up to
    1e15 × the breakaway bound, and from 1e7 N·m the arm did not move at all ("converged")."""
    model, fr = arm7
    for q0 in (np.zeros(model.nv), np.linspace(-0.5, 0.5, model.nv)):
        rest = rd.Simulator(model, fr, dt=1e-3, saturate=False, limits=limits)
        rest.reset(q0)
        rest.step(np.zeros(model.nv))
        largest_bound = fr.bounds(model, rest.joint_wrenches, q0, np.ones(model.nv)).max()
        for e in range(13):
            mag = 10.0 ** e
            sim = rd.Simulator(model, fr, dt=1e-3, saturate=False, limits=limits)
            sim.reset(q0)
            for k in range(3 if limits else 1):  # held; without stops the arm runs away
                sim.step(np.full(model.nv, mag))
                scale = 1.0 + mag + np.abs(sim.tau_friction).max() + np.abs(sim.tau_limit).max()
                stuck = _check_verdicts(model, fr, sim, scale)
                if k == 0 and mag > 10 * largest_bound:  # far beyond what friction holds at rest
                    assert np.abs(sim.v).max() > 0 and not stuck.all()
            assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.v))


@pytest.mark.parametrize("magnitude", [1e3, 1e6, 1e300])
def test_held_command_saturates_hits_the_stops_and_rests_there(arm7, magnitude):
    """Observed (dt = 1 ms, from the start below): the arm is on all seven stops and at rest
    after ~0.37 s, every step saturated, relative audit residual −8.8e-4 (the stops' impacts,
    at wrist speeds up to ~300 rad/s under saturated effort, leave an O(h) residual: from q = 0
    it is −2.2e-3 at 1 ms, 9.3e-4 at 0.5 ms, −4.8e-4 at 0.25 ms)."""
    model, fr = arm7
    sim = rd.Simulator(model, fr, dt=1e-3)
    sim.reset(np.linspace(-0.5, 0.5, model.nv))
    out = sim.run(0.8, lambda t, q, v: np.full(model.nv, magnitude))
    lo, hi = model.lower_limits, model.upper_limits
    assert np.all(np.isfinite(out["q"])) and np.all(np.isfinite(out["v"]))
    assert np.all(out["q"] >= lo) and np.all(out["q"] <= hi)  # never past a stop, not even 1e-15
    assert sim.saturated_steps == sim.steps
    np.testing.assert_array_equal(out["tau"], np.tile(model.effort_limits, (sim.steps, 1)))
    # every joint ends on its upper stop, at rest, held there by its stop
    np.testing.assert_array_equal(sim.q, hi)
    assert np.all(out["v"][-100:] == 0.0) and sim.at_limit.all()
    assert np.all(sim.tau_limit < 0) and sim.limit_steps > 0.5 * sim.steps
    audit = sim.audit
    assert audit.limit_dissipation > 0.1 * audit.motor_work
    assert abs(audit.relative_residual) < 1e-3, str(audit)


def _pendulum(friction=False):
    """One link swinging about a horizontal axis; gravity drives it toward its lower stop."""
    dyn = '<dynamics damping="0.0" friction="0.0"/>'
    return rd.load_urdf(f"""<robot name="pendulum">
      <link name="base"/>
      <link name="arm"><inertial><origin xyz="0.25 0 0"/><mass value="2.0"/>
        <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="0.04"/></inertial></link>
      <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 -1 0"/><limit effort="10" velocity="5" lower="-0.3" upper="1.2"/>{dyn}
      </joint></robot>""")


def test_a_falling_joint_stops_on_its_lower_limit_and_stays():
    model = _pendulum()
    sim = rd.Simulator(model, None, dt=1e-3)
    sim.reset([1.0])
    out = sim.run(1.5)
    q, v = out["q"][:, 0], out["v"][:, 0]
    assert np.all(q >= -0.3)
    hit = np.flatnonzero(q == -0.3)
    assert len(hit) and np.all(q[hit[0]:] == -0.3) and np.all(v[hit[0] + 1:] == 0.0)
    assert v[:hit[0]].min() < -3.0  # it arrived fast: the stop took that energy
    # at rest the stop holds the weight: its reaction is the gravity torque, pushing up
    g = rd.gravity_torques(model, model.create_data(), [-0.3])
    np.testing.assert_allclose(sim.tau_limit, g, rtol=1e-9)
    assert sim.tau_limit[0] > 0 and sim.at_limit[0]
    audit = sim.audit
    assert audit.kinetic == 0.0
    # frictionless: all the potential energy it lost went into the stop
    assert audit.limit_dissipation == pytest.approx(-audit.potential, rel=1e-3)
    assert abs(audit.relative_residual) < 1e-3, str(audit)


def test_limits_false_lets_the_joint_pass():
    model = _pendulum()
    sim = rd.Simulator(model, None, dt=1e-3, limits=False)
    sim.reset([1.0])
    sim.run(0.5)
    assert sim.q.min() < -0.3 and sim.limit_steps == 0
    with pytest.raises(rd.InputError, match="hinge.*outside its limits"):
        rd.Simulator(model, None, dt=1e-3).reset([2.0])


def test_reference_and_compiled_steps_agree_through_stop_impacts(arm7):
    model, fr = arm7
    sims = [rd.Simulator(model, fr, dt=1e-3, compiled=c) for c in (True, False, True)]
    sims[0]._tail[SP_ARTICULATED] = np.inf  # the compiled dense step: the Python statement's twin
    data = model.create_data()
    q0 = np.array([2.8, -1.9, 0.3, 1.9, -2.8, 0.0, 2.9])  # near several stops

    def controller(t, q, v):  # gravity compensation, then pushes into and away from the stops
        push = 60.0 * np.sign(np.sin(9 * t + np.arange(model.nv)))
        return rd.gravity_torques(model, data, q) + push

    runs = []
    for sim in sims:
        sim.reset(q0)
        runs.append(sim.run(0.25, controller))
    fast, slow, default = runs
    for key in ("q", "v", "tau_friction", "tau_limit"):
        np.testing.assert_allclose(fast[key], slow[key], atol=1e-9, rtol=1e-9, err_msg=key)
        # arm7's load-dependent laws step by the articulated recursions by default (kernels/
        # fd.py ARTICULATED_LOADED_MIN): the same answers to the solve's tolerance,
        # tol (1 + max|q̈|): q̇ 2e-9 at 360 rad/s, τ_limit 3e-8 at 3e3 N·m here
        np.testing.assert_allclose(default[key], slow[key], atol=1e-7, rtol=1e-7, err_msg=key)
    assert sims[2].limit_steps == sims[1].limit_steps
    assert sims[0].limit_steps == sims[1].limit_steps > 10
    assert (fast["tau_limit"] != 0).any() and (fast["v"] == 0).any()
    a1, a2 = sims[0].audit, sims[1].audit
    for name in ("motor_work", "friction_dissipation", "limit_dissipation"):
        assert getattr(a1, name) == pytest.approx(getattr(a2, name), rel=1e-9, abs=1e-12)
    assert a1.limit_dissipation > 0


def test_a_step_that_overflows_raises_and_keeps_the_last_good_state(arm7):
    model, fr = arm7
    sim = rd.Simulator(model, fr, dt=1e-3, saturate=False, limits=False)
    sim.reset(np.linspace(-0.5, 0.5, model.nv))
    with pytest.raises(rd.SimulationError, match=r"Simulator.step \d+ at t=.* q=\[") as err:
        for _ in range(1000):
            good = (sim.q.copy(), sim.v.copy(), sim.t, sim.steps)
            sim.step(np.full(model.nv, 1e300))
    assert err.value.step == good[3] + 1 and err.value.t == good[2]
    np.testing.assert_array_equal(sim.q, good[0])
    np.testing.assert_array_equal(sim.v, good[1])
    assert np.all(np.isfinite(sim.q)) and sim.steps == good[3]
