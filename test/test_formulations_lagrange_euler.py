"""Lagrange–Euler (seed 003) against the core's Newton–Euler, on bundled and real robots."""
import glob
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.formulations import lagrange_euler as le
from conftest import PANDA, REPO, UR5, erd_urdf, random_state

ROBOTS = sorted(glob.glob(os.path.join(REPO, "urdf", "*.urdf"))) + [PANDA, UR5]


@pytest.mark.parametrize("robot", ROBOTS, ids=os.path.basename)
def test_lagrange_euler_equals_newton_euler(robot):
    model = rd.load_urdf(robot if os.path.isabs(robot) else erd_urdf(robot))
    data = model.create_data()
    for seed in range(2):
        q, v, a = random_state(model, seed)
        scale = max(1.0, np.abs(rd.rnea(model, data, q, v, a)).max())
        np.testing.assert_allclose(le.mass_matrix(model, q), rd.mass_matrix(model, data, q),
                                   atol=1e-9 * scale)
        np.testing.assert_allclose(le.coriolis(model, q, v), rd.coriolis_torques(model, data, q, v),
                                   atol=1e-9 * scale)
        np.testing.assert_allclose(le.gravity(model, q), rd.gravity_torques(model, data, q),
                                   atol=1e-9 * scale)
        np.testing.assert_allclose(le.inverse_dynamics(model, q, v, a), rd.rnea(model, data, q, v, a),
                                   atol=1e-9 * scale)
        tau = rd.rnea(model, data, q, v, a)
        np.testing.assert_allclose(le.forward_dynamics(model, q, v, tau), a, atol=1e-8)


def test_pseudo_inertia_sign_of_products():
    """J's off-diagonals are +∫xy dm: the negatives of the inertia tensor's products."""
    # two point masses at (1, 1, 0) and (-1, -1, 0): ∫xy dm = 2 m, I_xy = −2 m
    m = 0.5
    inertia_com = np.array([[1.0, -1.0, 0], [-1.0, 1.0, 0], [0, 0, 2.0]])  # 2 m (…) with m = 0.5
    J = le.pseudo_inertia(2 * m, np.zeros(3), inertia_com)
    assert J[0, 1] == pytest.approx(1.0)  # Σ m x y = 0.5·1 + 0.5·1
    assert J[0, 0] == pytest.approx(1.0) and J[2, 2] == pytest.approx(0.0)
