"""Actuators: gear ratio, rotor inertia, gear-mesh efficiency, motor limits and motor friction
per joint, from a YAML file or mapping beside the friction config.

Structure (the same in YAML and in Python)::

    default: {efficiency_forward: 0.85, efficiency_backward: 0.8}   # every joint not listed
    joints:
      joint_a1:
        gear_ratio: 160            # N; absent: the URDF <transmission> mechanicalReduction
        rotor_inertia: 1.4e-4      # J_rotor [kg·m²] on the motor shaft → armature N²·J
        # armature: 3.6            # or the reflected inertia [kg·m²] directly
        efficiency_forward: 0.82   # η_f: motor drives the load (0 < η_f ≤ 1)
        efficiency_backward: 0.75  # η_b: load drives the motor (≤ 0: self-locking)
        # mesh: 0.2                # or one mesh coefficient (c_f = c_b = mesh)
        # mesh_forward: 0.25       # or c_f = 1/η_f − 1 and c_b = 1 − η_b directly, e.g. the
        # mesh_backward: 0.3       #   identification's FitResult.actuators (with armature)
        motor_torque_limit: 2.0    # motor-side peak torque [N·m] → joint effort limit N·τ_max
        motor_coulomb: 0.02        # motor-side Coulomb friction [N·m] → N·τc at the joint
        motor_viscous: 2.0e-5      # motor-side viscous [N·m·s/rad] → N²·b at the joint
      joint_a7: none               # no actuator model for this joint

A joint without an entry (and no ``default``) has no actuator model: armature 0, no gear or
motor friction, the URDF effort limit. Prismatic joints read the same fields in their own units
(N, kg, N·s/m; the gear ratio of a screw in rad/m).

:func:`actuators_from_config` returns :class:`Actuators`: ``armature`` (nv,), ``effort_limits``
(nv,, the URDF limit combined with ``N·motor_torque_limit`` by min), ``friction(base)`` (the
friction model of :func:`~robot_dynamics.friction.friction_from_config` with each joint's gear
mesh and reflected motor friction added as the parts ``gear_mesh`` and ``motor`` of a
:class:`~robot_dynamics.friction.composite.CompositeFriction`; the base law is the part
``bearing``), and ``apply(model)`` (sets ``model.armature`` and ``model.effort_limits``).
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import math
from dataclasses import dataclass

import numpy as np

from robot_dynamics.parsers.config_files import joint_entries, load_mapping
from robot_dynamics.errors import ModelError
from robot_dynamics.multibody.coupling import MimicModel

FIELDS = ("gear_ratio", "rotor_inertia", "armature", "efficiency_forward", "efficiency_backward",
          "mesh", "mesh_forward", "mesh_backward", "motor_torque_limit", "motor_coulomb",
          "motor_viscous")
#: fields that are motor-side quantities and need the gear ratio to reach the joint
_NEED_RATIO = ("rotor_inertia", "motor_torque_limit", "motor_coulomb", "motor_viscous")


@dataclass(frozen=True)
class Actuator:
    """One joint's actuator (joint-side values already reflected through the gear ratio)."""

    gear_ratio: float = math.nan  # N (nan: not given and not in the URDF)
    armature: float = 0.0  # N²·J_rotor [kg·m²]
    gear: object = None  # GearMeshFriction, or None (an ideal gear)
    effort_limit: float = math.inf  # N·motor_torque_limit [N·m]
    coulomb: float = 0.0  # N·τc [N·m]
    viscous: float = 0.0  # N²·b [N·m·s/rad]

    def friction_parts(self) -> dict:
        """The joint-side friction laws this actuator adds: {'gear_mesh': …, 'motor': …}."""
        from robot_dynamics.friction.classic import ClassicFriction

        parts = {}
        if self.gear is not None:
            parts["gear_mesh"] = self.gear
        if self.coulomb > 0 or self.viscous > 0:
            parts["motor"] = ClassicFriction(self.coulomb, self.viscous)
        return parts


