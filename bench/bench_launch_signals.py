"""Ctrl-C under a REAL ``ros2 launch``: every node must exit 0, no abort, no traceback (issue 34).

Needs a launch workspace (ros2 launch, launch_ros, composition_interfaces and an ament-index
entry for this checkout's robot_dynamics), built OUTSIDE the clone by

    scripts/build_launch_workspace.sh /tmp/launch_ws
    # optional: the controller with its FollowJointTrajectory server (two executor threads), as
    # with a full ROS install: ROBOT_DYNAMICS_CONTROL_MSGS_PREFIX=$(scripts/build_test_interfaces.sh)
    #           scripts/build_launch_workspace.sh /tmp/launch_ws

Then

    python bench/bench_launch_signals.py --ws /tmp/launch_ws            # 20 tries, both files
    python bench/bench_launch_signals.py --ws /tmp/launch_ws --cold 1   # + one during the compile

(``--ws`` defaults to $ROBOT_DYNAMICS_LAUNCH_WS.) Each try starts ``ros2 launch robot_dynamics
<file>`` in a process group of its own (setsid), waits until id_controller logs that it is up,
waits the delay and sends SIGINT to the whole group — what a terminal's Ctrl-C does — and then
reads launch's output: each node's exit ("process has finished cleanly" = 0, or "process has
died [..., exit code N"), the signals launch forwarded (SIGINT/SIGTERM/SIGKILL after its
timeouts), aborts (``terminate called``) and tracebacks. ``--cold N`` adds N tries with an
empty numba cache (NUMBA_CACHE_DIR in a temporary folder): the SIGINT lands while the nodes
compile their kernels. ``--early`` adds tries signalled a fixed time after the launch starts
(not after id_controller is up): the nodes' start-up. ``--stdin`` chooses launch's stdin: a
pseudo-terminal (launch is interactive, as in a terminal: the nodes get the group's SIGINT
only), a pipe (``--noninteractive``, as in CI or a service: launch sends each node a second
SIGINT), or both in turn (the default). Either way launch escalates to SIGTERM 5 s after its
shutdown began and to SIGKILL 5 s later. For Jazzy, build a workspace with the Jazzy venv's
interpreter (PYTHON=... scripts/build_launch_workspace.sh /tmp/launch_ws_jazzy) and pass it.

Prints one line per try and a table of exit codes per node; ``--log DIR`` keeps each try's
output. Exit status 0 when every node of every try exited 0 with no abort and no traceback.
"""
from __future__ import annotations

import argparse
import collections
import os
import pty
import re
import signal
import subprocess
import sys
import tempfile
import time

FILES = {  # launch file -> its arguments (nothing external: no rviz, no real arm)
    "sim.launch.py": ["rviz:=false"],
    "hardware.launch.py": [],
}
UP = re.compile(r"\[id_controller-\d+\].*computed-torque control of")
COMPILING = "compiling the dynamics kernels"
EXIT = re.compile(r"\[(?P<node>[\w]+)-\d+\]: process (?:has finished cleanly|has died) "
                  r"\[pid \d+(?:, exit code (?P<code>-?\d+))?")
SENT = re.compile(r"\[(?P<node>[\w]+)-\d+\]: sending signal '(?P<sig>\w+)'")
BAD = ("terminate called", "Traceback (most recent call last)", "KeyboardInterrupt",
       "Aborted", "core dumped")


def workspace_env(ws):
    """The environment of ``source WS/env.sh``."""
    env_sh = os.path.join(ws, "env.sh")
    if not os.path.isfile(env_sh):
        sys.exit(f"bench_launch_signals: {env_sh} missing: run scripts/build_launch_workspace.sh "
                 f"{ws} first")
    out = subprocess.run(["bash", "-c", f'source "{env_sh}" && env -0'], check=True,
                         capture_output=True).stdout
    env = dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
    env["PYTHONUNBUFFERED"] = "1"
    env["RCUTILS_LOGGING_BUFFERED_STREAM"] = "0"
    # a domain of its own: no talk with other runs on this machine
    env.setdefault("ROS_DOMAIN_ID", str(60 + os.getpid() % 40))
    return env


def one_try(env, launch_file, delay, *, after="up", cold=False, tty=False, timeout_up=600.0,
            timeout_end=60.0):
    """Run one launch; SIGINT to its group ``delay`` s after ``after`` ("up": id_controller's
    start-up line; "compile": the compile notice; "start": the launch's own start). Returns
    (exit codes per node, signals launch sent, problems, launch's exit code, output).

    ``tty``: launch's stdin is a pseudo-terminal, as in a terminal — launch is interactive and
    does not forward the SIGINT (the nodes get the group's only); otherwise (a pipe, CI, a
    service) it is ``--noninteractive`` and sends each node its own SIGINT as well."""
    env = dict(env)
    tmp = None
    if cold:
        tmp = tempfile.TemporaryDirectory(prefix="rd_numba_")
        env["NUMBA_CACHE_DIR"] = tmp.name
    cmd = ["ros2", "launch", "robot_dynamics", launch_file] + FILES[launch_file]
    out_file = tempfile.TemporaryFile(mode="w+")
    stdin, keep = subprocess.DEVNULL, None
    if tty:
        keep, stdin = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=out_file, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True, cwd=tempfile.gettempdir())
    if tty:
        os.close(stdin)
    start = time.monotonic()
    marker = {"up": UP, "compile": re.compile(COMPILING), "start": None}[after]

    def text():
        out_file.seek(0)
        return out_file.read()

    try:
        if marker is not None:
            while not marker.search(text()):
                if proc.poll() is not None or time.monotonic() - start > timeout_up:
                    raise RuntimeError(f"no {after!r} line (launch exit {proc.poll()}):\n"
                                       + text()[-3000:])
                time.sleep(0.05)
        t_mark = time.monotonic()
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole group
        t_sig = time.monotonic()
        try:
            launch_code = proc.wait(timeout=timeout_end)
        except subprocess.TimeoutExpired:
            launch_code = "hung"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        if keep is not None:
            os.close(keep)
        if tmp is not None:
            tmp.cleanup()
    output = text()
    codes = {m["node"]: int(m["code"] or 0) for m in EXIT.finditer(output)}
    sent = [f"{m['node']}:{m['sig']}" for m in SENT.finditer(output)]
    problems = [line for line in output.splitlines() if any(b in line for b in BAD)]
    timing = {"mark": round(t_mark - start, 2), "signal": round(t_sig - start, 2),
              "end": round(time.monotonic() - t_sig, 2)}
    return codes, sent, problems, launch_code, output, timing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ws", default=os.environ.get("ROBOT_DYNAMICS_LAUNCH_WS", ""),
                        help="the launch workspace (scripts/build_launch_workspace.sh)")
    parser.add_argument("--tries", type=int, default=20,
                        help="tries after id_controller is up, spread over files and delays")
    parser.add_argument("--files", default=",".join(FILES), help="launch files, comma-separated")
    parser.add_argument("--delays", default="0.5,3", help="seconds after id_controller is up")
    parser.add_argument("--cold", type=int, default=0,
                        help="tries with an empty numba cache, SIGINT 5 s into the compile")
    parser.add_argument("--early", default="",
                        help="delays after the launch's start (comma-separated), one try each "
                             "per file")
    parser.add_argument("--stdin", choices=("tty", "pipe", "both"), default="both",
                        help="launch's stdin: a terminal (interactive launch: the group's "
                             "SIGINT only), a pipe (noninteractive: launch forwards a second "
                             "SIGINT), or both in turn")
    parser.add_argument("--log", default="", help="folder for each try's launch output")
    args = parser.parse_args(argv)
    if not args.ws:
        parser.error("--ws (or ROBOT_DYNAMICS_LAUNCH_WS) is needed")
    env = workspace_env(args.ws)
    files = args.files.split(",")
    delays = [float(d) for d in args.delays.split(",")]
    ttys = {"tty": [True], "pipe": [False], "both": [True, False]}[args.stdin]
    n_up = len(files) * len(delays)  # a try: (file, "up", delay, cold, tty)
    plan = [(files[i % len(files)], "up", delays[(i // len(files)) % len(delays)], False,
             ttys[(i // n_up) % len(ttys)]) for i in range(args.tries)]
    plan += [(files[i % len(files)], "compile", 5.0, True, ttys[i % len(ttys)])
             for i in range(args.cold)]
    plan += [(f, "start", float(d), False, ttys[i % len(ttys)])
             for i, d in enumerate(x for x in args.early.split(",") if x) for f in files]
    table = collections.defaultdict(collections.Counter)
    failed = 0
    for n, (launch_file, after, delay, cold, tty) in enumerate(plan, 1):
        try:
            codes, sent, problems, launch_code, output, timing = one_try(
                env, launch_file, delay, after=after, cold=cold, tty=tty)
        except RuntimeError as exc:
            print(f"try {n}: {launch_file}: {exc}", flush=True)
            failed += 1
            continue
        for node, code in codes.items():
            table[(launch_file, node)][code] += 1
        bad = problems or any(codes.values()) or launch_code != 0
        failed += bool(bad)
        # ros2 launch's own start-up, before its SIGINT handler (about 0.5 s in): it dies with
        # -2 or swallows the signal and runs on; no node had started: not the nodes' doing
        early = "user interrupted" not in output and not codes
        print(f"try {n:2d} {launch_file:19s} {'tty ' if tty else 'pipe'} SIGINT {delay:.1f}s after {after:7s} "
              f"({timing['signal']:.1f}s in, ended {timing['end']:.1f}s later): "
              f"{' '.join(f'{k}={v}' for k, v in sorted(codes.items()))} launch={launch_code}"
              + (f" sent[{' '.join(sent)}]" if sent else "")
              + (f" PROBLEMS: {problems[:4]}" if problems else "")
              + (" [SIGINT before ros2 launch's own handler: no node started]" if early else ""),
              flush=True)
        if args.log:
            os.makedirs(args.log, exist_ok=True)
            name = (f"try{n:02d}_{launch_file.split('.')[0]}_{after}_{delay}_"
                    f"{'tty' if tty else 'pipe'}.log")
            with open(os.path.join(args.log, name), "w", encoding="utf-8") as fh:
                fh.write(output)
    print("\nexit codes per node (code: count)")
    for (launch_file, node), counter in sorted(table.items()):
        print(f"  {launch_file:19s} {node:22s} "
              + ", ".join(f"{code}: {count}" for code, count in sorted(counter.items())))
    print(f"\n{len(plan) - failed} clean, {failed} not clean, of {len(plan)} tries")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
