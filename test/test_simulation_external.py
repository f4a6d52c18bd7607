"""External efforts in the Simulator (issue 32): ``step(tau, fext=…)`` held over the step on the
compiled and the Python path (mimic models too), the energy audit with their work, state-dependent
efforts (callables, ``run(external=…)``)."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import InputError
from robot_dynamics.friction import friction_from_config
from conftest import bundled

LOAD = {"default": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.01,
                    "k2": 0.005, "k3": 0.002}}
LEADERS = {"default": {"model": "classic", "coulomb": 0.5, "viscous": 0.1},
           "joints": {"finger_left": {"model": "none"}, "finger_right": {"model": "none"}}}


def _fext(n, seed, scale=20.0):
    return np.random.default_rng(seed).normal(scale=scale, size=(n, 6))


def _arm7(friction=True):
    model = rd.load_urdf(bundled("arm7.urdf"))
    return model, (friction_from_config(LOAD, model) if friction else None)


def _gripper():
    model = rd.load_urdf(bundled("arm7_gripper_mimic.urdf"), mimic=True)
    return model, friction_from_config(LEADERS, model.full)


@pytest.mark.parametrize("which", ["arm7", "gripper"])
def test_step_with_fext_compiled_equals_python_path(which):
    """The compiled step with its fext slot and the Python statement (``compiled=False``) give
    the same trajectory under a constant wrench plus a state-dependent one, friction included;
    the wrench changes the motion."""
    model, fr = _arm7() if which == "arm7" else _gripper()
    nb = model.full.nv if model.coupling is not None else model.nv
    F = _fext(nb, 1, 5.0)
    sims = [rd.Simulator(model, fr, dt=1e-3, compiled=c, limits=False) for c in (True, False)]
    plain = rd.Simulator(model, fr, dt=1e-3, limits=False)
    assert sims[0]._packed is not None
    q0 = np.linspace(-0.4, 0.5, model.nv)
    data = model.create_data()
    for sim in sims + [plain]:
        sim.reset(q0)
    spring = lambda t, q, v: F * (1.0 + np.sin(3 * t) + 0.1 * q[0])  # noqa: E731
    for k in range(150):
        tau = rd.gravity_torques(model, data, sims[0].q) + np.sin(0.05 * k + np.arange(model.nv))
        for sim in sims:
            sim.step(tau, fext=F if k % 2 else spring)
        plain.step(tau)
    np.testing.assert_allclose(sims[0].q, sims[1].q, atol=1e-9, rtol=0)
    np.testing.assert_allclose(sims[0].v, sims[1].v, atol=1e-8, rtol=0)
    np.testing.assert_allclose(sims[0].tau_friction, sims[1].tau_friction, atol=1e-8, rtol=0)
    assert abs(sims[0].audit.external_work - sims[1].audit.external_work) < 1e-9
    assert np.abs(sims[0].q - plain.q).max() > 1e-3  # the wrench moved it


@pytest.mark.parametrize("which", ["arm7", "gripper"])
@pytest.mark.parametrize("compiled", [True, False])
def test_a_small_step_follows_forward_dynamics_with_fext(which, compiled):
    model, _ = _arm7(False) if which == "arm7" else _gripper()
    nb = model.full.nv if model.coupling is not None else model.nv
    rng = np.random.default_rng(3)
    q, v = rng.uniform(-0.5, 0.5, model.nv), rng.uniform(-0.3, 0.3, model.nv)
    tau, F = rng.normal(size=model.nv), _fext(nb, 4)
    a = rd.forward_dynamics(model, model.create_data(), q, v, tau, fext=F)
    assert np.abs(a - rd.forward_dynamics(model, model.create_data(), q, v, tau)).max() > 1.0
    h = 1e-6
    sim = rd.Simulator(model, None, dt=h, limits=False, damping=False, compiled=compiled)
    sim.reset(q, v)
    sim.step(tau, fext=F)
    np.testing.assert_allclose((sim.v - v) / h, a, rtol=1e-4, atol=1e-4 * np.abs(a).max())


def test_fext_none_is_todays_step_and_zeros_change_nothing():
    model, fr = _arm7()
    sims = [rd.Simulator(model, fr, dt=1e-3) for _ in range(3)]
    q0 = np.linspace(-0.3, 0.3, model.nv)
    for sim in sims:
        sim.reset(q0)
    for k in range(50):
        tau = 3.0 * np.sin(0.1 * k + np.arange(model.nv))
        sims[0].step(tau)
        sims[1].step(tau, fext=None)
        sims[2].step(tau, fext=np.zeros((model.nv, 6)))
    np.testing.assert_array_equal(sims[0].q, sims[1].q)
    np.testing.assert_array_equal(sims[0].v, sims[1].v)
    np.testing.assert_allclose(sims[0].q, sims[2].q, atol=1e-13, rtol=0)
    assert sims[2].audit.external_work == 0.0


@pytest.mark.parametrize("bad, words", [
    (np.zeros((3, 6)), ["fext", "(7, 6)", "(3, 6)"]),
    (np.zeros(6), ["fext", "(7, 6)"]),
    ("nan", ["fext", "row(s) [2]"]),
    ("inf", ["fext", "row(s) [2]"]),
    ("callable", ["fext", "(7, 6)", "callable"]),
])
def test_bad_fext_is_refused_in_one_line_and_the_state_kept(bad, words):
    model, fr = _arm7()
    sim = rd.Simulator(model, fr)
    sim.reset(np.full(model.nv, 0.1))
    if isinstance(bad, str) and bad in ("nan", "inf"):
        F = np.zeros((model.nv, 6))
        F[2, 1] = np.nan if bad == "nan" else np.inf
        bad = F
    elif isinstance(bad, str):
        bad = lambda t, q, v: np.zeros((2, 6))  # noqa: E731
    with pytest.raises(InputError) as err:
        sim.step(np.zeros(model.nv), fext=bad)
    msg = str(err.value)
    assert "\n" not in msg and all(w in msg for w in words), msg
    assert sim.steps == 0 and np.array_equal(sim.q, np.full(model.nv, 0.1))
    with pytest.raises(InputError, match="fext"):
        rd.Simulator(model, fr, external=np.zeros((2, 6)))


def _driven_run(model, fr, seconds, compiled=True, **run):
    """A computed-torque tracking run with friction; returns the Simulator."""
    sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
    q0 = np.linspace(-0.3, 0.3, model.nv)
    sim.reset(q0)
    ctl = model.create_data()
    amp, w = np.linspace(0.2, 0.5, model.nv), np.linspace(1.0, 2.0, model.nv)

    def controller(t, q, v):
        qd, vd = q0 + amp * np.sin(w * t), amp * w * np.cos(w * t)
        return rd.inverse_dynamics(model, ctl, q, v, -amp * w ** 2 * np.sin(w * t)
                                   + 30 * (vd - v) + 300 * (qd - q), friction=fr)

    sim.run(seconds, controller, **run)
    return sim


@pytest.mark.parametrize("compiled", [True, False])
def test_energy_audit_closes_with_the_external_work(compiled):
    """A constant wrench (body frame) on the last link, and a world-fixed force at the tool
    (a callable): the audit closes to the same tolerance as the run without them, and could not
    without the external work (it is a large share of the balance)."""
    model, fr = _arm7()
    seconds = 2.0 if compiled else 0.3
    plain = _driven_run(model, fr, seconds, compiled)
    d = model.create_data()
    F = rd.point_force(model, d, np.zeros(model.nv), "link_7", [0.0, 0.0, 30.0], local=True)
    world = lambda t, q, v: rd.point_force(model, d, q, "tool0", [15.0, -10.0, -40.0])  # noqa
    tol = max(10 * abs(plain.audit.relative_residual), 1e-4)
    assert abs(plain.audit.relative_residual) < 1e-3, str(plain.audit)
    for external in (F, world):
        sim = _driven_run(model, fr, seconds, compiled, external=external)
        audit = sim.audit
        assert abs(audit.external_work) > 0.05 * audit.scale, str(audit)
        assert abs(audit.relative_residual) < tol, str(audit)
        assert abs(audit.residual + audit.external_work) > 100 * abs(audit.residual)
        assert "external work" in str(audit)


def test_simulator_external_callable_is_evaluated_once_per_step_at_the_step_start():
    model, fr = _arm7()
    calls = []
    F = _fext(model.nv, 7, 3.0)

    def effort(t, q, v):
        calls.append((t, q.copy(), v.copy()))
        return F * np.cos(t)

    sim = rd.Simulator(model, fr, external=effort)
    twin = rd.Simulator(model, fr)
    for s in (sim, twin):
        s.reset(np.full(model.nv, 0.2))
    states = []
    for k in range(20):
        states.append((sim.t, sim.q.copy(), sim.v.copy()))
        sim.step(np.ones(model.nv))
        twin.step(np.ones(model.nv), fext=F * np.cos(twin.t))
    assert len(calls) == 20
    for (t, q, v), (t2, q2, v2) in zip(calls, states):
        assert t == t2 and np.array_equal(q, q2) and np.array_equal(v, v2)
    np.testing.assert_array_equal(sim.q, twin.q)
    # a step's fext adds to the Simulator's external
    a, b = rd.Simulator(model, fr, external=F), rd.Simulator(model, fr)
    for s in (a, b):
        s.reset(np.full(model.nv, 0.2))
    a.step(np.ones(model.nv), fext=F)
    b.step(np.ones(model.nv), fext=2 * F)
    np.testing.assert_allclose(a.q, b.q, atol=1e-14, rtol=0)
    # run(external=...) steps in Python and equals the same steps taken one by one
    c, e = rd.Simulator(model, fr), rd.Simulator(model, fr)
    for s in (c, e):
        s.reset(np.full(model.nv, 0.2))
    out = c.run(steps=30, external=effort)
    for _ in range(30):
        e.step(np.zeros(model.nv), fext=effort)
    np.testing.assert_array_equal(out["q"][-1], e.q)
    assert c.audit.external_work == pytest.approx(e.audit.external_work, rel=1e-12)
    with pytest.raises(InputError, match="fext"):
        c.run(steps=2, external=np.zeros((1, 6)))


@pytest.mark.parametrize("law", [{"default": {"model": "classic", "coulomb": 0.4,
                                              "viscous": 0.1}}, LOAD])
def test_joint_wrenches_of_a_step_carry_the_external_wrench(law):
    """The loads of the step's answer (sim.joint_wrenches) include fext on both paths — also
    when the compiled step's law does not read loads and they are recomputed afterwards."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = friction_from_config(law, model)
    F = _fext(model.nv, 11, 10.0)
    sims = [rd.Simulator(model, fr, compiled=c, limits=False) for c in (True, False)]
    for sim in sims:
        sim.reset(np.full(model.nv, 0.2), np.full(model.nv, 0.1))
        sim.step(np.ones(model.nv), fext=F)
    W = [sim.joint_wrenches for sim in sims]
    np.testing.assert_allclose(W[0], W[1], atol=1e-8, rtol=0)
    plain = rd.Simulator(model, fr, limits=False)
    plain.reset(np.full(model.nv, 0.2), np.full(model.nv, 0.1))
    plain.step(np.ones(model.nv))
    assert np.abs(W[0] - plain.joint_wrenches).max() > 1.0


