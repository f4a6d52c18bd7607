"""`robot-dynamics sim` (the pip-mode composition) end to end, and the CLI's dispatch."""
import re
import subprocess
import sys

import pytest

from ros_helpers import ENV


@pytest.mark.slow
def test_sim_demo_tracks_reports_and_plots(tmp_path):
    plot = tmp_path / "demo.png"
    proc = subprocess.run(
        [sys.executable, "-m", "robot_dynamics.cli", "sim", "--move-time", "0.5", "--plot",
         str(plot)], env=ENV, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    final = float(re.search(r"tracking error: final ([0-9.e+-]+) rad", out).group(1))
    assert final < 1e-3, out
    dissipated = float(re.search(r"friction dissipation ([0-9.e+-]+) J", out).group(1))
    assert dissipated > 0.1, out
    residual = float(re.search(r"\(([0-9.e+-]+) relative\)", out).group(1))
    assert abs(residual) < 1e-3, out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_cli_usage_and_unknown_command():
    ok = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "--help"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "sim" in ok.stdout and "identify" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "fly"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown command 'fly'" in bad.stderr


def test_sim_rejects_unknown_robot():
    proc = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "sim", "--robot", "nope"],
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no bundled urdf file 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr
