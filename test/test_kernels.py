"""Compiled kernels against the readable reference implementations (to 1e-10)."""
import glob
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from conftest import PANDA, REPO, UR5, erd_urdf, random_state
from test_inverse_dynamics import LAWS

ROBOTS = sorted(glob.glob(os.path.join(REPO, "urdf", "*.urdf")))


@pytest.fixture(params=ROBOTS + [PANDA, UR5], ids=os.path.basename)
def model(request):
    path = request.param if os.path.isabs(request.param) else erd_urdf(request.param)
    return rd.load_urdf(path)


@pytest.mark.parametrize("config", LAWS + [{"default": {
    "model": "classic", "coulomb_positive": 1.0, "coulomb_negative": 0.4,
    "stribeck": {"static": 1.5, "velocity": 0.1}}}])
def test_friction_kernel_matches_law_objects(model, config):
    fr = friction_from_config(config, model)
    assert fr._packed is not None
    data = model.create_data()
    rng = np.random.default_rng(0)
    for seed in range(4):
        q, v, a = random_state(model, seed)
        v[seed % model.nv] = 0.0
        rd.rnea(model, data, q, v, a)
        dirs = np.sign(rng.normal(size=model.nv))
        got = fr.magnitudes(model, data.f, q, v, dirs)
        want = [law.magnitude(data.f[i], model.axes[i], model.kinds[i] == 1, q[i], v[i], dirs[i])
                for i, law in enumerate(fr.laws)]
        np.testing.assert_allclose(got, want, atol=1e-12, rtol=1e-12)


def test_python_laws_fall_back_to_reference_path():
    model = rd.load_urdf(os.path.join(REPO, "urdf", "planar_2r.urdf"))
    fr = friction_from_config({"default": {"model": "load_dependent", "coulomb": 0.3,
                                           "k1": lambda q, qd: 0.01 * (1 + q * q)}}, model)
    assert fr._packed is None
    data = model.create_data()
    rd.rnea(model, data, [0.4, 0.1], [1.0, 1.0], [0.0, 0.0])
    got = fr.magnitudes(model, data.f, [0.4, 0.1], [1.0, 1.0])
    assert got[0] == pytest.approx(0.3 + 0.01 * 1.16 * np.linalg.norm(
        data.f[0, 3:] - (data.f[0, 3:] @ model.axes[0]) * model.axes[0]))


@pytest.mark.parametrize("h", [0.0, 1e-3])
def test_compiled_friction_solver_matches_reference(h):
    from robot_dynamics.algorithm.friction_solve import solve_with_friction

    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
    data = model.create_data()
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), model)
    rng = np.random.default_rng(5)
    kinds_seen = set()
    for seed in range(12):
        q, v, _ = random_state(model, seed)
        v[rng.random(model.nv) < 0.5] = 0.0  # a mix of resting and sliding joints
        g = rd.gravity_torques(model, data, q)
        tau = g * rng.uniform(0.2, 1.2) + rng.normal(size=model.nv)
        bias = rd.bias_forces(model, data, q, v)
        W0 = data.f.copy()
        M = rd.mass_matrix(model, data, q)
        D = rd.wrench_directors(model, data)
        out = [solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=h, reference=ref)
               for ref in (True, False)]
        (a1, f1, r1), (a2, f2, r2) = out
        assert r1.converged and r2.converged
        np.testing.assert_allclose(a2, a1, atol=1e-9)
        np.testing.assert_allclose(f2, f1, atol=1e-9)
        assert r1.stuck == r2.stuck and r1.breaking_away == r2.breaking_away
        kinds_seen.add((bool(r1.stuck), bool(r1.breaking_away)))
    assert (True, True) in kinds_seen or (True, False) in kinds_seen  # stiction was exercised


@pytest.mark.parametrize("robot", ["arm7", "panda"])
@pytest.mark.parametrize("with_friction", [True, False])
def test_fused_forward_dynamics_matches_step_by_step(robot, with_friction):
    """kernels/fd.py (one compiled call) against forward_dynamics_reference (Python steps and the
    Python friction solver), with resting, sliding, sticking and breaking-away joints."""
    from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference

    if robot == "arm7":
        model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
        config = os.path.join(REPO, "config", "arm7_friction.yaml")
    else:
        model = rd.load_urdf(erd_urdf(PANDA))
        config = LAWS[2]
    fr = friction_from_config(config, model) if with_friction else None
    fast, ref = model.create_data(), model.create_data()
    rng = np.random.default_rng(11)
    seen = set()
    for seed in range(12):
        q, v, _ = random_state(model, seed)
        v[rng.random(model.nv) < 0.5] = 0.0
        tau = rd.gravity_torques(model, fast, q) * rng.uniform(0.2, 1.2) + rng.normal(size=model.nv)
        a1 = forward_dynamics_reference(model, ref, q, v, tau, fr)
        a2 = rd.forward_dynamics(model, fast, q, v, tau, fr)
        np.testing.assert_allclose(a2, a1, atol=1e-9)
        np.testing.assert_allclose(fast.tau_friction, ref.tau_friction, atol=1e-9)
        np.testing.assert_allclose(fast.f, ref.f, atol=1e-10)  # fn(q, q̇, 0)
        # (M is not among the outputs: the articulated recursions answer without it)
        r1, r2 = ref.fd_report, fast.fd_report
        assert (r2.converged, r2.stuck, r2.breaking_away) == (r1.converged, r1.stuck,
                                                              r1.breaking_away)
        seen.add((bool(r1.stuck), bool(r1.breaking_away)))
    if with_friction and robot == "arm7":
        assert (True, True) in seen or (True, False) in seen  # stiction was exercised


