"""Mimic joints (URDF ``<mimic joint multiplier offset>``): followers move with their leader.

A follower joint f of leader l moves as ``q_f = multiplier·q_l + offset``. The robot then has
fewer independent coordinates than movable joints. Write ``q`` (nv,) for the independent
coordinates (the movable joints that follow no one, in the full model's order) and ``q_full``
(n_full,) for every movable joint. The coupling is constant and affine:

    q_full = G q + o,        q̇_full = G q̇,        q̈_full = G q̈                (expand)

with ``G`` (n_full, nv) holding one non-zero per row (1 for an independent joint, the
multiplier — chains of mimics multiplied out — for a follower) and ``o`` the offsets. Every
body still moves with its own joint, so the kernels run on the full tree (``model.full``, the
model as if each movable joint were independent) at the expanded state, and the principle of
virtual power maps efforts back with ``Gᵀ``:

* inverse dynamics (seed 004 §2.7): ``fn`` from RNEA at the expanded state gives each full
  joint's wrench, hence its friction (a follower's from its own reaction wrench);
  ``τ_motor = Gᵀ (fn∥_full − τf_full)``; frictionless, ``τ = Gᵀ τ_full``;
* mass matrix and bias: ``M = Gᵀ M_full G + diag(armature)``, ``b = Gᵀ b_full(q_full, G q̇)``;
* forward dynamics (seed 004 §2.8): ``M q̈ = τ − b + Gᵀ τf_full``. The wrench of full joint i is
  ``W_i(q̈) = W0_i + Σ_β q̈_β pl̃_β[i]`` with the coordinate directors
  ``pl̃_β = Σ_α G_αβ pl_α`` (eq. 2.3.7 through the coupling); coordinate β's friction is
  ``Σ_i G_iβ τf_i = −(Σ_i |G_iβ| m_i) d_β`` and its stiction bound ``Σ_i |G_iβ| bound_i``, so a
  follower sticks exactly when its leader does. :class:`CoupledFriction` presents the full
  friction model in these coordinates to :func:`robot_dynamics.stiction.solve_with_friction`
  (its reference path), which runs unchanged.

**Simulation.** :class:`~robot_dynamics.simulation.Simulator` steps the coordinates in one
compiled call (kernels/fd.py ``_coupled_mass`` / ``_coupled_bias``) when no follower has
friction of its own — a coordinate's friction is then its leader's, from the leader's wrench
— and ``M`` keeps the pattern of the coordinates' tree (:func:`reduced_tree`); otherwise
through the Python statement of the scheme with :class:`CoupledFriction` (the reference the
compiled step is tested against, to 1e-10).

This matches Pinocchio's ``buildModelFromUrdf(path, mimic=True)``: ``nq``/``nv`` count the
independent joints; ``rnea``/``crba`` agree with the functions here.

**Armature.** ``model.armature`` (nv,) is per independent coordinate, as Pinocchio's with
``mimic=True`` (its armature has size nv; tested): the rotor of the motor that drives the
coordinate, ``M = Gᵀ M_full G + diag(armature)``, ``τ = Gᵀ τ_full + armature ∘ q̈``. A rotor on a
follower's own transmission can be given on ``model.full.armature`` (n_full,); it enters through
the full kernels as ``Gᵀ diag(armature_full) G``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .errors import ModelError, as_vector, check_friction
from .kernels.layout import make_work, pack_laws, pack_model, relations
from .model import Data, Model


# -- building ---------------------------------------------------------------------------------
def resolve(full: Model) -> tuple[np.ndarray, np.ndarray, list[int]] | None:
    """(G, o, independent) of a full model from its ``mimic`` tags, or None when no movable
    joint follows a movable leader. Chains (a follower of a follower) are multiplied out; a
    cycle of mimics is a :class:`ModelError`; a leader that is not a movable joint leaves its
    follower independent, with a warning."""
    tags = {}
    for follower, (leader, mult, off) in full.mimic.items():
        if leader not in full._joint_index:
            warnings.warn(f"{full.source}: joint {follower!r} mimics {leader!r}, which is not a "
                          f"movable joint of robot {full.name!r}: {follower!r} is modelled as an "
                          "independent joint (fix the <mimic joint=...> name)", UserWarning,
                          stacklevel=4)
            continue
        if mult == 0.0:
            warnings.warn(f"{full.source}: joint {follower!r} mimics {leader!r} with multiplier "
                          "0: it is held at its offset", UserWarning, stacklevel=4)
        tags[follower] = (leader, float(mult), float(off))
    if not tags:
        return None
    root = {}  # follower → (independent leader, multiplier, offset) with chains composed

    def chase(name, path):
        if name not in tags:
            return name, 1.0, 0.0
        if name in root:
            return root[name]
        if name in path:
            loop = path[path.index(name):] + [name]
            raise ModelError(f"{full.source}: <mimic> tags form a cycle: {' -> '.join(loop)} "
                             "(a follower's leader chain must end at an independent joint)")
        leader, m, o = tags[name]
        top, m2, o2 = chase(leader, path + [name])
        root[name] = (top, m * m2, m * o2 + o)  # q = m (m2 q_top + o2) + o
        return root[name]

    for follower in tags:
        chase(follower, [])
    independent = [i for i, nm in enumerate(full.joint_names) if nm not in root]
    col = {full.joint_names[i]: k for k, i in enumerate(independent)}
    G = np.zeros((full.nv, len(independent)))
    o = np.zeros(full.nv)
    for k, i in enumerate(independent):
        G[i, k] = 1.0
    for follower, (top, m, off) in root.items():
        i = full._joint_index[follower]
        G[i, col[top]] = m
        o[i] = off
    return G, o, independent


def reduced_tree(full: Model, G: np.ndarray, independent) -> list[int] | None:
    """Parents of the coordinates (each leader's nearest independent ancestor, −1: none) when
    ``M = Gᵀ M_full G`` keeps the pattern of that tree — every pair of full joints on one
    root-to-leaf path maps to coordinates on one path — so the compiled step's tree
    factorisations hold (kernels/fd.py ``_coupled_mass``); else None (e.g. a follower in another
    branch than its leader's, coupling the two branches)."""
    pos = {int(i): k for k, i in enumerate(independent)}
    parents = []
    for i in independent:
        j = int(full.parents[i])
        while j >= 0 and j not in pos:
            j = int(full.parents[j])
        parents.append(pos[j] if j >= 0 else -1)

    def chain(k, tree):  # k and its ancestors
        out = set()
        while k >= 0:
            out.add(k)
            k = tree[k]
        return out

    up = [chain(k, parents) for k in range(len(parents))]
    col = [int(np.flatnonzero(G[i])[0]) if G[i].any() else -1 for i in range(full.nv)]
    for j in range(full.nv):
        for i in chain(j, [int(x) for x in full.parents]):  # i an ancestor of j (or j)
            b, c = col[i], col[j]
            if b >= 0 and c >= 0 and b not in up[c] and c not in up[b]:
                return None
    return parents


def pack_coupling(G: np.ndarray, o: np.ndarray, independent) -> np.ndarray:
    """The coupling as the compiled step reads it (kernels/fd.py ``_coupling_views``)."""
    nf, nv = G.shape
    col = np.array([np.flatnonzero(G[i])[0] if G[i].any() else -1 for i in range(nf)], float)
    g = np.array([G[i, int(c)] if c >= 0 else 0.0 for i, c in enumerate(col)])
    return np.concatenate([[nf, nv], col, g, o, np.asarray(independent, float)])


def couple(full: Model) -> Model:
    """The model in independent coordinates of a full model with mimic tags (or ``full`` itself
    when nothing couples). Called by :func:`robot_dynamics.model.build_model`."""
    resolved = resolve(full)
    if resolved is None:
        return full
    return MimicModel(full, *resolved)


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


class MimicModel(Model):
    """A robot with mimic joints, in its independent coordinates (``nq == nv`` = independent
    joints). ``full`` is the model of every movable joint (the kernels' tree); ``coupling``
    (G) and ``coupling_offset`` (o) map ``q_full = G q + o``. Joint-level fields (names, types,
    limits, damping) are per independent coordinate; per-body fields live on ``full``."""

    full = full_joint_names = None  # (instance fields here, Model's properties shadowed)

    def __init__(self, full: Model, G: np.ndarray, o: np.ndarray, independent: list[int]):
        super().__init__()
        self.full = full
        self.coupling, self.coupling_offset = _frozen(G), _frozen(o)
        self.independent = np.array(independent, dtype=np.int64)
        self.independent.setflags(write=False)
        self.name, self.source, self.base_link = full.name, full.source, full.base_link
        self.base_mass, self.frames, self.mimic = full.base_mass, full.frames, full.mimic
        self.full_joint_names = list(full.joint_names)
        self.nq = self.nv = len(independent)
        ind = independent
        self.joint_names = [full.joint_names[i] for i in ind]
        self.link_names = [full.link_names[i] for i in ind]
        self.joint_types = [full.joint_types[i] for i in ind]
        self.axes = _frozen(full.axes[ind])  # each coordinate's own joint axis (joint frame)
        self._joint_index = {nm: k for k, nm in enumerate(self.joint_names)}
        self.followers = {full.joint_names[i]: self.joint_names[int(np.flatnonzero(G[i])[0])]
                          for i in range(full.nv) if i not in set(ind) and G[i].any()}
        absG = np.abs(G)
        # a coordinate's limits are its own joint's (followers' <limit>s are often inconsistent
        # with the coupling, e.g. both fingers of a gripper in [0, w])
        self.lower_limits = _frozen(full.lower_limits[ind])
        self.upper_limits = _frozen(full.upper_limits[ind])
        self.velocity_limits = _frozen(full.velocity_limits[ind])
        self.effort_limits = _frozen(full.effort_limits[ind])  # the leader's motor drives all
        # viscous damping and Coulomb friction seen by the coordinate: GᵀdiagG is diagonal
        # (one non-zero per row of G), Σ G_iβ² d_i and Σ |G_iβ| f_i
        self.damping = _frozen((G * G).T @ full.damping)
        self.urdf_friction = _frozen(absG.T @ full.urdf_friction)
        self.mechanical_reduction = _frozen(full.mechanical_reduction[ind])
        self._gravity = full.gravity
        # the compiled step (kernels/fd.py): the coordinates' tree packed for the friction
        # solve (leaders' kinds and axes, the coordinates' parents and armature), the coupling;
        # None where M does not keep the coordinates' tree pattern (the step runs in Python)
        tree = reduced_tree(full, G, independent)
        self._cp = self._rmb = self._no_friction = self._solve_view = None
        if tree is not None:
            kinds = np.asarray(full.kinds)[ind]
            z = np.zeros
            self._rmb = pack_model(_Packable(
                nv=self.nv, kinds=kinds, parents=np.array(tree, dtype=np.int64), axes=self.axes,
                joint_rotations=z((self.nv, 3, 3)), joint_translations=z((self.nv, 3)),
                spatial_inertias=z((self.nv, 6, 6)), motion_subspaces=z((self.nv, 6)),
                gravity=z(3), armature=z(self.nv)))
            self._arm = self._rmb[len(self._rmb) - self.nv:]  # the armature setter writes it
            self._cp = pack_coupling(G, o, independent)
            #: the coordinates' problem for the compiled friction solve (forward_dynamics)
            self._solve_view = _Packable(
                nv=self.nv, joint_names=self.joint_names,
                _rel=(*relations(tree), np.array(tree, dtype=np.int64)),
                _kargs=(kinds.astype(np.int64), None, np.ascontiguousarray(self.axes)))
            self._no_friction = pack_laws(np.zeros(self.nv, dtype=np.int64),
                                          np.zeros((self.nv, 8)))
        self.armature = np.zeros(self.nv)  # per coordinate (the full tree's stays its own)

    @property
    def gravity(self) -> np.ndarray:
        return self.full.gravity

    @gravity.setter
    def gravity(self, g) -> None:
        self.full.gravity = g

    def create_data(self) -> "MimicData":
        return MimicData(self)

    def joint_index(self, name: str) -> int:
        if name in getattr(self, "followers", {}):
            raise ModelError(f"joint {name!r} of robot {self.name!r} mimics "
                             f"{self.followers[name]!r}: it is not an independent coordinate "
                             f"(independent joints: {self.joint_names})")
        return super().joint_index(name)

    def expand(self, q) -> np.ndarray:
        """Positions of every movable joint (``full_joint_names``): ``G q + o``."""
        q = as_vector("q", q, self.nq, where="expand")
        return self.coupling @ q + self.coupling_offset

    def expand_velocity(self, v) -> np.ndarray:
        """Velocities (or accelerations) of every movable joint: ``G v``."""
        v = as_vector("v", v, self.nv, where="expand_velocity")
        return self.coupling @ v

    def reduce_effort(self, tau_full) -> np.ndarray:
        """Efforts on the independent coordinates of full-joint efforts: ``Gᵀ τ_full``."""
        return self.coupling.T @ np.asarray(tau_full, dtype=float)

    def __getattr__(self, name):  # only reached for attributes this class does not have
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"model {self.__dict__.get('name', '')!r} has mimic joints: {name!r} is a per-body "
            f"field of the full tree; use model.full.{name} (n_full = "
            f"{len(self.__dict__.get('full_joint_names', []))} bodies, indexed by "
            "model.full_joint_names)")

    def __repr__(self) -> str:
        return (f"MimicModel({self.name!r}, nv={self.nv}, joints={self.joint_names}, "
                f"followers={self.followers})")


class _Packable:
    """The fields :func:`~robot_dynamics.kernels.layout.pack_model` reads, given by name."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class MimicData:
    """Workspace of a :class:`MimicModel`: ``full`` is the full tree's Data (body poses,
    velocities, joint wrenches ``f`` of every full joint, composite inertias); ``tau``,
    ``tau_friction`` (Gᵀ τf_full) and ``M`` are in the independent coordinates."""

    def __init__(self, model: MimicModel):
        self.full = model.full.create_data()
        self._model, self._work = model, self.full._work  # as a Data: its model (errors.check_data)
        for name in ("oMi", "liMi_R", "liMi_p", "X", "S", "v", "a", "f", "Ic"):
            setattr(self, name, getattr(self.full, name))
        # the coordinates' work of the compiled step (kernels/layout.py; Simulator)
        self._rwork, views = make_work(model.nv)
        self._views, self._vecs = views, views["vecs"]
        self.tau, self.tau_friction, self.M = views["tau"], views["tau_friction"], views["M"]
        self._report = None

    fd_report = Data.fd_report


def joint_state(model: MimicModel, q, v, tau):
    """(positions, velocities, efforts) of every movable joint (``model.full_joint_names``) for
    a /joint_states message: followers at ``G q + o`` with velocity ``G q̇``, so
    robot_state_publisher draws them; efforts are the motors' (a follower has none: 0)."""
    tau_full = np.zeros(len(model.full_joint_names))
    tau_full[model.independent] = tau
    return (model.coupling @ q + model.coupling_offset, model.coupling @ v, tau_full)


