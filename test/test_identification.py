"""Friction identification: recovers known coefficients, refuses unsupported claims, round-trips."""
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch
from robot_dynamics.identification import fit
from robot_dynamics.identification import fourier_excitation, load_bag
from robot_dynamics.cli.identify import main as identify_main
from robot_dynamics.identification.io import save_bag
from conftest import bundled

TRUTH = {"model": "load_dependent", "coulomb": 0.8, "viscous": 0.3, "k1": 0.01, "k2": 0.004,
         "k3": 0.002}
NOISE = 0.05


def _data(model, config, seed=1):
    fr = rd.friction_from_config(config, model)
    t, Q, V, A = fourier_excitation(model, duration=30.0, rate=200.0)
    tau = inverse_dynamics_batch(model, Q, V, A, fr)
    tau = tau + np.random.default_rng(seed).normal(scale=NOISE, size=tau.shape)
    return t, Q, V, A, tau


@pytest.fixture(scope="module")
def arm7():
    return rd.load_urdf(bundled("arm7.urdf"))


def test_recovers_load_dependent_coefficients_within_confidence(arm7):
    t, Q, V, A, tau = _data(arm7, {"default": TRUTH})
    result = fit(arm7, Q, V, tau, A)
    assert not result.not_friction and min(j.dissipative for j in result.joints) > 0.95
    misses = []
    for j in result.joints:
        for k, est in j.coefficients.items():
            se = j.standard_errors[k]
            z = abs(est - TRUTH[k]) / se
            if z > 4.0 and abs(est - TRUTH[k]) > 0.05 * TRUTH[k]:
                misses.append((j.joint, k, est, se))
        assert j.residual_rms == pytest.approx(NOISE, rel=0.2)
    assert not misses, misses
    # the large joints see large, varying loads: there the improvement is clear and claimed
    assert sum(j.improvement_supported for j in result.joints) >= 4
    assert result.config["joints"]["joint_a1"]["model"] == "load_dependent"


def test_classic_data_gets_no_load_dependence(arm7):
    t, Q, V, A, tau = _data(arm7, {"default": {"model": "classic", "coulomb": 0.8, "viscous": 0.3}})
    result = fit(arm7, Q, V, tau, A)
    for j in result.joints:
        assert not j.improvement_supported, j
        for k in ("k1", "k2", "k3"):  # consistent with zero
            assert j.coefficients[k] <= 3 * j.standard_errors[k] + 1e-9, (j.joint, k)
        assert j.coefficients["coulomb"] == pytest.approx(0.8, abs=4 * j.standard_errors["coulomb"])


def test_bag_round_trip_through_cli(arm7, tmp_path, capsys):
    """simulate → bag → identify (CLI) → YAML → the same friction efforts within noise."""
    from robot_dynamics.cli.main import main

    t, Q, V, A, tau = _data(arm7, {"default": TRUTH}, seed=2)
    bag = tmp_path / "run"
    save_bag(bag, arm7, t, Q, V, tau)
    rec = load_bag(str(bag), arm7)
    np.testing.assert_allclose(rec["tau"], tau)
    out = tmp_path / "friction.yaml"
    # the command in this process (what the executable runs): a subprocess spent seconds
    # importing and loading the kernels again
    rc = main(["identify", "arm7", str(bag), "-o", str(out), "--plot", str(tmp_path / "fit.png")])
    proc = capsys.readouterr()
    assert rc == 0, proc.err
    # the report, per joint: samples, condition number, residual RMS, every coefficient with
    # its standard error and 95 % interval, the held-out comparison with the other law
    blocks = re.split(r"\n  (?=joint_a\d: )", proc.out)[1:]
    assert [b.split(":")[0] for b in blocks] == arm7.joint_names
    for block in blocks:
        assert re.match(r"joint_a\d: \d+ samples, condition number [\d.]+, residual RMS "
                        r"[\d.e-]+ N·m", block), block
        for k in ("coulomb", "viscous", "k1", "k2", "k3"):
            assert re.search(rf"\n    {k} +[\d.e-]+ ± [\d.e-]+ +95 % \[[\d.e-]+, [\d.e-]+\]",
                             block), (k, block)
        assert re.search(r"held-out RMS load_dependent [\d.e-]+ vs classic [\d.e-]+: "
                         r"(load_dependent|classic) better by [\d.]+ %", block), block
    config = yaml.safe_load(out.read_text())
    fr_id = rd.friction_from_config(config, arm7)
    fr_true = rd.friction_from_config({"default": TRUTH}, arm7)
    _, tf_id = inverse_dynamics_batch(arm7, Q, V, A, fr_id, return_friction=True)
    _, tf_true = inverse_dynamics_batch(arm7, Q, V, A, fr_true, return_friction=True)
    moving = np.abs(V) > 0.05
    err = np.abs(tf_id - tf_true)[moving]
    assert np.sqrt(np.mean(err ** 2)) < NOISE  # differentiated q̈ included
    assert (tmp_path / "fit.png").stat().st_size > 5000


