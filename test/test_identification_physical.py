"""Issue 33: physical coefficients (a bounded fit: every coefficient ≥ 0, held ones reported,
no negative value ever written) and one statement of what a logged effort contains (the URDF
damping d∘q̇: ``fit(..., damping=True)`` — in the efforts, the default — or ``False``).

Efforts from the library's own ``rd.inverse_dynamics(..., friction=...)`` on arm7 with
``<dynamics damping="1.0"/>`` at random states: that function's motor effort includes d∘q̇ (its
``damping=True``, as the Simulator applies it), so the fit's default takes it out and the
coefficients come back within their intervals, the viscous one ≈ 0.08 and never negative.
Efforts without it (``inverse_dynamics(..., damping=False)``, Pinocchio's rnea) are fitted with
``damping=False``; fitted as if they held the damping, the viscous coefficient is pushed to
≈ 0.08 − 1.0 < 0, which the bounded fit holds at 0, reports as contradicted, and the command
refuses to write.
"""
import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch
from robot_dynamics.cli.identify import main as identify_main
from robot_dynamics.identification import fit
from robot_dynamics.identification.fit import bounded_least_squares
from conftest import damped_urdf

TRUTH = {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.08, "k1": 0.005,
         "k2": 0.002, "k3": 0.001}
DAMPING = 1.0
NOISE = 0.01
N = 1500


@pytest.fixture(scope="module")
def damped(tmp_path_factory):
    """arm7 with damping 1.0 on every joint, and (q, q̇, q̈) at random states with τ from
    rd.inverse_dynamics with TRUTH's friction (d∘q̇ included, its default) + 0.01 N·m noise,
    and τ_rigid the same without the damping (damping=False, the same noise)."""
    path = damped_urdf(tmp_path_factory.mktemp("damped"), "arm7.urdf", DAMPING)
    model = rd.load_urdf(path)
    assert np.all(np.asarray(model.damping) == DAMPING)
    friction = rd.friction_from_config({"default": TRUTH}, model)
    rng = np.random.default_rng(3)
    lo, hi = np.asarray(model.lower_limits), np.asarray(model.upper_limits)
    Q = rng.uniform(0.9 * lo, 0.9 * hi, size=(N, model.nv))
    V = rng.choice([-1.0, 1.0], size=(N, model.nv)) * rng.uniform(0.1, 2.0, size=(N, model.nv))
    A = rng.normal(scale=2.0, size=(N, model.nv))
    data = model.create_data()
    TAU = np.array([rd.inverse_dynamics(model, data, Q[k], V[k], A[k], friction)
                    for k in range(N)])
    RIGID = inverse_dynamics_batch(model, Q, V, A, friction, damping=False)
    np.testing.assert_allclose(TAU - RIGID, DAMPING * V, rtol=0, atol=1e-12)  # the one term
    noise = rng.normal(scale=NOISE, size=TAU.shape)
    return path, model, Q, V, A, TAU + noise, RIGID + noise


def _inside(result):
    return {(j.joint, k): lo <= TRUTH[k] <= hi for j in result.joints
            for k, (lo, hi) in j.intervals.items()}


def _fits_back(result, inside_at_least=31):
    inside = _inside(result)
    assert len(inside) == 35
    # 35 intervals at 95 %: P[Binomial(35, 0.95) < 31] ≈ 0.05; a bias of the damping (1.0 in
    # viscous) would put every viscous interval out by thousands of standard errors
    assert sum(inside.values()) >= inside_at_least, [k for k, ok in inside.items() if not ok]
    for j in result.joints:
        assert j.coefficients["viscous"] == pytest.approx(TRUTH["viscous"], abs=0.01), j.joint
        assert j.unconstrained["viscous"] > 0 and "viscous" not in j.at_bound, j.joint
        assert not j.contradicted  # (a small k may be held at 0: its interval says so)
        assert all(x >= 0 for x in j.coefficients.values())


