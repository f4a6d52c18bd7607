"""Joint friction laws (seed 004 §2.5), pluggable: see :func:`register_law`."""
from robot_dynamics.friction.base import FrictionLaw
from robot_dynamics.friction.bearing import BearingFriction
from robot_dynamics.friction.callable_law import CallableFriction
from robot_dynamics.friction.classic import ClassicFriction
from robot_dynamics.friction.composite import CompositeFriction
from robot_dynamics.friction.components import LoadComponents, load_components
from robot_dynamics.friction.config import (friction_from_config, known_laws, law_from_config,
    register_law)
from robot_dynamics.friction.gear_mesh import GearMeshFriction
from robot_dynamics.friction.load_dependent import LoadDependentFriction
from robot_dynamics.friction.model import FrictionModel
from robot_dynamics.friction.none import NoFriction

__all__ = ["FrictionLaw", "BearingFriction", "CallableFriction", "ClassicFriction",
           "CompositeFriction", "GearMeshFriction",
           "LoadComponents", "load_components", "friction_from_config", "known_laws",
           "law_from_config", "register_law", "LoadDependentFriction", "FrictionModel",
           "NoFriction"]
