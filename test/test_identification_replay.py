"""The step replay (identification/step_model.py) reconstructs, row by row, the friction the
simulator's step applied — the reason noise-free logs can be identified within their intervals.

A run of :class:`robot_dynamics.Simulator` records its own per-step friction ``tau_friction``;
the fit's reconstruction ``τf = fn∥(q½, q̇_e, q̈) − τ`` of each row must equal it, with q̇_e
the step's start velocity plus (h/2) × the previous two steps' q̈ extrapolated. With the
products' velocity at the mean velocity (q̇_{k−1} + q̇_k)/2 — the estimator before — it does not
(errors ~1e-7 N·m, correlated over seconds: what made the intervals miss).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import joint_wrenches_batch
from robot_dynamics.identification import design_excitation
from robot_dynamics.identification import fit
from robot_dynamics.identification.step_model import StepReplay
from test_identification_coverage import record, truth_of
from conftest import REPO, bundled


@pytest.fixture(scope="module")
def run():
    model = rd.load_urdf(bundled("arm7.urdf"))
    friction = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", model)
    # the recorder's designed excitation (a random one leaves coefficients unidentifiable in 3 s)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=60)
    log = record(model, friction, t, Q, V, A, 3.0, keep_friction=True)
    return model, friction, log


def _reconstructed(model, replay, Ve, log):
    W = joint_wrenches_batch(model, replay.Qh, Ve, replay.A)
    return np.einsum("nik,ik->ni", W, model.motion_subspaces) - log["tau"]


def test_replay_reconstructs_the_simulators_friction(run):
    model, friction, log = run
    replay = StepReplay(model, log["t"], log["q"], log["v"])
    rows = replay.valid.all(axis=1)
    # only the first three rows and rows with (or after) a start, stop or reversal are left out
    assert rows.mean() > 0.95
    assert not rows[:3].any()
    # the products' velocity: the last two steps' q̈ (from the log), extrapolated, placed it
    k = np.flatnonzero(rows)[5]
    assert rows[k - 2:k + 1].all()  # (the steps before kept their sets: the extrapolation's)
    v = log["v"]
    np.testing.assert_allclose(replay.Ve[k], v[k - 1] + 0.5 * (2 * (v[k - 1] - v[k - 2]) -
                                                               (v[k - 2] - v[k - 3])))
    scale = np.abs(log["tau"][rows]).max()
    exact = _reconstructed(model, replay, replay.Ve, log)
    err_exact = np.abs(exact - log["tau_friction"])[rows].max()
    # the simulator's own friction is exact to its solve's tolerance (1e-10 of the efforts: the
    # iteration stops there), which is the balance precision the intervals assume
    assert err_exact < 1e-10 * scale, err_exact
    mean = _reconstructed(model, replay, 0.5 * (replay.Vp + replay.V), log)
    err_mean = np.abs(mean - log["tau_friction"])[rows].max()
    assert err_mean > 1e4 * err_exact, (err_mean, err_exact)
    # the row after a transition may have been solved at another velocity: it is left out
    after = np.flatnonzero(~rows[1:-1] & rows[:-2])[0] + 2  # the row after a first bad one
    assert not rows[after]


def _exact_and_covered(model, log):
    """Fit a noise-free log: residuals within the balance precision, every true coefficient
    inside a tight interval (half-width < 1e-4 relative, so a wide one cannot pass)."""
    result = fit(model, log["q"], log["v"], log["tau"], t=log["t"])
    truth = truth_of(model)
    assert not result.unidentifiable
    for j in result.joints:
        assert j.residual_rms <= j.balance_precision, j.joint
        for k, (lo, hi) in j.intervals.items():
            assert lo <= truth[j.joint][k] <= hi, (j.joint, k, j.coefficients[k], lo, hi)
            assert hi - lo < 1e-4 * truth[j.joint][k], (j.joint, k, lo, hi)
    return result


def test_noise_free_fit_is_exact_and_its_intervals_say_so(run):
    model, _, log = run
    result = _exact_and_covered(model, log)
    for j in result.joints:
        for k in j.intervals:
            assert j.coefficients[k] == pytest.approx(truth_of(model)[j.joint][k], rel=1e-7)
    assert "residuals within the balance's precision" in result.summary()
    assert "residuals correlated in time" not in result.summary()


def test_joint_at_rest_is_replayed_with_its_acceleration_prescribed():
    """A joint held still sticks (q̇ = 0 exactly): its row of the first solve drops out, the
    others are still replayed exactly."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    friction = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", model)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=60, seed=1)
    Q[:, 3], V[:, 3], A[:, 3] = Q[0, 3], 0.0, 0.0
    log = record(model, friction, t, Q, V, A, 3.0)
    assert np.all(log["v"][:, 3] == 0.0)  # stuck throughout
    result = fit(model, log["q"], log["v"], log["tau"], t=log["t"])
    truth = truth_of(model)
    assert {j for j, _, _ in result.unidentifiable} == {"joint_a4"}
    for j in result.joints:
        for k, (lo, hi) in j.intervals.items():
            assert lo <= truth[j.joint][k] <= hi, (j.joint, k)
            assert hi - lo < 1e-4 * truth[j.joint][k], (j.joint, k, lo, hi)


