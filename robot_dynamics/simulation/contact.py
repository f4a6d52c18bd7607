"""State-dependent external efforts for the Simulator: compliant contacts (issue 32).

:class:`PlaneContact` — a point of a link against a plane (a table, a wall), a spring–damper
normal force that only pushes and a regularised Coulomb friction (the law:
:mod:`robot_dynamics.kernels.contact`, compiled; its readable twin
:mod:`robot_dynamics.reference.contact`). An instance is a callable ``(t, q, q̇) → fext``, so it
is what ``Simulator(..., external=contact)``, ``Simulator.step(tau, fext=contact)`` and
``Simulator.run(..., external=contact)`` take; several add up: ``contact_a + contact_b`` (or
:func:`total`, which also takes constant ``fext`` arrays and other callables).

Example: a tool tip 0.1 m below the link ``tool`` on a table at z = 0::

    table = PlaneContact(model, "tool", point=(0, 0, 0.1), plane_point=(0, 0, 0),
                         normal=(0, 0, 1), stiffness=1e5, damping=500.0, friction=0.4)
    sim = Simulator(model, external=table)

The contact is evaluated once per simulator step, at the step's start, and held over it (an
explicit contact force): the step must resolve its time scale, ``dt ≪ sqrt(m/k)`` and
``dt ≪ m/c`` for the mass m it moves, and ``dt ≪ m ε / (μ F_n)`` for the friction's slope.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from robot_dynamics.algorithm.external import _frame, _triple
from robot_dynamics.errors import InputError
from robot_dynamics.kernels.contact import plane_contact

_WHERE = "PlaneContact"


def _number(name, x, what, ok):
    if (isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real)
            or not math.isfinite(x) or not ok(x)):
        raise InputError(f"{name} in {_WHERE}: must be {what}, got {x!r}")
    return float(x)


class PlaneContact:
    """A point of ``link`` (``point``, in the link's frame) against the plane through
    ``plane_point`` with normal ``normal`` (world; pointing to the free side, normalised here).

    ``stiffness`` k [N/m] > 0, ``damping`` c [N·s/m] ≥ 0, ``friction`` μ ≥ 0, ``slip_velocity``
    ε [m/s] > 0 (the regularisation of Coulomb's law). After each call: ``normal_force``
    F_n [N], ``depth`` δ [m] (negative: separated), ``friction_force`` |f_t| [N].
    Mimic models: the link's body of the full tree (fext rows per body of ``model.full``).
    """

    def __init__(self, model, link, point=(0.0, 0.0, 0.0), plane_point=(0.0, 0.0, 0.0),
                 normal=(0.0, 0.0, 1.0), stiffness=1e5, damping=0.0, friction=0.0, *,
                 slip_velocity=1e-3):
        self.model = model
        self._full = model.full if model.coupling is not None else model
        body, T = _frame(model, link, _WHERE)
        if body < 0:
            raise InputError(f"link in {_WHERE}: {link!r} is fixed to the base: a contact on it "
                             "moves no joint")
        self.link, self.body = link, int(body)
        p = _triple("point", point, _WHERE)
        self.point_body = T[:3, :3] @ p + T[:3, 3]  # the point in the body's frame
        self.plane_point = _triple("plane_point", plane_point, _WHERE)
        n = _triple("normal", normal, _WHERE)
        norm = float(np.linalg.norm(n))
        if norm == 0.0:
            raise InputError(f"normal in {_WHERE}: must be a non-zero vector, got {n.tolist()}")
        self.normal = n / norm
        self.stiffness = _number("stiffness", stiffness, "a positive number [N/m]",
                                 lambda x: x > 0)
        self.damping = _number("damping", damping, "a number ≥ 0 [N·s/m]", lambda x: x >= 0)
        self.friction = _number("friction", friction, "a coefficient ≥ 0", lambda x: x >= 0)
        self.slip_velocity = _number("slip_velocity", slip_velocity,
                                     "a positive velocity [m/s]", lambda x: x > 0)
        self._data = self._full.create_data()
        self._out = np.zeros(3)
        self.normal_force = self.depth = self.friction_force = 0.0

    def wrench(self, q, v, fext=None) -> np.ndarray:
        """Add the contact's wrench at (q, q̇) to ``fext`` (a new zero array when None) and
        return it: (nv, 6), mimic models (``model.full.nv``, 6)."""
        from robot_dynamics.algorithm.kinematics import forward_kinematics
        from robot_dynamics.algorithm.rnea import rnea

        full, d = self._full, self._data
        if full is not self.model:
            q, v = self.model.expand(q), self.model.expand_velocity(v)
        q = np.ascontiguousarray(q, dtype=float)
        v = np.ascontiguousarray(v, dtype=float)
        forward_kinematics(full, d, q)
        rnea(full, d, q, v, np.zeros(full.nv))  # body twists, body frame: d.v
        out = np.zeros((full.nv, 6)) if fext is None else fext
        plane_contact(d.oMi, d.v, self.body, self.point_body, self.plane_point, self.normal,
                      self.stiffness, self.damping, self.friction, self.slip_velocity, out,
                      self._out)
        self.normal_force, self.depth, self.friction_force = (float(x) for x in self._out)
        return out

    def __call__(self, t, q, v) -> np.ndarray:
        return self.wrench(q, v)

    def __add__(self, other):
        return total(self, other)

    __radd__ = __add__


class _Total:
    """The sum of external efforts (callables of (t, q, q̇) and constant fext arrays)."""

    def __init__(self, parts):
        self.parts = parts

    def __call__(self, t, q, v):
        out = None
        for part in self.parts:
            f = part(t, q, v) if callable(part) else part
            out = np.array(f, dtype=float) if out is None else out + f
        return out

    def __add__(self, other):
        return total(self, other)

    __radd__ = __add__


def total(*efforts):
    """One callable ``(t, q, q̇) → fext`` summing ``efforts`` (contacts, other callables,
    constant fext arrays)."""
    parts = []
    for e in efforts:
        parts.extend(e.parts if isinstance(e, _Total) else [e])
    if not parts:
        raise InputError("total: give at least one external effort")
    return _Total(parts)
