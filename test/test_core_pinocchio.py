"""The core recursions against Pinocchio (test-only reference), on real URDFs."""
import glob
import os

import numpy as np
import pytest

import robot_dynamics as rd
from conftest import PANDA, UR5, PinMap, erd_urdf, random_state, REPO

ROBOTS = [PANDA, UR5, "baxter_description/urdf/baxter.urdf", "talos_data/robots/talos_reduced.urdf"]


def _models():
    out = [(r, erd_urdf(r)) for r in ROBOTS]
    out += [(os.path.basename(p), p) for p in sorted(glob.glob(os.path.join(REPO, "urdf", "*.urdf")))]
    return out


@pytest.mark.parametrize("name,path", _models(), ids=lambda x: os.path.basename(str(x)))
def test_rnea_wrenches_mass_matrix_match_pinocchio(name, path):
    model = rd.load_urdf(path)
    data = model.create_data()
    pm = PinMap(model, path)
    pin = pm.pin
    for seed in range(3):
        q, v, a = random_state(model, seed)
        tau = rd.rnea(model, data, q, v, a)
        W = rd.joint_wrenches(model, data)
        ptau = pin.rnea(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(a))
        scale = max(1.0, np.abs(ptau).max())
        np.testing.assert_allclose(tau, pm.ours(ptau), rtol=0, atol=1e-8 * scale)
        Wp = pm.wrenches()
        np.testing.assert_allclose(W, Wp, rtol=0, atol=1e-8 * max(1.0, np.abs(Wp).max()))
        M = rd.mass_matrix(model, data, q)
        pM = pin.crba(pm.pmodel, pm.pdata, pm.q(q))
        pM = np.triu(pM) + np.triu(pM, 1).T
        np.testing.assert_allclose(M, pm.ours_matrix(pM), rtol=0, atol=1e-8 * np.abs(pM).max())
        g = rd.gravity_torques(model, data, q)
        pg = pin.computeGeneralizedGravity(pm.pmodel, pm.pdata, pm.q(q))
        np.testing.assert_allclose(g, pm.ours(pg), rtol=0, atol=1e-8 * max(1.0, np.abs(pg).max()))
        b = rd.bias_forces(model, data, q, v)
        pb = pin.nle(pm.pmodel, pm.pdata, pm.q(q), pm.v(v))
        np.testing.assert_allclose(b, pm.ours(pb), rtol=0, atol=1e-8 * max(1.0, np.abs(pb).max()))


def test_rnea_is_mass_matrix_times_a_plus_bias():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q, v, a = random_state(model, 7)
    M = rd.mass_matrix(model, data, q)
    b = rd.bias_forces(model, data, q, v)
    np.testing.assert_allclose(rd.rnea(model, data, q, v, a), M @ a + b, atol=1e-10)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    c = rd.coriolis_torques(model, data, q, v)
    g = rd.gravity_torques(model, data, q)
    np.testing.assert_allclose(c + g, b, atol=1e-10)


def test_gravity_setting_changes_gravity_torques_linearly():
    model = rd.load_urdf(erd_urdf(UR5))
    data = model.create_data()
    q, _, _ = random_state(model, 3)
    g1 = rd.gravity_torques(model, data, q)
    model.gravity = (0.0, 0.0, -2 * 9.81)
    np.testing.assert_allclose(rd.gravity_torques(model, data, q), 2 * g1, atol=1e-10)
    model.gravity = (0.0, 0.0, 0.0)
    assert np.abs(rd.gravity_torques(model, data, q)).max() == 0.0