def test_velocities_flickering_through_zero_exclude_only_their_joint():
    """Sensor noise on a joint at rest flips its velocity's sign on many rows: those rows then
    leave out that joint only, not every joint (the log is no simulator log anyway)."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    friction = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", model)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=60, seed=1)
    Q[:, 3], V[:, 3], A[:, 3] = Q[0, 3], 0.0, 0.0
    log = record(model, friction, t, Q, V, A, 3.0)
    clean = fit(model, log["q"], log["v"], log["tau"], t=log["t"], method="step")
    log["v"][:, 3] += np.random.default_rng(0).normal(scale=1e-3, size=len(log["v"]))
    replay = StepReplay(model, log["t"], log["q"], log["v"])
    assert not replay.valid[:, 3].all() and replay.valid[:, 0].mean() > 0.95
    noisy = fit(model, log["q"], log["v"], log["tau"], t=log["t"], method="step")
    for c, n in zip(clean.joints, noisy.joints):
        if c.joint != "joint_a4":
            assert n.samples >= 0.95 * c.samples, (c.joint, n.samples, c.samples)


@pytest.mark.parametrize("robot", ["planar_2r", "rrp"])
def test_noise_free_fit_covers_on_other_robots(robot):
    """A planar arm (load columns not applicable) and a prismatic joint (rrp's d3)."""
    model = rd.load_urdf(bundled(f"{robot}.urdf"))
    friction = rd.friction_from_config(f"{REPO}/config/{robot}_friction.yaml", model)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=40)
    log = record(model, friction, t, Q, V, A, 3.0)
    result = fit(model, log["q"], log["v"], log["tau"], t=log["t"])
    truth = truth_of(model, robot)
    assert not result.unidentifiable
    assert sum(len(j.intervals) for j in result.joints) >= 2 * model.nv
    for j in result.joints:
        for k, (lo, hi) in j.intervals.items():
            assert lo <= truth[j.joint][k] <= hi, (j.joint, k, j.coefficients[k], lo, hi)
            assert hi - lo < 1e-4 * truth[j.joint][k], (j.joint, k, lo, hi)


def test_replay_with_rotors_in_the_model():
    """With model.armature set the simulator's M carries diag(armature): the replay's M (from
    crba) does too, and the balance takes armature∘q̈ out — still exact, still covered."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    model.armature = np.array([2.5, 2.5, 1.2, 1.2, 0.4, 0.2, 0.2])
    friction = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", model)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=60)
    log = record(model, friction, t, Q, V, A, 3.0)
    _exact_and_covered(model, log)


def test_replay_with_a_self_locking_gear_is_exact():
    """A self-locking screw gear (η_b = −0.2, c_b = 1.2) on every rrp joint with small rotors,
    where the motion is not unique at the mesh law's kink: the replay reads the velocity of the
    products off the log, so it reconstructs the simulator's friction on every row it describes
    (an earlier replay that re-solved the step's first solve missed 4 rows of 2943 there)."""
    from robot_dynamics.friction.actuators import actuators_from_config

    model = rd.load_urdf(bundled("rrp.urdf"))
    bearing = rd.friction_from_config(f"{REPO}/config/rrp_friction.yaml", model)
    act = actuators_from_config({"default": {"armature": 0.05, "efficiency_forward": 0.8,
                                             "efficiency_backward": -0.2}}, model)
    act.apply(model)
    friction = act.friction(bearing)
    t, Q, V, A, _ = design_excitation(model, duration=3.5, rate=50.0, evaluations=40,
                                      terms=("armature", "gear_mesh"))
    log = record(model, friction, t, Q, V, A, 3.0, keep_friction=True)
    assert friction.laws[2].part_names == ["bearing", "gear_mesh"]
    replay = StepReplay(model, log["t"], log["q"], log["v"])
    rows = replay.valid.all(axis=1)
    assert rows.mean() > 0.9
    W = replay.wrenches()
    rec = (np.einsum("nik,ik->ni", W, model.motion_subspaces) + model.armature * replay.A
           + model.damping * log["v"] - log["tau"])
    err = np.abs(rec - log["tau_friction"])[rows].max(axis=1)
    # the simulator's Newton stops at 1e-10 of the efforts: its friction is known to that
    assert err.max() < 1e-10 * np.abs(log["tau"]).max(), np.sort(err)[-5:]
