"""`robot-dynamics sim` (the pip-mode composition) end to end: tracks, reports, plots, judges.

rrp (two revolute joints and a prismatic one) with short moves: the summary and the plot carry
units per joint type. The user mistakes, help and signals are in test_cli.py.
"""
import re

import pytest

from ros_helpers import DOMAIN_ID


@pytest.mark.slow
def test_sim_demo_tracks_reports_and_plots(tmp_path, capfd, monkeypatch):
    # the command in this process (cli.main.main, what the executable runs; its nodes run in
    # process either way): a subprocess spent seconds importing and loading the kernels again.
    # capfd: the nodes' log lines are written by rcutils at the file descriptor
    from robot_dynamics.cli.main import main

    monkeypatch.setenv("ROS_DOMAIN_ID", DOMAIN_ID)
    plot = tmp_path / "demo.png"
    rc = main(["sim", "--robot", "rrp", "--move-time", "0.5", "--settle", "0.2", "--plot",
               str(plot)])
    cap = capfd.readouterr()
    out = cap.out + cap.err
    assert rc == 0, out
    # each joint type in its own unit: the revolute joints' in rad, the prismatic one's in m
    final = re.search(r"tracking error: final ([0-9.e+-]+) rad, ([0-9.e+-]+) m; "
                      r"max ([0-9.e+-]+) rad, ([0-9.e+-]+) m", out)
    assert final and max(map(float, final.groups()[:2])) < 1e-3, out
    per_joint = re.search(r"max per joint: theta1 ([0-9.e+-]+) rad, theta2 ([0-9.e+-]+) rad, "
                          r"d3 ([0-9.e+-]+) m", out)
    assert per_joint and max(map(float, per_joint.groups())) < 1e-2, out
    dissipated = float(re.search(r"friction dissipation ([0-9.e+-]+) J", out).group(1))
    assert dissipated > 0.1, out
    residual = float(re.search(r"\(([0-9.e+-]+) relative\)", out).group(1))
    assert abs(residual) < 1e-3, out
    assert "verdict: valid run" in out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