# -- algorithms (the public functions dispatch here when model.coupling is not None) -----------
def _expand(model, q, v=None, a=None, where=""):
    out = [model.coupling @ as_vector("q", q, model.nq, where=where) + model.coupling_offset]
    for name, x in (("v", v), ("a", a)):
        if x is not None:
            out.append(model.coupling @ as_vector(name, x, model.nv, where=where))
    return out


def rnea(model, data, q, v, a, reference=False) -> np.ndarray:
    """τ = Gᵀ τ_full(G q + o, G q̇, G q̈) + armature ∘ q̈; fills ``data.f`` (every full joint's
    wrench)."""
    from .rnea import rnea as full_rnea, rnea_reference

    qf, vf, af = _expand(model, q, v, a, where="rnea")
    fn = rnea_reference if reference else full_rnea
    data.tau[:] = model.coupling.T @ fn(model.full, data.full, qf, vf, af)
    _add_rotor_effort(model, data, a)
    return data.tau.copy()


def _add_rotor_effort(model, data, a) -> None:
    """data.tau += armature ∘ q̈ of the coordinates (``a`` already validated by _expand)."""
    if model.armature.any():
        data.tau += model.armature * np.asarray(a, dtype=float)


def mass_matrix(model, data, q, reference=False) -> np.ndarray:
    """M = Gᵀ M_full(G q + o) G + diag(armature); fills the full tree's composite inertias in
    ``data.full``."""
    from .crba import mass_matrix as full_mm, mass_matrix_reference

    (qf,) = _expand(model, q, where="mass_matrix")
    G = model.coupling
    fn = mass_matrix_reference if reference else full_mm
    data.M[:] = G.T @ fn(model.full, data.full, qf) @ G
    data.M[np.diag_indices(model.nv)] += model.armature
    return data.M.copy()


