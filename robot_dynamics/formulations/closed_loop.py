"""Parallel (closed-loop) mechanisms: a URDF tree plus loop-closure constraints (seeds 000/001).

The seeds treat parallel mechanisms with redundant coordinates: q holds the actuated and passive
joint coordinates, φ(q) adds the loop-closure equations, and the velocities are eliminated through
φ̇ = J(q) q̇ = 0. Here the tree is the core Model (a URDF cut open at one joint per loop) and a
loop-closure file says which two link points must coincide::

    closures:
      - {link_a: left_distal, point_a: [0.3, 0, 0], link_b: right_distal, point_b: [0.3, 0, 0],
         components: [x, z]}
    actuated: [left_motor, right_motor]
    end_effector: {link: tool, point: [0, 0, 0]}

* forward dynamics: ``[M Jᵀ; J 0] [q̈; −λ] = [τ − b; −J̇q̇ − 2α J q̇ − β² φ]`` (Baumgarte), RK4 steps,
  then projection of q onto φ = 0 and of q̇ onto J q̇ = 0 — the loop stays closed to 1e-10;
* inverse dynamics of the actuated joints along a prescribed end-effector path: closed-chain
  inverse kinematics (Newton), q̇ and q̈ from the constraint Jacobians, then
  ``M q̈ + b = Sᵀ τ_act + Jᵀ λ`` solved for τ_act and λ (passive joints carry no effort).
A singular configuration (J or the KKT matrix loses rank) is an error that says so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics.parsers.config_files import load_mapping
from robot_dynamics.algorithm.crba import bias_forces, mass_matrix
from robot_dynamics.errors import ModelError
from robot_dynamics.algorithm.kinematics import body_point_jacobian, forward_kinematics

AXES = {"x": 0, "y": 1, "z": 2}


@dataclass
class LoopClosure:
    link_a: str
    point_a: np.ndarray
    link_b: str
    point_b: np.ndarray
    components: list


def point_jacobian(model, data, link, point):
    """World position (3,) and its Jacobian (3, nv) of a point fixed on ``link``."""
    body, T = model.frames[link]
    return body_point_jacobian(model, data, body, T[:3, :3] @ point + T[:3, 3])


class ClosedLoopMechanism:
    """A tree Model plus loop closures, actuated joints and an end-effector point."""

    def __init__(self, model, closures, actuated, end_effector=None, source="loop closure"):
        self.model, self.closures, self.source = model, closures, source
        for c in closures:
            for link in (c.link_a, c.link_b):
                if link not in model.frames:
                    raise ModelError(f"{source}: link {link!r} is not a link of robot "
                                     f"{model.name!r}")
        self.actuated = [model.joint_index(j) for j in actuated]
        self.passive = [i for i in range(model.nv) if i not in self.actuated]
        self.end_effector = end_effector
        self.data = model.create_data()
        self.m = sum(len(c.components) for c in closures)
        if model.nv - self.m != len(self.actuated):
            raise ModelError(f"{source}: {model.nv} joints − {self.m} closure equations = "
                             f"{model.nv - self.m} dof, but {len(self.actuated)} actuated joints")

    # -- kinematics -----------------------------------------------------------------------------
    def constraints(self, q):
        """φ(q) (m,) and J = ∂φ/∂q (m, nv)."""
        forward_kinematics(self.model, self.data, q)
        rows, jac = [], []
        for c in self.closures:
            xa, Ja = point_jacobian(self.model, self.data, c.link_a, c.point_a)
            xb, Jb = point_jacobian(self.model, self.data, c.link_b, c.point_b)
            for comp in c.components:
                k = AXES[comp]
                rows.append(xa[k] - xb[k])
                jac.append(Ja[k] - Jb[k])
        return np.array(rows), np.array(jac)

    def _check_rank(self, J, q):
        s = np.linalg.svd(J, compute_uv=False)
        if s.min() < 1e-8 * max(1.0, s.max()):
            raise ModelError(f"{self.source}: singular configuration at q = {np.round(q, 6).tolist()}"
                             f" (loop-closure Jacobian rank {int((s > 1e-8 * s.max()).sum())} < "
                             f"{self.m})")

    def _Jdot_qd(self, q, qd, eps=1e-6):
        _, Jp = self.constraints(q + eps * qd)
        _, Jm = self.constraints(q - eps * qd)
        return (Jp - Jm) @ qd / (2 * eps)

    def project(self, q, qd=None, tol=1e-12, max_iter=30):
        """Nearest q with φ(q) = 0 (Gauss–Newton), and q̇ with J q̇ = 0 (least change)."""
        q = np.array(q, dtype=float)
        for _ in range(max_iter):
            phi, J = self.constraints(q)
            if np.abs(phi).max() < tol:
                break
            q -= np.linalg.lstsq(J, phi, rcond=None)[0]
        else:
            raise ModelError(f"{self.source}: cannot close the loop from q = {q.tolist()} "
                             f"(residual {np.abs(phi).max():.2e})")
        if qd is None:
            return q
        self._check_rank(J, q)
        qd = np.asarray(qd, dtype=float)
        qd = qd - np.linalg.pinv(J) @ (J @ qd)
        return q, qd

    # -- dynamics -------------------------------------------------------------------------------
    def accelerations(self, q, qd, tau_actuated, alpha=10.0, beta=10.0):
        """q̈ and the loop-closure forces λ under actuator efforts (Baumgarte-stabilised)."""
        model, data = self.model, self.data
        tau = np.zeros(model.nv)
        tau[self.actuated] = tau_actuated
        phi, J = self.constraints(q)
        M = mass_matrix(model, data, q)
        b = bias_forces(model, data, q, qd)
        K = np.block([[M, J.T], [J, np.zeros((self.m, self.m))]])
        rhs = np.concatenate([tau - b, -self._Jdot_qd(q, qd) - 2 * alpha * (J @ qd)
                              - beta ** 2 * phi])
        if np.linalg.cond(K) > 1e12:
            self._check_rank(J, q)
            raise ModelError(f"{self.source}: singular dynamics at q = {np.round(q, 6).tolist()}")
        sol = np.linalg.solve(K, rhs)
        return sol[:model.nv], -sol[model.nv:]

    def simulate(self, q0, qd0, duration, dt=1e-3, actuation=None):
        """RK4 with projection after each step. ``actuation(t) → τ_act`` (default zero).

        Returns dict t, q, qd, loop_error, energy (T + V)."""
        q, qd = self.project(q0, qd0)
        n = int(round(duration / dt))
        out = {"t": np.zeros(n + 1), "q": np.zeros((n + 1, self.model.nv)),
               "qd": np.zeros((n + 1, self.model.nv)), "loop_error": np.zeros(n + 1),
               "energy": np.zeros(n + 1)}
        zero = np.zeros(len(self.actuated))

        def f(t, x):
            u = zero if actuation is None else actuation(t)
            a, _ = self.accelerations(x[0], x[1], u)
            return np.array([x[1], a])

        t = 0.0
        for k in range(n + 1):
            out["t"][k], out["q"][k], out["qd"][k] = t, q, qd
            out["loop_error"][k] = np.abs(self.constraints(q)[0]).max()
            out["energy"][k] = self.energy(q, qd)
            if k == n:
                break
            x = np.array([q, qd])
            k1 = f(t, x)
            k2 = f(t + dt / 2, x + dt / 2 * k1)
            k3 = f(t + dt / 2, x + dt / 2 * k2)
            k4 = f(t + dt, x + dt * k3)
            x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            q, qd = self.project(x[0], x[1])
            t += dt
        return out

    def energy(self, q, qd):
        from robot_dynamics.algorithm.energy import kinetic_energy, potential_energy

        M = mass_matrix(self.model, self.data, q)
        return kinetic_energy(M, qd) + potential_energy(self.model, self.data)

    def end_effector_point(self, q):
        forward_kinematics(self.model, self.data, q)
        link, point = self.end_effector
        return point_jacobian(self.model, self.data, link, point)

    def inverse_kinematics(self, x_target, q_guess, components=("x", "z"), tol=1e-12):
        """Joint coordinates (all, actuated and passive) that close the loop and put the end
        effector at ``x_target`` (world, the listed components)."""
        ks = [AXES[c] for c in components]
        q = np.array(q_guess, dtype=float)
        for _ in range(50):
            phi, J = self.constraints(q)
            x, Jx = self.end_effector_point(q)
            r = np.concatenate([phi, x[ks] - x_target])
            A = np.vstack([J, Jx[ks]])
            # at (or numerically at) a singular configuration the joint rates of a path are not
            # determined: Newton still converges there, slowly, to a badly conditioned point
            singular = np.linalg.cond(A) > 1e5
            if np.abs(r).max() < tol and not singular:
                return q
            if singular:
                raise ModelError(f"{self.source}: singular configuration at q = "
                                 f"{np.round(q, 6).tolist()} on the end-effector path")
            q -= np.linalg.solve(A, r)
        raise ModelError(f"{self.source}: end effector cannot reach {np.asarray(x_target).tolist()}")

    def inverse_dynamics_path(self, path, q_guess, components=("x", "z")):
        """Actuator efforts along ``path(t) → (x, ẋ, ẍ)`` at the times given.

        Returns a function ``times → (q, q̇, q̈, τ_act)`` arrays, solving at each time:
        closed-chain IK, q̇ from [J; J_x] q̇ = [0; ẋ], q̈ from [J; J_x] q̈ = [0; ẍ] − [J̇; J̇_x] q̇,
        and M q̈ + b = Sᵀ τ_act + Jᵀ λ for (τ_act, λ).
        """
        ks = [AXES[c] for c in components]
        model, data = self.model, self.data
        S = np.zeros((len(self.actuated), model.nv))
        S[np.arange(len(self.actuated)), self.actuated] = 1.0

        def stacked(q):
            _, J = self.constraints(q)
            _, Jx = self.end_effector_point(q)
            return np.vstack([J, Jx[ks]])

        def solve(times):
            q = np.array(q_guess, dtype=float)
            Q, QD, QDD, TAU = [], [], [], []
            for t in times:
                x, xd, xdd = path(t)
                q = self.inverse_kinematics(x, q, components)
                A = stacked(q)
                qd = np.linalg.solve(A, np.concatenate([np.zeros(self.m), xd]))
                eps = 1e-6
                Adot_qd = (stacked(q + eps * qd) - stacked(q - eps * qd)) @ qd / (2 * eps)
                qdd = np.linalg.solve(A, np.concatenate([np.zeros(self.m), xdd]) - Adot_qd)
                _, J = self.constraints(q)
                M = mass_matrix(model, data, q)
                b = bias_forces(model, data, q, qd)
                K = np.hstack([S.T, J.T])
                # a parallel (type II) singularity: the actuators cannot hold the loop, the
                # efforts are not determined (unreachable for the bundled five-bar's lengths)
                if np.linalg.cond(K) > 1e10:
                    raise ModelError(f"{self.source}: singular configuration at q = "
                                     f"{np.round(q, 6).tolist()}: the actuated joints cannot "
                                     "balance the loop (parallel singularity)")
                sol = np.linalg.solve(K, M @ qdd + b)
                Q.append(q.copy()), QD.append(qd), QDD.append(qdd), TAU.append(sol[:len(S)])
            return np.array(Q), np.array(QD), np.array(QDD), np.array(TAU)

        return solve


def load_loop_closure(config, model) -> ClosedLoopMechanism:
    """A :class:`ClosedLoopMechanism` from a loop-closure YAML path or mapping."""
    config, source = load_mapping(config, "loop-closure")
    if not isinstance(config, dict) or "closures" not in config:
        raise ModelError(f"{source}: expected a mapping with 'closures' and 'actuated'")
    closures = []
    for k, c in enumerate(config["closures"]):
        where = f"{source}: closure {k}"
        for key in ("link_a", "point_a", "link_b", "point_b"):
            if key not in c:
                raise ModelError(f"{where}: missing field {key!r}")
        comps = c.get("components", ["x", "y", "z"])
        bad = [x for x in comps if x not in AXES]
        if bad:
            raise ModelError(f"{where}: components {bad} are not among x, y, z")
        pa, pb = (np.asarray(c[key], dtype=float) for key in ("point_a", "point_b"))
        if pa.shape != (3,) or pb.shape != (3,):
            raise ModelError(f"{where}: points must have 3 coordinates")
        closures.append(LoopClosure(c["link_a"], pa, c["link_b"], pb, list(comps)))
    if "actuated" not in config:
        raise ModelError(f"{source}: missing field 'actuated'")
    for j in config["actuated"]:
        if j not in model.joint_names:
            raise ModelError(f"{source}: actuated joint {j!r} is not a joint of {model.name!r}")
    ee = config.get("end_effector")
    end_effector = None
    if ee is not None:
        end_effector = (ee["link"], np.asarray(ee.get("point", [0, 0, 0]), dtype=float))
        if end_effector[0] not in model.frames:
            raise ModelError(f"{source}: end-effector link {ee['link']!r} is not a link of "
                             f"{model.name!r}")
    return ClosedLoopMechanism(model, closures, config["actuated"], end_effector, source)


__all__ = ["ClosedLoopMechanism", "LoopClosure", "load_loop_closure", "point_jacobian"]
