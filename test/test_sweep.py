"""Robustness studies (robot_dynamics.simulation.sweep, ``robot-dynamics sweep``; issue 35): the
statistics are those of a hand-written loop of Simulator.run over the documented rollouts, the
same on a Dask LocalCluster as on local processes, and the command writes its table and CSV and
refuses bad options in one line."""
import csv
import os
import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control.trajectory import minimum_jerk
from robot_dynamics.parsers.resources import config_path, robot_path
from robot_dynamics.simulation.sweep import make_study, sweep

DURATION = 0.08  # 80 steps: seconds of test time in all
KP = np.array([400.0, 400.0, 400.0, 400.0, 625.0, 625.0, 625.0])  # config/arm7_controller.yaml
KD = np.array([40.0, 40.0, 40.0, 40.0, 50.0, 50.0, 50.0])


def hand_loop(friction_scales, perturbation, gain_scale, repeats, seed, move=0.4,
              move_time=1.0):
    """The grid study of the module docstring written out: rows (scale, metrics)."""
    model = rd.load_urdf(robot_path("arm7"))
    nominal = rd.friction_from_config(config_path("arm7_friction"), model)
    steps = int(round(DURATION / 1e-3))
    lo, hi = model.lower_limits, model.upper_limits
    goal = np.clip(np.zeros(7) + move, 0.5 * (lo + hi) - 0.45 * (hi - lo),
                   0.5 * (lo + hi) + 0.45 * (hi - lo))
    traj = minimum_jerk(np.zeros(7), goal, move_time)
    Q, V, A = (np.array(x) for x in zip(*(traj.sample(k * 1e-3) for k in range(steps + 1))))
    rows = []
    i = 0
    for scale in friction_scales:
        for _ in range(repeats):
            rng = np.random.default_rng([seed, i])
            q0 = np.clip(perturbation * rng.standard_normal(7), lo, hi)
            i += 1
            cfg = nominal.to_config()
            for law in cfg["joints"].values():
                for key in ("coulomb", "viscous", "k1", "k2", "k3"):
                    law[key] *= scale
            sim = rd.Simulator(model, rd.friction_from_config(cfg, model), 1e-3)
            sim.reset(q0)
            out = sim.run(steps=steps, controller=rd.ComputedTorque(
                KP * gain_scale ** 2, KD * gain_scale, Q, V, A, friction=nominal))
            e = out["q"] - Q[1:]
            rows.append((scale, np.sqrt(np.mean(e ** 2)), np.abs(e).max(),
                         sim.saturated_steps / steps, sim.audit.motor_gross))
    return np.array(rows)


def test_statistics_equal_a_hand_loop():
    result = sweep("arm7", friction_scale=[0.5, 2.0], perturbation=[0.03], gain_scale=[0.8],
                   repeats=3, seed=11, duration=DURATION, workers=2)
    rows = hand_loop([0.5, 2.0], 0.03, 0.8, 3, 11)
    stats = result.statistics()
    assert [(s["factor"], s["level"], s["n"], s["failed"]) for s in stats] == [
        ("friction_scale", "0.5", 3, 0), ("friction_scale", "2", 3, 0)]
    for s, scale in zip(stats, (0.5, 2.0)):
        mine = rows[rows[:, 0] == scale]
        for col, name in enumerate(("rms_error", "max_error", "saturation", "motor_gross"), 1):
            p50, p5, p95 = np.percentile(mine[:, col], [50, 5, 95])
            assert s[f"{name}_median"] == pytest.approx(p50, rel=1e-12, abs=1e-15), name
            assert s[f"{name}_p5"] == pytest.approx(p5, rel=1e-12, abs=1e-15), name
            assert s[f"{name}_p95"] == pytest.approx(p95, rel=1e-12, abs=1e-15), name
    # the levels differ (the statistics are not of one rollout): at half the nominal friction
    # the controller over-compensates and the light wrist runs away from its reference
    assert stats[0]["rms_error_median"] > 2 * stats[1]["rms_error_median"]
    table = result.table()
    assert "friction_scale" in table and "0.5" in table and "rms err" in table


