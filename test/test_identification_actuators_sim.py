"""Armature and gear-mesh identification on SIMULATED data (issue 16: "Identification recovers
armature and mesh coefficients within their intervals on simulated data").

The recording: :class:`robot_dynamics.Simulator` (1 kHz) of the bundled 7-dof arm with the
actuators of config/arm7_actuators.yaml applied as :mod:`robot_dynamics.friction.actuators` combines them
— model.armature = N²·J, and on every joint the composite friction law bearing (the
load-dependent law of config/arm7_friction.yaml) + gear mesh (η_f, η_b) + motor (N·τc, N²·b) —
driven by friction-aware computed torque along the designed excitation
(:func:`~robot_dynamics.identification.design_excitation` with the actuator terms). The fit is
given the plain URDF model (armature unknown, 0) and ``terms=("armature", "gear_mesh")``.

Truth: armature N²·J; mesh_forward c_f = 1/η_f − 1, mesh_backward c_b = 1 − η_b; the law's
coulomb and viscous are the bearing's plus the motor's reflected ones (same columns: only the
sum is identifiable); k1..k3 the bearing's.

Noise-free: every coefficient inside its interval, the actuator ones to < 1e-6 relative.
Noisy: σ_q = 1e-4 rad on the logged positions and σ_τ = 0.05 N·m on the logged efforts (as
test_identification_coverage.py), RECORDINGS independent noise draws on the one simulated run
(the run is deterministic; the noise is what varies between recordings, so the coverage is that
of the estimator given the design). Binomial bound: with nominal 95 % coverage and independent
cases, P[fewer than 85 % of the 105 actuator cases (5 recordings × 7 joints × 3) inside] =
P[Binomial(105, 0.95) ≤ 89] ≈ 6.8e-5, and P[fewer than 85 % of all 280 cases] ≈ 7.7e-11: a
failure means the intervals are too narrow, not bad luck (a joint's coefficients are correlated
estimates, which widens the count's spread; the margin absorbs it). Measured: see
docs/identification.md.
"""
import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.friction.actuators import actuators_from_config
from robot_dynamics.friction.gear_mesh import GearMeshFriction
from robot_dynamics.identification import design_excitation
from robot_dynamics.identification import fit
from robot_dynamics.cli import identify as identify_cli
from robot_dynamics.identification.regressors import EFFICIENCIES, efficiency, mesh_columns
from test_identification_coverage import record, truth_of
from conftest import REPO, bundled

TERMS = ("armature", "gear_mesh")
ACTUATORS = f"{REPO}/config/arm7_actuators.yaml"
ACTUATOR_COEFFICIENTS = ("armature", "mesh_forward", "mesh_backward")
RECORDINGS = 5
SIGMA_Q, SIGMA_TAU = 1e-4, 0.05
EXCITATION = []  # the run's designed trajectory (t, Q, V, A)


def _truth(model, act):
    out = {}
    for j, bearing in truth_of(model).items():
        a = act[j]
        out[j] = dict(bearing, armature=a.armature, mesh_forward=a.gear.c_forward,
                      mesh_backward=a.gear.c_backward)
        out[j]["coulomb"] += a.coulomb
        out[j]["viscous"] += a.viscous
    return out


@pytest.fixture(scope="module")
def run():
    """(plain model, actuators, truth, noise-free log, fit of that log)."""
    sim_model = rd.load_urdf(bundled("arm7.urdf"))
    bearing = rd.friction_from_config(f"{REPO}/config/arm7_friction.yaml", sim_model)
    act = actuators_from_config(ACTUATORS, sim_model)
    act.apply(sim_model)
    friction = act.friction(bearing)
    assert friction.laws[0].part_names == ["bearing", "gear_mesh", "motor"]
    t, Q, V, A, conds = design_excitation(sim_model, duration=3.5, rate=50.0, evaluations=60,
                                          terms=TERMS)
    log = record(sim_model, friction, t, Q, V, A, 3.0)
    model = rd.load_urdf(bundled("arm7.urdf"))
    assert not model.armature.any()
    result = fit(model, log["q"], log["v"], log["tau"], t=log["t"], terms=TERMS)
    EXCITATION[:] = (t, Q, V, A)
    return model, act, _truth(model, act), log, result


