"""Batched dynamics equal the per-call functions, sample by sample."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch, joint_wrenches_batch, rnea_batch
from robot_dynamics.friction import friction_from_config
from conftest import bundled


@pytest.mark.parametrize("robot", ["arm7.urdf", "arm7_gripper.urdf", "rrp.urdf"])
def test_batch_matches_single_calls(robot):
    model = rd.load_urdf(bundled(robot))
    data = model.create_data()
    fr = friction_from_config({"default": {"model": "load_dependent", "coulomb": 0.4,
                                           "viscous": 0.1, "k1": 0.02, "k2": 0.004, "k3": 0.003}},
                              model)
    rng = np.random.default_rng(0)
    Q, V, A = (rng.uniform(-1, 1, (64, model.nv)) for _ in range(3))
    V[::5, 0] = 0.0  # some joints at rest: direction from the commanded acceleration
    TAU = rnea_batch(model, Q, V, A)
    W = joint_wrenches_batch(model, Q, V, A)
    TAUM, TAUF = inverse_dynamics_batch(model, Q, V, A, fr, return_friction=True)
    for k in range(64):
        np.testing.assert_allclose(TAU[k], rd.rnea(model, data, Q[k], V[k], A[k]), atol=1e-10)
        np.testing.assert_allclose(W[k], data.f, atol=1e-10)
        np.testing.assert_allclose(TAUM[k], rd.inverse_dynamics(model, data, Q[k], V[k], A[k], fr),
                                   atol=1e-10)
        np.testing.assert_allclose(TAUF[k], data.tau_friction, atol=1e-12)


def test_batch_bad_input_named():
    model = rd.load_urdf(bundled("rrp.urdf"))
    Q = np.zeros((4, 3))
    with pytest.raises(rd.InputError, match=r"V in rnea_batch: expected shape \(N, 3\)"):
        rnea_batch(model, Q, np.zeros((4, 2)), Q)
    bad = Q.copy()
    bad[2, 1] = np.nan
    with pytest.raises(rd.InputError,
                       match=r"A in rnea_batch: non-finite values in row\(s\) \[2\]"):
        rnea_batch(model, Q, Q, bad)
