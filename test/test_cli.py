"""The command line as a user meets it: help without side effects, one-line mistakes (exit 2)
before any work, units per joint type, the demo's own verdict, clean signals, and the node
parameter tables held to what the nodes really declare."""
import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ros_helpers import DOMAIN_ID, ENV

import robot_dynamics as rd
from robot_dynamics.ros import params as P
from robot_dynamics.parsers.resources import robot_path
from robot_dynamics.multibody.units import PRISMATIC_UNITS, REVOLUTE_UNITS, joint_units

CLI = [sys.executable, "-m", "robot_dynamics.cli.main"]
HEAVY = ("numba", "rclpy", "sympy", "matplotlib", "scipy")


def run(args, timeout=120, **kw):
    return subprocess.run(CLI + args, env=ENV, capture_output=True, text=True, timeout=timeout,
                          **kw)


HELP_ARGVS = [["--help"], ["--version"], ["sim", "--help"], ["derive", "--help"],
              ["identify", "--help"], ["simulator", "--help"], ["id_controller", "--help"],
              ["dynamics_model", "-h"], ["sweep", "--help"]]


def test_help_imports_nothing_heavy():
    """Each --help in turn, in one fresh interpreter: after each, no heavy module loaded."""
    code = ("import sys, json\nfrom robot_dynamics.cli.main import main\nout = []\n"
            f"for argv in {HELP_ARGVS!r}:\n"
            "    try:\n        rc = main(argv)\n    except SystemExit as e:\n        rc = e.code\n"
            f"    out.append([argv, rc, [m for m in {HEAVY!r} if m in sys.modules]])\n"
            "print(json.dumps(out))")
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True,
                          timeout=120)
    for argv, rc, heavy in json.loads(proc.stdout.strip().splitlines()[-1]):
        assert rc == 0 and heavy == [], (argv, rc, heavy)


@pytest.mark.parametrize("node", sorted(P.NODES))
def test_node_help_lists_every_parameter_without_a_node(node, capsys):
    from robot_dynamics.cli.main import main

    assert main([node, "--help"]) == 0
    out = capsys.readouterr()
    for p in P.NODES[node][2]:
        assert f"  {p.name}  {p.type}  " in out.out, p.name
        if p.low is not None:
            assert f"[{P._fmt_value(p.low)}, {P._fmt_value(p.high)}]" in out.out
    assert "[INFO]" not in out.out + out.err  # no node started, nothing logged