def test_bad_inputs(arm7, tmp_path):
    t, Q, V, A, tau = _data(arm7, {"default": TRUTH})
    bad = tau.copy()
    bad[5, 2] = np.nan
    with pytest.raises(rd.InputError,
                       match=r"non-finite values in tau \(joint_a3\) at sample\(s\) \[5\] — "):
        fit(arm7, Q, V, bad, A)
    still = V.copy()
    still[:, 3] = 0.0
    result = fit(arm7, Q, still, tau, A)  # reported, not raised: the other joints still fit
    assert ("joint_a4", "coulomb", "joint_a4 never moved faster than 0.05 rad/s (0 usable samples, "
            "need 50)") in result.unidentifiable
    assert result.joints[2].coefficients and not result.joints[3].coefficients
    with pytest.raises(rd.InputError, match="give the time stamps"):
        fit(arm7, Q, V, tau)
    # absurd magnitudes (wrong units by 1e200): one line naming them, no overflow traceback
    with pytest.raises(rd.InputError, match=r"the fit of the log's rows overflowed .*"
                                            r"\|τ\| ≤ \d\.\d+e\+20\d\) are far beyond"):
        fit(arm7, Q, V, tau * 1e200, t=t)


def _identify(*args):
    return subprocess.run([sys.executable, "-m", "robot_dynamics.cli.main", "identify", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_format_mistakes_are_one_line_errors(arm7, tmp_path, capsys):
    """Each format mistake: exit 2 and one line naming the file and what is wrong."""
    t, Q, V, A, tau = _data(arm7, {"default": TRUTH})
    n = 5
    names = arm7.joint_names
    cols = ["t"] + [f"{k}_{j}" for k in ("q", "v", "tau") for j in names]
    rows = np.column_stack([t[:n], Q[:n], V[:n], tau[:n]])
    cases = {}
    path = tmp_path / "noheader.csv"
    np.savetxt(path, rows, delimiter=",")
    cases[path] = r"no header line \(the first line is numbers\)"
    path = tmp_path / "missing.csv"
    keep = [c != "q_joint_a7" for c in cols]
    np.savetxt(path, rows[:, keep], delimiter=",", header=",".join(np.array(cols)[keep]),
               comments="")
    cases[path] = r"missing column\(s\) \['q_joint_a7'\]"
    path = tmp_path / "nonames.npz"
    np.savez(path, t=t[:n], q=Q[:n], v=V[:n], tau=tau[:n])
    cases[path] = r"NPZ lacks array\(s\) \['joint_names'\]"
    path = tmp_path / "shape.npz"
    np.savez(path, t=t[:n], q=Q[:n, :6], v=V[:n], tau=tau[:n], joint_names=np.array(names))
    cases[path] = r"array 'q' has shape \(5, 6\); expected \(5, 7\)"
    path = tmp_path / "unknown.npz"
    np.savez(path, t=t[:n], q=Q[:n], v=V[:n], tau=tau[:n],
             joint_names=np.array([f"j{k}" for k in range(7)]))
    cases[path] = r"joint\(s\) \['joint_a1', .*'joint_a7'\] of robot 'arm7' are not in the log"
    bag = tmp_path / "other_topic"
    save_bag(bag, arm7, t[:n], Q[:n], V[:n], tau[:n], topic="/other")
    cases[bag] = r"no topic '/joint_states'; topics: \['/other'\]"
    bag = tmp_path / "string_topic"
    _string_bag(bag, "/joint_states")
    cases[bag] = (r"topic '/joint_states' carries std_msgs/msg/String, not "
                  r"sensor_msgs/msg/JointState")
    path = tmp_path / "notabag"
    path.mkdir()
    cases[path] = "a folder without metadata.yaml, not a ROS 2 bag"
    for path, pattern in cases.items():
        code = identify_main(["arm7", str(path), "-o", str(tmp_path / "x.yaml")])
        err = capsys.readouterr().err
        assert code == 2, (path, err)
        lines = [ln for ln in err.splitlines() if ln.startswith("robot-dynamics")]
        assert len(lines) == 1 and str(path) in lines[0], err
        assert re.search(pattern, lines[0]), (pattern, lines[0])
    assert not (tmp_path / "x.yaml").exists()


def _string_bag(path, topic):
    """A bag whose ``topic`` carries std_msgs/msg/String (a wrong-type topic)."""
    from pathlib import Path

    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    String = ts.types["std_msgs/msg/String"]
    with Writer(Path(path), version=8) as writer:
        conn = writer.add_connection(topic, String.__msgtype__, typestore=ts)
        writer.write(conn, 1, ts.serialize_cdr(String(data="hello"), String.__msgtype__))


def test_help_documents_formats_and_defaults():
    proc = _identify("--help")
    assert proc.returncode == 0
    out = " ".join(proc.stdout.split())
    for text in ("tau_<joint>", "joint_names", "sensor_msgs/msg/JointState",
                 "(default: load_dependent)", "(default: /joint_states)", "--force"):
        assert text in out, text


def test_classic_summary_speaks_of_the_classic_law(arm7):
    t, Q, V, A, tau = _data(arm7, {"default": TRUTH})
    summary = fit(arm7, Q, V, tau, A, law="classic").summary()
    assert summary.startswith("friction identification, law classic: |τf| = coulomb±")
    assert "coulomb_negative" in summary and " k1 " not in summary
    assert "held-out RMS classic" in summary  # the other law appears only as the comparison


def printed_intervals(summary):
    """{(joint, coefficient): (estimate, lo, hi)} as ``identify`` prints them."""
    out, joint = {}, None
    for line in summary.splitlines():
        m = re.match(r"^  (\S+): \d+ samples", line)
        if m:
            joint = m.group(1)
            continue
        m = re.match(r"^    (\w+)\s+(\S+) ± \S+\s+95 % \[(\S+), (\S+)\]", line)
        if m and joint:
            out[joint, m.group(1)] = tuple(float(x) for x in m.groups()[1:])
    return out


@pytest.mark.slow
def test_readme_loop_gives_coefficients_within_their_intervals(arm7, tmp_path, capsys):
    """The README's loop: record with the simulator node (scripts/record_sim_bag.py, designed
    excitation, config/arm7_friction.yaml) → ``robot-dynamics identify`` → YAML → simulate.
    Every true coefficient lies within its printed 95 % interval, the intervals are narrow
    (a noise-free log: half-widths < 1e-4 of the coefficient, so a wide interval cannot pass),
    and simulating with the YAML gives the same friction efforts."""
    import os

    from ros_helpers import ENV
    from robot_dynamics.control.trajectory import JointTrajectory
    from conftest import REPO
    from test_identification_coverage import truth_of

    bag = tmp_path / "node_run"
    rec = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "record_sim_bag.py"),
                          "--duration", "4", "--out", str(bag)], env=ENV, capture_output=True,
                         text=True, timeout=600)
    assert rec.returncode == 0, rec.stderr[-3000:]
    assert "designed excitation: regressor condition numbers" in rec.stdout
    out = tmp_path / "identified.yaml"
    from robot_dynamics.cli.main import main

    # identify in this process (what the executable runs; the recording above is the real node
    # run): a subprocess spent seconds importing and loading the kernels again
    rc = main(["identify", "arm7", str(bag), "-o", str(out)])
    ident = capsys.readouterr()
    assert rc == 0, ident.err
    truth = truth_of(arm7)
    printed = printed_intervals(ident.out)
    assert len(printed) == 35, ident.out
    written = yaml.safe_load(out.read_text())["joints"]
    for (joint, k), (estimate, lo, hi) in printed.items():
        true = truth[joint][k]
        assert lo <= true <= hi, (joint, k, true, lo, hi)
        assert 0 < hi - lo < 2e-4 * true, (joint, k, lo, hi)
        assert lo <= written[joint][k] <= hi, (joint, k)
    assert "residuals correlated in time" not in ident.out
    found = rd.friction_from_config(yaml.safe_load(out.read_text()), arm7)
    truth_fr = rd.friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), arm7)
    t, Q, V, A = fourier_excitation(arm7, duration=2.0, rate=50.0)
    traj = JointTrajectory(t, Q, V, A)
    runs = []
    for fr in (truth_fr, found):
        sim = rd.Simulator(arm7, fr, 1e-3)
        sim.reset(Q[0], V[0])
        data = arm7.create_data()

        def ctrl(tt, q, v):
            qd, vd, ad = traj.sample(tt)
            return rd.inverse_dynamics(arm7, data, q, v, ad + 40 * (vd - v) + 400 * (qd - q), fr)

        runs.append(sim.run(1.9, ctrl))
    diff = np.abs(runs[0]["tau_friction"] - runs[1]["tau_friction"]).max()
    assert diff < 1e-6 * np.abs(runs[0]["tau_friction"]).max(), diff


