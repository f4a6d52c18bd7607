"""robot_dynamics — manipulator dynamics with reaction-dependent joint friction (seed 004).

Layers as folders (docs/ARCHITECTURE.md): only ``ros`` and ``cli`` import ROS.

The public names below are imported on first use (PEP 562), so ``import robot_dynamics`` — and
``robot-dynamics --help`` — does not load numba and the compiled kernels until something needs
them. ``from robot_dynamics import rnea`` and ``robot_dynamics.rnea`` work as usual.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name → module that defines it
_EXPORTS = {
    "Actuators": "friction.actuators", "actuators_from_config": "friction.actuators",
    "bias_forces": "algorithm.crba", "coriolis_torques": "algorithm.crba",
    "gravity_torques": "algorithm.crba", "mass_matrix": "algorithm.crba",
    "wrench_directors": "algorithm.directors",
    "InputError": "errors", "MismatchError": "errors", "ModelError": "errors",
    "forward_dynamics": "algorithm.forward_dynamics",
    "FrictionModel": "friction", "friction_from_config": "friction", "register_law": "friction",
    "inverse_dynamics": "algorithm.inverse_dynamics",
    "forward_kinematics": "algorithm.kinematics", "frame_placement": "algorithm.kinematics",
    "Data": "multibody.model", "Model": "multibody.model", "build_model": "multibody.build",
    "joint_wrenches": "algorithm.rnea", "rnea": "algorithm.rnea",
    "point_force": "algorithm.external", "sensor_wrench": "algorithm.external",
    "SimulationError": "simulation.simulator", "Simulator": "simulation.simulator",
    "PlaneContact": "simulation.contact",
    "Plant": "simulation.rollouts", "RolloutSpec": "simulation.rollouts",
    "run_rollouts": "simulation.rollouts", "sweep": "simulation.sweep",
    "PD": "control.controllers", "ComputedTorque": "control.controllers",
    "FrictionSolveError": "algorithm.friction_solve",
    "FrictionSolveReport": "algorithm.friction_solve",
    "load_urdf": "parsers.urdf", "parse_urdf": "parsers.urdf",
    "payload_from_config": "parsers.payload",
}
__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'robot_dynamics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # next time a plain attribute
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