def test_the_fitters_mesh_columns_are_the_gear_mesh_law():
    """Same transmitted effort (n·e revolute, f·e prismatic), same sign convention, same
    regime: c_f·motoring + c_b·back-driven equals GearMeshFriction.magnitude row by row."""
    rng = np.random.default_rng(0)
    law = GearMeshFriction(0.8, 0.55)
    for prismatic, S in ((False, np.r_[0, 0, 0, 0.6, 0.0, 0.8]),
                         (True, np.r_[0.6, 0, 0.8, 0, 0, 0])):
        axis = S[:3] if prismatic else S[3:]
        W, v = rng.normal(size=(200, 6)), rng.normal(size=200)
        fwd, back = mesh_columns(W, S, v)
        assert (fwd > 0).any() and (back > 0).any()
        mine = law.c_forward * fwd + law.c_backward * back
        ref = [law.magnitude(w, axis, prismatic, 0.0, x) for w, x in zip(W, v)]
        np.testing.assert_allclose(mine, ref, rtol=1e-14, atol=0)
    assert efficiency("mesh_forward", law.c_forward) == pytest.approx(0.8, rel=1e-15)
    assert efficiency("mesh_backward", law.c_backward) == pytest.approx(0.55, rel=1e-15)


def test_noise_free_simulated_run_recovers_armature_and_mesh_within_tight_intervals(run):
    model, act, truth, log, result = run
    assert not result.unidentifiable
    for j in result.joints:
        assert j.residual_rms <= j.balance_precision, j.joint
        assert set(j.intervals) == set(result.names), j.joint
        for k, (lo, hi) in j.intervals.items():
            assert lo <= truth[j.joint][k] <= hi, (j.joint, k, j.coefficients[k], lo, hi)
        for k in ACTUATOR_COEFFICIENTS:
            lo, hi = j.intervals[k]
            assert hi - lo < 1e-6 * truth[j.joint][k], (j.joint, k, lo, hi)
        gear = act[j.joint].gear
        for name, (eta, lo, hi) in j.efficiencies.items():
            true = getattr(gear, name)
            assert lo <= true <= hi and hi - lo < 1e-6, (j.joint, name, eta, lo, hi)
    assert "= efficiency_backward η_b" in result.summary()


def test_noisy_simulated_runs_cover_armature_and_mesh(run):
    model, act, truth, log, _ = run
    inside, inside_actuator, conditional = [], [], 0
    for seed in range(RECORDINGS):
        rng = np.random.default_rng(200 + seed)
        q = log["q"] + rng.normal(scale=SIGMA_Q, size=log["q"].shape)
        tau = log["tau"] + rng.normal(scale=SIGMA_TAU, size=log["tau"].shape)
        result = fit(model, q, log["v"], tau, t=log["t"], terms=TERMS,
                     method="step")  # this simulator, every step: its replay
        assert not result.unidentifiable
        for j in result.joints:
            assert j.residual_rms == pytest.approx(SIGMA_TAU, rel=0.15), j.joint
            if j.assumed_zero:
                conditional += len(j.intervals)
                continue
            for k, (lo, hi) in j.intervals.items():
                ok = lo <= truth[j.joint][k] <= hi
                inside.append(ok)
                if k in ACTUATOR_COEFFICIENTS:
                    inside_actuator.append(ok)
            # resolved where the data can resolve them: the armature on every joint, the mesh
            # where the transmitted effort is large (axes 1–4; the wrist's |n∥| of a few N·m
            # makes its mesh loss comparable with the noise)
            for k in ("armature",) + (("mesh_forward", "mesh_backward")
                                      if j.joint < "joint_a5" else ()):
                lo, hi = j.intervals[k]
                assert hi - lo < 0.2 * truth[j.joint][k], (j.joint, k, lo, hi)
    assert len(inside) >= 0.9 * RECORDINGS * 7 * 8, (len(inside), conditional)
    assert np.mean(inside_actuator) >= 0.85, \
        f"actuator coverage {np.mean(inside_actuator):.3f} of {len(inside_actuator)}"
    assert np.mean(inside) >= 0.85, f"coverage {np.mean(inside):.3f} of {len(inside)}"