PLANAR_TRUTH = {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.1, "k1": 0.0,
                "k2": 0.01, "k3": 0.0}


def _planar_log(path, t, Q, V, A, duration):
    from test_identification_coverage import record

    model = rd.load_urdf(bundled("planar_2r.urdf"))
    fr = rd.friction_from_config({"default": PLANAR_TRUTH}, model)
    log = record(model, fr, t, Q, V, A, duration, sigma_tau=0.01, seed=3)
    np.savez(path, joint_names=np.array(model.joint_names), **log)
    return model, log


def test_planar_log_with_too_little_excitation_is_refused(tmp_path, capsys):
    """Shoulder at one constant speed: its viscous term cannot be told from Coulomb."""
    t = np.arange(0.0, 3.5, 0.02)
    Q = np.column_stack([-1.0 + 0.6 * t, 0.8 * np.sin(2 * np.pi * 0.4 * t)])
    V = np.column_stack([np.full_like(t, 0.6), 0.8 * 2 * np.pi * 0.4 * np.cos(2 * np.pi * 0.4 * t)])
    A = np.column_stack([np.zeros_like(t), -0.8 * (2 * np.pi * 0.4) ** 2 *
                         np.sin(2 * np.pi * 0.4 * t)])
    _planar_log(tmp_path / "slow.npz", t, Q, V, A, 3.0)
    out = tmp_path / "friction.yaml"
    code = identify_main(["planar_2r", str(tmp_path / "slow.npz"), "-o", str(out)])
    cap = capsys.readouterr()
    assert code == 3 and not out.exists()
    refusal = [ln for ln in cap.err.splitlines() if ln.startswith("robot-dynamics identify")]
    assert len(refusal) == 1
    assert re.search(r"shoulder\.viscous \(needs several different speeds \|q̇\|", refusal[0])
    assert "elbow." not in refusal[0]  # the elbow moved at many speeds
    # the planar arm can never carry an axial load: not applicable, not a refusal
    assert "k3               not applicable: shoulder cannot carry an axial load" in cap.out
    code = identify_main(["planar_2r", str(tmp_path / "slow.npz"), "-o", str(out), "--force"])
    assert code == 0
    written = yaml.safe_load(out.read_text())["joints"]["shoulder"]
    assert written["viscous"] == 0.0 and written["coulomb"] > PLANAR_TRUTH["coulomb"]


