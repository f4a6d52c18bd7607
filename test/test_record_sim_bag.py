"""scripts/record_sim_bag.py --actuators: the recorded run carries the actuator model.

The README's identification loop with actuators records with ``--actuators arm7_actuators``
and fits with ``identify --actuators``; without the option the recorder could only record an
arm without rotors and gear mesh, and the fit of the actuator terms had nothing to find.

The check: every lock-step row k → k+1 of the bag satisfies the plant's equation of motion
τ = M(q)q̈ + h(q, q̇) − τf with the actuators (armature N²·J in M, gear-mesh and motor friction in
τf) far better than without them (the armature alone is 0.3–3.6 kg·m² per joint).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.parsers.resources import config_path, robot_path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "scripts", "record_sim_bag.py")


def test_bad_actuators_file_is_one_line_before_simulating(tmp_path):
    bad = tmp_path / "act.yaml"
    bad.write_text("joints:\n  joint_a1: {gear_ratio: 100, efficency_forward: 0.8}\n")
    out = subprocess.run([sys.executable, SCRIPT, "--actuators", str(bad), "--out",
                          str(tmp_path / "bag")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--actuators" in lines[0] and "efficency_forward" in lines[0], lines
    assert not (tmp_path / "bag").exists()


def _balance_residual(model, friction, t, Q, V, TAU):
    """RMS over rows of τ_{k+1} − ID(mid-step state, Δq̇/Δt) with friction at q̇_{k+1}."""
    data = model.create_data()
    res = []
    for k in range(0, len(t) - 1, 5):
        h = t[k + 1] - t[k]
        a = (V[k + 1] - V[k]) / h
        tau = rd.inverse_dynamics(model, data, Q[k + 1], V[k + 1], a, friction=friction)
        res.append(TAU[k + 1] - tau)
    return float(np.sqrt(np.mean(np.square(res))))


@pytest.mark.slow
def test_recording_with_actuators_has_rotors_and_gear_mesh(tmp_path, capfd, monkeypatch):
    import importlib.util

    from ros_helpers import DOMAIN_ID
    from robot_dynamics.identification.io import load_bag

    # the script's main in this process (its nodes run in the recording process either way; a
    # subprocess spent seconds importing and loading the kernels again), on the domain ENV gave
    monkeypatch.setenv("ROS_DOMAIN_ID", DOMAIN_ID)
    spec = importlib.util.spec_from_file_location("record_sim_bag", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    bag = tmp_path / "act_bag"
    rc = script.main(["--actuators", "arm7_actuators", "--duration", "1.5", "--out", str(bag)])
    assert rc in (0, None), capfd.readouterr().err[-3000:]  # sys.exit(main()): exit status 0
    model = rd.load_urdf(robot_path("arm7"))
    log = load_bag(str(bag), model)
    t, Q, V, TAU = log["t"], log["q"], log["v"], log["tau"]
    assert len(t) > 1000
    bare = rd.friction_from_config(config_path("arm7_friction"), model)
    without = _balance_residual(model, bare, t, Q, V, TAU)
    act = rd.actuators_from_config(config_path("arm7_actuators"), model)
    act.apply(model)
    with_act = _balance_residual(model, act.friction(bare), t, Q, V, TAU)
    assert with_act < 0.05 * without, (with_act, without)
