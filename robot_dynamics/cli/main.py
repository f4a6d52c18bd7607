"""``robot-dynamics``: one command for everything a pip install gives.

    robot-dynamics sim [--robot arm7] [--plot demo.png]     the demo composition (sim.launch.py)
    robot-dynamics simulator|id_controller|dynamics_model [--ros-args ...]   one node
    robot-dynamics derive <robot> --method ...               equations of motion (symbolic)
    robot-dynamics identify <robot> <log> -o friction.yaml   friction identification
    robot-dynamics record --robot arm7 --out run_bag          an identification run → bag
    robot-dynamics sweep --friction-scale 0.5,1,2 --payload 0,5   a robustness study (rollouts)

Start-up is kept light: this module and ``--help`` of every command import neither numba nor
rclpy, SymPy, SciPy or matplotlib (``robot_dynamics`` itself imports its names on first use).

Exit codes: 0 success; 1 a run that completed but is not valid (``sim`` says why); 2 a user
mistake (bad option, unknown robot or file, bad parameter value), reported in one line before
any long work; 130 / 143 ``sim`` interrupted by SIGINT / SIGTERM (nodes destroyed, no
traceback). The node commands exit 0 when stopped by SIGINT or SIGTERM (the normal end of a
node, as under ``ros2 run``), and say so in one line whenever the signal comes: the node's
closing line once it is up (the simulator's says where the simulation got to), else
``robot-dynamics <node>: interrupted by SIGINT during start-up`` (:func:`closing_line`).
"""
from __future__ import annotations

import importlib
import os
import re
import sys

# Nothing else at module level: the node executables run `from robot_dynamics.cli.main import
# <node>_main` before any handler of ours is in place, so a Ctrl-C during this import gets
# Python's default one (a KeyboardInterrupt traceback and exit -2 under ros2 launch); it used to
# import numpy (ros.params -> errors). node_main installs the handlers first (ros/signals.py).

COMMANDS = {
    "sim": ("robot_dynamics.ros.demo.arguments", "simulator + controller + dynamics model demo"),
    "simulator": ("robot_dynamics.ros.simulator", "the simulator node"),
    "id_controller": ("robot_dynamics.ros.id_controller", "the computed-torque controller node"),
    "dynamics_model": ("robot_dynamics.ros.dynamics_model", "the dynamics monitor node"),
    "derive": ("robot_dynamics.cli.formulations", "equations of motion, symbolic"),
    "identify": ("robot_dynamics.cli.identify",
                 "fit friction laws (and armature, gear mesh) to a recorded run"),
    "record": ("robot_dynamics.ros.record",
               "record an identification run of the simulator node into a ROS 2 bag"),
    "sweep": ("robot_dynamics.cli.sweep",
              "robustness study: rollouts over friction, payload, initial state, gains"),
}
NODES = {"simulator", "id_controller", "dynamics_model"}


def version() -> str:
    """The installed distribution's version, else the source tree's ``__version__``."""
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version

        return dist_version("robot_dynamics")
    except (ImportError, PackageNotFoundError):
        from robot_dynamics import __version__

        return __version__