def test_planar_designed_excitation_identifies_every_coefficient(tmp_path, capsys):
    from robot_dynamics.identification import design_excitation

    model = rd.load_urdf(bundled("planar_2r.urdf"))
    t, Q, V, A, conds = design_excitation(model, duration=6.5, rate=50.0, evaluations=60)
    assert np.all(conds < 100), conds
    assert np.all((Q >= 0.8 * model.lower_limits - 1e-9) & (Q <= 0.8 * model.upper_limits + 1e-9))
    assert np.all(np.abs(V) <= 0.8 * model.velocity_limits + 1e-9)
    _planar_log(tmp_path / "designed.npz", t, Q, V, A, 6.0)
    out = tmp_path / "friction.yaml"
    assert identify_main(["planar_2r", str(tmp_path / "designed.npz"), "-o", str(out)]) == 0
    assert "unidentifiable" not in capsys.readouterr().out
    written = yaml.safe_load(out.read_text())["joints"]
    for joint in model.joint_names:
        for k in ("coulomb", "viscous", "k2"):
            assert written[joint][k] == pytest.approx(PLANAR_TRUTH[k], rel=0.2, abs=2e-3), \
                (joint, k)
    # the same log in other units or of the other sign: its efforts are not friction — refused
    log = dict(np.load(tmp_path / "designed.npz"))
    for scale, unit in ((1e3, "N·mm"), (-1.0, "sign")):
        bad = tmp_path / f"bad_{unit}.npz"
        np.savez(bad, **{**log, "tau": log["tau"] * scale})
        out.unlink(missing_ok=True)
        code = identify_main(["planar_2r", str(bad), "-o", str(out)])
        cap = capsys.readouterr()
        assert code == 3 and not out.exists(), unit
        refusal = [ln for ln in cap.err.splitlines() if ln.startswith("robot-dynamics identify")]
        assert len(refusal) == 1 and "are not friction beyond the rigid-body dynamics" in \
            refusal[0], (unit, refusal)
        assert re.search(r"(shoulder|elbow): only \d+ % of its rows' effort", refusal[0]), unit
        assert "NOT FRICTION" in cap.out
        assert identify_main(["planar_2r", str(bad), "-o", str(out), "--force"]) == 0