def test_version():
    proc = run(["--version"], timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"robot-dynamics {rd.__version__}"


def test_no_command_is_a_usage_mistake():
    proc = run([], timeout=60)
    assert proc.returncode == 2
    assert "a command is needed" in proc.stderr and "sim" in proc.stderr
    assert proc.stdout == ""


def one_line_error(proc, needle):
    # the node's own log lines ([INFO] robot ..., as it loaded) are not the error message, nor
    # the line announcing the kernels' compile on a cold cache
    from robot_dynamics.kernels.cache_guard import COMPILING

    lines = [ln for ln in proc.stderr.splitlines()
             if ln.strip() and not ln.startswith("[") and ln != COMPILING]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "simulating" not in proc.stdout + proc.stderr  # no simulation started


_SIM = ["sim", "--robot", "planar_2r"]


#: (argv, needle) of test_mistakes_are_refused_before_importing_the_kernels
EARLY_MISTAKES = [
    (["sim", "--robot", "bogus"], "robot 'bogus' is neither a bundled robot nor a file that "
     "exists"),
    (_SIM + ["--friction", "nosuch"], "no bundled friction config 'nosuch' (and no such file)"),
    (_SIM + ["--plant-friction", "nosuch"], "no bundled friction config 'nosuch'"),
    (_SIM + ["--model-friction", "/nonexistent/f.yaml"], "/nonexistent/f.yaml: no such file"),
    (_SIM + ["--actuators", "nosuch"], "no bundled actuators config 'nosuch'"),
    (_SIM + ["--controller-config", "nosuch.yaml"], "controller config nosuch.yaml: no such file"),
    (_SIM + ["--plot", "/nonexistent-folder/demo.png"], "does not exist"),
    (["identify", "arm7", "/nonexistent/bag", "-o", "f.yaml"], "/nonexistent/bag: no such bag"),
    (["identify", "arm8", "/nonexistent/bag", "-o", "f.yaml"], "did you mean 'arm7'?"),
    (["record", "--robot", "nope"], "robot 'nope' is neither a bundled robot nor a file that "
     "exists"),
    (["record", "--friction", "nope"], "no bundled friction config 'nope'"),
    # a node's -p overrides: a value out of range or not among the choices, an unknown robot
    (["simulator", "--ros-args", "-p", "rate:=-5.0"],
     "parameter rate: -5.0 is out of range [10.0, 100000.0]"),
    (["simulator", "--ros-args", "-p", "simulator:publish_every:=0"],
     "parameter publish_every: 0 is out of range [1, 100000]"),
    (["simulator", "--ros-args", "-p", "mode:=warp"],
     "parameter mode: expected one of realtime | fast | lockstep, got 'warp'"),
    (["id_controller", "--ros-args", "-p", "stale_behavior:=explode"],
     "parameter stale_behavior: expected one of gravity | zero, got 'explode'"),
    # a value of the wrong type, told from the table and rcl's YAML reading of the text
    (["simulator", "--ros-args", "-p", "rate:=abc"],
     "parameter rate: expected type double, got 'abc' of type string"),
    (["simulator", "--ros-args", "-p", "publish_every:=2.5"],
     "parameter publish_every: expected type integer, got '2.5' of type double"),
    (["dynamics_model", "--ros-args", "-p", "markers:=3"],
     "parameter markers: expected type bool, got '3' of type integer (true or false)"),
    (["id_controller", "--ros-args", "-p", "kp:=400.0"],
     "parameter kp: expected type double_array, got '400.0' of type double: write a list, "
     "kp:=[400.0]"),
    (["dynamics_model", "--ros-args", "-p", "robot:=123"],
     "parameter robot: expected type string, got '123' of type integer (quote it: "
     "robot:=\"'123'\")"),
    # the same name twice: rcl gives the node the integer whatever the order
    (["dynamics_model", "--ros-args", "-p", "robot:=123", "-p", "robot:=planar_2r"],
     "parameter robot: expected type string, got '123' of type integer"),
    # what rcl refuses in words quoting its C sources, after an [ERROR] line of its own
    (["simulator", "--ros-args", "-p", "rate"],
     "-p rate: expected NAME:=VALUE (e.g. -p robot:=arm7)"),
    (["id_controller", "--ros-args", "--params-file", "/nonexistent/params.yaml"],
     "--params-file /nonexistent/params.yaml: no such file"),
    (["dynamics_model", "--ros-args", "-p", "robot:=arm8"],
     "parameter robot: robot 'arm8' is neither a bundled robot nor a file that exists; did you "
     "mean 'arm7'?"),
]

#: each of EARLY_MISTAKES in turn, in one fresh interpreter: main's return (or what it raised),
#: what it wrote to the file descriptors 1 and 2 (Python's and C's writes alike), and whether
#: numba or rclpy was in sys.modules after it; a JSON list into the file named by argv[1]
_EARLY_MISTAKES_SCRIPT = """
import json, os, sys, tempfile
from robot_dynamics.cli.main import main
out = []
for args in json.loads(sys.argv[2]):
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    files = {fd: tempfile.TemporaryFile() for fd in (1, 2)}
    for fd, f in files.items():
        os.dup2(f.fileno(), fd)
    try:
        rc = main(args)
    except BaseException as exc:  # a fresh interpreter would have died of it: a failed case
        rc = "raised " + repr(exc)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd in (1, 2):
            os.dup2(saved[fd], fd)
            os.close(saved[fd])
    text = {}
    for fd, f in files.items():
        f.seek(0)
        text[fd] = f.read().decode("utf-8", "replace")
        f.close()
    out.append([args, rc, text[1], text[2], "numba" in sys.modules, "rclpy" in sys.modules])
with open(sys.argv[1], "w") as report:
    json.dump(out, report)
"""


@pytest.fixture(scope="module")
def early_mistakes(tmp_path_factory):
    """{tuple(argv): (stdout, stderr)} of every EARLY_MISTAKES case, run one after the other in
    one fresh interpreter (an interpreter's start and cli.main's import cost ~0.35 s a case on
    an idle machine). After each case the same check as a fresh interpreter per case: numba and
    rclpy not in sys.modules (a module a case imports stays imported, so a case that imported
    either fails its own check, whatever ran before it), main's return value, and what it wrote
    to stdout and stderr, captured per case at the file descriptors; what the interpreter wrote
    outside the cases (at cli.main's import, at exit) goes to every case, as it would have
    gone to each fresh interpreter's."""
    report = tmp_path_factory.mktemp("early_mistakes") / "report.json"
    proc = subprocess.run([sys.executable, "-c", _EARLY_MISTAKES_SCRIPT, str(report),
                           json.dumps([a for a, _ in EARLY_MISTAKES])], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and report.exists(), proc.stdout + proc.stderr
    results = {}
    for args, rc, out, err, numba, rclpy in json.loads(report.read_text()):
        # what each fresh interpreter printed after main: the flags and main's return
        results[tuple(args)] = (out + f"{numba} {rclpy} {rc}\n" + proc.stdout,
                                err + proc.stderr)
    return results


@pytest.mark.parametrize("args, needle", EARLY_MISTAKES)
def test_mistakes_are_refused_before_importing_the_kernels(args, needle, early_mistakes):
    """A mistyped robot, log, friction/actuator/controller config, output path or node
    parameter is a one-line error at once (exit 2), in a fresh interpreter that never imports
    numba or rclpy: on a cold numba cache `sim --friction nosuch`, `identify` with a missing bag,
    `record --robot nosuch` and `simulator --ros-args -p rate:=-5.0` used to be silent for the
    minutes of the kernels' compilation, then fail. (The cases share one fresh interpreter:
    the fixture early_mistakes.)"""
    stdout, stderr = early_mistakes[tuple(args)]
    assert stdout.split() == ["False", "False", "2"], stdout + stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"robot-dynamics {args[0]}: "), stderr
    assert needle in lines[0], stderr


def test_a_repeated_override_is_checked_as_rcl_applies_it():
    """-p rate:=500 -p rate:=abc: the node gets the integer 500 (rcl keeps a value per type,
    rclpy reads the integer before the string), so the early check must not refuse 'abc'."""
    from robot_dynamics.cli.main import early_refusal

    assert early_refusal("simulator", ["--ros-args", "-p", "rate:=500", "-p", "rate:=abc"]) is None
    assert "got 'abc'" in early_refusal("simulator", ["--ros-args", "-p", "rate:=abc"])
    assert early_refusal("dynamics_model", ["--ros-args", "-p", "robot:=planar_2r", "-p",
                                            "robot:=123"]).startswith("parameter robot: expected")


@pytest.mark.parametrize("remap", [["-r", "__node:=other"], ["--remap", "__node:=other"],
                                   ["-r", "__name:=other"], ["-r", "simulator:__node:=other"]])
def test_a_node_prefixed_override_follows_the_remapped_node_name(remap):
    """-p other:rate:=abc reaches the node remapped to 'other' (rcl matches the prefix against
    the node's name): refused before the start-up, as -p simulator:rate:=abc is without the
    remap; once remapped, -p simulator:rate:=abc reaches no node, so nothing is refused."""
    from robot_dynamics.cli.main import early_refusal, remapped_name

    assert remapped_name("simulator", ["--ros-args"] + remap) == "other"
    assert "got 'abc'" in early_refusal("simulator", ["--ros-args"] + remap +
                                        ["-p", "other:rate:=abc"])
    assert early_refusal("simulator", ["--ros-args"] + remap + ["-p", "simulator:rate:=abc"]) \
        is None
    assert "got 'abc'" in early_refusal("simulator", ["--ros-args", "-p", "simulator:rate:=abc"])
    # a remap addressed to another node, or the first of two rules (rcl: the first match)
    assert remapped_name("simulator", ["-r", "id_controller:__node:=x"]) == "simulator"
    assert remapped_name("simulator", remap + ["-r", "__node:=third"]) == "other"


@pytest.mark.parametrize("override", ["/ns/simulator:rate:=abc", "/**:rate:=abc", "*:rate:=abc",
                                      "**:rate:=abc", "/simulator:rate:=abc", "a:b:rate:=abc"])
def test_a_node_prefix_rcl_refuses_is_one_clear_line(override):
    """rcl takes -p [NODE:]NAME:=VALUE with NODE a plain token (rclpy 9.1.2 refuses /ns/node:,
    /**: and *: with "Expected lexeme type 22, got 5 at index 13, at .../lexer_lookahead.c"):
    refused before the start-up in words that say what to write instead."""
    from robot_dynamics.cli.main import early_refusal

    why = early_refusal("simulator", ["--ros-args", "-p", override])
    assert why is not None and why.startswith(f"-p {override}: rcl takes -p [NODE:]NAME:=VALUE")
    assert "-p rate:=abc reaches every node" in why


@pytest.mark.parametrize("remap", [["-r", "__ns:=/ns"], ["--remap", "simulator:__ns:=/a/b"],
                                   ["-r", "__node:=other", "-r", "other:__ns:=/ns"]])
def test_a_node_prefixed_override_does_not_reach_a_node_in_a_namespace(remap, capsys):
    """rclpy 9.1.2: -r __ns:=/ns -p simulator:rate:=5.0 leaves rate at its default (rcl matches
    NODE as /NODE against the fully qualified name), so the early check must not refuse what
    the node never gets, and says once that the override is ignored; a bare -p NAME:=VALUE
    still reaches it. The first __ns rule addressed to the node applies."""
    from robot_dynamics.cli.main import _check_parameter_names, early_refusal, remapped_namespace

    node = "other" if "other:__ns:=/ns" in remap else "simulator"
    assert remapped_namespace(node, remap) in ("/ns", "/a/b")
    assert early_refusal("simulator", ["--ros-args"] + remap + ["-p", f"{node}:rate:=abc"]) \
        is None
    assert "got 'abc'" in early_refusal("simulator", ["--ros-args"] + remap + ["-p", "rate:=abc"])
    _check_parameter_names("simulator", ["--ros-args"] + remap + ["-p", f"{node}:rate:=abc"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"-p {node}:rate:=abc is addressed to node {node!r}" in err \
        and "runs in namespace" in err and "(it will be ignored)" in err, err
    # rcl's first matching rule: a later __ns:=/ does not bring the node back to the root
    assert remapped_namespace("simulator", ["-r", "__ns:=/ns", "-r", "__ns:=/"]) == "/ns"
    assert remapped_namespace("simulator", ["-r", "other:__ns:=/ns"]) == "/"


def test_an_override_addressed_to_another_node_is_ignored_with_a_warning(capsys):
    """-p id_controller:kp:=... given to the simulator reaches no parameter of it: not checked
    against the simulator's table (no 'declares no parameter' warning), but said once as
    addressed to another node (a typo of the node's name is as silent in rclpy)."""
    from robot_dynamics.cli.main import _check_parameter_names, early_refusal

    rest = ["--ros-args", "-p", "simulater:rate:=abc", "-p", "id_controller:kp:=[1.0]"]
    assert early_refusal("simulator", rest) is None
    _check_parameter_names("simulator", rest)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "declares no parameter" not in lines[1], lines
    assert lines[0] == ("robot-dynamics simulator: warning: -p simulater:rate:=abc is addressed "
                        "to node 'simulater'; this node runs as 'simulator' (it will be ignored)")


def test_the_start_up_line_is_said_once_and_only_when_the_node_said_nothing(monkeypatch, capsys):
    """signals.mark_said is a test-and-set: _say_interrupted says the start-up line and marks
    it said, so a second call says nothing; after the node's own closing line, nothing."""
    from robot_dynamics.cli.main import _say_interrupted
    from robot_dynamics.ros import signals

    monkeypatch.setitem(signals._state, "received", 2)  # SIGINT
    monkeypatch.setitem(signals._state, "up", False)
    monkeypatch.setitem(signals._state, "said", False)
    _say_interrupted("simulator", signals)
    _say_interrupted("simulator", signals)
    assert capsys.readouterr().err.splitlines() == [START_UP_LINE.format(node="simulator")]
    monkeypatch.setitem(signals._state, "said", False)
    assert signals.mark_said() is False  # the node said its own line first
    _say_interrupted("simulator", signals)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("args, needle", [
    (["sim", "--robot", "nope"], "robot 'nope' is neither a bundled robot nor a file that exists"),
    (["sim", "--robot", "arm8"], "did you mean 'arm7'? bundled robots: arm7, arm7_gripper,"),
    (["sim", "--friction", "arm7_fricton"], "did you mean 'arm7_friction'?"),
    # a friction name lists the friction configs only
    (["sim", "--friction", "bogus"], "bundled: ['arm7_friction', 'arm7_gripper_friction', "
     "'no_friction', 'planar_2r_friction', 'rrp_friction']"),
    (["sim", "--actuators", "bogus"], "no bundled actuators config 'bogus' (and no such file); "
     "bundled: ['arm7_actuators']"),
    (["sim", "--plot", "/nonexistent-folder/demo.png"], "does not exist"),
    (["sim", "--plot", "demo.txt"], "unknown image format"),
    (["sim", "--move-time", "abc"], "not a number"),
    (["sim", "--move-time", "-1"], "must be > 0"),
    # a run whose states would not fit (every one is recorded), or a move between two states
    (["sim", "--move-time", "1e12"], "--move-time: 1e+12 s makes the run 3e+15 steps (3 moves "
     "of --move-time 1e+12 s + --settle 1 s = 3e+12 s at --rate 1000 Hz); at most 2e+06 steps "
     "(2000 s of simulation at that rate): every state is recorded"),
    (["sim", "--settle", "1e12"], "--settle: 1e+12 s makes the run 1e+15 steps"),
    (["sim", "--move-time", "600", "--rate", "2000"], "--move-time: 600 s makes the run"),
    (["sim", "--scenario", "payload", "--move-time", "300"], "at --rate 1000 Hz in each of 3 "
     "runs); at most 2e+06 steps (666.667 s of simulation"),
    (["sim", "--scenario", "press", "--press-forces", "5", "--move-time", "1e5"],
     "(the press path of 1 forces, 5 × --move-time 100000 s + --settle 0.5 s"),
    (["sim", "--move-time", "1e-9"], "--move-time: 1e-09 s is shorter than 10 steps of the "
     "simulator (0.01 s at --rate 1000 Hz): the moves would fall between its states"),
    (["sim", "--move-time", "0.05", "--rate", "100"], "shorter than 10 steps"),
    (["sim", "--tolerance", "nan"], "not finite"),
    # a tolerance past half a turn (1 m) judges nothing: --tolerance 1e300 was taken
    (["sim", "--tolerance", "1e300"], "robot-dynamics sim: argument --tolerance: must be in (0, "
     "π] rad (half a turn: a looser one judges nothing): '1e300' (see --help)"),
    (["sim", "--tolerance", "3.1416"], "argument --tolerance: must be in (0, π] rad"),
    (["sim", "--tolerance-prismatic", "2"], "argument --tolerance-prismatic: must be in (0, 1] m "
     "(metres, not millimetres?): '2'"),
    (["sim", "--model-friction", "nope"], "no bundled friction config 'nope'"),
    # a path that does not exist is named as a missing file, not a list of bundled names
    (["sim", "--actuators", "/nonexistent/act.yaml"], "/nonexistent/act.yaml: no such file"),
    (["sim", "--robot", "/nonexistent/arm.urdf"], "/nonexistent/arm.urdf: no such file"),
    (["sim", "--mode", "warp"], "invalid choice"),
    (["sim", "--rate", "5"], "must be in [10, 100000] Hz"),
    (["sim", "--controller-config", "nope.yaml"], "controller config nope.yaml: no such file"),
    (["sim", "--controller-config", "."], "controller config .: is a directory"),
    (["sim", "--controller-config", "arm7_controler"], "no bundled controller config "
     "'arm7_controler' (and no such file); did you mean 'arm7_controller'?"),
    (["sim", "--scenario", "tool"], "invalid choice"),
    (["sim", "--payload-mass", "0", "--scenario", "payload"], "must be > 0"),
    (["sim", "--payload-mass", "2"], "--payload-mass needs --scenario payload"),
    (["sim", "--scenario", "payload", "--payload-com", "0,0"], "robot-dynamics sim: argument "
     "--payload-com: expected 3 numbers, as X,Y,Z or X Y Z, got '0,0' (see --help)"),
    (["sim", "--scenario", "payload", "--payload-com", "0", "0", "0", "1"],
     "argument --payload-com: expected 3 numbers, as X,Y,Z or X Y Z, got '0 0 0 1'"),
    (["sim", "--scenario", "payload", "--payload-com", "0,0,inf"],
     "argument --payload-com: expected 3 finite numbers, got '0,0,inf'"),
    (["sim", "--payload-com", "0,0,0.1"], "--payload-com needs --scenario payload"),
    # unit mistakes the simulator node refuses, now before the run instead of 2 s into it (exit 1)
    (["sim", "--scenario", "payload", "--payload-mass", "3000000"],
     "--payload-mass: expected a number from 0 to 10000 (kg, not g?; 0 = no payload), got "
     "3e+06"),
    (["sim", "--scenario", "payload", "--payload-com", "0", "0", "-100"],
     "--payload-com: 100 m from the link origin (at most 10 m: metres, not millimetres?)"),
    (["sim", "--scenario", "payload", "--robot", "planar_2r", "--payload-link", "tol"],
     "--payload-link: "),
    (["sim", "--press-forces", "10", "20"], "--press-forces needs --scenario press"),
    (["sim", "--press-surface", "table"], "--press-surface needs --scenario press"),
    (["sim", "--scenario", "press", "--press-forces", "-5"], "must be ≥ 0"),
    # a force the arm cannot press with: the message gave the force and the depth, not the option
    (["sim", "--scenario", "press", "--press-forces", "10", "1e6"], "robot-dynamics sim: "
     "--press-forces: a force of 1e+06 N puts the point 50 m into the surface (its stiffness is "
     "20000 N/m): out of reach from "),
    (["sim", "--scenario", "press", "--press-surface", "wall"], "invalid choice"),
    (["sim", "--scenario", "press", "--robot", "planar_2r", "--press-link", "tol"],
     "--press-link: "),
    # record keeps every state until the bag is written: --duration 1e12 was a MemoryError
    # traceback (364 TiB for the excitation's samples)
    (["record", "--duration", "1e12", "--out", "rb"], "robot-dynamics record: --duration: 1e+12 s "
     "is 1e+15 steps at the simulator's 1000 Hz; at most 2e+06 (2000 s): every state is kept"),
    # outputs that cannot be written: refused before the fit or the derivation
    (["identify", "arm7", "log.npz", "-o", "/nonexistent-folder/f.yaml"],
     "-o /nonexistent-folder/f.yaml: folder /nonexistent-folder does not exist"),
    (["identify", "arm7", "log.npz", "-o", "f.yaml", "--plot", "fit.txt"],
     "--plot fit.txt: unknown image"),
    (["derive", "rrp", "--latex", "/nonexistent-folder/rrp.tex"], "does not exist"),
])
def test_sim_mistakes_are_one_line_exit_2(args, needle, tmp_path, capsys, monkeypatch):
    """In process (the checks run before rclpy starts): exit 2, one line, no node."""
    from robot_dynamics.cli.main import main

    monkeypatch.chdir(tmp_path)
    try:
        rc = main(args)
    except SystemExit as exc:  # argparse
        rc = exc.code
    out = capsys.readouterr()
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and needle in lines[0], (rc, out.err)
    assert "simulated" not in out.err + out.out
    import rclpy

    assert not rclpy.ok()  # no context was created


@pytest.mark.parametrize("args", [["--move-time", "600"], ["--settle", "1990"],
                                  ["--rate", "100000", "--move-time", "4"],
                                  ["--move-time", "0.01"], ["--settle", "0"],
                                  ["--scenario", "press", "--move-time", "100"],
                                  ["--scenario", "payload", "--move-time", "200"],
                                  ["--tolerance", "3.141592653589793"],
                                  ["--tolerance-prismatic", "1"]])
def test_sim_long_but_finite_timing_is_not_refused(args):
    """Up to the bound (2e6 steps, all runs), and down to 10 steps a move, a run is taken; so
    are the loosest tolerances (π rad, 1 m)."""
    from robot_dynamics.ros.demo.arguments import build_parser, timing_refusal

    assert timing_refusal(build_parser().parse_args(args)) is None


def test_demo_moves_are_what_the_timing_check_counts():
    """DEMO_MOVES (what `sim` bounds before loading anything) is the demo trajectory's count of
    moves, for a bundled robot's own poses and for the poses made from a URDF's limits."""
    from robot_dynamics.parsers.resources import robot_path
    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.ros.demo.scenario import DEMO_MOVES, demo_trajectory

    for robot in ("arm7", "planar_2r"):
        traj = demo_trajectory(load_urdf(robot_path(robot)), robot, 0.7)
        assert traj.duration == pytest.approx(DEMO_MOVES * 0.7, rel=1e-12), robot


def test_sim_controller_gains_the_node_refuses_are_one_line(tmp_path, capsys):
    """A controller config whose values id_controller refuses (a gain of another robot's
    length, a negative gain): one line naming the file, the parameter and why; exit 2."""
    from robot_dynamics.cli.main import main

    cases = {"kp: [400.0, 400.0, 400.0]": "parameter kp: expected 1 or 2 non-negative numbers",
             "friction_error_gain: -3.0":
                 "parameter friction_error_gain: -3.0 is out of range [0.0, "}
    for entry, needle in cases.items():
        path = tmp_path / "gains.yaml"
        path.write_text(f"id_controller:\n  ros__parameters:\n    {entry}\n")
        rc = main(["sim", "--robot", "planar_2r", "--controller-config", str(path)])
        err = capsys.readouterr().err
        lines = [ln for ln in err.splitlines() if ln.startswith("robot-dynamics sim")]
        assert rc == 2 and len(lines) == 1, err
        assert lines[0].startswith(f"robot-dynamics sim: controller config {path}: {needle}"), \
            lines[0]
        assert "Traceback" not in err


def test_sim_without_rclpy_is_one_line(capsys, monkeypatch):
    """A venv whose rclpy cannot load (the ROS 2 wheels' libraries not found) gets one line
    naming the import error, not a traceback."""
    from robot_dynamics.cli.main import main

    monkeypatch.setitem(sys.modules, "rclpy", None)  # import rclpy → ImportError
    rc = main(["sim"])
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "cannot start the nodes" in lines[0], lines


def test_record_without_rclpy_is_one_line(capsys, monkeypatch, tmp_path):
    """record as sim: one line and exit 2 (it was a 30-line traceback)."""
    from robot_dynamics.cli.main import main

    monkeypatch.setitem(sys.modules, "rclpy", None)
    rc = main(["record", "--out", str(tmp_path / "rb"), "--duration", "1"])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 2 and len(lines) == 1 and "cannot start the nodes" in lines[0], err
    assert not (tmp_path / "rb").exists()


def test_a_missing_ros_library_names_the_folders_holding_them():
    """A venv made with --system-site-packages over the ROS 2 wheels: their loader looks in
    the venv; the hint gives the LD_LIBRARY_PATH that finds them (folders that exist)."""
    import os

    from robot_dynamics.ros import import_rclpy_hint

    hint = import_rclpy_hint(ImportError("librcl_action.so: cannot open shared object file"))
    assert "LD_LIBRARY_PATH" in hint and "\n" not in hint
    if "LD_LIBRARY_PATH=" in hint:  # (the wheels' libraries found on this machine)
        folders = hint.split("LD_LIBRARY_PATH=")[1].split(":$LD_LIBRARY_PATH")[0].split(":")
        assert folders and all(os.path.isdir(f) for f in folders), folders
    assert "pip install" in import_rclpy_hint(ImportError("No module named 'rclpy'"))


@pytest.mark.parametrize("args, needle", [
    # URDF text rcl cannot read as a YAML value (ur5's comment banner has "a: b" alike): the
    # way out, not the whole URDF quoted and cut
    (["simulator", "--ros-args", "-p", 'robot_description:=<robot name="a"/> <!-- a: b -->'],
     "pass the file instead: -p robot:="),
])
def test_node_mistakes_are_one_line_exit_2(args, needle):
    one_line_error(run(args), needle)


@pytest.mark.parametrize("node, entry, needle", [
    ("simulator", "robot: nonexistent", "parameter robot: robot 'nonexistent' is neither a "
     "bundled robot nor a file that exists"),
    ("simulator", "rate: -5.0", "parameter rate: -5.0 is out of range [10.0, 100000.0]"),
    ("simulator", "publish_every: 0", "parameter publish_every: 0 is out of range [1, 100000]"),
    ("simulator", "rate: fast", "parameter rate: expected type double, got 'fast' of type "
                                "string"),
    ("id_controller", "stale_behavior: explode",
     "parameter stale_behavior: expected one of gravity | zero, got 'explode'"),
])
def test_node_refuses_mistakes_of_a_params_file(node, entry, needle, tmp_path):
    """The node's own checks, in the words of the command line's early ones (a --params-file
    is read by the node only): one line, exit 2."""
    path = tmp_path / "params.yaml"
    path.write_text(f"{node}:\n  ros__parameters:\n    {entry}\n")
    one_line_error(run([node, "--ros-args", "--params-file", str(path)]), needle)


@pytest.mark.parametrize("args", [["simulator", "-p", "robot:=ur5"],
                                  ["id_controller", "foo", "--ros-args", "-p", "robot:=ur5"]])
def test_node_arguments_before_ros_args_are_refused(args, capsys):
    """rclpy ignores them: "-p robot:=ur5" without --ros-args would start the default robot."""
    from robot_dynamics.cli.main import main

    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"unexpected argument {args[1]!r}" in err[0] and "--ros-args" in err[0]


def test_node_executables_are_the_cli_s(monkeypatch, capsys):
    """``simulator`` / ``id_controller`` / ``dynamics_model`` (what ``ros2 run`` starts) answer
    --help and refuse mistakes as ``robot-dynamics <node>`` does (setup.py's console scripts)."""
    import re

    from robot_dynamics.cli import main as cli

    setup = open(os.path.join(os.path.dirname(__file__), "..", "setup.py")).read()
    for node in P.NODES:
        target = re.search(rf'"{node} = ([\w.]+):(\w+)"', setup)
        assert target and target.groups() == ("robot_dynamics.cli.main", f"{node}_main"), node
        monkeypatch.setattr(sys, "argv", [node, "--help"])
        assert getattr(cli, f"{node}_main")() == 0
        assert f"usage: robot-dynamics {node}" in capsys.readouterr().out


def test_node_module_help_prints_without_starting_a_node(capsys):
    """``python -m robot_dynamics.ros.<node> --help``: the help, no rclpy context."""
    import rclpy

    from robot_dynamics.ros.common import run_node
    from robot_dynamics.ros.id_controller import IdController

    run_node(IdController, ["id_controller", "--help"])
    assert "usage: robot-dynamics id_controller" in capsys.readouterr().out
    assert not rclpy.ok()


def test_unknown_command():
    from robot_dynamics.cli.main import main

    assert main(["fly"]) == 2


def test_sim_plot_into_a_directory_is_refused(tmp_path, capsys):
    from robot_dynamics.cli.main import main

    assert main(["sim", "--plot", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_record_is_a_command_of_the_install(tmp_path, capsys):
    """`robot-dynamics record` (what scripts/record_sim_bag.py runs in the source tree): listed,
    its --help, and a mistake refused in one line before simulating."""
    from robot_dynamics.cli.main import main, usage

    assert "\n  record " in usage()
    with pytest.raises(SystemExit) as exc:
        main(["record", "--help"])
    assert exc.value.code == 0 and "--excitation" in capsys.readouterr().out
    out = tmp_path / "bag"
    out.mkdir()
    assert main(["record", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robot-dynamics record: --out") and len(err.strip().splitlines()) == 1


def test_record_bag_refuses_existing_output_before_simulating(tmp_path, capsys):
    import importlib.util

    script = os.path.join(os.path.dirname(__file__), "..", "scripts", "record_sim_bag.py")
    spec = importlib.util.spec_from_file_location("record_sim_bag", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "bag"
    out.mkdir()
    assert module.main(["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "exists" in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(SystemExit) as exc:
        module.main(["--duration", "-3", "--out", str(tmp_path / "b2")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1, err


def test_units_per_joint_type():
    model = rd.load_urdf(robot_path("rrp"))
    units = dict(zip(model.joint_names, joint_units(model)))
    assert units["d3"] == PRISMATIC_UNITS and units["d3"].effort == "N"
    assert units["theta1"] == REVOLUTE_UNITS and units["theta1"].effort == "N·m"


def test_plot_labels_prismatic_joint_in_metres(tmp_path):
    """The plot of rrp labels d3 [m] / [N]: read back the axes the figure was made of."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from robot_dynamics.ros.demo import plot

    model = rd.load_urdf(robot_path("rrp"))
    n, k = model.nv, 50
    t = np.linspace(0, 1, k)
    q = np.tile(np.array([0.1, 0.2, 0.2]), (k, 1))
    data = {"t": t, "q": q, "v": np.zeros((k, n)), "tau": np.ones((k, n)),
            "tau_friction": np.zeros((k, n))}
    labels = []
    orig_close = plt.close

    def grab(fig):
        labels.extend((ax.get_title(loc="right"), ax.get_ylabel()) for ax in fig.axes)
        orig_close(fig)

    plt.close = grab
    try:
        plot.save_plot(str(tmp_path / "rrp.png"), model, data, q, title="rrp")
    finally:
        plt.close = orig_close
    d3 = [y for name, y in labels if name == "d3"]
    assert d3 == ["q [m]", "error [m]", "effort [N]"], labels
    th = [y for name, y in labels if name == "theta1"]
    assert th == ["q [rad]", "error [rad]", "effort [N·m]"], labels


def test_energy_residual_is_absolute_when_the_flows_vanish():
    from robot_dynamics.algorithm.energy import EnergyAudit
    from robot_dynamics.ros.demo.verdict import format_energy_residual

    idle = EnergyAudit(kinetic=1e-14, potential=0.0, motor_work=0.0)
    assert "relative" not in format_energy_residual(idle)
    assert "+1.000e-14 J" in format_energy_residual(idle)
    busy = EnergyAudit(kinetic=0.0, potential=1.0, motor_work=2.0, friction_dissipation=1.0 - 1e-6)
    assert "relative" in format_energy_residual(busy)


def test_summary_says_what_compensation_acts_on():
    """With no friction model the controller still cancels the URDF's joint damping: the
    summary says so instead of "nothing to compensate"."""
    from robot_dynamics.ros.demo.verdict import _compensation

    base = {"friction_compensation": True, "model_friction_law": "none"}
    assert _compensation({**base, "damping": True}) == "on (URDF damping only)"
    assert _compensation({**base, "damping": False}) == "on (nothing to compensate)"
    assert _compensation({**base, "model_friction_law": "classic"}) == "on"
    assert _compensation({**base, "friction_compensation": False, "damping": True}) == "off"


@pytest.fixture
def domain():
    old = os.environ.get("ROS_DOMAIN_ID")
    os.environ["ROS_DOMAIN_ID"] = DOMAIN_ID
    yield
    if old is None:
        os.environ.pop("ROS_DOMAIN_ID", None)
    else:
        os.environ["ROS_DOMAIN_ID"] = old


SHORT = ["sim", "--robot", "planar_2r", "--move-time", "0.5", "--settle", "0.05"]


def test_sim_judges_a_run_too_tight_tolerance_fails_with_reason(domain, capsys):
    from robot_dynamics.cli.main import main

    assert main(SHORT + ["--tolerance", "1e-9"]) == 1
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith("robot-dynamics sim: invalid run: tracking error") and "rad" in last
    assert "Traceback" not in err


def test_sim_sigterm_stops_cleanly():
    proc = subprocess.Popen(CLI + ["sim", "--robot", "planar_2r", "--move-time", "20"], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        line = ""
        while time.monotonic() < deadline and "simulated" not in line:
            line = proc.stderr.readline()  # progress lines: the run is under way
            if not line and proc.poll() is not None:
                break
        assert "simulated" in line
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and "interrupted by SIGTERM" in err


def test_lockstep_demo_is_deterministic_and_returns_its_data(domain):
    from robot_dynamics.ros.demo.run import DemoOptions, run_demo

    runs = [run_demo(DemoOptions("planar_2r", move_time=0.5, settle=0.05), log=lambda *_: None)
            for _ in range(2)]
    a, b = (r["data"] for r in runs)
    # the initial state, then one state per 1 kHz step over 3 moves + settle (1.55 s)
    assert a["q"].shape == (len(a["t"]), 2) and len(a["t"]) == 1551
    np.testing.assert_allclose(np.diff(a["t"]), 1e-3, atol=1e-9)  # no state twice, none lost
    for key in ("t", "q", "v", "tau", "tau_friction"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert runs[0]["valid"], runs[0]["reasons"]
    # the verdict is computed from the returned arrays
    err = np.abs(runs[0]["reference"] - a["q"]).max()
    assert math.isclose(err, runs[0]["max_error"])


def test_demo_nodes_are_in_a_namespace_of_their_own_run(domain):
    """The demo's nodes (and so their parameter services) live in a namespace of the run, as
    its topics: a node started by hand as /simulator on the same domain, and a set_parameters
    call to /simulator (mode), reach that node and never the demo's simulator, which runs
    lockstep to the end and says so. It used to be /simulator itself: the call switched the
    demo to another mode, the run was invalid and its summary still said lockstep."""
    import threading

    import rclpy
    from rcl_interfaces.msg import Parameter as ParamMsg, ParameterType
    from rcl_interfaces.srv import SetParameters
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.demo.run import DemoOptions, run_demo
    from robot_dynamics.ros.simulator import SimulatorNode

    stop, seen, answers, ready = threading.Event(), set(), [], threading.Event()

    def intruder():  # another user's process: its own context, plain names
        context = rclpy.Context()
        rclpy.init(context=context)
        nodes = []
        try:
            nodes.append(SimulatorNode(context=context, parameter_overrides=[
                Parameter("robot", value="planar_2r"), Parameter("mode", value="lockstep"),
                Parameter("publish_clock", value=False)]))
            caller = rclpy.create_node("intruder", context=context)
            nodes.append(caller)
            executor = SingleThreadedExecutor(context=context)
            for n in nodes:
                executor.add_node(n)
            client = caller.create_client(SetParameters, "/simulator/set_parameters")
            request = SetParameters.Request()
            value = ParamMsg(name="mode")
            value.value.type = ParameterType.PARAMETER_STRING
            value.value.string_value = "realtime"
            request.parameters = [value]
            ready.set()
            while not stop.is_set():
                seen.update(ns for name, ns in caller.get_node_names_and_namespaces()
                            if name == "simulator")
                if client.service_is_ready():
                    future = client.call_async(request)
                    executor.spin_until_future_complete(future, timeout_sec=1.0)
                    if future.done():
                        answers.append(future.result().results[0].successful)
                executor.spin_once(timeout_sec=0.05)
        finally:
            ready.set()
            for n in nodes:
                n.destroy_node()
            rclpy.shutdown(context=context)

    thread = threading.Thread(target=intruder, daemon=True)
    thread.start()
    try:
        assert ready.wait(60)
        time.sleep(1.0)  # the hand-started /simulator is discovered, the calls under way
        short = DemoOptions("planar_2r", move_time=0.5, settle=0.05)
        summary = run_demo(short, log=lambda *_: None)
        again = run_demo(short, log=lambda *_: None)
    finally:
        stop.set()
        thread.join(30)
    for run in (summary, again):
        assert run["mode"] == "lockstep" and run["modes"] == ["lockstep"], run["modes"]
        assert run["valid"], run["reasons"]
    assert answers and all(answers), answers  # the calls reached the hand-started node
    ns = summary["namespace"]
    assert ns.startswith(f"/robot_dynamics_sim_{os.getpid()}_"), ns
    assert again["namespace"].startswith(f"/robot_dynamics_sim_{os.getpid()}_")
    assert again["namespace"] != ns  # per run, not per process
    assert ns in seen and "/" in seen, seen  # the demo's simulator in its namespace; the hand one


def test_summary_reports_a_mode_switched_during_the_run():
    """The summary says the mode(s) the simulator ran, not the one asked for; a switch makes
    the run invalid, with the reason."""
    from robot_dynamics.algorithm.energy import EnergyAudit
    from robot_dynamics.ros.demo.verdict import summarize

    model = rd.load_urdf(robot_path("planar_2r"))
    data = {"t": np.arange(5) * 1e-3, "q": np.zeros((5, 2)), "tau": np.zeros((5, 2))}
    out = summarize(model, data, np.zeros((5, 2)), EnergyAudit(), {"steps": 5}, mode="fast",
                    wall=1.0, tolerance=0.01, tolerance_prismatic=0.001,
                    modes=["lockstep", "fast"])
    assert out["mode"] == "fast" and not out["valid"]
    assert out["reasons"] == ["the simulator's mode changed during the run (lockstep -> fast): "
                              "a set_parameters call from outside the demo"]
    steady = summarize(model, data, np.zeros((5, 2)), EnergyAudit(), {"steps": 5},
                       mode="lockstep", wall=1.0, tolerance=0.01, tolerance_prismatic=0.001)
    assert steady["valid"] and steady["modes"] == ["lockstep"]


def test_summary_names_its_tracking_reason():
    """The tracking-error reason is handed out as such (the press scenario drops that one
    reason and no other, whatever its wording); None within tolerance."""
    from robot_dynamics.algorithm.energy import EnergyAudit
    from robot_dynamics.ros.demo.verdict import summarize

    model = rd.load_urdf(robot_path("planar_2r"))
    data = {"t": np.arange(5) * 1e-3, "q": np.zeros((5, 2)), "tau": np.zeros((5, 2))}
    qd = np.zeros((5, 2))
    qd[-1, 1] = 0.05
    kw = dict(mode="lockstep", wall=1.0, tolerance=0.01, tolerance_prismatic=0.001)
    off = summarize(model, data, qd, EnergyAudit(), {"steps": 5, "errors": 1}, **kw)
    assert off["tracking_reason"] in off["reasons"] and len(off["reasons"]) == 2
    assert model.joint_names[1] in off["tracking_reason"]
    assert off["reasons"][1] == "1 simulation step error(s)"
    on = summarize(model, data, np.zeros((5, 2)), EnergyAudit(), {"steps": 5}, **kw)
    assert on["tracking_reason"] is None and on["valid"]


def _declared(node):
    """{name: (type name, value, read_only, (low, high) or None, description)} of a live node."""
    from rcl_interfaces.msg import ParameterType

    names = {getattr(ParameterType, k): k[len("PARAMETER_"):].lower()
             for k in dir(ParameterType) if k.startswith("PARAMETER_") and k != "PARAMETER_NOT_SET"}
    out = {}
    for name in node._parameters:
        if name in ("use_sim_time", "start_type_description_service"):  # rclpy's own
            continue
        desc = node.describe_parameter(name)
        value = node.get_parameter(name).value
        rng = None
        if desc.floating_point_range:
            r = desc.floating_point_range[0]
            rng = (r.from_value, r.to_value)
        elif desc.integer_range:
            r = desc.integer_range[0]
            rng = (r.from_value, r.to_value)
        out[name] = (names[desc.type], list(value) if isinstance(value, (list, tuple))
                     or hasattr(value, "tolist") else value, desc.read_only, rng,
                     desc.description)
    return out


def test_parameter_tables_match_what_the_nodes_declare(domain):
    """Drift guard: the parameters a node declares are exactly its table in nodes/params.py,
    per-joint rows expanded over the robot's joints, with the same type, default, read-only
    flag, range and description; a string with choices refuses any other value at start-up."""
    import rclpy
    from rclpy.parameter import Parameter

    from robot_dynamics.ros.dynamics_model import DynamicsModelNode
    from robot_dynamics.ros.id_controller import IdController
    from robot_dynamics.ros.simulator import SimulatorNode

    classes = {"simulator": SimulatorNode, "id_controller": IdController,
               "dynamics_model": DynamicsModelNode}
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(DOMAIN_ID))
    try:
        for name, cls in classes.items():
            node = cls(context=context)
            try:
                live = _declared(node)
                joints = list(node.model.joint_names)
            finally:
                node.destroy_node()
            assert any(p.per_joint for p in P.NODES[name][2]) == (name == "id_controller")
            table = {p.name: p for p in P.expand(P.NODES[name][2], joints)}
            assert set(live) == set(table), (name, sorted(set(live) ^ set(table)))
            for pname, (ptype, value, read_only, rng, text) in live.items():
                p = table[pname]
                assert P.find(P.NODES[name][2], pname) == p, pname
                assert ptype == p.type, (name, pname, ptype, p.type)
                if p.default is P.DYNAMIC:
                    assert name == "id_controller" and value == joints, (name, pname, value)
                else:
                    assert value == p.default, (name, pname, value, p.default)
                assert read_only == p.read_only, (name, pname)
                want = None if p.low is None else (p.low, p.high)
                assert rng == want, (name, pname, rng, want)
                assert text == p.description and P.JOINT not in text, (name, pname, text)
            for p in P.NODES[name][2]:  # choices are enforced where the node is built
                if p.choices:
                    with pytest.raises(ValueError, match=f"parameter {p.name}: expected one of "
                                                         + " \\| ".join(p.choices)):
                        cls(context=context, parameter_overrides=[
                            Parameter("robot", value="planar_2r"),
                            Parameter(p.name, value="no-such-" + p.choices[0])]).destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_per_joint_rows_are_found_by_their_concrete_names():
    table = P.ID_CONTROLLER
    goal = P.find(table, "constraints.joint_a1.goal")
    assert goal.name == "constraints.joint_a1.goal" and "joint_a1" in goal.description
    assert P.find(table, "constraints.goal_time").name == "constraints.goal_time"
    assert P.find(table, "constraints..goal") is None  # an empty joint name is no joint
    assert P.find(table, "constraints.joint_a1.speed") is None
    assert [p.name for p in P.expand(table, ["a", "b"]) if p.name.endswith(".goal")] == [
        "constraints.a.goal", "constraints.b.goal"]
    from robot_dynamics.ros.params import format_help

    text = " ".join(format_help("id_controller").split())  # as one line, unwrapped
    assert " constraints.<joint>.goal double 0.0 [0.0, 1000.0] " in text
    assert "one parameter per joint" in text


def test_controller_yaml_of_each_bundled_robot_is_complete_and_typed(tmp_path):
    """config/<robot>_controller.yaml: one gain per joint in the URDF order, doubles (a YAML
    400 is an int: converted), and a misspelt key is a one-line usage error."""
    from robot_dynamics.ros.demo.config import UsageError, controller_parameters

    for robot in ("arm7", "arm7_gripper", "planar_2r", "rrp"):
        model = rd.load_urdf(robot_path(robot))
        params = controller_parameters(robot)
        assert params["joint_names"] == list(model.joint_names), robot
        for key in ("kp", "kd"):
            assert len(params[key]) == model.nv and all(type(x) is float for x in params[key])
        kp, kd = np.array(params["kp"]), np.array(params["kd"])
        np.testing.assert_allclose(kd, 2 * np.sqrt(kp), err_msg=robot)  # critically damped
    bad = tmp_path / "gains.yaml"
    bad.write_text("id_controller:\n  ros__parameters:\n    kpp: [1]\n")
    with pytest.raises(UsageError, match="no parameter 'kpp'"):
        controller_parameters("arm7", str(bad))
    ints = tmp_path / "ints.yaml"
    ints.write_text("id_controller:\n  ros__parameters:\n    kp: [400, 400]\n")
    assert controller_parameters("planar_2r", str(ints))["kp"] == [400.0, 400.0]


def test_identify_takes_a_bundled_actuators_name(tmp_path, capsys):
    """`identify --actuators arm7_actuators` reads the bundled file, as `sim --actuators` and
    the nodes' `actuators` parameter do (it was 'arm7_actuators: no such actuators file')."""
    from robot_dynamics.cli import identify as identify_cli

    model = rd.load_urdf(robot_path("arm7"))
    z = np.zeros((3, model.nv))
    path = tmp_path / "x.npz"
    np.savez(path, t=np.arange(3.0), q=z, v=z, tau=z, joint_names=np.array(model.joint_names))
    base = ["arm7", str(path), "-o", str(tmp_path / "f.yaml")]
    # armature alone with a geared file: refused after reading it (the gear mesh is named)
    assert identify_cli.main(base + ["--actuators", "arm7_actuators", "--terms", "armature"]) == 2
    assert "has a gear mesh" in capsys.readouterr().err
    assert identify_cli.main(base + ["--actuators", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: no such file" in capsys.readouterr().err


def test_sim_summary_names_the_friction_actually_used():
    """A robot without a bundled friction file runs frictionless: the summary says so instead
    of naming a missing '<robot>_friction (default)'; a robot given as a path is named by its
    stem."""
    from robot_dynamics.ros.common import load_friction
    from robot_dynamics.ros.demo.config import friction_label as _friction_label

    mimic = rd.load_urdf(robot_path("arm7_gripper_mimic"), mimic=True)
    law = load_friction("", "arm7_gripper_mimic", mimic)
    assert law is None
    assert _friction_label("", law, "arm7_gripper_mimic") == \
        "none (no bundled arm7_gripper_mimic_friction)"
    arm7 = rd.load_urdf(robot_path("arm7"))
    law = load_friction("", "arm7", arm7)
    assert _friction_label("", law, robot_path("arm7")) == "arm7_friction (default)"
    assert _friction_label("none", None, "arm7") == "none"


def test_a_users_file_named_like_a_bundled_robot_gets_no_bundled_configs(tmp_path):
    """Bundled configurations (friction, actuators, gains, loop note) go with the bundled robot
    only: a user's ~/arm7.urdf, or a robot_description that is not the bundled file's text, is
    the user's robot (arm7's friction on it would be a silent wrong answer, or an error about
    joints the user never named)."""
    from robot_dynamics.ros.demo.config import (controller_parameters, default_actuators,
        friction_label as _friction_label)
    from robot_dynamics.ros.demo.scenario import loop_closure_note
    from robot_dynamics.parsers.resources import bundled_robot

    text = open(robot_path("arm7"), encoding="utf-8").read()
    assert bundled_robot("arm7") == bundled_robot(robot_path("arm7")) == "arm7"
    assert bundled_robot("planar_2r.urdf.xacro") == "planar_2r"
    assert bundled_robot("arm7", text) == "arm7"  # sim.launch.py passes the file's text
    assert bundled_robot("arm7", text.replace("arm7", "my_arm")) is None
    assert bundled_robot("nope") is None
    mine = tmp_path / "arm7.urdf"
    mine.write_text(text)
    five = tmp_path / "five_bar.urdf"
    five.write_text(open(robot_path("five_bar"), encoding="utf-8").read())
    assert bundled_robot(str(mine)) is None
    assert default_actuators(str(mine)) == "" and default_actuators("arm7") == "arm7_actuators"
    assert controller_parameters(str(mine)) == {} and controller_parameters("arm7")
    assert loop_closure_note(str(five)) is None and loop_closure_note("five_bar")
    assert _friction_label("", None, str(mine)) == (
        "none (not a bundled robot, and its URDF declares no <dynamics friction>; set "
        "--friction)")


def test_a_users_urdf_friction_is_its_default_coulomb_friction(tmp_path):
    """A robot that is not bundled, with no friction config, takes the URDF's own <dynamics
    friction> as Coulomb friction (as Gazebo and MuJoCo's URDF import read it) instead of
    dropping it silently; a joint declaring 0 stays frictionless."""
    from robot_dynamics.friction.classic import ClassicFriction
    from robot_dynamics.friction.none import NoFriction
    from robot_dynamics.ros.common import load_friction
    from robot_dynamics.ros.demo.config import friction_label as _friction_label

    text = open(robot_path("planar_2r"), encoding="utf-8").read()
    mine = tmp_path / "my_arm.urdf"
    mine.write_text(text.replace('friction="0.0"', 'friction="1.5"', 1))
    model = rd.load_urdf(str(mine))
    law = load_friction("", None, model)
    assert isinstance(law.laws[0], ClassicFriction) and law.laws[0].coulomb == 1.5
    assert law.laws[0].viscous == 0.0 and isinstance(law.laws[1], NoFriction)
    assert _friction_label("", law, str(mine)) == \
        "the URDF's <dynamics friction> (default)"
    assert load_friction("none", None, model) is None
    assert load_friction("", None, rd.load_urdf(robot_path("planar_2r"))) is None


def test_tracking_verdict_names_urdf_damping_too_stiff_for_the_step():
    """The controller compensates the URDF's damping as d∘q̇; where h·d/M ≫ 1 (xarm7's wrist:
    d = 2 on 1.4e-4 kg·m², 14 at 1 ms) no per-step command can, and the verdict says why."""
    from robot_dynamics.ros.demo.verdict import _stiff_damping

    text = open(robot_path("planar_2r"), encoding="utf-8").read()
    data = {"t": np.arange(5) * 1e-3, "q": np.zeros((5, 2))}
    for d, stiff in ((0.01, False), (500.0, True)):
        model = rd.load_urdf(text.replace('damping="0.0"', f'damping="{d}"'))
        reason = _stiff_damping(model, data, 1)
        assert ("h·d/M =" in reason and "at the 1 ms step" in reason) == stiff, reason


def test_sim_notes_that_a_closed_chain_runs_as_its_open_tree():
    """five_bar has a loop-closure file the nodes do not use: `sim` says so before running."""
    from robot_dynamics.ros.demo.scenario import loop_closure_note

    note = loop_closure_note("five_bar")
    assert note and "five_bar_loop.yaml" in note and "loop open" in note
    assert loop_closure_note("arm7") is None
    assert loop_closure_note(robot_path("five_bar")) == note  # a path: named by its stem


def test_plot_title_names_the_actuators():
    from robot_dynamics.ros.demo.plot import plot_title

    base = {"robot": "arm7", "plant_friction_law": "composite", "model_friction_law": "composite",
            "friction_compensation": True, "mode": "lockstep"}
    assert "actuators arm7_actuators" in plot_title(dict(base, actuators="arm7_actuators"))
    assert "actuators fit_actuators" in plot_title(dict(base, actuators="/x/fit_actuators.yaml"))
    assert "actuators none" in plot_title(dict(base, actuators="none"))


def test_realtime_verdict_names_steps_dropped_without_an_overrun():
    """A realtime simulator slower than the wall clock by small ticks (each catching up at most
    5 ms) drops steps without an overrun: beyond 5 % of the steps taken the run is not real
    time, and the verdict says so (a few dropped on a loaded machine are not)."""
    from robot_dynamics.algorithm.energy import EnergyAudit
    from robot_dynamics.ros.demo.verdict import summarize

    model = rd.load_urdf(robot_path("planar_2r"))
    data = {"t": np.arange(5) * 1e-3, "q": np.zeros((5, 2)), "tau": np.zeros((5, 2))}
    for mode, dropped, valid in (("realtime", 0, True), ("realtime", 40, True),
                                 ("realtime", 60, False), ("lockstep", 60, True)):
        out = summarize(model, data, np.zeros((5, 2)), EnergyAudit(),
                        {"overruns": 0, "dropped_steps": dropped, "steps": 1000}, mode=mode,
                        wall=1.0, tolerance=0.01, tolerance_prismatic=0.001)
        assert out["valid"] == valid, out["reasons"]
        assert valid or out["reasons"] == ["60 steps dropped against 1000 taken: the simulation "
                                           "ran slower than the wall clock"]
    for mode, why in (("realtime", "realtime: each command acts a loop's latency late"),
                      ("fast", "fast: the simulator does not wait for commands"),
                      ("lockstep", None)):
        late = summarize(model, data, np.full((5, 2), 0.1), EnergyAudit(), {"steps": 1000},
                         mode=mode, wall=1.0, tolerance=0.01, tolerance_prismatic=0.001)
        assert not late["valid"]
        if why:
            assert why in late["reasons"][0] and "stated for lockstep" in late["reasons"][0]
        else:
            assert "stated for lockstep" not in late["reasons"][0]


def test_progress_lines_one_per_simulated_second():
    """Not on a terminal: one line per simulated second; the first line once the quiet spell
    ends at 1.99 s counts for 2 s (it printed '1.99' and then '2.00')."""
    import io

    from robot_dynamics.ros.demo.session import Progress

    out = io.StringIO()
    progress = Progress(7.0, stream=out, quiet=0.0)
    for t in (1.99, 2.0, 2.5, 3.0, 3.99999999, 4.0):
        progress.update(t)
    lines = out.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == ["1.99", "3.00", "4.00"]
    # no time left before the pace is measured (here wall ≈ 0 s so far)
    assert not any("left" in line for line in lines), lines


class FakeClock:
    """A wall clock the test moves (no sleeps)."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _demo_like_run(progress, clock, startup=3.0, warmup=2.0, pace=0.6, total=9.0):
    """Drive ``progress`` as spin_until does (an update every 0.05 s of wall) through a run
    like `sim --robot arm7`'s: ``startup`` s before the first step, the first 0.04 s simulated
    in ``warmup`` s, then ``pace`` simulated s per wall s. (wall, t, true wall s left) at each
    update."""
    end = startup + warmup + (total - 0.04) / pace
    wall0, rows, wall = clock.now, [], 0.0
    while True:
        t = (0.0 if wall < startup else 0.001 + 0.039 * (wall - startup) / warmup
             if wall < startup + warmup else 0.04 + pace * (wall - startup - warmup))
        t = min(t, total)
        clock.now = wall0 + wall
        progress.update(t)
        rows.append((wall, t, end - wall))
        if t >= total:
            return rows
        wall += 0.05


def test_progress_says_no_absurd_time_left_early():
    """With a fake clock: no time left while the start-up and the first slow steps dominate
    (the pace from the start said 'about 6 min left' at 0.04 s of a 17 s run), then an
    estimate within a factor 2 of the truth, within 15 % once past half the run."""
    import io
    import re

    from robot_dynamics.ros.demo.session import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    clock, out = FakeClock(), Terminal()
    progress = Progress(9.0, stream=out, clock=clock)
    rows = _demo_like_run(progress, clock)
    estimates = [(wall, t, progress.seconds_left(t, wall), truth) for wall, t, truth in rows]
    shown = [e for e in estimates if e[2] is not None]
    assert shown and all(t >= 0.05 * 9.0 for _, t, _, _ in shown), shown[:3]
    for wall, t, left, truth in shown:
        assert truth / 2 <= left <= 2 * truth + 1.0, (wall, t, left, truth)
        if t > 4.5:
            assert abs(left - truth) <= 0.15 * truth + 0.5, (wall, t, left, truth)
    # what the terminal line said agrees: seconds, never minutes, for a 20 s run
    said = re.findall(r"about (\d+) (s|min|h) left", out.getvalue())
    assert said and all(unit == "s" and int(x) <= 2 * 17 for x, unit in said), said
    # the old estimate from the start, (9 − t)·wall/t, was absurd at the same moment
    wall, t = next((w, t) for w, t, _ in rows if t >= 0.04)
    assert (9.0 - t) * wall / t > 300 and progress.seconds_left(t, wall) is None


def test_progress_not_on_a_terminal_says_time_left_once_measured():
    """Lines per simulated second: the first without an estimate, the later ones with it."""
    import io

    from robot_dynamics.ros.demo.session import Progress

    clock, out = FakeClock(), io.StringIO()
    _demo_like_run(Progress(9.0, stream=out, clock=clock), clock)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 8 and "left" not in lines[0], lines
    assert all(line.endswith("s left)") for line in lines[1:-1]), lines


def test_rclpy_own_parameters_are_not_called_undeclared(capsys):
    """`-p use_sim_time:=true` is a parameter every rclpy node declares (so do the others rclpy
    declares itself): no "declares no parameter" warning for them; a typo still gets one."""
    import rclpy

    from robot_dynamics.cli.main import _check_parameter_names

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(DOMAIN_ID))
    try:
        node = rclpy.create_node("own_parameters_probe", context=context)
        own = sorted(p.name for p in node.get_parameters(list(node._parameters)))
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    assert "use_sim_time" in own
    for name in P.NODES:
        rest = ["--ros-args"]
        for pname in own:
            rest += ["-p", f"{pname}:=true"]
        rest += ["-p", f"{name}:qos_overrides./joint_states.publisher.depth:=5"]
        _check_parameter_names(name, rest)
        assert capsys.readouterr().err == "", (name, own)
        _check_parameter_names(name, ["--ros-args", "-p", "use_sim_tme:=true"])
        assert "declares no parameter 'use_sim_tme'" in capsys.readouterr().err


#: the line each node logs once it is up (spinning)
_UP = {"id_controller": "computed-torque control", "simulator": "simulating '"}


def _node_interrupted(signals_after, wait_up, robot="planar_2r", node="id_controller",
                      params=()):
    """Start `robot-dynamics <node>` in its own session; once up (or at once), send
    each (delay, signal) of ``signals_after`` to its process group (a terminal's Ctrl-C;
    ros2 launch forwards one more); return (exit code, output)."""
    proc = subprocess.Popen([sys.executable, "-m", "robot_dynamics.cli.main", node,
                             "--ros-args", "-p", f"robot:={robot}",
                             *[x for p in params for x in ("-p", p)]], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    lines = []
    reader = __import__("threading").Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        if wait_up:
            deadline = time.monotonic() + 300  # (a cold numba cache compiles first)
            while not any(_UP[node] in ln for ln in lines):
                assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
                time.sleep(0.02)
        for delay, sig in signals_after:
            time.sleep(delay)
            os.killpg(proc.pid, sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=5)
    return code, "".join(lines)


@pytest.mark.parametrize("wait_up, signals_after", [
    (True, [(0.5, signal.SIGINT), (0.05, signal.SIGINT)]),  # Ctrl-C + launch's forwarded one
    (True, [(0.5, signal.SIGINT), (0.01, signal.SIGTERM), (0.01, signal.SIGINT)]),
    (False, [(1.5, signal.SIGINT), (0.1, signal.SIGINT)]),  # while the modules load
], ids=["running-INT-INT", "running-INT-TERM-INT", "start-up-INT-INT"])
def test_a_node_ends_cleanly_under_repeated_signals(wait_up, signals_after):
    """The mechanism behind exit -2/130, the KeyboardInterrupt tracebacks and (under ros2
    launch) `terminate called without an active exception`: each signal raised its own
    KeyboardInterrupt, the second inside the first one's clean-up (rclpy left half shut down),
    or, after it, during the interpreter's finalization, which restores the default SIGINT
    handler (killed by the signal). Now the first signal shuts the node down and the rest are
    ignored: exit 0, no traceback, no abort (ros/signals.py)."""
    for _ in range(2):
        code, out = _node_interrupted(signals_after, wait_up)
        assert code == 0, (code, out[-3000:])
        for bad in ("Traceback", "terminate called", "KeyboardInterrupt"):
            assert bad not in out, out[-3000:]
        # one closing line, whenever the first signal came: the node's own once it is up
        said = [ln for ln in out.splitlines() if "stopped by SIGINT" in ln
                or "interrupted by SIGINT during start-up" in ln]
        assert len(said) == 1, out[-3000:]
        if wait_up:
            assert "[id_controller]: stopped by SIGINT" in said[0], out[-3000:]
        elif _UP["id_controller"] not in out:  # (a fast machine may be up by then)
            assert said[0] == START_UP_LINE.format(node="id_controller"), out[-3000:]


#: what a node says when a signal stops it before it is up (cli.main.closing_line)
START_UP_LINE = "robot-dynamics {node}: interrupted by SIGINT during start-up; exiting"


@pytest.mark.parametrize("node", ["simulator", "id_controller", "dynamics_model"])
def test_a_node_interrupted_during_its_start_up_says_so(node):
    """A SIGINT in the first second or two of a node (its modules loading, its kernels and
    robot loading) ended it with exit 0 and nothing said, where a later one logs the node's
    closing line: now it says it was interrupted during start-up, and exits 0 as later. The
    signal goes once the process has loaded numpy's extension (/proc/<pid>/maps): the node's
    own code runs, its handlers are in place (a signal inside the interpreter's own start-up,
    before any code of the package, is out of its reach), and the node is far from up."""
    proc = subprocess.Popen([sys.executable, "-m", "robot_dynamics.cli.main", node,
                             "--ros-args", "-p", "robot:=planar_2r"], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, proc.returncode
            try:
                with open(f"/proc/{proc.pid}/maps") as maps:
                    if "_multiarray_umath" in maps.read():
                        break
            except OSError:
                pass
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, (proc.returncode, out[-3000:])
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out[-3000:]
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines and lines[-1] == START_UP_LINE.format(node=node), out[-3000:]
    assert sum(START_UP_LINE.format(node=node) == ln for ln in lines) == 1, out[-3000:]


def test_the_simulator_says_where_it_stopped_under_two_signals():
    """A terminal's Ctrl-C plus ros2 launch's forwarded SIGINT, 50 ms apart: the first signal's
    context shutdown could request the node's destruction before the clean-up read the node's
    name, so the clean-up failed half-way (node.get_name(): "destruction was requested"),
    silently after a signal, and the closing line never came (about every second run). Now
    the name is read at start-up and the node's destruction tolerates it: exit 0 and the line,
    every time."""
    for _ in range(3):
        code, out = _node_interrupted([(2.0, signal.SIGINT), (0.05, signal.SIGINT)], True,
                                      robot="arm7", node="simulator",
                                      params=("mode:=realtime",))
        assert code == 0, (code, out[-3000:])
        assert "stopped at t=" in out, out[-3000:]
        assert "Traceback" not in out, out[-3000:]


#: the node executable as setup.py's console script runs it, with a SIGINT to itself at the
#: first import of one module: a Ctrl-C (the terminal's, or launch's) that lands while the node
#: starts, at a chosen point instead of a chosen time
_INTERRUPTED_AT_IMPORT = """
import os, signal, sys

class _Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _Interrupt())
sys.argv = [{node!r}, "--ros-args", "-p", "robot:=planar_2r"]
from robot_dynamics.cli.main import {node}_main
sys.exit({node}_main())
"""


@pytest.mark.parametrize("node, module", [
    ("id_controller", "numpy"), ("simulator", "numpy"), ("dynamics_model", "numpy"),
    ("id_controller", "robot_dynamics.ros.signals"),  # before the handlers are in place
    ("id_controller", "rclpy"), ("id_controller", "numba"),
])
def test_a_node_executable_ends_cleanly_when_interrupted_while_it_imports(node, module):
    """Under ros2 launch a Ctrl-C about a second after the start killed every node with -2 and a
    KeyboardInterrupt traceback: the executables' first line, ``from robot_dynamics.cli.main
    import <node>_main``, imported numpy (cli.main -> ros.params -> errors) before
    signals.install() ran, so Python's default handler raised the KeyboardInterrupt outside any
    handler of ours. Now importing cli.main loads nothing heavy and <node>_main installs the
    handlers before anything else, and a KeyboardInterrupt of Python's own handler before that
    (while signals.py itself loads) is a clean end too: a signal at any import of the start-up
    ends the node with exit 0, no traceback. (A signal inside the interpreter's own start,
    while site-packages' .pth files run, is before any code of the package: out of its
    reach.)"""
    _assert_clean_end(_INTERRUPTED_AT_IMPORT.format(node=node, module=module), node)


#: as above, the SIGINT from inside llvmlite's object-cache callback: LLVM asks numba for a
#: kernel's cached object code, at every node start (the launch's -11 and its traceback)
_INTERRUPTED_IN_LLVM_CALLBACK = """
import os, signal, sys
from numba.core import codegen

_hook = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__
_calls = []

def _getbuffer(cls, ll_module):
    _calls.append(1)
    if len(_calls) == 2:
        os.kill(os.getpid(), signal.SIGINT)
    return _hook(cls, ll_module)

codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(_getbuffer)
sys.argv = [{node!r}, "--ros-args", "-p", "robot:=planar_2r"]
from robot_dynamics.cli.main import {node}_main
sys.exit({node}_main())
"""


@pytest.mark.parametrize("node", ["id_controller", "simulator"])
def test_a_node_ends_cleanly_when_interrupted_inside_an_llvm_callback(node):
    """Under ros2 launch, Ctrl-C while the nodes loaded their compiled kernels printed "Exception
    ignored on calling ctypes callback function ... KeyboardInterrupt" and once killed a node
    with -11: the handler raised its KeyboardInterrupt inside llvmlite's object-cache callback
    (Python code that LLVM calls through ctypes), where ctypes swallows it and returns to LLVM
    with the callback's work undone. Now the handler defers it while llvmlite is on the stack
    and raises it once the callback has returned (signals.py): exit 0, no traceback."""
    _assert_clean_end(_INTERRUPTED_IN_LLVM_CALLBACK.format(node=node), node)


def _assert_clean_end(code, node):
    proc = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True,
                          timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, (proc.returncode, out[-3000:])
    for bad in ("Traceback", "KeyboardInterrupt", "terminate called", "Exception ignored"):
        assert bad not in out, out[-3000:]
    # interrupted during its start-up, and it says so, as later its closing line would
    assert proc.stderr.strip().splitlines()[-1] == START_UP_LINE.format(node=node), out[-3000:]


#: a node started with ``python -m``, a SIGINT raised inside an ``exec`` of a string at the
#: start-up's import of ``{at}``, as namedtuple and dataclass definitions (in
#: importlib.metadata, encodings) have one on the stack about a second into a node's start
_INTERRUPTED_IN_EXEC = """
import os, runpy, signal, sys

class _Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {at!r}:
            sys.meta_path.remove(self)
            exec("os.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(10 ** 8): pass",
                 {{"os": os, "signal": signal}})
        return None

sys.meta_path.insert(0, _Interrupt())
sys.argv = {argv!r} + ["--ros-args", "-p", "robot:=planar_2r"]
runpy.run_module({module!r}, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("module, argv, at", [
    # the executables' path, interrupted before the node is built: its start-up line
    ("robot_dynamics.cli.main", ["robot-dynamics", "id_controller"], "rclpy"),
    # run_node's own (python -m robot_dynamics.ros.<node>), interrupted while the node is built
    ("robot_dynamics.ros.id_controller", ["id_controller"], "robot_dynamics.ros.external_wrench"),
])
def test_a_node_run_with_python_m_ends_cleanly_when_interrupted_inside_an_exec(
        tmp_path, module, argv, at):
    """A CI run: `python -m robot_dynamics.cli.main id_controller`, SIGINT at 1.5 s and 0.1 s
    later, exit -2 after the node's clean start-up line (6 of 24 runs with the first signal at
    0.7–0.9 s). The KeyboardInterrupt had passed through an exec of a string, which sets
    CPython's "unhandled KeyboardInterrupt" flag however it is caught; under ``python -m`` the
    interpreter then kills itself with SIGINT as it exits. signals.finish clears the flag after
    a signal's clean-up (signals.forget_keyboard_interrupt), in cli.main and run_node: exit 0."""
    (tmp_path / "interrupt_in_exec.py").write_text(
        _INTERRUPTED_IN_EXEC.format(at=at, argv=argv, module=module))
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(tmp_path), ENV.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "interrupt_in_exec"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, (proc.returncode, out[-3000:])
    assert "Traceback" not in out, out[-3000:]
    if module == "robot_dynamics.cli.main":
        assert proc.stderr.strip().splitlines()[-1] == START_UP_LINE.format(
            node="id_controller"), out[-3000:]


@pytest.mark.parametrize("argv", [["sim", "--help"], ["simulator", "--help"],
                                  ["id_controller", "--help"], ["dynamics_model", "--help"],
                                  ["record", "--help"], ["identify", "--help"]])
def test_help_lists_every_bundled_robot(argv, capsys):
    """--help names the full bundled robot list (the one the unknown-robot error gives), not a
    few names and '...'."""
    from robot_dynamics.cli.main import main
    from robot_dynamics.parsers.resources import bundled_robots, robot_path

    robots = bundled_robots()
    assert {"arm7", "arm7_gripper", "planar_2r", "rrp"} <= set(robots) and len(robots) > 4
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's --help
        rc = exc.code
    assert rc in (0, None)
    text = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert f"({', '.join(robots)})" in text
    with pytest.raises(rd.ModelError) as exc:
        robot_path("no_such_robot")
    assert f"bundled robots: {', '.join(robots)} (or a URDF" in str(exc.value)
