"""Friction-aware inverse dynamics (seed 004 §2.7) against Pinocchio and the sign conventions."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from conftest import PANDA, PinMap, bundled, erd_urdf, random_state

LOAD = {"default": {"model": "load_dependent", "coulomb": 0.4, "viscous": 0.1, "k1": 0.02,
                    "k2": 0.004, "k3": 0.003}}
LAWS = [
    LOAD,
    {"default": {"model": "classic", "coulomb": 0.5, "viscous": 0.2,
                 "stribeck": {"static": 0.8, "velocity": 0.05}}},
    {"default": {"model": "bearing", "mu": 0.05, "pin_radius": 0.02, "friction_arm": 0.03,
                 "bending_arm": 0.08, "preload": 0.1}},
]


def test_matches_pinocchio_rnea_plus_friction_of_pinocchio_wrenches():
    """τ = Pinocchio's rnea − τf(Pinocchio's wrenches) + d∘q̇: Pinocchio has no URDF damping,
    panda's URDF has 0.003–0.3 (issue 33: the motor effort includes it; damping=False not)."""
    path = erd_urdf(PANDA)
    model = rd.load_urdf(path)
    assert np.asarray(model.damping).min() > 0
    data = model.create_data()
    pm = PinMap(model, path)
    fr = friction_from_config(LOAD, model)
    for seed in range(5):
        q, v, a = random_state(model, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        ptau = pm.ours(pm.pin.rnea(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(a)))
        Wp = pm.wrenches()
        mag = np.array([fr.laws[i].magnitude(Wp[i], model.axes[i], model.kinds[i] == 1, q[i], v[i])
                        for i in range(model.nv)])
        tauf = -mag * np.sign(v)
        np.testing.assert_allclose(tau, ptau - tauf + model.damping * v,
                                   atol=1e-8 * max(1, np.abs(ptau).max()))
        np.testing.assert_allclose(data.tau_friction, tauf, atol=1e-9)
        rigid = rd.inverse_dynamics(model, data, q, v, a, friction=fr, damping=False)
        np.testing.assert_allclose(rigid, ptau - tauf, atol=1e-8 * max(1, np.abs(ptau).max()))


@pytest.mark.parametrize("config", LAWS)
@pytest.mark.parametrize("robot", ["arm7.urdf", "rrp.urdf", "arm7_gripper.urdf"])
def test_friction_power_never_positive_and_motor_supplies_more_along_motion(config, robot):
    model = rd.load_urdf(bundled(robot))
    data = model.create_data()
    fr = friction_from_config(config, model)
    for seed in range(10):
        q, v, a = random_state(model, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        tauf = data.tau_friction.copy()
        assert np.all(v * tauf <= 1e-15)  # eq. 2.5.1: friction dissipates, joint by joint
        tau0 = rd.rnea(model, data, q, v, a)
        # eq. 2.7.5: fn_mot = fn∥ − fn∥_vin — more effort in the direction of motion
        assert np.all((tau - tau0) * np.sign(v) >= -1e-12)
        assert np.any(np.abs(tauf) > 0)


def test_at_rest_friction_follows_commanded_acceleration_or_vanishes():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    data = model.create_data()
    fr = friction_from_config({"default": {"model": "classic", "coulomb": 1.0, "viscous": 0.0,
                                           "stribeck": {"static": 1.6, "velocity": 0.1}}}, model)
    q, v = np.array([0.3, 0.2]), np.zeros(2)
    rd.inverse_dynamics(model, data, q, v, [2.0, -3.0], friction=fr)
    np.testing.assert_allclose(data.tau_friction, [-1.6, 1.6])  # breakaway, against q̈
    rd.inverse_dynamics(model, data, q, v, [0.0, 0.0], friction=fr)
    np.testing.assert_allclose(data.tau_friction, [0.0, 0.0])  # stiction holds: no extra effort
    # smoothing: continuous through q̇ = 0
    taus = [rd.inverse_dynamics(model, data, q, [s, s], [0, 0], friction=fr,
                                smoothing_velocity=0.01) for s in (-1e-5, 0.0, 1e-5)]
    assert np.abs(taus[2] - taus[0]).max() < 0.01


def test_without_friction_equals_rnea():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    q, v, a = random_state(model, 1)
    np.testing.assert_allclose(rd.inverse_dynamics(model, data, q, v, a),
                               rd.rnea(model, data, q, v, a), atol=0)
    assert not data.tau_friction.any()
