"""Issue 33, a log written by another simulator: arm7 in MuJoCo (contacts off, 500 Hz, joint
frictionloss 0.8 N·m and damping 0.3 on every joint), computed-torque tracking of a random
Fourier excitation for 20 s, logged with σ_q = 1e-5 rad and σ_τ = 0.02 N·m; fitted with the
classic law (``bench/bench_identification_mujoco.py`` builds the log).

MuJoCo's friction is a soft constraint: below about frictionloss·(1 − d)/d·invweight/b
(d = 0.9, b = 2/(0.95·0.02 s); ≈ 0.05 rad/s on a3, 0.13 on a5/a6 and 0.94 on the light a7) it
is less than frictionloss — on joint_a7 0.31 N·m at 0.2–0.5 rad/s and 0.61 at 0.5–1 (MuJoCo's
own qfrc_constraint), exactly 0.8 beyond 1 rad/s. The fit leaves out, per joint, the low-speed
band where the log departs from the law (``fit.low_speed_band``, derived from the data, not
from MuJoCo's parameters): found at 0.07 (a3), 0.14 (a5, a6) and 1.13 rad/s (a7). Before it,
joint_a7's Coulomb came back 0.45–0.56.

* With MuJoCo's states (velocities logged, accelerations from its step): the issue's criterion
  on all 21 coefficients — within 25 % (within 0.9 %), non-negative, and within 3 SE (≤ 2.3 SE,
  seeds 0–2).
* From q alone (no velocities, the filter method): all within 25 % (within 3.4 %, seeds 0–2)
  and within 3 SE (≤ 2.8 SE) — the SE carries the states' reconstruction error
  (``JointFit.reconstruction_errors``: the fit repeated with the next-order filter and with q̇ as
  the mean over the sample, docs/identification.md). With the noise-based SE alone 16, 21 and
  17 of 21 were within 3 SE (worst 6.4: joint_a7, a2/a4's viscous); seed 0 is tested.
"""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("mujoco")

import yaml  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.cli.identify import main as identify_main  # noqa: E402
from robot_dynamics.identification import fit  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
from bench_identification_mujoco import COULOMB, H, URDF, VISCOUS, mujoco_log  # noqa: E402

TRUTH = {"coulomb_positive": COULOMB, "coulomb_negative": COULOMB, "viscous": VISCOUS}


@pytest.fixture(scope="module")
def logged():
    model = rd.load_urdf(URDF)
    return model, mujoco_log(model, seed=0)


@pytest.fixture(scope="module")
def from_positions(logged):
    """The fit of the log's noisy q and τ alone (no velocities: the filter method)."""
    model, log = logged
    return fit(model, log["q_noisy"], None, log["tau_noisy"], t=log["t"], law="classic")


def _criterion(result, se_limit):
    """[(joint, coefficient, estimate, SE)] of the coefficients off the issue's criterion."""
    off = []
    for j in result.joints:
        assert set(j.coefficients) == set(TRUTH), j.joint
        for k, x in j.coefficients.items():
            se = j.standard_errors[k]
            if not (x >= 0 and abs(x - TRUTH[k]) <= 0.25 * TRUTH[k]
                    and abs(x - TRUTH[k]) <= se_limit * se):
                off.append((j.joint, k, x, se))
    return off


def test_mujocos_states_fit_back_to_its_friction_on_every_coefficient(logged):
    """The issue's criterion, all 7 joints × 3 coefficients: within 25 %, ≥ 0, 3 SE."""
    model, log = logged
    # MuJoCo's step: the effort of row k acted at the state before it (row k − 1) with
    # q̈ = (q̇_k − q̇_{k−1})/h
    A = np.diff(log["v"], axis=0) / H
    result = fit(model, log["q_noisy"][:-1], log["v"][:-1], log["tau_noisy"][1:], a=A,
                 law="classic")
    assert _criterion(result, 3.0) == []
    a7 = result.joints[6]
    cutoff = a7.low_speed_band[0]
    assert 0.7 < cutoff < 1.6, a7.low_speed_band
    # beyond the band MuJoCo's own friction is Coulomb; inside it, it is not
    v, f = log["v"][:, 6], log["friction"][:, 6]
    beyond = np.abs(v) > cutoff
    assert np.sqrt(np.mean((f[beyond] + COULOMB * np.sign(v[beyond])) ** 2)) < 0.02
    inside = (np.abs(v) > 0.2) & ~beyond
    assert np.mean(-f[inside] * np.sign(v[inside])) < 0.7
    # without the band (the rows from min_velocity up), the soft constraint's rows bias it
    without = fit(model, log["q_noisy"][:-1], log["v"][:-1], log["tau_noisy"][1:], a=A,
                  law="classic", low_speed_band=False)
    assert without.joints[6].coefficients["coulomb_positive"] < 0.6


