"""Stiction: joints at rest stick while their load-dependent bound holds, break away otherwise."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config, load_components
from conftest import bundled

Q0 = np.array([0.5, -0.3])
K = {"k1": 0.02, "k2": 0.01, "k3": 0.01}


def _friction(model, shoulder_coulomb, elbow_coulomb=50.0):
    return friction_from_config({"joints": {
        "shoulder": {"model": "load_dependent", "coulomb": shoulder_coulomb, "viscous": 0.1, **K},
        "elbow": {"model": "load_dependent", "coulomb": elbow_coulomb, "viscous": 0.1, **K}}}, model)


def _threshold(model, q):
    """Shoulder Coulomb level below which the arm, at rest at q, cannot be held (seed 2.5.6)."""
    data = model.create_data()
    g = rd.gravity_torques(model, data, q)  # holding effort at rest
    c = load_components(data.f[0], model.axes[0])  # static reactions of the shoulder
    return abs(g[0]) - (K["k1"] * c.n_perp + K["k2"] * c.f_perp + K["k3"] * abs(c.f_par))


def test_arm_held_by_friction_stays_put_for_5_s():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    c_star = _threshold(model, Q0)
    sim = rd.Simulator(model, _friction(model, c_star * 1.05), dt=1e-3)
    sim.reset(Q0)
    sim.run(5.0)
    assert np.abs(sim.q - Q0).max() < 1e-9
    assert np.abs(sim.v).max() == 0.0
    assert sim.report.stuck == ["shoulder", "elbow"]


def test_arm_falls_below_breakaway():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    c_star = _threshold(model, Q0)
    sim = rd.Simulator(model, _friction(model, c_star * 0.95), dt=1e-3)
    sim.reset(Q0)
    sim.run(0.5)
    assert abs(sim.q[0] - Q0[0]) > 1e-2  # the shoulder slipped
    assert abs(sim.q[1] - Q0[1]) < 1e-12  # the elbow, far inside its bound, stayed stuck


def _breaks_away(model, coulomb):
    data = model.create_data()
    rd.forward_dynamics(model, data, Q0, np.zeros(2), np.zeros(2), friction=_friction(model, coulomb))
    return "shoulder" in data.fd_report.breaking_away


@pytest.mark.parametrize("payload", [0.2, 2.0])
def test_breakaway_threshold_moves_with_load_as_the_law_says(payload):
    text = open(bundled("planar_2r.urdf")).read().replace('<mass value="0.2"/>',
                                                           f'<mass value="{payload}"/>')
    model = rd.load_urdf(text)
    c_star = _threshold(model, Q0)
    lo, hi = 0.0, 100.0  # bisection on what forward dynamics decides
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _breaks_away(model, mid) else (lo, mid)
    assert hi == pytest.approx(c_star, rel=1e-6)
    # and the load terms matter: the bound is not just the gravity torque
    assert c_star < abs(rd.gravity_torques(model, model.create_data(), Q0)[0]) - 0.05


def test_several_joints_stick_at_once_and_conditions_hold():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    fr = friction_from_config(bundled("../config/arm7_friction.yaml"), model)
    q = np.array([0.2, 0.6, -0.3, -1.1, 0.4, 0.8, 0.1])
    g = rd.gravity_torques(model, data, q)
    a = rd.forward_dynamics(model, data, q, np.zeros(7), g + 0.1, friction=fr)
    assert data.fd_report.stuck == model.joint_names and np.all(a == 0)
    a = rd.forward_dynamics(model, data, q, np.zeros(7), 0.6 * g, friction=fr)
    rep = data.fd_report
    assert rep.converged and rep.stuck and rep.breaking_away
    rd.rnea(model, data, q, np.zeros(7), a)  # the reactions of the motion FD found
    W = rd.joint_wrenches(model, data)
    for name in rep.stuck:
        i = model.joint_index(name)
        assert a[i] == 0.0
        bound = fr.laws[i].breakaway(W[i], model.axes[i], False, q[i])
        assert abs(data.tau_friction[i]) <= bound * (1 + 1e-9) + 1e-12
    for name in rep.breaking_away:
        i = model.joint_index(name)
        assert a[i] * data.tau_friction[i] < 0  # friction opposes the motion it could not stop
        bound = fr.laws[i].breakaway(W[i], model.axes[i], False, q[i], -np.sign(data.tau_friction[i]))
        assert abs(data.tau_friction[i]) == pytest.approx(bound, rel=1e-6)


def test_an_active_set_that_does_not_settle_names_its_joints():
    """The failure of a stick/slip iteration that cycles (a 60-link chain with load-dependent
    friction and random velocities does, beyond the 47 free joints where the solve takes the
    seed's iteration) names the joints whose state kept changing, at most six and a count."""
    from robot_dynamics.algorithm.friction_solve import _unsettled

    model = rd.load_urdf(bundled("arm7.urdf"))
    text = _unsettled(model, np.array([True, False, True, False, False, False, False]))
    assert text.startswith("the stick/slip states of joint(s) joint_a1, joint_a3 do not settle")
    assert "load coefficients" in text
    many = _unsettled(model, np.ones(7, dtype=bool))
    assert "joint_a1, joint_a2, joint_a3, joint_a4, joint_a5, joint_a6 and 1 more" in many
