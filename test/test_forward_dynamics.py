"""Forward dynamics (seed 004 §2.8): Pinocchio's ABA without friction, the inverse of ID with it."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from conftest import PANDA, UR5, PinMap, bundled, erd_urdf, random_state
from test_inverse_dynamics import LAWS


@pytest.mark.parametrize("robot", [PANDA, UR5])
def test_frictionless_matches_pinocchio_aba(robot):
    path = erd_urdf(robot)
    model = rd.load_urdf(path)
    data = model.create_data()
    pm = PinMap(model, path)
    for seed in range(4):
        q, v, _ = random_state(model, seed)
        tau = np.random.default_rng(seed).normal(size=model.nv) * 5
        a = rd.forward_dynamics(model, data, q, v, tau)
        pa = pm.ours(pm.pin.aba(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(tau)))
        np.testing.assert_allclose(a, pa, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("config", LAWS)
@pytest.mark.parametrize("robot", ["arm7.urdf", "rrp.urdf", "arm7_gripper.urdf"])
def test_fd_inverts_id_with_every_joint_sliding(config, robot):
    model = rd.load_urdf(bundled(robot))
    data = model.create_data()
    fr = friction_from_config(config, model)
    for seed in range(5):
        q, v, a = random_state(model, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        a2 = rd.forward_dynamics(model, data, q, v, tau, friction=fr)
        np.testing.assert_allclose(a2, a, atol=1e-6)
        report = data.fd_report
        assert report.converged and report.method in ("fixed_point", "newton") and not report.stuck
        assert np.all(v * data.tau_friction <= 1e-15)


def test_strong_load_dependent_friction_solves_and_round_trips():
    """Load terms 15× the bundled ones (the plain successive approximation diverged on some of
    these states and needed the Newton fallback): the solve's Newton iteration on the laws'
    derivatives answers every state, and FD inverts ID — compiled and reference alike."""
    from robot_dynamics.forward_dynamics import forward_dynamics_reference

    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    strong = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.1, "k1": 0.15,
                          "k2": 0.075, "k3": 0.075}}
    fr = friction_from_config(strong, model)
    for seed in range(20):
        q, v, a = random_state(model, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        for fd in (rd.forward_dynamics, forward_dynamics_reference):
            a2 = fd(model, data, q, v, tau, friction=fr, on_failure="report")
            assert data.fd_report.converged, data.fd_report.message
            np.testing.assert_allclose(a2, a, atol=1e-6)


def test_failure_is_never_silent():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    data = model.create_data()
    # friction that grows much faster than the inertia can follow: no consistent motion
    wild = {"default": {"model": "callable",
                        "function": lambda n, f, q, qd: 50.0 * np.linalg.norm(f) ** 1.5}}
    fr = friction_from_config(wild, model)
    q, v = np.array([0.3, 0.4]), np.array([1.0, -1.0])
    with pytest.raises(rd.FrictionSolveError, match="did not converge|cycles|limit"):
        rd.forward_dynamics(model, data, q, v, [50.0, -20.0], friction=fr, max_iter=30)
    rd.forward_dynamics(model, data, q, v, [50.0, -20.0], friction=fr, max_iter=30,
                        on_failure="report")
    assert data.fd_report.converged is False and data.fd_report.message