def test_compiled_simulation_step_matches_python_step():
    """Simulator's fused step (kernels/fd.py) against the Python statement of the scheme."""
    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), model)
    sims = [rd.Simulator(model, fr, dt=1e-3, compiled=c) for c in (True, False)]
    data = model.create_data()
    q0 = np.linspace(-0.5, 0.5, model.nv)

    def controller(t, q, v):  # gravity compensation plus a push that starts and stops joints
        return rd.gravity_torques(model, data, q) + 3.0 * np.sin(7 * t + np.arange(model.nv))

    runs = []
    for sim in sims:
        sim.reset(q0)
        runs.append(sim.run(0.3, controller))
    fast, slow = runs
    np.testing.assert_allclose(fast["q"], slow["q"], atol=1e-9)
    np.testing.assert_allclose(fast["v"], slow["v"], atol=1e-8)
    np.testing.assert_allclose(fast["tau_friction"], slow["tau_friction"], atol=1e-7)
    assert (fast["v"] == 0).any()  # some joint stuck exactly at some step
    a1, a2 = sims[0].audit, sims[1].audit
    for name in ("motor_work", "friction_dissipation", "damping_dissipation"):
        assert getattr(a1, name) == pytest.approx(getattr(a2, name), rel=1e-9, abs=1e-12)
    assert sims[0].report.converged and sims[0].report.stuck == sims[1].report.stuck


def test_compiled_friction_solver_with_stops_matches_reference():
    """The stick/slip solve with the simulator's stops (bounds on the end-of-step velocity),
    compiled against robot_dynamics.algorithm.friction_solve: motion, friction, stops' reactions, states."""
    from robot_dynamics.algorithm.friction_solve import solve_with_friction

    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
    data = model.create_data()
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), model)
    rng = np.random.default_rng(7)
    h = 1e-3
    seen = set()
    for seed in range(16):
        q, v, _ = random_state(model, seed)
        v[rng.random(model.nv) < 0.5] = 0.0
        g = rd.gravity_torques(model, data, q)
        tau = g * rng.uniform(0.2, 1.2) + rng.normal(scale=30.0, size=model.nv)
        # some joints on a stop (bound 0), some approaching one, the rest free
        kind = rng.integers(0, 4, model.nv)
        lo = np.where(kind == 0, np.minimum(v, 0.0) - rng.uniform(0, 0.05, model.nv), -np.inf)
        lo = np.where(kind == 1, 0.0, lo)
        hi = np.where(kind == 2, 0.0, np.inf)
        v = np.clip(v, lo, hi)
        bias = rd.bias_forces(model, data, q, v)
        W0 = data.f.copy()
        M = rd.mass_matrix(model, data, q)
        D = rd.wrench_directors(model, data)
        out = [solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=h, reference=ref,
                                   u_lower=lo, u_upper=hi) for ref in (True, False)]
        (a1, f1, r1), (a2, f2, r2) = out
        assert r1.converged and r2.converged
        np.testing.assert_allclose(a2, a1, atol=1e-9)
        np.testing.assert_allclose(f2, f1, atol=1e-9)
        np.testing.assert_allclose(r2.tau_limit, r1.tau_limit, atol=1e-9)
        assert (r1.stuck, r1.at_limit, r1.breaking_away) == (r2.stuck, r2.at_limit,
                                                              r2.breaking_away)
        u = v + h * a1
        assert np.all(u >= lo - 1e-9) and np.all(u <= hi + 1e-9)  # no joint past a stop
        on = np.isin(model.joint_names, r1.at_limit)
        assert np.all(r1.tau_limit[~on] == 0.0)
        seen.add(bool(r1.at_limit))
    assert True in seen  # stops were exercised


def test_warmup_runs_the_kernels_on_a_stand_in_and_on_a_model():
    from robot_dynamics.algorithm.warmup import warmup

    warmup()
    model = rd.load_urdf(os.path.join(REPO, "urdf", "planar_2r.urdf"))
    warmup(model)
    data = model.create_data()
    assert rd.rnea(model, data, np.zeros(2), np.zeros(2), np.zeros(2)).shape == (2,)
