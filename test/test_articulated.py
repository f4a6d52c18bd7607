"""Forward dynamics by articulated recursions (kernels/articulated.py) against its readable
statement (robot_dynamics.reference.articulated) and the general solve's specification
(forward_dynamics_reference): the same motion for the stick/slip assignment it reports, on a
chain (panda, load-dependent law), the bundled arm7 (its friction config) and rrp (prismatic)."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.reference.articulated import articulated_motion
from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference
from robot_dynamics.friction import friction_from_config
from conftest import PANDA, REPO, erd_urdf, fd_states

LOAD_DEPENDENT = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.1,
                              "k1": 0.01, "k2": 0.002, "k3": 0.001}}
ROBOTS = {
    "panda": lambda: (erd_urdf(PANDA), LOAD_DEPENDENT),
    "arm7": lambda: (os.path.join(REPO, "urdf", "arm7.urdf"),
                     os.path.join(REPO, "config", "arm7_friction.yaml")),
    "rrp": lambda: (os.path.join(REPO, "urdf", "rrp.urdf"),
                    os.path.join(REPO, "config", "rrp_friction.yaml")),
}


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_recursions_match_their_statement_and_the_general_solve(robot):
    path, config = ROBOTS[robot]()
    model = rd.load_urdf(path)
    fr = friction_from_config(config, model)
    fast, twin, ref = model.create_data(), model.create_data(), model.create_data()
    rng = np.random.default_rng(7)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    seen = set()
    for k in range(24):
        q = rng.uniform(lo, hi)
        v = rng.uniform(0.1, 1.5, model.nv) * rng.choice([-1, 1], model.nv)
        if k % 3:  # some joints at rest: they stick or break away
            v[rng.random(model.nv) < 0.5] = 0.0
        tau = rd.inverse_dynamics(model, fast, q, v, rng.uniform(-3, 3, model.nv), fr)
        tau += rng.uniform(-2, 2, model.nv) * (v == 0)
        a = rd.forward_dynamics(model, fast, q, v, tau, fr)
        report = fast.fd_report
        assert report.converged and report.method == "newton", report  # the recursions answered
        held = np.isin(model.joint_names, report.stuck)
        directions = np.where(v != 0, np.sign(v), np.sign(a))
        # the recursions' statement takes the efforts the joints feel: τ − d∘q̇ (issue 33:
        # forward_dynamics' default takes panda's URDF damping out of τ)
        tau_d = tau - model.damping * v
        b, fn = articulated_motion(model, twin, q, v, tau_d, fr, held, directions)
        scale = 1.0 + np.abs(a).max()
        np.testing.assert_allclose(b, a, atol=1e-8 * scale)
        np.testing.assert_allclose(a, forward_dynamics_reference(model, ref, q, v, tau, fr),
                                   atol=1e-8 * scale)
        np.testing.assert_allclose(fast.tau_friction, ref.tau_friction,
                                   atol=1e-8 * (1 + np.abs(tau).max()))
        assert (report.stuck, report.breaking_away) == (ref.fd_report.stuck,
                                                        ref.fd_report.breaking_away)
        # the joint equations hold at the twin's wrenches: Sᵀ fn + armature q̈ = τ + τf
        np.testing.assert_allclose(np.einsum("ij,ij->i", model.motion_subspaces, fn)
                                   + model.armature * b, tau_d + fast.tau_friction,
                                   atol=1e-7 * (1 + np.abs(tau).max()))
        seen.add((bool(report.stuck), bool(report.breaking_away)))
    assert len(seen) >= 2, seen  # sliding only, and with joints at rest


def test_without_friction_it_is_the_articulated_body_algorithm():
    model = rd.load_urdf(erd_urdf(PANDA))
    fast, twin, ref = model.create_data(), model.create_data(), model.create_data()
    rng = np.random.default_rng(3)
    model.armature = rng.uniform(0.0, 0.2, model.nv)  # the rotors on the pivots
    for _ in range(5):
        q, v, tau = (rng.uniform(-1, 1, model.nv) for _ in range(3))
        a = rd.forward_dynamics(model, fast, q, v, tau)
        assert fast.fd_report.method == "direct" and fast.fd_report.iterations == 0
        b, _ = articulated_motion(model, twin, q, v, tau - model.damping * v, None,
                                  np.zeros(model.nv, bool), np.sign(v))  # τ − d∘q̇ (issue 33)
        c = forward_dynamics_reference(model, ref, q, v, tau)  # M⁻¹ (τ − d∘q̇ − b)
        np.testing.assert_allclose(a, c, atol=1e-10 * (1 + np.abs(c).max()))
        np.testing.assert_allclose(b, c, atol=1e-10 * (1 + np.abs(c).max()))


def _kernel_prediction(model, data, fr, q, v, tau):
    """kernels/articulated.py's predict_release on the world-frame quantities the instant's
    solve holds for (q, q̇) (a forward_dynamics call leaves them in Data's work)."""
    from robot_dynamics.kernels import articulated as ka
    from robot_dynamics.kernels.layout import (articulated_views, laws_views, model_armature,
                                               model_views)

    rd.forward_dynamics(model, data, q, v, tau, fr, damping=False)
    n, kinds, parents, axes = model_views(model._mb)[:4]
    codes, params = laws_views(fr._packed[2], n)
    Iw, _, ab, _ = articulated_views(model._mb, data._work)
    b = rd.rnea(model, model.create_data(), q, v, np.zeros(n))
    d = np.sign(v)
    rest = v == 0
    phi = fr.magnitudes(model, data.f, q, np.abs(v) * d, d)
    y = tau - b - np.where(rest, 0.0, d * phi)
    state = np.where(rest, ka.STUCK, ka.FREE).astype(np.int64)
    x, qdd = np.zeros(n), np.zeros(n)
    ok = ka.predict_release(codes, params, kinds, axes, parents, Iw.copy(), model_armature(
        model._mb), state, y, ab[ka._SW].copy(), data.f.copy(), np.empty((n, 6, 6)),
        np.empty((n, n)), np.empty((n, n)), np.empty((5, n), np.int64), np.empty(n), x, qdd)
    assert ok
    return x, qdd


@pytest.mark.parametrize("robot", ["panda", "talos"])
def test_release_prediction_matches_its_statement(robot):
    from robot_dynamics.reference.articulated import predict_release

    path = erd_urdf(PANDA if robot == "panda" else "talos_data/robots/talos_reduced.urdf")
    model = rd.load_urdf(path)
    fr = friction_from_config(LOAD_DEPENDENT, model)
    data, twin = model.create_data(), model.create_data()
    released = 0
    states = fd_states(model, fr, "mixed", 12, seed=3)
    rng = np.random.default_rng(4)
    for q, _, tau in states[:3]:  # every joint at rest (R is the whole tree), some breaking away
        states.append((q, np.zeros(model.nv), tau + rng.uniform(-2, 2, model.nv)))
    for q, v, tau in states:
        x, qdd = _kernel_prediction(model, data, fr, q, v, tau)
        ref, ref_qdd = predict_release(model, twin, q, v, tau, fr, plain=True)
        np.testing.assert_array_equal(np.sign(x), np.sign(ref))
        np.testing.assert_allclose(x, ref, atol=1e-7 * (1 + np.abs(ref).max()))
        np.testing.assert_allclose(qdd, ref_qdd, atol=1e-7 * (1 + np.abs(ref_qdd).max()))
        released += np.count_nonzero(x)
    assert released >= 12  # the states break joints away: the prediction releases some


def test_predicted_release_spares_the_set_changes_and_keeps_the_answer():
    """Mixed states (half the joints at rest, some breaking away) take about one stick/slip
    assignment each (the predicted one), where the bulk release took 1.44 set changes a state
    on panda; after a call that held every joint at rest, the next call releases in bulk."""
    model = rd.load_urdf(erd_urdf(PANDA))
    fr = friction_from_config(LOAD_DEPENDENT, model)
    ref = model.create_data()
    changes = []
    for q, v, tau in fd_states(model, fr, "mixed", 40, seed=11):
        data = model.create_data()
        a = rd.forward_dynamics(model, data, q, v, tau, fr, damping=False)
        assert data.fd_report.method == "newton"
        changes.append(data.fd_report.active_set_changes)
        expected = forward_dynamics_reference(model, ref, q, v, tau, fr, damping=False)
        np.testing.assert_allclose(a, expected, atol=1e-8 * (1 + np.abs(a).max()))
        assert data.fd_report.stuck == ref.fd_report.stuck
    assert np.mean(changes) <= 0.25, changes
    # the gate: two calls that held every joint at rest (v = 0 everywhere, τ = gravity) → no
    # prediction in the next
    data = model.create_data()
    q, v, tau = fd_states(model, fr, "mixed", 1, seed=5)[0]
    still = rd.inverse_dynamics(model, data, q, np.zeros(model.nv), np.zeros(model.nv), fr,
                                damping=False)
    for _ in range(2):
        rd.forward_dynamics(model, data, q, np.zeros(model.nv), still, fr, damping=False)
        assert not data.fd_report.breaking_away
    bulk = [data.fd_report.active_set_changes]
    for q, v, tau in fd_states(model, fr, "mixed", 40, seed=11):
        fresh = model.create_data()
        rd.forward_dynamics(model, fresh, q, v, tau, fr, damping=False)
        if fresh.fd_report.breaking_away:
            rd.forward_dynamics(model, data, q, v, tau, fr, damping=False)
            bulk.append(data.fd_report.active_set_changes)
            break
    assert bulk[-1] >= 1  # the bulk release after the all-stuck pass: one change at least


def test_deep_chains_release_in_bulk():
    """A serial chain deeper than PREDICT_DEPTH on average (its elimination would fill every
    row with all the ancestors: 3.8 x slower at 200 joints) is not predicted: its mixed states
    take the bulk release (set changes), with the reference solve's answers."""
    from conftest import chain_urdf
    from robot_dynamics.reference.articulated import predict_release

    model = rd.load_urdf(chain_urdf(40))
    fr = friction_from_config(LOAD_DEPENDENT, model)
    data, ref = model.create_data(), model.create_data()
    changes = []
    for q, v, tau in fd_states(model, fr, "mixed", 6, seed=2):
        assert predict_release(model, ref, q, v, tau, fr) is None
        a = rd.forward_dynamics(model, data, q, v, tau, fr, damping=False)
        if data.fd_report.breaking_away:  # released by a change of the set, not predicted
            changes.append(data.fd_report.active_set_changes)
        expected = forward_dynamics_reference(model, ref, q, v, tau, fr, damping=False)
        np.testing.assert_allclose(a, expected, atol=1e-8 * (1 + np.abs(a).max()))
    assert changes and min(changes) >= 1, changes
