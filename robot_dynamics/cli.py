"""``robot-dynamics``: one command for everything a pip install gives.

    robot-dynamics sim [--robot arm7] [--plot demo.png]     the demo composition (sim.launch.py)
    robot-dynamics simulator|id_controller|dynamics_model [--ros-args ...]   one node
    robot-dynamics derive <robot> --method ...               equations of motion (symbolic)
    robot-dynamics identify <robot> <log> -o friction.yaml   friction identification
"""
from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "sim": ("robot_dynamics.nodes.composition", "simulator + controller + dynamics model demo"),
    "simulator": ("robot_dynamics.nodes.simulator", "the simulator node"),
    "id_controller": ("robot_dynamics.nodes.id_controller", "the computed-torque controller node"),
    "dynamics_model": ("robot_dynamics.nodes.dynamics_model", "the dynamics monitor node"),
    "derive": ("robot_dynamics.formulations.cli", "equations of motion, symbolic"),
    "identify": ("robot_dynamics.identification.cli", "fit friction laws to a recorded run"),
}
NODES = {"simulator", "id_controller", "dynamics_model"}


def usage() -> str:
    lines = ["usage: robot-dynamics <command> [args]", "", "commands:"]
    lines += [f"  {name:<15} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"robot-dynamics: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(COMMANDS[name][0])
    except ImportError as exc:
        print(f"robot-dynamics {name}: cannot start ({exc}); for the ROS nodes install the "
              "ROS 2 wheels: pip install 'robot_dynamics[ros]'", file=sys.stderr)
        return 1
    if name in NODES:
        module.main(args=[sys.argv[0]] + rest)
        return 0
    result = module.main(rest)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