class Actuators:
    """The actuator of every joint of a model (None where there is none)."""

    def __init__(self, model, actuators, source="actuators config"):
        self.joint_names = list(model.joint_names)
        self.actuators = list(actuators)
        self.source = source
        self._model = model
        self.armature = np.array([0.0 if a is None else a.armature for a in self.actuators])
        urdf = np.asarray(model.effort_limits, dtype=float)
        urdf = np.where(urdf > 0, urdf, np.inf)  # inf / non-positive: no URDF limit
        motor = np.array([math.inf if a is None else a.effort_limit for a in self.actuators])
        self.effort_limits = np.minimum(urdf, motor)
        self.armature.setflags(write=False)
        self.effort_limits.setflags(write=False)

    def __getitem__(self, joint):
        return self.actuators[self.joint_names.index(joint)]

    @property
    def any(self) -> bool:
        return any(a is not None for a in self.actuators)

    def friction(self, base=None):
        """A FrictionModel: ``base`` (a FrictionModel of the same model, or None) with each
        joint's gear-mesh and motor friction added (parts ``gear_mesh``, ``motor``)."""
        from robot_dynamics.friction.composite import combine
        from robot_dynamics.friction.model import FrictionModel
        from robot_dynamics.friction.none import NoFriction

        model = self._model
        if base is not None and list(base.joint_names) != self.joint_names:
            raise ModelError(f"{self.source}: friction model for joints {base.joint_names}, "
                             f"actuators for {self.joint_names}")
        laws = list(base.laws) if base is not None else [NoFriction()] * len(self.joint_names)
        out = []
        for name, law, act in zip(self.joint_names, laws, self.actuators):
            if act is None:
                out.append(law)
                continue
            try:
                out.append(combine(law, act.friction_parts()))
            except ValueError as exc:
                raise ModelError(f"{self.source}: joint {name!r}: {exc}") from None
        return FrictionModel(self.joint_names, out, model)

    def apply(self, model=None):
        """Set ``model.armature`` and ``model.effort_limits`` (the combined limits) on the
        model the actuators were built for (or one with the same joints). Returns the model."""
        model = self._model if model is None else model
        if list(model.joint_names) != self.joint_names:
            raise ModelError(f"{self.source}: actuators for joints {self.joint_names}, model "
                             f"{model.name!r} has {list(model.joint_names)}")
        model.armature = self.armature
        limits = self.effort_limits.copy()
        limits.setflags(write=False)
        model.effort_limits = limits
        return model

    def to_config(self) -> dict:
        """The mapping that rebuilds these actuators (joint-side values: armature, efficiencies
        and the reflected limits/friction with gear_ratio 1 where no ratio was given)."""
        joints = {}
        for name, a in zip(self.joint_names, self.actuators):
            if a is None:
                joints[name] = "none"
                continue
            n = a.gear_ratio if math.isfinite(a.gear_ratio) else 1.0
            entry = {"gear_ratio": float(n), "armature": float(a.armature)}
            if a.gear is not None:
                entry.update({k: v for k, v in a.gear.to_config().items() if k != "model"})
            if math.isfinite(a.effort_limit):
                entry["motor_torque_limit"] = float(a.effort_limit / abs(n))
            if a.coulomb:
                entry["motor_coulomb"] = float(a.coulomb / abs(n))
            if a.viscous:
                entry["motor_viscous"] = float(a.viscous / (n * n))
            joints[name] = entry
        return {"joints": joints}

    def __repr__(self) -> str:
        return f"Actuators({dict(zip(self.joint_names, self.actuators))})"


def _number(entry, key, where, *, low=None, low_open=False, high=None):
    value = entry[key]
    if isinstance(value, bool):
        raise ModelError(f"{where}: field {key!r} must be a number, got {value!r}")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: field {key!r} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise ModelError(f"{where}: field {key!r} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ModelError(f"{where}: field {key!r} must be {'>' if low_open else '>='} {low:g}, "
                         f"got {value:g}")
    if high is not None and value > high:
        raise ModelError(f"{where}: field {key!r} must be <= {high:g}, got {value:g}")
    return value