def test_inverse_dynamics_efforts_fit_back_with_the_default(damped, tmp_path):
    """(b) The library's own motor effort (d∘q̇ included) and the fit's default agree: the
    generating coefficients come back within their intervals, viscous ≈ 0.08, never negative —
    and the command writes them."""
    path, model, Q, V, A, TAU, _ = damped
    result = fit(model, Q, V, TAU, A)
    _fits_back(result)
    log = tmp_path / "log.npz"
    np.savez(log, t=np.arange(N) * 1e-3, q=Q, v=V, tau=TAU, a=A,
             joint_names=np.array(model.joint_names))
    out = tmp_path / "f.yaml"
    assert identify_main([path, str(log), "-o", str(out)]) == 0
    written = yaml.safe_load(out.read_text())["joints"]
    for e in written.values():
        assert e["viscous"] == pytest.approx(TRUTH["viscous"], abs=0.01)
        assert all(v >= 0 for v in e.values() if not isinstance(v, str))


def test_efforts_without_damping_fit_back_with_damping_false(damped):
    _, model, Q, V, A, _, RIGID = damped
    _fits_back(fit(model, Q, V, RIGID, A, damping=False))


def test_damping_subtracted_that_the_efforts_lack_is_held_at_zero_and_refused(damped, tmp_path,
                                                                            capsys):
    path, model, Q, V, A, _, RIGID = damped
    result = fit(model, Q, V, RIGID, A)  # damping=True: d∘q̇ taken out although τ lacks it
    for j in result.joints:
        assert j.unconstrained["viscous"] == pytest.approx(TRUTH["viscous"] - DAMPING, abs=0.05)
        assert j.coefficients["viscous"] == 0.0 and "viscous" in j.at_bound
        assert "viscous" in j.contradicted
        assert all(x >= 0 for x in j.coefficients.values())
        assert all(lo >= 0 for lo, _ in j.intervals.values())
    summary = result.summary()
    assert "held at its bound 0" in summary and "contradicts a physical value" in summary
    assert all(v >= 0 for e in result.config["joints"].values() for v in e.values()
               if not isinstance(v, str))
    # the command: refused (exit 3, nothing written) unless --force, which writes no negative
    log = tmp_path / "log.npz"
    t = np.arange(N) * 1e-3
    np.savez(log, t=t, q=Q, v=V, tau=RIGID, a=A, joint_names=np.array(model.joint_names))
    out = tmp_path / "f.yaml"
    assert identify_main([path, str(log), "-o", str(out)]) == 3
    assert not out.exists()
    err = capsys.readouterr().err
    assert "contradicts physical friction" in err and "joint_a1.viscous" in err
    assert identify_main([path, str(log), "-o", str(out), "--force"]) == 0
    written = yaml.safe_load(out.read_text())["joints"]
    assert all(v >= 0 for e in written.values() for v in e.values() if not isinstance(v, str))
    assert written["joint_a1"]["viscous"] == 0.0
    # told that the efforts exclude the damping, the command writes the generating values
    out2 = tmp_path / "g.yaml"
    assert identify_main([path, str(log), "-o", str(out2), "--damping", "excluded"]) == 0
    written = yaml.safe_load(out2.read_text())["joints"]
    for e in written.values():
        assert e["viscous"] == pytest.approx(TRUTH["viscous"], abs=0.01)


def test_bounded_least_squares_holds_only_what_must_be_held():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(400), rng.uniform(0.1, 2, 400), rng.uniform(0, 50, 400)])
    y = X @ [0.5, -0.3, 0.01] + rng.normal(scale=0.01, size=400)
    theta, held = bounded_least_squares(X, y)
    assert held.tolist() == [False, True, False] and theta[1] == 0.0
    assert np.all(theta >= 0)
    # the bounded optimum: no feasible direction lowers the residual (KKT)
    g = X.T @ (X @ theta - y)
    assert abs(g[0]) < 1e-6 * np.abs(X.T @ y).max() and abs(g[2]) < 1e-6 * np.abs(X.T @ y).max()
    assert g[1] > 0
    y2 = X @ [0.5, 0.3, 0.01]
    theta2, held2 = bounded_least_squares(X, y2)
    assert not held2.any() and np.allclose(theta2, [0.5, 0.3, 0.01])
