"""Several friction laws on one joint: the magnitude is the sum of named parts.

A real joint loses in its bearings (the seed's load-dependent laws, §2.5), in its gear mesh
(:class:`~robot_dynamics.friction.gear_mesh.GearMeshFriction`, ∝ the transmitted torque) and in
its motor (Coulomb/viscous on the rotor, reflected through the gear ratio N as N·τc, N²·b).
Each part opposes the same relative velocity, so their magnitudes add:

    |τf| = Σ_k m_k(fn_i, q_i, q̇_i, d)

and the breakaway bound is the sum of the parts' bounds. :meth:`CompositeFriction.parts`
gives each part's magnitude, which the energy audit uses to split the friction dissipation
(:func:`robot_dynamics.algorithm.energy.split_friction_dissipation`). Config::

    joints:
      joint_a1: {model: composite, parts: {bearing: {model: bearing, mu: 0.004, pin_radius: 0.03},
                                           gear_mesh: {model: gear_mesh, efficiency_forward: 0.8,
                                                       efficiency_backward: 0.7},
                                           motor: {model: classic, coulomb: 5.0, viscous: 8.0}}}

Part names are free (``bearing``, ``gear_mesh``, ``motor`` are the ones the actuator model
uses); a part may not itself be composite (nested composites are flattened).
"""
from __future__ import annotations

from robot_dynamics.friction.base import FrictionLaw


#: the part name of a plain (non-composite) law in the loss split
def part_name(law) -> str:
    return "gear_mesh" if law.name == "gear_mesh" else "bearing"


class CompositeFriction(FrictionLaw):
    name = "composite"

    def __init__(self, parts):
        items = list(parts.items()) if isinstance(parts, dict) else list(parts)
        flat = []
        for name, law in items:
            if isinstance(law, CompositeFriction):
                flat.extend(law.named_parts)
            else:
                flat.append((str(name), law))
        if not flat:
            raise ValueError("a composite law needs at least one part")
        names = [n for n, _ in flat]
        if len(set(names)) != len(names):
            raise ValueError(f"composite law: duplicate part names {names}")
        for name, law in flat:
            if not isinstance(law, FrictionLaw):
                raise ValueError(f"composite part {name!r}: {law!r} is not a FrictionLaw")
        self.named_parts = flat

    @property
    def part_names(self):
        return [n for n, _ in self.named_parts]

    def parts(self, wrench, axis, prismatic, q, qd, direction=0.0):
        """Each part's magnitude (list, in ``part_names`` order)."""
        return [law.magnitude(wrench, axis, prismatic, q, qd, direction)
                for _, law in self.named_parts]

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        return float(sum(self.parts(wrench, axis, prismatic, q, qd, direction)))

    def breakaway(self, wrench, axis, prismatic, q, direction=0.0) -> float:
        return float(sum(law.breakaway(wrench, axis, prismatic, q, direction)
                         for _, law in self.named_parts))

    def to_config(self) -> dict:
        return {"model": "composite",
                "parts": {name: law.to_config() for name, law in self.named_parts}}


def combine(base, extra) -> FrictionLaw:
    """``base`` plus the named laws ``extra`` ({name: law}) on one joint: ``base`` alone when
    ``extra`` is empty; a plain ``base`` becomes the part :func:`part_name` (``bearing``), a
    :class:`~robot_dynamics.friction.none.NoFriction` base is dropped."""
    extra = {k: v for k, v in extra.items() if v.name != "none"}
    if not extra:
        return base
    parts = []
    if isinstance(base, CompositeFriction):
        parts.extend(base.named_parts)
    elif base.name != "none":
        parts.append((part_name(base), base))
    taken = {n for n, _ in parts}
    for name, law in extra.items():
        if name in taken:
            raise ValueError(f"part {name!r} is already in the joint's friction law")
        parts.append((name, law))
    if len(parts) == 1 and parts[0][0] == part_name(parts[0][1]):
        return parts[0][1]
    return CompositeFriction(parts)