def test_on_a_dask_local_cluster_as_on_local_processes():
    pytest.importorskip("distributed", reason="Dask distributed is not installed "
                                              "(pip install 'robot_dynamics[cluster]')")
    study = dict(friction_scale=[0.5, 1.5], payload_mass=[0.0, 4.0], perturbation=[0.0, 0.05],
                 samples=6, seed=3, duration=DURATION, bins=2)
    local = sweep("arm7", workers=1, **study)
    remote = sweep("arm7", scheduler="local", workers=2, **study)
    assert remote.summaries == local.summaries
    assert np.array_equal(remote.design, local.design)
    assert remote.table() == local.table()
    assert [s["n"] for s in local.statistics()] and sum(
        s["n"] for s in local.statistics() if s["factor"] == "payload_mass") == 6
    # a random design: each factor drawn in its range
    assert (local.design[:, 0] >= 0.5).all() and (local.design[:, 0] <= 1.5).all()
    assert len(np.unique(local.design[:, 1])) == 6


CLI = [sys.executable, "-m", "robot_dynamics.cli.main", "sweep"]


def test_command_runs_a_tiny_study(tmp_path):
    out_csv, png = tmp_path / "s.csv", tmp_path / "s.png"
    proc = subprocess.run(CLI + ["--friction-scale", "0.5,2", "--gain-scale", "0.8",
                                 "--perturbation", "0.03", "--repeats", "3", "--seed", "11",
                                 "--duration", str(DURATION), "--workers", "2",
                                 "--csv", str(out_csv), "--plot", str(png)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "friction_scale  0.5" in proc.stdout and "friction_scale  2 " in proc.stdout
    assert "6 rollouts (0 failed)" in proc.stdout
    assert "6/6 rollouts" in proc.stderr  # plain progress lines (stderr is not a terminal)
    with open(out_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {r["status"] for r in rows} == {"ok"}
    mine = hand_loop([0.5, 2.0], 0.03, 0.8, 3, 11)
    assert np.allclose([float(r["rms_error"]) for r in rows], mine[:, 1], rtol=1e-12, atol=0)
    assert [float(r["friction_scale"]) for r in rows] == [0.5] * 3 + [2.0] * 3
    assert os.path.getsize(png) > 1000


@pytest.mark.parametrize("args, words", [
    (["--robot", "no_such_robot"],
     "robot-dynamics sweep: --robot: robot 'no_such_robot' is neither"),
    (["--friction-scale=-1,1"], "--friction-scale: values must be finite and ≥ 0"),
    (["--payload", "a,b"], "--payload: expected numbers"),
    (["--samples", "4", "--perturbation", "0.2:0.1"], "--perturbation: range 0.2:0.1 has lo > hi"),
    (["--samples", "4", "--friction-scale", "0.5,2"],
     "--friction-scale: a random design (--samples) takes a range lo:hi or one value"),
    (["--friction-scale", "0.5:2"], "--friction-scale: '0.5:2' is not a level list"),
    (["--gain-scale", "0"], "--gain-scale: values must be > 0"),
    (["--duration", "-1"], "--duration: expected a positive number"),
    # a rollout whose per-step reference would not fit in memory (1e12 s hung, then filled it)
    (["--duration", "1e12"], "robot-dynamics sweep: --duration: 1e+12 s is 1e+15 steps of "
     "0.001 s a rollout; at most 2e+06 (2000 s at that step): the reference is sampled and held "
     "at every step"),
    (["--duration", "2001"], "--duration: 2001 s is 2.001e+06 steps of 0.001 s a rollout"),
    # studies too large for memory (--samples 1e9 was numpy's MemoryError traceback, a grid of
    # 0:1:1e12 levels would fill memory in linspace), values that overflowed or ran meaningless
    (["--samples", "1000000000"], "robot-dynamics sweep: --samples: 1000000000 rollouts; at "
     "most 1e+06: each rollout keeps its spec (~1 kB) and its summary in memory"),
    (["--repeats", "1000000000"], "--repeats: the grid's 1 × 1 × 1 × 1 levels × 1000000000 "
     "repeats make 1e+09 rollouts; at most 1e+06"),
    (["--friction-scale", "0:1:1000", "--payload", "0:1:1001"], "--payload: the grid's 1000 × "
     "1001 × 1 × 1 levels × 1 repeats make 1.001e+06 rollouts"),
    (["--friction-scale", "0:1:1e12"], "--friction-scale: '0:1:1e12' asks 1e+12 levels; at most "
     "1e+06 rollouts in all"),
    (["--payload", "1e300"], "--payload: expected a number from 0 to 10000 (kg, not g?; 0 = no "
     "payload), got 1e+300"),
    (["--samples", "3", "--payload", "0:1e5"], "--payload: expected a number from 0 to 10000"),
    (["--payload-com", "1e300,0,0"], "--payload-com: 1e+300 m from the link origin (at most 10 m"),
    (["--gain-scale", "1e300"], "--gain-scale: 1e+300 makes K_p = 625·g² overflow (not finite)"),
    (["--duration", "30", "--dt", "1e-5"], "--duration: 30 s is 3e+06 steps of 1e-05 s a "
     "rollout; at most 2e+06 (20 s at that step)"),
    (["--workers", "0"], "--workers: expected a whole number ≥ 1"),
    # past the bounds of round 4: a move between two states ran as a step response, a move no
    # rollout could finish ran as a hold, σ 1e300 ran (every joint at a limit), 1e5 bins with a
    # plot ran past 300 s at 7.1 GB, --workers 100000 a thread (or process) per rollout
    (["--move-time", "1e-5"], "robot-dynamics sweep: --move-time: 1e-05 s is shorter than 10 "
     "steps of 0.001 s (0.01 s): the move would fall between the states"),
    (["--move-time", "0.009"], "--move-time: 0.009 s is shorter than 10 steps"),
    (["--move-time", "1e300"], "--move-time: 1e+300 s is longer than the longest rollout (2e+06 "
     "steps of 0.001 s, 2000 s): no rollout could finish the move"),
    (["--perturbation", "1e300"], "--perturbation: σ = 1e+300 (rad or m); at most 6.2832 (a "
     "turn): a larger one only puts the start at the joint limits"),
    (["--samples", "4", "--perturbation", "0:7"], "--perturbation: σ = 7 (rad or m); at most"),
    (["--samples", "4", "--bins", "101"], "--bins: expected a whole number from 1 to 100 (a "
     "table row and a box of the plot each), got 101"),
    (["--workers", "100000"], "--workers: 100000 on "),
    (["--cluster", "local", "--workers", "100000"], "--workers: 100000 on "),
    # a move of nothing, backwards, not a number or past a turn: no study to run
    (["--move", "0"], "robot-dynamics sweep: --move: expected a number in (0, 6.2832] (every "
     "joint moves by it, rad or m, up to 90 % of its range), got 0"),
    (["--move", "-1"], "--move: expected a number in (0, 6.2832]"),
    (["--move", "nan"], "--move: expected a number in (0, 6.2832]"),
    (["--move", "inf"], "--move: expected a number in (0, 6.2832]"),
    (["--move", "7"], "--move: expected a number in (0, 6.2832]"),
    (["--friction", "nosuch"], "--friction: no bundled friction config 'nosuch'"),
    (["--payload-link", "nolink"], "--payload-link: robot 'arm7' has no link 'nolink'"),
    (["--dt", "abc"], "robot-dynamics sweep: argument --dt: invalid float value: 'abc'"),
    (["--dt", "0.5", "--duration", "2"], "--dt: 0.5 s is longer than 0.1 s"),
    (["--dt", "1e-12"], "--dt: 1e-12 s is shorter than 1e-05 s (100000 Hz, the simulator "
     "node's highest rate)"),
    (["--samples", "2.5"], "argument --samples: invalid int value: '2.5'"),
    (["--payload-com", "0,0"], "robot-dynamics sweep: argument --payload-com: expected 3 "
     "numbers, as X,Y,Z or X Y Z, got '0,0' (see --help)"),
    (["--payload-com", "0", "0,1", "2"],
     "argument --payload-com: expected 3 numbers, as X,Y,Z or X Y Z, got '0 0,1 2'"),
    (["--payload-com", "a,b,c"], "argument --payload-com: expected 3 numbers"),
    (["--payload-com", "nan", "0", "0"], "argument --payload-com: expected 3 finite numbers"),
])
def test_bad_options_are_one_line_naming_them(args, words, capsys, tmp_path):
    from robot_dynamics.cli.main import main

    try:  # (argparse's own refusals exit)
        rc = main(["sweep", "--csv", str(tmp_path / "x.csv"), "--duration", "0.01",
                   "--move-time", "0.01"] + args)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert words in err, err
    assert not (tmp_path / "x.csv").exists()


def test_ctrl_c_is_one_line_and_exit_130(capsys, tmp_path, monkeypatch):
    """Ctrl-C during the rollouts: one line saying how far it got, exit 130, no CSV (it was a
    36-line KeyboardInterrupt traceback)."""
    import robot_dynamics.simulation.rollouts as rollouts
    from robot_dynamics.cli.main import main

    real = rollouts._rollout
    count = [0]

    def interrupted(*args):
        count[0] += 1
        if count[0] == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(rollouts, "_rollout", interrupted)
    rc = main(["sweep", "--samples", "8", "--workers", "1", "--duration", "0.01",
               "--csv", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("robot-dynamics sweep: interrupted")]
    assert rc == 130 and len(lines) == 1, err
    assert "after 2 of 8 rollouts" in lines[0] and "Traceback" not in err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("words", [["0,-0.05,0.1"], ["0", "-0.05", "0.1"], ["0, -0.05, 0.1"],
                                   ["--payload-com=0,-0.05,0.1"]])
def test_payload_com_is_written_either_way_in_both_commands(words):
    """sweep took --payload-com X,Y,Z and sim X Y Z (nargs=3): each refused the other's form.
    Both now take both (errors.NumbersAction, one parser for the two), the same numbers."""
    from robot_dynamics.cli.sweep import build_parser
    from robot_dynamics.ros.demo.arguments import build_parser as sim_parser, options_from_args

    argv = words if words[0].startswith("--") else ["--payload-com"] + words
    assert build_parser().parse_args(argv).payload_com == (0.0, -0.05, 0.1)
    sim = options_from_args(sim_parser().parse_args(["--scenario", "payload"] + argv))
    assert sim.payload_com == (0.0, -0.05, 0.1)
    assert build_parser().parse_args([]).payload_com == (0.0, 0.0, 0.0)
    for parser in (build_parser(), sim_parser()):
        assert "X,Y,Z or X Y Z" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("move", [0.0, -0.4, float("nan"), 10.0])
def test_make_study_refuses_a_move_of_nothing(move):
    """The API says what the command says (the command's --move is this move)."""
    from robot_dynamics.errors import InputError
    from robot_dynamics.simulation.sweep import make_study

    with pytest.raises(InputError, match=r"^move: expected a number in \(0, 6.2832\]"):
        make_study("planar_2r", move=move)


def test_make_study_refuses_a_rollout_too_long_before_loading_the_robot(monkeypatch):
    """The API bounds a rollout as the command does (MAX_STEPS), before the robot loads; the
    bound itself (2000 s at 1 kHz) is taken."""
    from robot_dynamics.errors import InputError
    import robot_dynamics.simulation.sweep as sweep

    def no_plant(*args):
        raise AssertionError("the robot was loaded")

    monkeypatch.setattr(sweep, "Plant", no_plant)
    with pytest.raises(InputError, match=r"^duration: 1e\+12 s is 1e\+15 steps of 0.001 s"):
        sweep.make_study("planar_2r", duration=1e12)
    assert sweep.steps_refusal(2000.0, 1e-3) is None and sweep.MAX_STEPS == 2_000_000
    assert sweep.steps_refusal(2000.5, 1e-3) is not None


@pytest.mark.parametrize("option, value, words", [
    ("payload_mass", [0.0, 1e300], "payload_mass: expected a number from 0 to 10000 (kg, not g?"),
    ("payload_com", (1e300, 0.0, 0.0), "payload_com: 1e+300 m from the link origin (at most 10"),
    ("perturbation", [7.0], "perturbation: σ = 7 (rad or m); at most 6.2832 (a turn)"),
    ("move_time", 0.009, "move_time: 0.009 s is shorter than 10 steps of 0.001 s"),
    ("move_time", 2001.0, "move_time: 2001 s is longer than the longest rollout"),
    ("bins", 101, "bins: expected a whole number from 1 to 100"),
])
def test_make_study_takes_the_commands_bounds_before_loading_the_robot(option, value, words,
                                                                        monkeypatch):
    """The library call refuses what the command refuses, naming its own parameter, before the
    robot loads (payload 1e300 kg passed make_study and overflowed inverse_dynamics in the first
    rollout; the payload limits are the nodes', multibody.model's MAX_MASS and MAX_COM)."""
    import robot_dynamics.simulation.sweep as sweep

    def no_plant(*args):
        raise AssertionError("the robot was loaded")

    monkeypatch.setattr(sweep, "Plant", no_plant)
    with pytest.raises(rd.InputError) as info:
        sweep.make_study("arm7", **{option: value})
    assert str(info.value).startswith(words), info.value


def test_bounds_of_round_4_take_their_bounds():
    """Each bound allows itself: 10 steps a move, a move of the longest rollout, σ of a turn,
    100 bins, 4 workers a core; a move longer than the duration is taken (sweep warns)."""
    import math

    from robot_dynamics.simulation.rollouts import default_workers, workers_refusal
    from robot_dynamics.simulation.sweep import _levels, move_time_refusal

    assert move_time_refusal(0.01, 1e-3) is None and move_time_refusal(2000.0, 1e-3) is None
    assert _levels("perturbation", [0.0, math.tau], True) == [0.0, math.tau]
    assert workers_refusal(4 * default_workers()) is None
    assert workers_refusal(4 * default_workers() + 1).startswith("workers: ")
    from robot_dynamics.simulation.sweep import dask_client

    with pytest.raises(rd.InputError, match="^workers: 100000 on "):  # (no process started)
        dask_client("local", 100000)
    study = make_study("arm7", samples=2, bins=100, duration=0.02, move_time=0.5)
    assert study.bins == 100 and len(study.specs) == 2


def test_a_study_up_to_its_bounds_is_taken():
    """The bounds refuse only past them: 1e6 rollouts (grid or random), 1e4 kg, 10 m."""
    from robot_dynamics.simulation.sweep import MAX_ROLLOUTS, rollouts_refusal

    assert MAX_ROLLOUTS == 1_000_000
    grid = {"friction_scale": [0.0] * 1000, "payload_mass": [0.0] * 1000, "perturbation": [0.0],
            "gain_scale": [1.0]}
    assert rollouts_refusal(grid, None, 1) is None
    assert rollouts_refusal(grid, None, 2).startswith(
        "friction_scale: the grid's 1000 × 1000 × 1 × 1 levels × 2 repeats make 2e+06")
    assert rollouts_refusal(grid, 1_000_000, 1) is None  # random: the samples alone count