def efforts_at(model, data, q, v, which) -> np.ndarray:
    """Gᵀ of the full model's bias / gravity / Coriolis efforts at the expanded state."""
    from . import crba

    if which == "gravity_torques":
        (qf,) = _expand(model, q, where=which)
        return model.coupling.T @ crba.gravity_torques(model.full, data.full, qf)
    qf, vf = _expand(model, q, v, where=which)
    return model.coupling.T @ getattr(crba, which)(model.full, data.full, qf, vf)


def wrench_directors(model, data, q=None) -> np.ndarray:
    """Coordinate directors ``D̃`` (nv, n_full, 6): ``D̃[β, i] = Σ_α G_αβ pl_α[i]`` — the wrench
    of full joint i for a unit q̈_β (eq. 2.3.7 through the coupling)."""
    from .directors import wrench_directors as full_directors

    if q is not None:
        mass_matrix(model, data, q)
    D = full_directors(model.full, data.full)
    return np.tensordot(model.coupling.T, D, axes=(1, 0))


def forward_kinematics(model, data, q) -> None:
    from .kinematics import forward_kinematics as full_fk

    (qf,) = _expand(model, q, where="forward_kinematics")
    full_fk(model.full, data.full, qf)


class CoupledFriction:
    """A full model's :class:`~robot_dynamics.friction.FrictionModel` seen from the independent
    coordinates (the interface :func:`robot_dynamics.stiction.solve_with_friction` uses):
    ``magnitudes``/``bounds`` of coordinate β are ``Σ_i |G_iβ| ·`` those of the full joints it
    drives, each evaluated at the expanded state with the direction ``sign(G_iβ) d_β``."""

    def __init__(self, full_friction, model: MimicModel):
        check_friction(model.full, full_friction, "friction")
        self.full, self.model = full_friction, model
        self._model = model  # the model it belongs to (errors.check_friction)
        self.joint_names = full_friction.joint_names  # laws are per full joint
        self.laws = full_friction.laws
        self._absG = np.abs(model.coupling)
        self._sign = np.sign(model.coupling)
        self.active = (self._absG.T @ full_friction.active.astype(float)) > 0
        #: the leaders' packed laws, for the Simulator's compiled step (kernels/fd.py): when
        #: built-in laws, no follower with friction, and a coordinates' tree (reduced_tree);
        #: else None (the step runs in Python)
        self.step_pack = None
        followers = np.setdiff1d(np.flatnonzero(model.coupling.any(axis=1)), model.independent)
        if (model._cp is not None and full_friction._packed is not None
                and not full_friction.active[followers].any()):
            codes, params = full_friction._packed[:2]
            self.step_pack = pack_laws(codes[model.independent], params[model.independent])

    _packed = None  # solve_with_friction takes the reference path (robot_dynamics.stiction)

    def _state(self, q, v, directions):
        G, m = self.model.coupling, self.model
        qf = G @ np.asarray(q, dtype=float) + m.coupling_offset
        vf = G @ np.asarray(v, dtype=float)
        df = None if directions is None else self._sign @ np.asarray(directions, dtype=float)
        return qf, vf, df

    def magnitudes(self, model, wrenches, q, v, directions=None) -> np.ndarray:
        qf, vf, df = self._state(q, v, directions)
        return self._absG.T @ self.full.magnitudes(self.model.full, wrenches, qf, vf, df)

    def bounds(self, model, wrenches, q, directions) -> np.ndarray:
        qf, _, df = self._state(q, np.zeros(len(q)), directions)
        return self._absG.T @ self.full.bounds(self.model.full, wrenches, qf, df)

    def to_config(self) -> dict:
        return self.full.to_config()

    def __repr__(self) -> str:
        return f"CoupledFriction({self.full!r})"