def usage() -> str:
    lines = ["usage: robot-dynamics [--version] <command> [args]", "", "commands:"]
    lines += [f"  {name:<15} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "`robot-dynamics <command> --help` describes a command (for a node: every "
              "parameter).", "exit codes: 0 ok, 1 invalid run, 2 usage error, 3 identify: "
              "unidentifiable coefficients or efforts that are not friction (nothing written), "
              "130/143 sim or record interrupted (SIGINT/SIGTERM), 130 sweep interrupted "
              "(SIGINT)"]
    return "\n".join(lines)


def error(command: str, message) -> int:
    """Print the one-line user error ``robot-dynamics <command>: message``; return exit code 2."""
    text = " ".join(str(message).split())  # one line, whatever the exception's formatting
    print(f"robot-dynamics {command}: {text}", file=sys.stderr)
    return 2


def _overrides(rest):
    """(node prefix or '', name, value text) of each ``-p [NODE:]NAME:=VALUE`` in ``rest``."""
    out = []
    for flag, value in zip(rest, rest[1:]):
        if flag in ("-p", "--param") and ":=" in value:
            target, text = value.split(":=", 1)
            prefix, _, pname = target.rpartition(":")
            out.append((prefix, pname, text))
    return out


def remapped_name(name, rest) -> str:
    """The name node ``name`` runs under: rcl's first ``-r``/``--remap __node:=X`` (or its
    alias ``__name``; ``name:__node:=X`` when addressed to this node) in ``rest``, else
    ``name`` (rcl's remap.c, rcl_remap_node_name: the first matching rule applies)."""
    for flag, value in zip(rest, rest[1:]):
        if flag not in ("-r", "--remap") or ":=" not in value:
            continue
        target, new = value.split(":=", 1)
        prefix, _, key = target.rpartition(":")
        if key in ("__node", "__name") and prefix in ("", name) and new:
            return new
    return name


def remapped_namespace(name, rest) -> str:
    """The namespace node ``name`` (its name after :func:`remapped_name`) runs in: rcl's first
    ``-r``/``--remap [NODE:]__ns:=NS`` addressed to it (NODE: the remapped name, as rcl matches
    it), else ``/``. Measured with rclpy 9.1.2 (``-r __node:=other -r other:__ns:=/ns`` puts
    the node in /ns, ``simulator:__ns:=/ns`` then does not)."""
    for flag, value in zip(rest, rest[1:]):
        if flag not in ("-r", "--remap") or ":=" not in value:
            continue
        target, new = value.split(":=", 1)
        prefix, _, key = target.rpartition(":")
        if key == "__ns" and prefix in ("", name) and new:
            return new
    return "/"


#: a NODE of ``-p NODE:NAME:=VALUE`` as rcl's lexer reads it (one token: no namespace, no
#: wildcard, no dot; rcl refuses the rule otherwise, in words quoting its C sources)
NODE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def addressed(name, rest) -> str | None:
    """The NODE prefix a ``-p NODE:NAME:=VALUE`` must have to reach node ``name``: its remapped
    name when it runs in the root namespace, else None (rcl matches NODE against the node's
    fully qualified name as /NODE: in a namespace no prefixed override reaches it, measured
    with rclpy 9.1.2; a bare ``-p NAME:=VALUE`` reaches every node)."""
    node = remapped_name(name, rest)
    return node if remapped_namespace(node, rest) == "/" else None


#: parameters every rclpy node declares itself (rclpy.time_source, rclpy.type_description_service)
#: and the prefix of those rclpy.qos_overriding_options declares: not in the nodes' tables
RCLPY_PARAMETERS = ("use_sim_time", "start_type_description_service")
RCLPY_PARAMETER_PREFIXES = ("qos_overrides.",)


def _check_parameter_names(name, rest):
    """Warn (one line each) about ``-p NAME:=...`` that the node does not declare, and about
    ``-p NODE:NAME:=...`` that does not reach it (another node's name, a typo, or the node in a
    namespace): rclpy ignores them silently, which hides a typo. rclpy's own parameters are
    declared too."""
    from robot_dynamics.ros.params import NODES as TABLES, find

    node = addressed(name, rest)
    for prefix, pname, text in _overrides(rest):
        if prefix and prefix != node:
            where = (f"runs as {remapped_name(name, rest)!r}" if node is not None else
                     f"runs in namespace {remapped_namespace(remapped_name(name, rest), rest)}"
                     ", where no NODE: prefix reaches it")
            print(f"robot-dynamics {name}: warning: -p {prefix}:{pname}:={text} is addressed "
                  f"to node {prefix!r}; this node {where} (it will be ignored)",
                  file=sys.stderr)
            continue
        if pname in RCLPY_PARAMETERS or pname.startswith(RCLPY_PARAMETER_PREFIXES):
            continue
        if find(TABLES[name][2], pname) is None:  # per-joint rows: any joint name
            print(f"robot-dynamics {name}: warning: the node declares no parameter "
                  f"{pname!r} (it will be ignored); see `robot-dynamics {name} --help`",
                  file=sys.stderr)


def early_refusal(name, rest):
    """The first ``-p NAME:=VALUE`` of node ``name`` that its start-up would refuse, told
    before anything heavy is imported (on a cold numba cache the node would compile its
    kernels for minutes first): a value out of its range or not among its choices
    (params.override_problem), a robot that names no bundled robot and no file, a ``-p``
    without ``NAME:=VALUE``, a ``--params-file`` that does not exist. Of several overrides of a
    name the one rcl applies (params.applied_override: not always the last); the rest the
    node checks itself."""
    from robot_dynamics.errors import ModelError
    from robot_dynamics.ros.params import (NODES as TABLES, applied_override, find,
                                          override_problem)
    from robot_dynamics.parsers.resources import robot_path

    for flag, value in zip(rest, rest[1:] + [None]):  # rcl's own words for these quote its
        # C sources ("... at /project/src/rcl/arguments.c:352") after an [ERROR] line
        if flag in ("-p", "--param") and (value is None or ":=" not in value):
            written = flag if value is None else f"{flag} {value}"
            return f"{written}: expected NAME:=VALUE (e.g. -p robot:=arm7)"
        if flag == "--params-file" and value is not None and not os.path.isfile(value):
            return f"--params-file {value}: no such file"
    for prefix, pname, text in _overrides(rest):
        if prefix and not NODE_TOKEN.fullmatch(prefix):  # /ns/node:, /**:, *:
            return (f"-p {prefix}:{pname}:={text}: rcl takes -p [NODE:]NAME:=VALUE, NODE a "
                    f"node's plain name (no namespace, no wildcard); -p {pname}:={text} "
                    "reaches every node, and a --params-file takes /**: or /ns/node: keys")
    values = {}
    node = addressed(name, rest)  # -p NODE:NAME:=VALUE reaches the node by its name
    for prefix, pname, text in _overrides(rest):
        if prefix in ("", node):
            values.setdefault(pname, []).append((prefix, text))
    # the value the node gets: not always the last (params.applied_override); None: unknown
    given = {pname: applied_override(v) for pname, v in values.items()}
    for pname, text in given.items():
        if text is None:
            continue
        row = find(TABLES[name][2], pname)
        why = None if row is None else override_problem(row, text)
        if why is not None:
            return why
    robot, description = given.get("robot"), given.get("robot_description", "")
    # robot_description, when given (here or perhaps in a parameters file), wins over robot
    if (robot is not None and description is not None and not description.strip("'\" ")
            and "--params-file" not in rest):
        try:
            robot_path(robot.strip("'\""))
        except ModelError as exc:
            return f"parameter robot: {exc}"
    return None


def run_node(name, module, rest) -> int:
    """A node's main() with user mistakes (bad robot, parameter value or type, ROS arguments)
    as one line and exit 2 instead of a traceback."""
    from rclpy.exceptions import NameValidationException, ParameterException

    try:
        from rclpy._rclpy_pybind11 import RCLError
    except ImportError:  # pragma: no cover - rclpy internals moved
        RCLError = RuntimeError
    _check_parameter_names(name, rest)
    mistakes = (ValueError, ParameterException, NameValidationException, RCLError)
    try:
        module.main(args=[f"robot-dynamics {name}"] + rest)
    except KeyboardInterrupt:  # before the node's own handler was installed
        pass
    except Exception as exc:
        signals = sys.modules.get("robot_dynamics.ros.signals")
        if signals is not None and signals.received() is not None:
            # a signal during the start-up shut the context down under the node being built
            # ("the given context is not valid"): interrupted, not a mistake
            return 0
        # a half-built node may fail again while rclpy shuts down: report the user's mistake
        # that started it, not the clean-up's error
        cause = exc
        while cause is not None and not isinstance(cause, mistakes):
            cause = cause.__context__
        if cause is None:
            raise
        text = str(cause)
        if "parse parameter override rule" in text and "robot_description:=" in text:
            # rcl parses a -p value as YAML, and some URDF text (comment banners, colons) is not
            # a YAML scalar: the message quoted the whole URDF, cut, and no way out
            return error(name, "rcl could not parse -p robot_description:=<URDF text> (it reads "
                               "the value as YAML); pass the file instead: -p robot:=/path/to/"
                               "robot.urdf, or robot_description in a --params-file")
        return error(name, cause)
    return 0


def node_main(name: str) -> int:
    """A node's own executable (``simulator``, ``id_controller``, ``dynamics_model``; what
    ``ros2 run robot_dynamics <node>`` and the launch files start): ``robot-dynamics <node>``
    with its arguments — ``--help``, the one-line errors and the parameter-name check alike.
    The signal handlers go in first: ``ros2 launch`` signals a node whenever the user presses
    Ctrl-C, however early in its start-up (signals.py)."""
    try:
        from robot_dynamics.ros import signals

        signals.install()
    except KeyboardInterrupt:  # Python's own handler, before ours were in place: the node was
        import _signal  # stopped while it started, a clean end; launch's second SIGINT or its

        for sig in (_signal.SIGINT, _signal.SIGTERM):  # SIGTERM must not kill it now
            _signal.signal(sig, _signal.SIG_IGN)
        print(closing_line(name, "SIGINT"), file=sys.stderr)
        return 0
    return main([name] + sys.argv[1:])


def simulator_main() -> int:
    return node_main("simulator")


def id_controller_main() -> int:
    return node_main("id_controller")


def dynamics_model_main() -> int:
    return node_main("dynamics_model")


def closing_line(name: str, signal_name: str) -> str:
    """What node ``name`` says when a signal stops it before it is up (while its modules load,
    its kernels compile, its robot loads): as the node's own closing line says it later, the
    signal ends it, exit 0."""
    return f"robot-dynamics {name}: interrupted by {signal_name} during start-up; exiting"


def _say_interrupted(name, signals):
    """After node ``name``'s clean-up: :func:`closing_line` when a signal came before the node
    was up and the node said nothing itself."""
    # mark_said: the line is said here unless the node said its own (test-and-set)
    if signals.received() is None or signals.up() or signals.mark_said():
        return
    try:
        print(closing_line(name, signals.received_name()), file=sys.stderr)
    except OSError:  # stderr gone (the terminal closed): the exit status still says it
        pass


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except BrokenPipeError:  # `robot-dynamics simulator --help | head`: the reader left
        devnull = os.open(os.devnull, os.O_WRONLY)  # (no traceback at exit either)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception:  # a node interrupted (SIGINT/SIGTERM) while its modules load or its
        # kernels compile: the KeyboardInterrupt itself, or the error it left (numba's)
        signals = sys.modules.get("robot_dynamics.ros.signals")
        if signals is None or signals.received() is None:
            raise
        return 0
    except KeyboardInterrupt:
        signals = sys.modules.get("robot_dynamics.ros.signals")
        if signals is None or signals.received() is None:
            raise
        return 0
    finally:  # after a signal's clean-up, later ones must not kill the exiting process
        signals = sys.modules.get("robot_dynamics.ros.signals")
        if signals is not None:
            if argv and argv[0] in NODES:
                _say_interrupted(argv[0], signals)
            signals.finish()  # (and a caught Ctrl-C is not "unhandled": python -m, exit -2)


def _main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # a usage mistake (exit 2), as an unknown command
        print(f"robot-dynamics: a command is needed\n\n{usage()}", file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(f"robot-dynamics {version()}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"robot-dynamics: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    if name in NODES:  # Ctrl-C while the modules load: a clean exit 0, no traceback
        from robot_dynamics.ros import signals

        signals.install()
    from robot_dynamics.ros.params import own_words, wants_help

    if name in NODES and wants_help(rest):
        from robot_dynamics.ros.params import format_help

        print(format_help(name))
        return 0
    if name in NODES:  # rclpy would ignore them silently (e.g. "-p robot:=ur5" without
        # --ros-args: the node would start with its defaults)
        stray = own_words(rest)
        if stray:
            return error(name, f"unexpected argument {stray[0]!r}: a node takes ROS arguments "
                               f"only, after --ros-args (e.g. `robot-dynamics {name} --ros-args "
                               f"-p robot:=arm7`); see `robot-dynamics {name} --help`")
        problem = early_refusal(name, rest)
        if problem is not None:
            return error(name, problem)
    try:
        module = importlib.import_module(COMMANDS[name][0])
    except ImportError as exc:
        signals = sys.modules.get("robot_dynamics.ros.signals")
        if signals is not None and signals.received() is not None:
            return 0  # interrupted while the modules load: a clean exit
        from robot_dynamics.ros import import_rclpy_hint

        return error(name, f"cannot start ({exc}); {import_rclpy_hint(exc)}")
    if name in NODES:
        return run_node(name, module, rest)
    result = module.main(rest)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
