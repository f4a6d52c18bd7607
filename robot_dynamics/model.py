"""The constant :class:`Model` built once from a robot description, and its :class:`Data` workspace.

Follows Pinocchio's split: the Model holds what never changes (tree, placements, inertias,
limits); a Data holds the buffers one user's computations write. Algorithms take both.

Reduction of a URDF tree (docs/ARCHITECTURE.md): one *body* per movable joint, numbered in
depth-first order so that ``parents[i] < i``; fixed joints are folded into the body that carries
their parent link, with masses, centres of mass and inertias combined exactly (parallel-axis
theorem); the root link and everything fixed to it form the base (``-1``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import joints as jt
from .description import RobotDescription
from .errors import ModelError
from .kernels.fd import ACC
from .kernels.friction import ID_OUT
from .kernels.layout import gravity_view, make_work, pack_laws, pack_model, relations
from .spatial import homogeneous, skew, spatial_inertia

_TRIANGLE_TOL = 1e-9


@dataclass
class _Body:
    mass: float = 0.0
    first_moment: np.ndarray = field(default_factory=lambda: np.zeros(3))  # Σ m c
    inertia_origin: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about origin


class Model:
    """Constant description of a fixed-base robot. See docs/ARCHITECTURE.md for every field."""

    def __init__(self):  # filled by build_model
        self.name = ""
        self.source = ""
        self.nq = self.nv = 0
        self.joint_names: list[str] = []
        self.link_names: list[str] = []
        self.joint_types: list[str] = []
        self.base_link = ""
        self._gravity = np.array([0.0, 0.0, -9.81])

    # -- gravity is the one settable field --------------------------------------------------
    @property
    def gravity(self) -> np.ndarray:
        """World gravity (3,) in the base frame; enters the recursions as base acceleration −g."""
        return self._gravity

    @gravity.setter
    def gravity(self, g) -> None:
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ModelError(f"gravity: expected 3 finite numbers, got {g!r}")
        g = g.copy()
        if "_g" in self.__dict__:  # the packed model's gravity slot (set by build_model)
            self._g[:] = g
        g.setflags(write=False)
        self._gravity = g

    def create_data(self) -> "Data":
        """A new :class:`Data` workspace for this model (one per user/thread)."""
        return Data(self)

    def joint_index(self, name: str) -> int:
        try:
            return self._joint_index[name]
        except KeyError:
            raise ModelError(
                f"robot {self.name!r} has no movable joint {name!r}; joints: {self.joint_names}"
            ) from None

    def __repr__(self) -> str:
        return f"Model({self.name!r}, nv={self.nv}, joints={self.joint_names})"


class Data:
    """Workspace of one user of a :class:`Model`. Buffers (frame, size) in docs/ARCHITECTURE.md.

    It records the model it was made for (``model``): the algorithms compare it with the model
    they are given (an identity test) and raise :class:`~robot_dynamics.errors.MismatchError`,
    naming both robots, for a Data of another robot — whose buffers the compiled kernels would
    overrun. A model with the same joints (the same URDF loaded twice) is accepted.
    """

    def __init__(self, model: Model):
        n = model.nv
        # one flat work array for the compiled kernels; the buffers below are views into it
        # (robot_dynamics.kernels.layout), and a kernel filling it fills them
        self._work, views = make_work(n)
        self.oMi = views["oMi"]  # world ← body i
        self.liMi_R = views["liMi_R"]  # parent body ← body i, rotation
        self.liMi_p = views["liMi_p"]  # parent body ← body i, translation
        self.X = views["X"]  # motion transform parent → body i
        self.S = np.array(model.motion_subspaces)  # motion subspaces (constant, body frame)
        self.v = views["v"]  # body spatial velocities [v; ω], body frame
        self.a = views["a"]  # body spatial accelerations (include −g), body frame
        self.f = views["f"]  # joint wrenches fn_i [f; n] in joint frame i
        self.tau = views["tau"]
        self.tau_friction = views["tau_friction"]  # signed friction effort τf (fn∥_vin)
        self.M = views["M"]
        self.Ic = views["Ic"]  # composite inertias (crba)
        self._views = views  # the kernels' scratch fields too (W0, D, stuck, info, …)
        self._vecs = views["vecs"]
        self._acc = self._vecs[ACC]  # forward dynamics' q̈
        self._id_out = self._vecs[ID_OUT]  # friction-aware inverse dynamics' τ
        self._sums = views["sums"]
        self._model = model
        self._report = None  # see fd_report

    @property
    def model(self) -> Model:
        """The model this workspace was made for."""
        return self._model

    @property
    def fd_report(self):
        """The :class:`~robot_dynamics.stiction.FrictionSolveReport` of the last forward-dynamics
        call on this Data (built on first read from the compiled solver's state)."""
        if self._report is Data.compiled_report:
            from .stiction import compiled_report

            views = self._views
            self._report = compiled_report(self._model, views["info"], views["sums"][0],
                                           views["stuck"], views["at_rest"])
        return self._report

    @fd_report.setter
    def fd_report(self, report):
        self._report = report

    compiled_report = object()  # marker: the report is in the work arrays, not built yet


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _check_inertia(source: str, link) -> None:
    if link.mass < 0 or (link.has_inertial and link.mass == 0 and np.any(link.inertia)):
        raise ModelError(f"{source}: link {link.name!r}: mass must be positive, got {link.mass}")
    inertia = link.inertia
    if not np.allclose(inertia, inertia.T, atol=1e-12):
        raise ModelError(f"{source}: link {link.name!r}: inertia is not symmetric")
    if not link.has_inertial or link.mass == 0:
        return
    eig = np.linalg.eigvalsh(inertia)
    scale = max(abs(eig).max(), 1e-12)
    if eig.min() < -_TRIANGLE_TOL * scale:
        raise ModelError(
            f"{source}: link {link.name!r}: inertia is not positive definite "
            f"(principal moments {eig.tolist()})"
        )
    a, b, c = np.sort(eig)
    if a + b < c - _TRIANGLE_TOL * scale:
        raise ModelError(
            f"{source}: link {link.name!r}: principal moments {[a, b, c]} break the triangle "
            f"inequality (I1 + I2 >= I3); no rigid body has this inertia"
        )


def build_model(desc: RobotDescription, *, gravity=(0.0, 0.0, -9.81),
                allow_massless: bool = False) -> Model:
    """Validate a :class:`RobotDescription` and reduce it to a :class:`Model`."""
    src = desc.source
    links = {}
    for link in desc.links:
        if link.name in links:
            raise ModelError(f"{src}: link {link.name!r} is defined twice")
        _check_inertia(src, link)
        links[link.name] = link

    parent_joint: dict[str, object] = {}
    children: dict[str, list] = {name: [] for name in links}
    seen_joints = set()
    for j in desc.joints:
        if j.name in seen_joints:
            raise ModelError(f"{src}: joint {j.name!r} is defined twice")
        seen_joints.add(j.name)
        for role, lname in (("parent", j.parent), ("child", j.child)):
            if lname not in links:
                raise ModelError(f"{src}: joint {j.name!r}: {role} link {lname!r} is not defined")
        jt.kind_of(j.type, j.name, src)  # raises on unsupported types
        if j.child in parent_joint:
            other = parent_joint[j.child]
            raise ModelError(
                f"{src}: link {j.child!r} has two parents (joints {other.name!r} and {j.name!r}); "
                "a URDF must be a tree (closed loops go in a loop-closure file)"
            )
        parent_joint[j.child] = j
        children[j.parent].append(j)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise ModelError(f"{src}: a URDF must have exactly one root link, found {roots}")
    root = roots[0]

    model = Model()
    model.name, model.source, model.base_link = desc.name, src, root
    body_of = {root: -1}  # link → body index
    T_body_link = {root: np.eye(4)}  # link frame placed in its body's frame
    bodies: list[_Body] = []
    base = _Body()
    names, lnames, types, kinds, parents, axes, rots, trans = [], [], [], [], [], [], [], []
    lower, upper, effort, velocity, damping, friction = [], [], [], [], [], []

    def add_link_inertia(link, body: _Body, T: np.ndarray):
        if link.mass == 0:
            return
        R = T[:3, :3] @ link.inertia_rotation
        c = T[:3, :3] @ link.com + T[:3, 3]
        Ic = R @ link.inertia @ R.T
        body.mass += link.mass
        body.first_moment += link.mass * c
        body.inertia_origin += Ic - link.mass * (skew(c) @ skew(c))

    add_link_inertia(links[root], base, np.eye(4))
    stack = [root]
    order = []
    while stack:  # depth-first, children in file order
        lname = stack.pop()
        order.append(lname)
        for j in reversed(children[lname]):
            stack.append(j.child)
    for lname in order[1:]:
        j = parent_joint[lname]
        kind = jt.kind_of(j.type, j.name, src)
        T_parent = T_body_link[j.parent]
        T_joint = T_parent @ j.origin
        if kind is None:  # fixed: fold into the parent's body
            b = body_of[j.parent]
            body_of[lname] = b
            T_body_link[lname] = T_joint
            add_link_inertia(links[lname], base if b < 0 else bodies[b], T_joint)
            continue
        axis = np.asarray(j.axis, float)
        norm = np.linalg.norm(axis)
        if not np.isfinite(norm) or norm < 1e-12:
            raise ModelError(f"{src}: joint {j.name!r}: axis {axis.tolist()} is not a direction")
        if j.lower > j.upper:
            raise ModelError(f"{src}: joint {j.name!r}: lower limit {j.lower} > upper {j.upper}")
        for fname in ("effort", "velocity", "damping", "friction"):
            if getattr(j, fname) < 0:
                raise ModelError(f"{src}: joint {j.name!r}: {fname} must be >= 0")
        idx = len(bodies)
        body_of[lname] = idx
        T_body_link[lname] = np.eye(4)
        bodies.append(_Body())
        add_link_inertia(links[lname], bodies[idx], np.eye(4))
        names.append(j.name)
        lnames.append(lname)
        types.append(j.type)
        kinds.append(kind)
        parents.append(body_of[j.parent])
        axes.append(axis / norm)
        rots.append(T_joint[:3, :3])
        trans.append(T_joint[:3, 3])
        lower.append(j.lower)
        upper.append(j.upper)
        effort.append(j.effort)
        velocity.append(j.velocity)
        damping.append(j.damping)
        friction.append(j.friction)

    n = len(bodies)
    if n == 0:
        raise ModelError(f"{src}: robot {desc.name!r} has no movable joint")
    masses, coms, inertias, spatial = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3)), []
    for i, body in enumerate(bodies):
        if body.mass <= 0 and not allow_massless:
            raise ModelError(
                f"{src}: link {lnames[i]!r} (moved by joint {names[i]!r}) has no <inertial> mass; "
                "a moving body needs mass and inertia for dynamics (or pass allow_massless=True)"
            )
        m = body.mass
        c = body.first_moment / m if m > 0 else np.zeros(3)
        Ic = body.inertia_origin + m * (skew(c) @ skew(c))
        masses[i], coms[i], inertias[i] = m, c, Ic
        spatial.append(spatial_inertia(m, c, Ic))

    model.nq = model.nv = n
    model.joint_names, model.link_names, model.joint_types = names, lnames, types
    model._joint_index = {name: i for i, name in enumerate(names)}
    model.kinds = _frozen(kinds).astype(np.int64)
    model.kinds.setflags(write=False)
    model.parents = np.array(parents, dtype=np.int64)
    model.parents.setflags(write=False)
    model.axes = _frozen(axes)
    model.joint_rotations = _frozen(rots)
    model.joint_translations = _frozen(trans)
    model.masses, model.coms, model.inertias = _frozen(masses), _frozen(coms), _frozen(inertias)
    model.spatial_inertias = _frozen(spatial)
    model.motion_subspaces = _frozen([jt.motion_subspace(k, a) for k, a in zip(kinds, axes)])
    model.lower_limits, model.upper_limits = _frozen(lower), _frozen(upper)
    model.effort_limits, model.velocity_limits = _frozen(effort), _frozen(velocity)
    model.damping, model.urdf_friction = _frozen(damping), _frozen(friction)
    model.base_mass = base.mass
    model.frames = {
        name: (body_of[name], homogeneous(T[:3, :3], T[:3, 3])) for name, T in T_body_link.items()
    }
    children_of = [[] for _ in range(n)]
    for i, p in enumerate(parents):
        if p >= 0:
            children_of[p].append(i)
    model.children = children_of
    model.gravity = gravity
    model._kargs = tuple(np.array(x) for x in (  # writable copies for the kernels
        model.kinds, model.parents, model.axes, model.joint_rotations, model.joint_translations,
        model.spatial_inertias, model.motion_subspaces))
    model._mb = pack_model(model)  # the same, flat, for the fused entry points
    model._g = gravity_view(model)  # gravity lives in the packed model; the setter writes it
    model._rel = (*relations(model.parents), np.array(model.parents))  # see kernels/layout
    model._no_friction = pack_laws(np.zeros(n, dtype=np.int64), np.zeros((n, 8)))  # "no laws"
    return model