def python_step_reason(model, friction) -> str:
    """Why a Simulator of ``model`` (mimic joints) with ``friction`` steps through the Python
    statement rather than the compiled step, or "" when it does not."""
    if getattr(model, "coupling", None) is None:
        return ""
    if model._cp is None:
        return ("a follower lies in another branch than its leader's (M couples the branches), "
                "so its steps run in Python")
    fr = coupled_friction(friction, model)
    if fr is None or fr.step_pack is not None:
        return ""
    leaders = set(model.independent)
    names = [model.full_joint_names[i] for i in range(len(model.full_joint_names))
             if i not in leaders and model.coupling[i].any() and fr.full.active[i]]
    if not names:
        return "a friction law is not built in, so its steps run in Python"
    return (f"follower(s) {names} have friction of their own (e.g. from a 'default:' law), so "
            "its steps run in Python: give them friction 'none'")


def coupled_friction(friction, model: MimicModel):
    """``friction`` for ``model``'s coordinates: a :class:`CoupledFriction` as is, a
    FrictionModel of the full joints wrapped, None stays None."""
    if friction is None or isinstance(friction, CoupledFriction):
        return friction
    return CoupledFriction(friction, model)


def inverse_dynamics(model, data, q, v, a, friction=None, **options) -> np.ndarray:
    """Seed 004 §2.7 through the coupling: ``τ_motor = Gᵀ (fn∥_full − τf_full) + armature ∘ q̈``
    with every full joint's friction from its own wrench at the expanded state (options as the
    full model's :func:`~robot_dynamics.inverse_dynamics.inverse_dynamics`)."""
    from .inverse_dynamics import inverse_dynamics as full_id

    qf, vf, af = _expand(model, q, v, a, where="inverse_dynamics")
    fr = coupled_friction(friction, model)
    out = full_id(model.full, data.full, qf, vf, af, None if fr is None else fr.full, **options)
    G = model.coupling
    data.tau_friction[:] = G.T @ data.full.tau_friction
    data.tau[:] = G.T @ out
    _add_rotor_effort(model, data, a)
    return data.tau.copy()


