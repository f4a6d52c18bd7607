"""The laws' analytic derivatives (kernels/friction.py ``law_gradient``) that Newton's method of
the stick/slip solve uses (kernels/stiction.py ``_newton_matrix``), against differences of the
law classes themselves, revolute and prismatic; and the Newton iteration they drive."""
import os
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference
from robot_dynamics.friction import friction_from_config
from robot_dynamics.kernels.friction import friction_gradient_kernel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LAWS = {
    "classic_stribeck": {"model": "classic", "coulomb": 0.5, "viscous": 0.2,
                         "stribeck": {"static": 0.8, "velocity": 0.3}},
    "classic_asymmetric": {"model": "classic", "coulomb_positive": 0.6, "coulomb_negative": 0.4,
                           "viscous": 0.1},
    "load_dependent": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.02,
                       "k2": 0.005, "k3": 0.007},
    "load_dependent_255": {"model": "load_dependent", "form": "2.5.5", "coulomb": 0.3,
                           "viscous": 0.05, "k1": 0.02, "k2": 0.005},
    "bearing": {"model": "bearing", "mu": 0.02, "pin_radius": 0.02, "friction_arm": 0.03,
                "bending_arm": 0.1, "preload": 0.2, "stribeck": {"static": 0.05, "velocity": 0.2}},
    "gear_mesh": {"model": "gear_mesh", "efficiency_forward": 0.8, "efficiency_backward": 0.6},
    "composite": {"model": "composite", "parts": {
        "bearing": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.02,
                    "k2": 0.005, "k3": 0.005},
        "gear_mesh": {"model": "gear_mesh", "efficiency_forward": 0.8,
                      "efficiency_backward": 0.6},
        "motor": {"model": "classic", "coulomb": 0.5, "viscous": 0.2}}},
}


@pytest.mark.parametrize("law", sorted(LAWS))
def test_law_gradient_matches_differences_of_the_law(law):
    """∂m/∂W (6) and ∂m/∂q̇ of every joint of rrp (two revolute, one prismatic joint) at random
    wrenches and velocities of both signs, against central differences of the law classes'
    ``magnitudes`` (the specification); the regime (direction) held."""
    model = rd.load_urdf(os.path.join(REPO, "urdf", "rrp.urdf"))
    fr = friction_from_config({"default": LAWS[law]}, model)
    assert fr._packed is not None
    codes, params = fr._packed[:2]
    kinds, axes = model._kargs[0], model._kargs[2]
    rng = np.random.default_rng(3)
    q = np.zeros(model.nv)
    n = model.nv
    checked = 0
    for _ in range(25):
        W = rng.normal(scale=20.0, size=(n, 6))
        v = rng.uniform(-1.5, 1.5, n)
        d = np.sign(v)
        G, dv = np.zeros((n, 6)), np.zeros(n)
        friction_gradient_kernel(codes, params, kinds, axes, W, v, d, G, dv)
        scale = 1.0 + np.abs(G).max()
        for k in range(6):
            eps = 1e-6 * (1.0 + np.abs(W[:, k]))
            Wp, Wm = W.copy(), W.copy()
            Wp[:, k] += eps
            Wm[:, k] -= eps
            diff = (fr.magnitudes(model, Wp, q, v, d) - fr.magnitudes(model, Wm, q, v, d)) / (2 * eps)
            np.testing.assert_allclose(G[:, k], diff, atol=1e-6 * scale)
        eps = 1e-7
        diff = (fr.magnitudes(model, W, q, v + eps, d) - fr.magnitudes(model, W, q, v - eps, d)) / (2 * eps)
        np.testing.assert_allclose(dv, diff, atol=1e-5 * (1.0 + np.abs(dv).max()))
        checked += int(np.abs(G).max() > 0 or np.abs(dv).max() > 0)
    assert checked == 25  # the derivatives are not all zero: something was compared


def test_newton_solve_converges_quadratically_and_matches_the_reference():
    """Forward dynamics of panda with load-dependent friction strong enough to move the
    accelerations by tens of rad/s² (every joint sliding): Newton's method on the friction map
    answers in at most 4 iterations per state (the plain successive approximation took 6–7), and
    agrees with the Python statement (difference Jacobian) to 1e-9."""
    from conftest import PANDA, erd_urdf

    model = rd.load_urdf(erd_urdf(PANDA))
    fr = friction_from_config({"default": {"model": "load_dependent", "coulomb": 0.5,
                                           "viscous": 0.1, "k1": 0.01, "k2": 0.002,
                                           "k3": 0.001}}, model)
    fast, ref = model.create_data(), model.create_data()
    rng = np.random.default_rng(11)
    lo, hi = model.lower_limits, model.upper_limits
    moved = 0.0
    for _ in range(15):
        q = rng.uniform(lo, hi)
        v = rng.uniform(0.1, 1.5, model.nv) * rng.choice([-1, 1], model.nv)
        tau = rng.normal(scale=2.0, size=model.nv) + rd.gravity_torques(model, fast, q)
        a = rd.forward_dynamics(model, fast, q, v, tau, fr)
        rep = fast.fd_report
        assert rep.converged and rep.iterations <= 4, rep
        np.testing.assert_allclose(a, forward_dynamics_reference(model, ref, q, v, tau, fr),
                                   atol=1e-9 * (1 + np.abs(a).max()))
        moved = max(moved, np.abs(a - rd.forward_dynamics(model, ref, q, v, tau)).max())
    assert moved > 10.0  # friction mattered


@pytest.mark.parametrize("n", [12, 60])
def test_long_chains_take_the_seed_iteration_and_agree(n):
    """Long chains at an instant: the articulated recursions (kernels/articulated.py) take
    Newton's method at O(n) per iteration whatever the length (the general solve would refactor
    an n³ matrix per iterate on a 60-joint chain, and takes the seed's iteration there instead);
    compiled and reference answers agree, joints at rest included."""
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from bench_dynamics import chain_urdf

    model = rd.load_urdf(chain_urdf(n))
    fr = friction_from_config({"default": {"model": "load_dependent", "coulomb": 0.5,
                                           "viscous": 0.1, "k1": 0.01, "k2": 0.002,
                                           "k3": 0.001}}, model)
    fast, ref = model.create_data(), model.create_data()
    rng = np.random.default_rng(n)
    q = rng.uniform(-1, 1, n)
    v = rng.uniform(-1, 1, n)
    v[::4] = 0.0
    tau = rd.inverse_dynamics(model, fast, q, v, rng.uniform(-1, 1, n), fr)
    a = rd.forward_dynamics(model, fast, q, v, tau, fr)
    np.testing.assert_allclose(a, forward_dynamics_reference(model, ref, q, v, tau, fr),
                               atol=1e-8 * (1 + np.abs(a).max()))
    r1, r2 = fast.fd_report, ref.fd_report
    assert (r1.stuck, r1.breaking_away) == (r2.stuck, r2.breaking_away)
    assert r1.stuck or r1.breaking_away  # joints at rest were part of it
    v[::4] = 0.5  # every joint sliding: one solve, Newton's few iterations at any length
    a = rd.forward_dynamics(model, fast, q, v, tau, fr)
    assert fast.fd_report.method == "newton" and fast.fd_report.iterations <= 8, fast.fd_report
    np.testing.assert_allclose(a, forward_dynamics_reference(model, ref, q, v, tau, fr),
                               atol=1e-8 * (1 + np.abs(a).max()))