def test_identify_writes_an_actuators_yaml_that_reads_back(run, tmp_path, capsys):
    model, act, truth, log, result = run
    path = tmp_path / "run.npz"
    np.savez(path, t=log["t"], q=log["q"], v=log["v"], tau=log["tau"],
             joint_names=np.array(model.joint_names))
    out, acts = tmp_path / "friction.yaml", tmp_path / "fitted_actuators.yaml"
    code = identify_cli.main(["arm7", str(path), "-o", str(out), "--actuators", ACTUATORS,
                              "--actuators-output", str(acts)])
    assert code == 0, capsys.readouterr().err
    assert f"wrote {acts}" in capsys.readouterr().out
    fresh = rd.load_urdf(bundled("arm7.urdf"))
    back = actuators_from_config(str(acts), fresh)
    cfg = yaml.safe_load(acts.read_text())
    for i, j in enumerate(result.joints):
        a, prior = back[j.joint], act[j.joint]
        assert a.armature == pytest.approx(j.coefficients["armature"], rel=1e-12)
        assert a.armature == pytest.approx(truth[j.joint]["armature"], rel=1e-6)
        assert a.gear.c_forward == pytest.approx(j.coefficients["mesh_forward"], rel=1e-9)
        assert a.gear.c_backward == pytest.approx(j.coefficients["mesh_backward"], rel=1e-9)
        # carried over from --actuators; motor friction lumped into the law's coulomb/viscous
        assert a.gear_ratio == prior.gear_ratio and a.effort_limit == prior.effort_limit
        assert a.coulomb == 0 and a.viscous == 0
        assert "rotor_inertia" not in cfg["joints"][j.joint]
    friction = rd.friction_from_config(str(out), fresh)
    assert friction.laws[0].coulomb == pytest.approx(truth["joint_a1"]["coulomb"], rel=1e-6)
    # the loop: the written files, loaded as the nodes load them, run the same computed-torque
    # experiment; the controller (same model as the plant) makes the motion the reference's,
    # so the efforts it needs are what tells: equal to the original run's (measured 1e-9 N·m;
    # without the armature they would differ by armature·q̈, several N·m)
    from robot_dynamics.friction.actuators import load_actuators

    _, combined = load_actuators(str(acts), fresh, friction)
    assert fresh.armature == pytest.approx(act.armature, rel=1e-6)
    again = record(fresh, combined, *EXCITATION, 3.0)
    assert np.abs(again["q"] - log["q"]).max() < 1e-9
    assert np.abs(again["tau"] - log["tau"]).max() < 1e-8 * np.abs(log["tau"]).max()


def test_identify_refuses_a_joint_never_back_driven_unless_forced(tmp_path, capsys):
    """A log where joint_a1 only ever drives its load (recorded accelerations: rows stand on
    their own): mesh_backward is refused, naming the joint and what never happened."""
    from test_identification_actuators import _log

    model = rd.load_urdf(bundled("arm7.urdf"))
    Q, V, A, tau, motoring = _log(model, seed=4)
    keep = motoring[:, 0]
    path = tmp_path / "motoring.npz"
    np.savez(path, t=np.arange(keep.sum()) * 5e-3, q=Q[keep], v=V[keep], tau=tau[keep],
             a=A[keep], joint_names=np.array(model.joint_names))
    out, acts = tmp_path / "f.yaml", tmp_path / "f_actuators.yaml"  # default: beside -o
    argv = ["arm7", str(path), "-o", str(out), "--terms", "armature,gear_mesh"]
    assert identify_cli.main(argv) == 3
    err = capsys.readouterr().err
    assert "joint_a1.mesh_backward (joint_a1 never back-driven (the load never drove the " \
           "motor: n∥·q̇ < 0))" in err
    assert not out.exists() and not acts.exists()
    assert identify_cli.main(argv + ["--force"]) == 0
    back = actuators_from_config(str(acts), model)
    assert back["joint_a1"].gear.efficiency_backward == 1.0  # written as c_b = 0
    assert back["joint_a1"].gear.c_forward > 0 and back["joint_a1"].armature > 0
    assert "--force: unidentifiable coefficients written as 0" in acts.read_text()


def test_identify_actuator_option_errors(tmp_path, capsys):
    path = tmp_path / "x.npz"
    model = rd.load_urdf(bundled("arm7.urdf"))
    z = np.zeros((3, model.nv))
    np.savez(path, t=np.arange(3.0), q=z, v=z, tau=z, joint_names=np.array(model.joint_names))
    base = ["arm7", str(path), "-o", str(tmp_path / "f.yaml")]
    assert identify_cli.main(base + ["--terms", "armature,backlash"]) == 2
    assert "--terms: unknown term(s) ['backlash']; allowed: ['armature', 'gear_mesh']" in \
        capsys.readouterr().err
    assert identify_cli.main(base + ["--actuators", ACTUATORS, "--terms", "armature"]) == 2
    assert "joint 'joint_a1' has a gear mesh" in capsys.readouterr().err
    help_text = identify_cli.build_parser().format_help()
    for word in ("--terms", "--actuators FILE", "--actuators-output FILE", "never back-driven",
                 "efficiency_backward η_b = 1 − c_b"):
        assert word in help_text, word
    assert EFFICIENCIES["mesh_forward"] == "efficiency_forward"