def test_fext_driving_joints_onto_their_stops_compiled_equals_python_and_the_audit_closes():
    """A wrench that throws the arm onto its stops (impulses and held reactions): the fext slot
    and the Python statement agree, and the audit (external work booked with the step's
    velocity after the stop's impulse) closes on both paths."""
    model, fr = _arm7()
    F = _fext(model.nv, 5, 60.0)
    sims = [rd.Simulator(model, fr, dt=1e-3, compiled=c) for c in (True, False)]
    q0 = 0.9 * np.array(model.lower_limits) + 0.1 * np.array(model.upper_limits)
    for sim in sims:
        sim.reset(q0)
        for _ in range(150):
            sim.step(np.zeros(model.nv), fext=F)
    assert sims[0].limit_steps > 10 and sims[1].limit_steps == sims[0].limit_steps
    np.testing.assert_allclose(sims[0].q, sims[1].q, atol=1e-8, rtol=0)
    for sim in sims:
        audit = sim.audit
        assert audit.limit_dissipation > 0 and abs(audit.external_work) > 0.1 * audit.scale
        assert abs(audit.relative_residual) < 1e-3, str(audit)
    assert sims[0].audit.external_work == pytest.approx(sims[1].audit.external_work, rel=1e-8)


def test_a_contact_on_a_mimic_finger_compiled_equals_python():
    from robot_dynamics.simulation.contact import PlaneContact

    model, fr = _gripper()
    q0 = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.7, 0.1, 0.02])
    full = model.full
    d = full.create_data()
    rd.forward_kinematics(full, d, model.expand(q0))
    tip = rd.frame_placement(full, d, "left_finger")[:3, 3]
    wall = PlaneContact(model, "left_finger", plane_point=tip + [0, 0, 0.003], normal=(0, 0, 1),
                        stiffness=2e4, damping=20.0, friction=0.3, slip_velocity=1e-2)
    assert wall(0.0, q0, np.zeros(model.nv)).shape == (full.nv, 6) and wall.normal_force > 0
    sims = [rd.Simulator(model, fr, dt=5e-4, compiled=c, limits=False, external=wall)
            for c in (True, False)]
    for sim in sims:
        sim.reset(q0)
        for _ in range(100):
            sim.step(rd.gravity_torques(model, model.create_data(), sim.q))
    np.testing.assert_allclose(sims[0].q, sims[1].q, atol=1e-9, rtol=0)
    assert abs(sims[0].audit.external_work) > 0
    assert abs(sims[0].audit.relative_residual) < 1e-3, str(sims[0].audit)
