"""Mimic joints (URDF ``<mimic joint multiplier offset>``): the coupling of a model.

A follower joint f of leader l moves as ``q_f = multiplier·q_l + offset``. Write ``q`` (nv,) for
the independent coordinates and ``q_full`` (n_full,) for every movable joint; the coupling is
constant and affine (``q_full = G q + o``, ``q̇_full = G q̇``, ``q̈_full = G q̈``). This module builds
it and the :class:`MimicModel` that carries it; :mod:`robot_dynamics.algorithm.coupled` runs the
algorithms through it (docs/method.md, "coupled joints").
"""
from __future__ import annotations

import warnings

import numpy as np

from robot_dynamics.errors import ModelError, as_vector
from robot_dynamics.kernels.layout import make_work, pack_laws, pack_model, relations
from robot_dynamics.multibody.model import Data, Model


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
    when nothing couples). Called by :func:`robot_dynamics.multibody.build.build_model`."""
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
                gravity=z(3), damping=z(self.nv), armature=z(self.nv)))
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

    @property
    def payloads(self):
        """The payloads of the full tree (:meth:`Model.payloads`; links belong to bodies)."""
        return self.full.payloads

    def set_payload(self, link: str, mass, com=(0.0, 0.0, 0.0), inertia=None) -> None:
        """:meth:`Model.set_payload` on the full tree (``model.full``), where the bodies are: a
        payload on any link, a follower's included, reaches every algorithm of this model."""
        self.full.set_payload(link, mass, com, inertia)
        self._recheck_mass_matrix()

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
