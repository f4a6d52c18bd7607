"""Redundant coordinates and the Gibbs–Appell equations (seeds 000 and 001; docs/method.md §4), SymPy.

Coordinates, for a serial mechanism of n bodies:

* ``q#`` — the n joint coordinates; ``q°`` — the 3n CoM coordinates in the canonical frame;
  ``φ(q) = q° − (CoM positions from the homogeneous transforms H_{B_i/can}) = 0``;
* ``p`` — all components of each body's angular velocity and CoM velocity **in its own body
  frame** B_i (ω_xi, ω_yi, ω_zi, v_xi, v_yi, v_zi); ``p#`` — one component per joint (the one
  equal to the joint rate: ω along a revolute axis, the CoM velocity along a prismatic axis), in
  the order given; ``p°`` — the others, angular ones first (the seed's ordering);
* ``p# = Ψ q̇#``, ``p° = Υ q̇#`` (both linear in q̇#) and ``Λ(q, p) = p° − Υ Ψ⁻¹ p# = 0``.

Gibbs–Appell: the acceleration energy of each body,
``S = ½ m a_G·a_G + ½ ω̇·I ω̇ + ω̇·(ω × I ω)`` (+ terms free of ω̇), summed; the equations of
motion are ``∂S/∂ṗ#_k = Π_k``, the generalised active force along p#_k (actuators and gravity).
Lagrange's and Kane's equations on the same coordinates are in :func:`lagrange_equations` and
:func:`kane_equations`; all three agree with the core's Newton–Euler (tests).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp


def rot(axis: str, angle):
    c, s = sp.cos(angle), sp.sin(angle)
    return {"x": sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]]),
            "y": sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
            "z": sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]


def homogeneous(R, p):
    H = sp.eye(4)
    H[:3, :3] = R
    H[:3, 3] = sp.Matrix(p)
    return H


@dataclass
class Body:
    """One body: H (its frame in the parent body's frame, symbolic in q#), CoM in its own frame,
    mass and inertia about the CoM in its own frame."""
    name: str
    H: sp.Matrix
    com: sp.Matrix
    mass: object
    inertia: sp.Matrix


class RedundantSystem:
    """The seed's redundant description of a serial mechanism, built symbolically."""

    def __init__(self, bodies, q, p_sharp, gravity=(0, 0, -sp.Symbol("g")), t=None):
        self.bodies = bodies
        self.t = t or sp.Symbol("t")
        self.q = list(q)  # q# symbols
        self.n = len(q)
        self.qd = [sp.Symbol(f"{s.name}_dot") for s in self.q]
        self.qdd = [sp.Symbol(f"{s.name}_ddot") for s in self.q]
        self.g = sp.Matrix(gravity)
        self.p_sharp_spec = list(p_sharp)  # (body index, component name) per joint
        self._kinematics()

    # -- kinematics -----------------------------------------------------------------------
    def _time(self, expr):
        """d/dt of an expression in q, q̇ (chain rule)."""
        return sum((sp.diff(expr, q) * qd for q, qd in zip(self.q, self.qd)), sp.S(0)) + sum(
            (sp.diff(expr, qd) * qdd for qd, qdd in zip(self.qd, self.qdd)), sp.S(0))

    def _kinematics(self):
        H = sp.eye(4)
        self.H_can, self.com_can, self.omega_b, self.v_b = [], [], [], []
        for b in self.bodies:
            H = H * b.H
            self.H_can.append(sp.simplify(H))
            R = H[:3, :3]
            c = (H * sp.Matrix([*b.com, 1]))[:3, 0]
            self.com_can.append(sp.simplify(c))
            Rdot = R.applyfunc(self._time)
            W = sp.simplify(R.T * Rdot)  # [ω]× in the body frame
            self.omega_b.append(sp.Matrix([W[2, 1], W[0, 2], W[1, 0]]))
            vc = c.applyfunc(self._time)
            self.v_b.append(sp.simplify(R.T * vc))
        names = []
        values = []
        for i in range(len(self.bodies)):
            for k, axis in enumerate("xyz"):
                names.append((i, f"omega_{axis}"))
                values.append(self.omega_b[i][k])
        for i in range(len(self.bodies)):
            for k, axis in enumerate("xyz"):
                names.append((i, f"v_{axis}"))
                values.append(self.v_b[i][k])
        self.p_names = names  # all of p, seed order: angular of every body, then linear
        self.P_all = dict(zip(names, values))
        sharp = [(b, comp) for b, comp in self.p_sharp_spec]
        self.p_sharp_names = sharp
        self.p_circ_names = [nm for nm in names if nm not in sharp]
        self.P_sharp = sp.Matrix([self.P_all[nm] for nm in sharp])
        self.P_circ = sp.Matrix([self.P_all[nm] for nm in self.p_circ_names])
        self.Psi = sp.simplify(self.P_sharp.jacobian(self.qd))
        self.Upsilon = sp.simplify(self.P_circ.jacobian(self.qd))

    @property
    def q_circ(self):
        return sp.Matrix([sp.Symbol(f"{a}{i + 1}") for i in range(len(self.bodies)) for a in "xyz"])

    @property
    def phi(self):
        """Position constraints φ(q) (3n rows): q° minus the CoM positions from the H matrices."""
        return self.q_circ - sp.Matrix.vstack(*self.com_can)

    def p_symbol(self, name):
        i, comp = name
        return sp.Symbol(f"{comp}{i + 1}")

    @property
    def Lambda(self):
        """Velocity constraints Λ(q, p) = p° − Υ Ψ⁻¹ p# (seed 000)."""
        ps = sp.Matrix([self.p_symbol(nm) for nm in self.p_sharp_names])
        pc = sp.Matrix([self.p_symbol(nm) for nm in self.p_circ_names])
        return sp.simplify(pc - self.Upsilon * self.Psi.inv() * ps)

    # -- dynamics -----------------------------------------------------------------------------
    def gibbs_function(self):
        """S(q, q̇, q̈) — the acceleration energy, with the terms free of ω̇ dropped."""
        S = sp.S(0)
        for b, w, v in zip(self.bodies, self.omega_b, self.v_b):
            wd = w.applyfunc(self._time)  # ω̇ in body frame (ω × ω = 0)
            a = v.applyfunc(self._time) + w.cross(v)  # a_G in body frame
            S += sp.Rational(1, 2) * b.mass * a.dot(a) + sp.Rational(1, 2) * wd.dot(b.inertia * wd)
            S += wd.dot(w.cross(b.inertia * w))
        return S

    def generalized_gravity(self):
        """Gravity's generalised force along q̇#_k: Σ m_i g·∂v_Gi/∂q̇_k (canonical frame)."""
        out = []
        for k in range(self.n):
            total = sp.S(0)
            for b, c in zip(self.bodies, self.com_can):
                vc = c.applyfunc(self._time)
                total += b.mass * self.g.dot(vc.applyfunc(lambda e: sp.diff(e, self.qd[k])))
            out.append(total)
        return sp.Matrix(out)

    def gibbs_appell_equations(self):
        """Returns (Π, τ): the actuator efforts along p# and along q#, from ∂S/∂ṗ#.

        ``Π = ∂S/∂ṗ# − Π_grav`` with ``∂S/∂ṗ# = Ψ⁻ᵀ ∂S/∂q̈#`` (p# = Ψ q̇#, so ṗ# = Ψ q̈# + Ψ̇ q̇#),
        and the joint efforts ``τ = Ψᵀ Π`` (equal power: τ·q̇# = Π·p#).
        """
        S = self.gibbs_function()
        dS = sp.Matrix([sp.diff(S, a) for a in self.qdd])
        grav_q = self.generalized_gravity()
        Pi = sp.simplify(self.Psi.T.inv() * (dS - grav_q))
        return Pi, dS - grav_q

    def lagrange_equations(self):
        """τ = d/dt ∂T/∂q̇ − ∂T/∂q − Π_grav on the same coordinates."""
        T = sp.S(0)
        for b, w, v in zip(self.bodies, self.omega_b, self.v_b):
            T += sp.Rational(1, 2) * b.mass * v.dot(v) + sp.Rational(1, 2) * w.dot(b.inertia * w)
        eqs = []
        grav = self.generalized_gravity()
        for k in range(self.n):
            dT = sp.diff(T, self.qd[k])
            eqs.append(self._time(dT) - sp.diff(T, self.q[k]) - grav[k])
        return sp.Matrix(eqs)

    def kane_equations(self):
        """τ = Σ_i (m a_Gi·∂v_Gi/∂u_k + (I ω̇ + ω × I ω)·∂ω_i/∂u_k) − Π_grav, u = q̇#."""
        eqs = []
        grav = self.generalized_gravity()
        for k in range(self.n):
            total = sp.S(0)
            for b, w, v in zip(self.bodies, self.omega_b, self.v_b):
                wd = w.applyfunc(self._time)
                a = v.applyfunc(self._time) + w.cross(v)
                partial_v = v.applyfunc(lambda e: sp.diff(e, self.qd[k]))
                partial_w = w.applyfunc(lambda e: sp.diff(e, self.qd[k]))
                total += b.mass * a.dot(partial_v) + (b.inertia * wd + w.cross(b.inertia * w)).dot(
                    partial_w)
            eqs.append(total - grav[k])
        return sp.Matrix(eqs)

    def numeric(self, expressions, params=None):
        """Fast numeric function f(q, q̇, q̈) → vector from symbolic expressions (lambdify)."""
        expr = sp.Matrix(expressions).subs(params or {})
        return sp.lambdify((self.q, self.qd, self.qdd), expr, "numpy")


# -- the seed's RRP robot ---------------------------------------------------------------------
RRP_SYMBOLS = sp.symbols("theta1 theta2 d3 h l1 l2 l3 l1g l2g l3g")


def rrp_seed(masses=None, inertias=None):
    """Seed 000's RRP robot with the seed's symbols (θ1, θ2, d3, h, l1, l2, l3, l1g, l2g, l3g)."""
    th1, th2, d3, h, l1, l2, l3, l1g, l2g, l3g = RRP_SYMBOLS
    m = masses or sp.symbols("m1 m2 m3")
    I = inertias or [sp.diag(*sp.symbols(f"I{i}x I{i}y I{i}z")) for i in (1, 2, 3)]
    bodies = [
        Body("B1", homogeneous(rot("z", th1), [0, 0, h]), sp.Matrix([0, 0, l1g]), m[0], I[0]),
        Body("B2", homogeneous(rot("x", th2), [0, 0, l1]), sp.Matrix([0, l2g, 0]), m[1], I[1]),
        Body("B3", homogeneous(sp.eye(3), [0, l2, 0]), sp.Matrix([0, d3 - l3 + l3g, 0]), m[2], I[2]),
    ]
    return RedundantSystem(bodies, [th1, th2, d3],
                           [(0, "omega_z"), (1, "omega_x"), (2, "v_y")])


def from_model(model, max_dof=4):
    """A :class:`RedundantSystem` for a serial Model whose joint axes are body-frame axes.

    Geometry and inertia are the model's numbers; the joint coordinates are symbols named after
    the joints. Refuses (with the reason) trees, oblique axes and robots too large to be worth a
    symbolic derivation.
    """
    from robot_dynamics.multibody import joints as jt
    from robot_dynamics.errors import ModelError

    if model.nv > max_dof:
        raise ModelError(f"robot {model.name!r} has {model.nv} joints: symbolic derivation is "
                         f"limited to {max_dof} (expressions grow combinatorially)")
    if any(p != i - 1 for i, p in enumerate(model.parents)):
        raise ModelError(f"robot {model.name!r} is not a serial chain")
    if any(model.armature):
        raise ModelError(f"robot {model.name!r} has rotor inertia (model.armature ≠ 0): the "
                         "redundant-coordinates derivation models the links only")
    bodies, q, sharp = [], [], []
    for i in range(model.nv):
        axis = [abs(x) for x in model.axes[i]]
        if max(axis) < 1 - 1e-12:
            raise ModelError(f"joint {model.joint_names[i]!r}: axis {model.axes[i].tolist()} is "
                             "not along a body axis")
        k = axis.index(max(axis))
        name = "xyz"[k]
        sign = 1 if model.axes[i][k] > 0 else -1
        qi = sp.Symbol(model.joint_names[i])
        q.append(qi)
        R0 = sp.Matrix(model.joint_rotations[i].tolist())
        p0 = sp.Matrix(model.joint_translations[i].tolist())
        if model.kinds[i] == jt.PRISMATIC:
            e = sp.zeros(3, 1)
            e[k] = sign
            H = homogeneous(R0, p0 + R0 * e * qi)
            sharp.append((i, f"v_{name}"))
        else:
            H = homogeneous(R0 * rot(name, sign * qi), p0)
            sharp.append((i, f"omega_{name}"))
        bodies.append(Body(model.link_names[i], H, sp.Matrix(model.coms[i].tolist()),
                           sp.Float(model.masses[i]), sp.Matrix(model.inertias[i].tolist())))
    return RedundantSystem(bodies, q, sharp, gravity=tuple(model.gravity.tolist()))
