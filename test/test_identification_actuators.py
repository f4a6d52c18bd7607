"""Actuator terms of the fitter (issue 16), on synthetic data built here from Newton–Euler.

The motor effort of a joint with reflected rotor inertia (armature) and gear-mesh friction:

    τ = fn∥ + armature·q̈ + sign(q̇)·(|τf_bearing| + m·|fn∥|)      (τ = fn∥ − τf, eq. 2.7.5),
    m = mesh_forward while the motor drives the load (fn∥·q̇ > 0), mesh_backward otherwise,

with the bearing friction the load-dependent law of config/arm7_friction.yaml. Built directly
(no simulator with armature or gear mesh needed): ``fit(..., terms=("armature", "gear_mesh"))``
must recover every coefficient.
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch, joint_wrenches_batch
from robot_dynamics.identification import fit
from robot_dynamics.identification import fourier_excitation
from conftest import REPO, bundled

NOISE = 0.05
ARMATURE = np.array([1.2, 1.2, 0.6, 0.6, 0.25, 0.15, 0.15])  # kg·m², N²·J of 100:1 drives
MESH = {"mesh_forward": np.array([0.03, 0.03, 0.04, 0.04, 0.05, 0.05, 0.05]),
        "mesh_backward": np.array([0.06, 0.06, 0.07, 0.07, 0.08, 0.08, 0.08])}


def _log(model, seed=1, gear_mesh=True):
    bearing = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", model)
    t, Q, V, A = fourier_excitation(model, duration=20.0, rate=200.0, seed=seed)
    tau_bearing = inverse_dynamics_batch(model, Q, V, A, bearing)  # fn∥ − τf_bearing
    W = joint_wrenches_batch(model, Q, V, A)
    n_par = np.einsum("nik,ik->ni", W, model.motion_subspaces)
    motoring = n_par * V > 0
    mesh = np.where(motoring, MESH["mesh_forward"], MESH["mesh_backward"]) * np.abs(n_par)
    tau = tau_bearing + ARMATURE * A + (np.sign(V) * mesh if gear_mesh else 0.0)
    tau += np.random.default_rng(seed).normal(scale=NOISE, size=tau.shape)
    return Q, V, A, tau, motoring


def _truth(model):
    import yaml

    cfg = yaml.safe_load(open(f"{REPO}/config/arm7_friction.yaml", encoding="utf-8"))
    out = {}
    for i, j in enumerate(model.joint_names):
        out[j] = dict(cfg["joints"].get(j, cfg["default"]), armature=ARMATURE[i],
                      **{k: x[i] for k, x in MESH.items()})
    return out


@pytest.fixture(scope="module")
def arm7():
    return rd.load_urdf(bundled("arm7.urdf"))


def test_armature_and_gear_mesh_are_recovered_within_their_intervals(arm7):
    Q, V, A, tau, motoring = _log(arm7)
    assert motoring.mean() > 0.2 and (~motoring).mean() > 0.2  # both regimes in the data
    result = fit(arm7, Q, V, tau, A, terms=("armature", "gear_mesh"))
    truth = _truth(arm7)
    inside = []
    for j in result.joints:
        assert j.residual_rms == pytest.approx(NOISE, rel=0.15), j.joint
        for k in ("armature", "mesh_forward", "mesh_backward"):
            assert k in j.coefficients, (j.joint, k, j.unidentifiable)
        for k, (lo, hi) in j.intervals.items():
            true = truth[j.joint][k]
            inside.append(lo <= true <= hi)
            assert abs(j.coefficients[k] - true) < 4 * j.standard_errors[k], (j.joint, k)
        # resolved, not merely "consistent": narrow intervals where the data can give them —
        # the armature everywhere, the mesh where the transmitted effort is large (joints 1–4;
        # the wrist's |n∥| < 2 N·m makes its mesh friction comparable with the noise)
        for k in ("armature",) + (("mesh_forward", "mesh_backward") if j.joint < "joint_a5"
                                  else ()):
            lo, hi = j.intervals[k]
            assert hi - lo < 0.5 * truth[j.joint][k], (j.joint, k, lo, hi)
    assert np.mean(inside) >= 0.85, np.mean(inside)
    assert set(result.actuators["joint_a1"]) == {"armature", "mesh_forward", "mesh_backward"}
    summary = result.summary()
    assert "+ armature·sign(q̇)·q̈ + mesh_forward·|n∥| while motoring" in summary
    assert "mesh_backward" in summary


def test_without_the_actuator_terms_the_residual_shows_what_is_missing(arm7):
    Q, V, A, tau, _ = _log(arm7, seed=2)
    plain = fit(arm7, Q, V, tau, A)
    full = fit(arm7, Q, V, tau, A, terms=("armature", "gear_mesh"))
    for p, f in zip(plain.joints, full.joints):
        assert f.residual_rms < 1.2 * NOISE
        assert p.residual_rms > 2 * NOISE, (p.joint, p.residual_rms)


def test_known_armature_is_taken_out_of_the_balance():
    """model.armature set (and not fitted): the law's coefficients come out unbiased."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    Q, V, A, tau, _ = _log(model, seed=3, gear_mesh=False)
    truth = _truth(model)
    model.armature = ARMATURE
    result = fit(model, Q, V, tau, A)
    for j in result.joints:
        assert j.residual_rms == pytest.approx(NOISE, rel=0.15), j.joint
        for k, est in j.coefficients.items():
            assert abs(est - truth[j.joint][k]) < 4 * j.standard_errors[k], (j.joint, k)


def test_a_joint_never_back_driven_has_its_backward_mesh_coefficient_unidentifiable(arm7):
    Q, V, A, tau, motoring = _log(arm7, seed=4)
    keep = motoring[:, 0]  # joint_a1 only ever motoring
    result = fit(arm7, Q[keep], V[keep], tau[keep], A[keep], terms=("gear_mesh",))
    missing = {(j, k): why for j, k, why in result.unidentifiable}
    assert missing[("joint_a1", "mesh_backward")] == \
        "joint_a1 never back-driven (the load never drove the motor: n∥·q̇ < 0)"
    assert "mesh_forward" in result.joints[0].coefficients
    with pytest.raises(rd.InputError, match=r"terms must be among \['armature', 'gear_mesh'\]"):
        fit(arm7, Q, V, tau, A, terms=("backlash",))
