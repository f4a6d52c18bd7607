"""Friction laws from a mapping or a YAML file, and the registry that makes laws pluggable.

Structure (the same in YAML and in Python)::

    default: {model: load_dependent, coulomb: 0.3, viscous: 0.05, k1: 0.02, k2: 0.002, k3: 0.001}
    joints:
      panda_joint1: {model: classic, coulomb: 0.5, viscous: 0.1,
                     stribeck: {static: 0.7, velocity: 0.02}}

``default`` applies to every joint not listed (no default: no friction there). Adding a law is
``register_law("name", factory)`` with ``factory(params: dict, joint: str) -> FrictionLaw``; the
recursions never change.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

from robot_dynamics.parsers.config_files import joint_entries, load_mapping
from robot_dynamics.errors import ModelError
from robot_dynamics.friction.bearing import BearingFriction
from robot_dynamics.friction.callable_law import CallableFriction
from robot_dynamics.friction.classic import ClassicFriction
from robot_dynamics.friction.composite import CompositeFriction
from robot_dynamics.friction.coupled import coupled_friction
from robot_dynamics.friction.gear_mesh import GearMeshFriction
from robot_dynamics.friction.load_dependent import FORMS, LoadDependentFriction
from robot_dynamics.friction.model import FrictionModel
from robot_dynamics.friction.none import NoFriction
from robot_dynamics.multibody.coupling import MimicModel

_REGISTRY = {}


def register_law(name: str, factory) -> None:
    """Make ``model: name`` available in friction configs."""
    if not callable(factory):
        raise TypeError("factory must be callable(params, joint) -> FrictionLaw")
    _REGISTRY[name] = factory


def known_laws():
    return sorted(_REGISTRY)


class _Fields:
    """Reads one config entry, naming the joint and field in every error."""

    def __init__(self, params: dict, where: str, allowed):
        unknown = sorted(set(params) - set(allowed) - {"model"})
        if unknown:
            raise ModelError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(allowed)}")
        self.params, self.where = params, where

    def number(self, key, default=None, *, positive=False, signed=False):
        if key not in self.params:
            if default is None:
                raise ModelError(f"{self.where}: missing field {key!r}")
            return default
        value = self.params[key]
        if callable(value):
            return value  # function of (q, q̇), allowed through the Python API
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ModelError(f"{self.where}: field {key!r} must be a number, got {value!r}") from None
        if not value == value or value in (float("inf"), float("-inf")):
            raise ModelError(f"{self.where}: field {key!r} must be finite, got {value}")
        if signed:
            return value
        if value < 0 or (positive and value == 0):
            raise ModelError(f"{self.where}: field {key!r} must be {'> 0' if positive else '>= 0'}"
                             f", got {value}")
        return value

    def stribeck(self):
        s = self.params.get("stribeck")
        if s is None:
            return None
        if not isinstance(s, dict):
            raise ModelError(f"{self.where}: field 'stribeck' must be a mapping {{static, velocity}}")
        sub = _Fields(s, self.where + ".stribeck", ("static", "velocity"))
        return {"static": sub.number("static"), "velocity": sub.number("velocity", positive=True)}


def _classic(params, where):
    r = _Fields(params, where, ("coulomb", "viscous", "stribeck", "coulomb_positive",
                                "coulomb_negative"))
    asym = "coulomb_positive" in params or "coulomb_negative" in params
    coulomb = r.number("coulomb", 0.0 if asym else None)
    return ClassicFriction(coulomb, r.number("viscous", 0.0), r.stribeck(),
                           r.number("coulomb_positive", coulomb) if asym else None,
                           r.number("coulomb_negative", coulomb) if asym else None)


def _load_dependent(params, where):
    r = _Fields(params, where, ("coulomb", "viscous", "k1", "k2", "k3", "form"))
    form = str(params.get("form", "2.5.6"))
    if form not in FORMS:
        raise ModelError(f"{where}: field 'form' must be one of {FORMS}, got {form!r}")
    return LoadDependentFriction(r.number("coulomb"), r.number("viscous", 0.0), r.number("k1", 0.0),
                                 r.number("k2", 0.0), r.number("k3", 0.0), form)


def _bearing(params, where):
    r = _Fields(params, where, ("mu", "pin_radius", "friction_arm", "bending_arm", "preload",
                                "stribeck"))
    bending = r.number("bending_arm", None, positive=True) if "bending_arm" in params else None
    return BearingFriction(r.number("mu"), r.number("pin_radius"), r.number("friction_arm", 0.0),
                           bending, r.number("preload", 0.0), r.stribeck())


def _gear_mesh(params, where):
    r = _Fields(params, where, ("efficiency_forward", "efficiency_backward", "mesh",
                                "mesh_forward", "mesh_backward"))
    split = [k for k in ("mesh_forward", "mesh_backward") if k in params]
    if split:
        other = [k for k in ("mesh", "efficiency_forward", "efficiency_backward") if k in params]
        if other:
            raise ModelError(f"{where}: give field {split[0]!r} or field {other[0]!r}, not both")
        return GearMeshFriction(mesh_forward=r.number("mesh_forward", 0.0),
                                mesh_backward=r.number("mesh_backward", 0.0))
    if "mesh" in params:
        if "efficiency_forward" in params or "efficiency_backward" in params:
            raise ModelError(f"{where}: give either field 'mesh' or the fields "
                             "'efficiency_forward'/'efficiency_backward', not both")
        return GearMeshFriction(mesh=r.number("mesh"))
    ef = r.number("efficiency_forward", positive=True)
    if ef > 1:
        raise ModelError(f"{where}: field 'efficiency_forward' must be in (0, 1], got {ef}")
    eb = r.number("efficiency_backward", ef, signed=True)
    if eb > 1:
        raise ModelError(f"{where}: field 'efficiency_backward' must be <= 1 (<= 0: "
                         f"self-locking), got {eb}")
    return GearMeshFriction(ef, eb)


def _composite(params, where):
    _Fields(params, where, ("parts",))
    parts = params.get("parts")
    if not isinstance(parts, dict) or not parts:
        raise ModelError(f"{where}: field 'parts' must map part names to laws, e.g. "
                         "{bearing: {model: bearing, ...}, gear_mesh: {model: gear_mesh, ...}}")
    laws = {}
    for name, entry in parts.items():
        sub = f"{where}.parts.{name}"
        if isinstance(entry, dict) and entry.get("model") == "composite":
            raise ModelError(f"{sub}: a composite part cannot be composite itself")
        laws[str(name)] = law_from_config(entry, sub)
    return CompositeFriction(laws)


def _none(params, where):
    _Fields(params, where, ())
    return NoFriction()


def _callable(params, where):
    _Fields(params, where, ("function",))
    if "function" not in params:
        raise ModelError(f"{where}: missing field 'function' (a Python callable)")
    return CallableFriction(params["function"], where)


for _name, _factory in (("none", _none), ("classic", _classic),
                        ("load_dependent", _load_dependent), ("bearing", _bearing),
                        ("callable", _callable), ("gear_mesh", _gear_mesh),
                        ("composite", _composite)):
    register_law(_name, _factory)


def law_from_config(params, where: str = "friction"):
    """One law from one config entry (``{model: ..., fields...}``)."""
    if not isinstance(params, dict):
        raise ModelError(f"{where}: expected a mapping with a 'model' field, got {params!r}")
    name = params.get("model")
    if name is None:
        raise ModelError(f"{where}: missing field 'model' (one of {known_laws()})")
    if name not in _REGISTRY:
        raise ModelError(f"{where}: unknown friction model {name!r}; known: {known_laws()}")
    try:
        return _REGISTRY[name](params, where)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"{where}: {exc}") from None


def friction_from_config(config, model) -> FrictionModel:
    """A :class:`FrictionModel` for ``model`` from a mapping, or a YAML file path (for a mimic
    model, a law per joint of its full tree seen from the coordinates: CoupledFriction)."""
    return _from_config(model, config)


@by_model
def _from_config(model, config) -> FrictionModel:
    config, source = load_mapping(config, "friction")
    laws = [NoFriction() if entry is None else law_from_config(entry, where)
            for entry, where in joint_entries(config, source, model, "laws")]
    return FrictionModel(model.joint_names, laws, model)


@_from_config.register(MimicModel)
def _(model, config):
    return coupled_friction(_from_config(model.full, config), model)
