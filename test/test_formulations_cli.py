"""`robot-dynamics derive`: the printed M, V, G are the core's, and large robots are refused."""
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import robot_dynamics as rd
from robot_dynamics.formulations.cli import METHODS, derive
from conftest import bundled


@pytest.mark.parametrize("method", METHODS)
def test_derived_matrices_equal_core(method):
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    data = model.create_data()
    M, V, G, system = derive(model, method)
    fM = sp.lambdify([system.q], M)
    fV = sp.lambdify([system.q, system.qd], V)
    fG = sp.lambdify([system.q], G)
    q, v = np.array([0.3, -0.7]), np.array([1.2, -0.4])
    np.testing.assert_allclose(np.array(fM(q), float), rd.mass_matrix(model, data, q), atol=1e-9)
    np.testing.assert_allclose(np.array(fV(q, v), float).ravel(),
                               rd.coriolis_torques(model, data, q, v), atol=1e-9)
    np.testing.assert_allclose(np.array(fG(q), float).ravel(), rd.gravity_torques(model, data, q),
                               atol=1e-9)


def test_cli_latex_and_refusal(tmp_path):
    out = tmp_path / "eq.tex"
    ok = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "derive", "planar_2r",
                         "--method", "kane", "--latex", str(out)], capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "M =" in ok.stdout and "\\left[" in out.read_text()
    bad = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "derive", "arm7"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "symbolic derivation is limited to 4" in bad.stderr
