"""robot_dynamics — manipulator dynamics with reaction-dependent joint friction (seed 004).

The core (this package minus ``nodes`` and ``cli``) imports no ROS. See docs/ARCHITECTURE.md.

The public names below are imported on first use (PEP 562), so ``import robot_dynamics`` — and
``robot-dynamics --help`` — does not load numba and the compiled kernels until something needs
them. ``from robot_dynamics import rnea`` and ``robot_dynamics.rnea`` work as usual.
"""
from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

#: public name → submodule that defines it
_EXPORTS = {
    "Actuators": "actuators", "actuators_from_config": "actuators",
    "bias_forces": "crba", "coriolis_torques": "crba", "gravity_torques": "crba",
    "mass_matrix": "crba",
    "wrench_directors": "directors",
    "InputError": "errors", "MismatchError": "errors", "ModelError": "errors",
    "forward_dynamics": "forward_dynamics",
    "FrictionModel": "friction", "friction_from_config": "friction", "register_law": "friction",
    "inverse_dynamics": "inverse_dynamics",
    "forward_kinematics": "kinematics", "frame_placement": "kinematics",
    "Data": "model", "Model": "model", "build_model": "model",
    "joint_wrenches": "rnea", "rnea": "rnea",
    "SimulationError": "simulation", "Simulator": "simulation",
    "PD": "rollout", "ComputedTorque": "rollout",
    "FrictionSolveError": "stiction", "FrictionSolveReport": "stiction",
    "load_urdf": "urdf", "parse_urdf": "urdf",
}
__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'robot_dynamics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # next time a plain attribute
    return value


class _Package(types.ModuleType):
    """Keeps ``robot_dynamics.rnea`` (and the other functions named after their module) the
    function: importing the submodule ``robot_dynamics.rnea`` sets the package attribute to the
    module, as the eager ``from .rnea import rnea`` used to override."""

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
