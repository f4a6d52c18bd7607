"""Gear-mesh friction: a loss proportional to the torque the gear transmits, different when the
motor drives the load than when the load drives the motor.

The transmitted torque is the axial part of the joint wrench, ``n∥ = n·e`` (revolute; ``f∥ = f·e``
for a prismatic joint driven by a screw): the effort the joint passes on to its child link
(seed 004 §2.4, J∥; after ``rnea``, frictionless ID's τ). With ``d`` the sign of motion:

* motoring, ``n∥·d > 0`` (power flows from the motor to the load): ``τ_motor = n∥ / η_f``, i.e.
  ``|τf| = c_f |n∥|`` with ``c_f = 1/η_f − 1``;
* back-driven, ``n∥·d < 0`` (the load drives the motor): ``τ_motor = η_b n∥``, i.e.
  ``|τf| = c_b |n∥|`` with ``c_b = 1 − η_b``.

(The recursions' ``τ_motor = fn∥ − τf`` with ``τf = −|τf|·d``, eq. 2.7.5, gives exactly these.)
``η_b ≤ 0`` (``c_b ≥ 1``) is a **self-locking** gear (a worm gear of small lead angle): at rest the
breakaway bound ``c_b |n∥|`` is at least the effort that holds the load, so it holds its load with
no motor torque; it is lowered only by driving the motor in the direction of motion
(``τ_motor = η_b n∥``, of the sign of the motion). A joint at rest holds any motor effort in the
band ``η_b n∥ ≤ τ_motor ≤ n∥/η_f`` (``n∥ > 0``; mirrored for ``n∥ < 0``).

``mesh: μ`` is the symmetric form, ``c_f = c_b = μ`` (``η_f = 1/(1+μ)``, ``η_b = 1 − μ``);
``mesh_forward``/``mesh_backward`` give ``c_f``/``c_b`` directly (the coefficients
``robot_dynamics.identification`` fits, ``FitResult.actuators``). With the direction unknown
(``d = 0``) the smaller of the two coefficients applies.

The loss is on the load-side torque n∥: a rotor inertia on the motor side (``model.armature``)
and motor-side friction act before the mesh and are not part of it (see
:mod:`robot_dynamics.friction.actuators`, :class:`~robot_dynamics.friction.composite.CompositeFriction`).
Forward dynamics solves ``n∥ = τ_motor + τf(n∥)`` inside the stick/slip solve
(:mod:`robot_dynamics.algorithm.friction_solve`); its successive approximation contracts at the rate
``c·M_link/(M_link + armature)`` per joint, and where that is ≥ 1 the Newton fallback solves
the piecewise-linear equation (docs/ARCHITECTURE.md, "Gear-mesh friction in the solve").
"""
from __future__ import annotations

import math

from robot_dynamics.friction.base import FrictionLaw, direction_of


class GearMeshFriction(FrictionLaw):
    name = "gear_mesh"

    def __init__(self, efficiency_forward=None, efficiency_backward=None, mesh=None,
                 mesh_forward=None, mesh_backward=None):
        self.split = mesh_forward is not None or mesh_backward is not None
        if self.split:
            if mesh is not None or efficiency_forward is not None or \
                    efficiency_backward is not None:
                raise ValueError("give 'mesh_forward'/'mesh_backward', 'mesh' or the "
                                 "efficiencies, not several")
            cf, cb = float(mesh_forward or 0.0), float(mesh_backward or 0.0)
            for key, c in (("mesh_forward", cf), ("mesh_backward", cb)):
                if not (math.isfinite(c) and c >= 0):
                    raise ValueError(f"field {key!r} must be a finite number >= 0, got {c}")
            self.c_forward, self.c_backward, self.mesh = cf, cb, None
            return
        if mesh is not None:
            if efficiency_forward is not None or efficiency_backward is not None:
                raise ValueError("give either 'mesh' or the efficiencies, not both")
            mesh = float(mesh)
            if not (math.isfinite(mesh) and mesh >= 0):
                raise ValueError(f"field 'mesh' must be a finite number >= 0, got {mesh}")
            self.c_forward = self.c_backward = mesh
            self.mesh = mesh
            return
        self.mesh = None
        if efficiency_forward is None:
            raise ValueError("missing field 'efficiency_forward' (or 'mesh')")
        ef = float(efficiency_forward)
        eb = ef if efficiency_backward is None else float(efficiency_backward)
        if not (math.isfinite(ef) and 0.0 < ef <= 1.0):
            raise ValueError(f"field 'efficiency_forward' must be in (0, 1], got {ef}")
        if not (math.isfinite(eb) and eb <= 1.0):
            raise ValueError(f"field 'efficiency_backward' must be <= 1 (<= 0: self-locking), "
                             f"got {eb}")
        self.c_forward = 1.0 / ef - 1.0
        self.c_backward = 1.0 - eb

    @property
    def efficiency_forward(self) -> float:
        return 1.0 / (1.0 + self.c_forward)

    @property
    def efficiency_backward(self) -> float:
        return 1.0 - self.c_backward

    @property
    def self_locking(self) -> bool:
        return self.c_backward >= 1.0

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        if prismatic:
            t = wrench[0] * axis[0] + wrench[1] * axis[1] + wrench[2] * axis[2]
        else:
            t = wrench[3] * axis[0] + wrench[4] * axis[1] + wrench[5] * axis[2]
        t = float(t)
        d = direction_of(qd, direction)
        if d == 0.0:
            c = min(self.c_forward, self.c_backward)
        else:
            c = self.c_forward if t * d > 0 else self.c_backward
        return c * abs(t)

    def to_config(self) -> dict:
        if self.split:
            return {"model": "gear_mesh", "mesh_forward": self.c_forward,
                    "mesh_backward": self.c_backward}
        if self.mesh is not None:
            return {"model": "gear_mesh", "mesh": self.mesh}
        return {"model": "gear_mesh", "efficiency_forward": self.efficiency_forward,
                "efficiency_backward": self.efficiency_backward}
