"""`robot-dynamics derive`: the printed M, V, G are the core's, and large robots are refused."""

import numpy as np
import pytest
import sympy as sp

import robot_dynamics as rd
from robot_dynamics.cli.formulations import METHODS, ROUNDOFF, chop, derive
from conftest import bundled, erd_urdf


def _coefficients(mat):
    return [abs(float(t.as_coeff_Mul()[0])) for e in mat for t in sp.Add.make_args(sp.expand(e))]


def test_chop_drops_roundoff_and_keeps_small_data():
    x, y = sp.symbols("x y")
    e = 3e-3 * sp.sin(x) * y**2 + 8e-28 * y**2 + 4e-19 * x * y + 1.3e-11 * sp.cos(x) + 0.4
    assert chop(e) == 3e-3 * sp.sin(x) * y**2 + 1.3e-11 * sp.cos(x) + 0.4
    assert chop(sp.Integer(0)) == 0


# double_pendulum (example-robot-data): its rpy frames (cos(π/2) ≠ 0) left 8e-28·q̇² terms in V
@pytest.mark.parametrize("urdf, method", [("planar_2r", m) for m in METHODS]
                         + [("double_pendulum", "gibbs-appell")])
def test_derived_matrices_equal_core(urdf, method):
    model = rd.load_urdf(
        erd_urdf("double_pendulum_description/urdf/double_pendulum.urdf")
        if urdf == "double_pendulum" else bundled("planar_2r.urdf"))
    data = model.create_data()
    M, V, G, system = derive(model, method)
    for mat in (M, V, G):  # no roundoff terms left: each within ROUNDOFF of its entry's largest
        for e in mat:
            c = _coefficients([e])
            assert min(c, default=1.0) > ROUNDOFF * max(c, default=1.0), e
    fM = sp.lambdify([system.q], M)
    fV = sp.lambdify([system.q, system.qd], V)
    fG = sp.lambdify([system.q], G)
    q, v = np.array([0.3, -0.7]), np.array([1.2, -0.4])
    np.testing.assert_allclose(np.array(fM(q), float), rd.mass_matrix(model, data, q), atol=1e-9)
    np.testing.assert_allclose(np.array(fV(q, v), float).ravel(),
                               rd.coriolis_torques(model, data, q, v), atol=1e-9)
    np.testing.assert_allclose(np.array(fG(q), float).ravel(), rd.gravity_torques(model, data, q),
                               atol=1e-9)


def test_cli_latex_and_refusal(tmp_path, capsys):
    # the command in this process (cli.main.main, what the executable runs): a subprocess cost
    # seconds of interpreter start and SymPy import for each of the two
    from robot_dynamics.cli.main import main

    out = tmp_path / "eq.tex"
    assert main(["derive", "planar_2r", "--method", "kane", "--latex", str(out)]) == 0
    ok = capsys.readouterr()
    assert "M =" in ok.out and "\\left[" in out.read_text()
    assert main(["derive", "arm7"]) == 2
    bad = capsys.readouterr()
    assert "symbolic derivation is limited to 4" in bad.err
