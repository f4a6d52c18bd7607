"""Seed 002: the CoM form and the any-point form of Newton–Euler describe the same motion."""
import numpy as np

from robot_dynamics.spatial.rigid_body import (newton_euler_com, newton_euler_point,
    spatial_effort_about_point)


def _random_body(rng):
    A = rng.normal(size=(3, 3))
    inertia = A @ A.T + 0.1 * np.eye(3)
    return rng.uniform(0.5, 5.0), rng.normal(size=3) * 0.3, inertia


def test_com_and_point_forms_agree():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m, c, Ic = _random_body(rng)
        omega, alpha, a_p = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        # acceleration of C from that of P (rigid body kinematics)
        a_c = a_p + np.cross(alpha, c) + np.cross(omega, np.cross(omega, c))
        F_c, tau_c = newton_euler_com(m, Ic, a_c, omega, alpha)
        F_p, tau_p = newton_euler_point(m, c, Ic, a_p, omega, alpha)
        np.testing.assert_allclose(F_p, F_c, atol=1e-12)
        np.testing.assert_allclose(tau_p, tau_c + np.cross(c, F_c), atol=1e-12)  # moment transfer


def test_spatial_form_used_by_recursions_agrees():
    rng = np.random.default_rng(1)
    m, c, Ic = _random_body(rng)
    omega, alpha, a_p, v_p = (rng.normal(size=3) for _ in range(4))
    F, tau = newton_euler_point(m, c, Ic, a_p, omega, alpha)
    a_spatial = a_p - np.cross(omega, v_p)
    out = spatial_effort_about_point(m, c, Ic, v_p, omega, a_spatial, alpha)
    np.testing.assert_allclose(out, np.concatenate([F, tau]), atol=1e-12)
