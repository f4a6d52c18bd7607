"""Joint friction laws (seed 004 §2.5), pluggable: see :func:`register_law`."""
from .base import FrictionLaw
from .bearing import BearingFriction
from .callable_law import CallableFriction
from .classic import ClassicFriction
from .composite import CompositeFriction
from .components import LoadComponents, load_components
from .config import friction_from_config, known_laws, law_from_config, register_law
from .gear_mesh import GearMeshFriction
from .load_dependent import LoadDependentFriction
from .model import FrictionModel
from .none import NoFriction

__all__ = ["FrictionLaw", "BearingFriction", "CallableFriction", "ClassicFriction",
           "CompositeFriction", "GearMeshFriction",
           "LoadComponents", "load_components", "friction_from_config", "known_laws",
           "law_from_config", "register_law", "LoadDependentFriction", "FrictionModel",
           "NoFriction"]