def _actuator(entry, where, urdf_ratio):
    if entry is None or entry == "none" or entry == {"model": "none"}:
        return None
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected a mapping of actuator fields or 'none', got "
                         f"{entry!r}")
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise ModelError(f"{where}: unknown field(s) {unknown}; allowed: {sorted(FIELDS)}")
    for a, b in (("rotor_inertia", "armature"), ("mesh", "efficiency_forward"),
                 ("mesh", "efficiency_backward"), ("mesh_forward", "mesh"),
                 ("mesh_forward", "efficiency_forward"), ("mesh_backward", "mesh"),
                 ("mesh_backward", "efficiency_forward")):
        if a in entry and b in entry:
            raise ModelError(f"{where}: give field {a!r} or field {b!r}, not both")
    if "efficiency_backward" in entry and "efficiency_forward" not in entry:
        raise ModelError(f"{where}: field 'efficiency_backward' needs field "
                         "'efficiency_forward'")
    if "gear_ratio" in entry:
        ratio = _number(entry, "gear_ratio", where)
        if ratio == 0:
            raise ModelError(f"{where}: field 'gear_ratio' must be non-zero, got 0")
    else:
        ratio = urdf_ratio
    needs = [k for k in _NEED_RATIO if k in entry]
    if needs and not (math.isfinite(ratio) and ratio != 0):
        raise ModelError(f"{where}: field {needs[0]!r} is motor-side and needs field "
                         "'gear_ratio' (none given, and no URDF <transmission> "
                         "mechanicalReduction for this joint)")
    n = abs(ratio)
    armature = 0.0
    if "rotor_inertia" in entry:
        armature = n * n * _number(entry, "rotor_inertia", where, low=0.0)
    elif "armature" in entry:
        armature = _number(entry, "armature", where, low=0.0)
    gear = None
    if "mesh_forward" in entry or "mesh_backward" in entry:  # c_f, c_b (identification's)
        from robot_dynamics.friction.gear_mesh import GearMeshFriction

        gear = GearMeshFriction(
            mesh_forward=_number(entry, "mesh_forward", where, low=0.0)
            if "mesh_forward" in entry else 0.0,
            mesh_backward=_number(entry, "mesh_backward", where, low=0.0)
            if "mesh_backward" in entry else 0.0)
    elif "mesh" in entry or "efficiency_forward" in entry:
        from robot_dynamics.friction.gear_mesh import GearMeshFriction

        if "mesh" in entry:
            gear = GearMeshFriction(mesh=_number(entry, "mesh", where, low=0.0))
        else:
            ef = _number(entry, "efficiency_forward", where, low=0.0, low_open=True, high=1.0)
            eb = (_number(entry, "efficiency_backward", where, high=1.0)
                  if "efficiency_backward" in entry else ef)
            gear = GearMeshFriction(ef, eb)
    limit = math.inf
    if "motor_torque_limit" in entry:
        limit = n * _number(entry, "motor_torque_limit", where, low=0.0, low_open=True)
    coulomb = n * _number(entry, "motor_coulomb", where, low=0.0) if "motor_coulomb" in entry \
        else 0.0
    viscous = n * n * _number(entry, "motor_viscous", where, low=0.0) \
        if "motor_viscous" in entry else 0.0
    return Actuator(ratio, armature, gear, limit, coulomb, viscous)


def actuators_from_config(config, model) -> Actuators:
    """:class:`Actuators` for ``model`` from a mapping or a YAML file path (see the module
    docstring); errors are one line naming the file, joint and field."""
    return _from_config(model, config)


@by_model
def _from_config(model, config) -> Actuators:
    config, source = load_mapping(config, "actuators")
    if config is None or config == "none":
        config = {}
    ratios = np.asarray(getattr(model, "mechanical_reduction",
                                np.full(model.nv, np.nan)), dtype=float)
    out = [None if entry is None else _actuator(entry, where, ratios[i])
           for i, (entry, where) in enumerate(joint_entries(config, source, model, "actuators"))]
    return Actuators(model, out, source)


@_from_config.register(MimicModel)
def _(model, config):
    raise ModelError(f"actuators: robot {model.name!r} has mimic joints; actuator models are "
                     "supported on models without them (load_urdf(..., mimic=False))")


def load_actuators(path, model, friction=None):
    """The start-up step of the nodes and the CLI: ``path`` ('' or 'none': nothing) → apply
    the actuators to ``model`` and return ``(actuators or None, friction)`` with the actuators'
    gear and motor friction added to ``friction`` (a FrictionModel or None)."""
    if path is None or str(path).strip().lower() in ("", "none"):
        return None, friction
    act = actuators_from_config(str(path), model)
    act.apply(model)
    if not any(a is not None and a.friction_parts() for a in act.actuators):
        return act, friction
    return act, act.friction(friction)