def test_positions_alone_meet_the_criterion_with_the_reconstruction_error(from_positions):
    """The issue's criterion on all 21 coefficients from q alone: within 25 %, ≥ 0, 3 SE — the
    SE including the states' reconstruction error. The noise-based SE alone does not carry it:
    5 coefficients at 3.1–4.5 of it (joint_a7's three, a2/a4's viscous)."""
    result = from_positions
    assert _criterion(result, 3.0) == []
    off = 0
    for j in result.joints:
        assert set(j.reconstruction_errors) == set(j.coefficients)
        for k, x in j.coefficients.items():
            rec, se = j.reconstruction_errors[k], j.standard_errors[k]
            assert 0 <= rec <= se
            off += abs(x - TRUTH[k]) > 3 * np.sqrt(se ** 2 - rec ** 2)
    assert off >= 3
    # the light wrist's bursts (to 15 rad/s) are where the filter's states are least certain
    a7 = result.joints[6]
    assert a7.reconstruction_errors["viscous"] > 3 * np.sqrt(
        a7.standard_errors["viscous"] ** 2 - a7.reconstruction_errors["viscous"] ** 2)
    assert "state reconstruction" in result.summary().split("  joint_a7:")[1]


def test_a_mujoco_log_fits_back_from_positions_alone(logged, from_positions, tmp_path):
    model, log = logged
    result = from_positions
    summary = result.summary()
    for j in result.joints:
        assert j.effective_samples > 100 and j.velocity_range[1] > j.velocity_range[0]
        assert not j.model_mismatch, (j.joint, j.cv_rms, j.noise_rms)
        # MuJoCo's semi-implicit step: the effort acts on the state one step (2 ms) before
        # (the wrist's rigid-body effort hardly changes: its delay is not determined)
        if j.joint in ("joint_a1", "joint_a2", "joint_a3", "joint_a4"):
            assert 1.5e-3 < j.effort_delay[0] < 2.5e-3, (j.joint, j.effort_delay)
    a7 = result.joints[6]
    assert 0.7 < a7.low_speed_band[0] < 1.6
    block = summary.split("  joint_a7:")[1]
    assert "left out: the log departs from the law there" in block
    assert "MODEL MISMATCH" not in summary
    # the command, from an NPZ without velocities: the YAML holds MuJoCo's friction
    path = tmp_path / "mujoco.npz"
    np.savez(path, t=log["t"], q=log["q_noisy"], tau=log["tau_noisy"],
             joint_names=np.array(model.joint_names))
    out = tmp_path / "f.yaml"
    assert identify_main([URDF, str(path), "-o", str(out), "--law", "classic"]) == 0
    written = yaml.safe_load(out.read_text())["joints"]
    for name in model.joint_names:
        assert written[name]["coulomb"] == pytest.approx(COULOMB, rel=0.25)
        assert written[name]["viscous"] == pytest.approx(VISCOUS, rel=0.25)


def test_model_mismatch_is_reported(logged):
    """Without the band joint_a7's held-out residual is ~9× the noise estimate: the report
    says its intervals are dominated by model mismatch, not noise."""
    model, log = logged
    result = fit(model, log["q_noisy"], None, log["tau_noisy"], t=log["t"], law="classic",
                 min_velocity=0.2, low_speed_band=False)
    a7 = result.joints[6]
    assert a7.model_mismatch and a7.cv_rms["classic"] > 5 * a7.noise_rms
    assert 0.015 < a7.noise_rms < 0.025  # σ_τ = 0.02
    assert not any(j.model_mismatch for j in result.joints[:6])
    block = result.summary().split("  joint_a7:")[1]
    assert "MODEL MISMATCH" in block