def forward_dynamics(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                     velocity_tolerance=1e-9, on_failure="raise", **_ignored) -> np.ndarray:
    """Seed 004 §2.8 in the independent coordinates: ``M q̈ = τ − b + Gᵀ τf_full`` with the
    reference stick/slip solver over :class:`CoupledFriction` (a follower sticks with its
    leader) — or, when no follower has friction of its own (``step_pack``), the compiled solve
    on the leaders' loads, equal to it (tested to 1e-10; Panda 0.55 ms against 4.6 ms). Sets
    ``data.tau_friction`` (coordinates) and ``data.fd_report``."""
    from .stiction import (FrictionSolveError, FrictionSolveReport, _solve_compiled,
                           solve_with_friction)

    q = as_vector("q", q, model.nq, where="forward_dynamics")
    v = as_vector("v", v, model.nv, where="forward_dynamics")
    tau = as_vector("tau", tau, model.nv, where="forward_dynamics")
    bias = efforts_at(model, data, q, v, "bias_forces")
    W0 = data.full.f.copy()  # fn_full(q, q̇, 0) at the expanded state
    M = mass_matrix(model, data, q)
    fr = coupled_friction(friction, model)
    if fr is None or not fr.active.any():
        a = np.linalg.solve(M, tau - bias)
        data.tau_friction[:] = 0.0
        data.fd_report = FrictionSolveReport()
        return a
    D = wrench_directors(model, data)
    if fr.step_pack is not None:  # no follower with friction: the compiled solve, in the
        # coordinates with the leaders' loads (as the Simulator's compiled step)
        lead = model.independent
        a, tauf, report = _solve_compiled(
            model._solve_view, _Packable(_packed=fr.step_pack), q, v, tau, M, bias, W0[lead],
            D[:, lead], 0.0, velocity_tolerance, tol, max_iter, np.full(model.nv, -np.inf),
            np.full(model.nv, np.inf))
        if report.converged:
            report.wrenches = W0 + np.tensordot(a, D, axes=(0, 0))  # every full joint's
    else:
        a, tauf, report = solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=0.0,
                                              v_tol=velocity_tolerance, tol=tol,
                                              max_iter=max_iter, reference=True)
    data.tau_friction[:] = tauf
    data.fd_report = report
    if not report.converged and on_failure == "raise":
        raise FrictionSolveError(report)
    return a
