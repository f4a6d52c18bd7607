"""Build a :class:`~robot_dynamics.multibody.model.Model` from a robot description: validate the
physics and reduce the tree.

Reduction of a URDF tree (docs/ARCHITECTURE.md): one *body* per movable joint, numbered in
depth-first order so that ``parents[i] < i``; fixed joints are folded into the body that carries
their parent link, with masses, centres of mass and inertias combined exactly (parallel-axis
theorem); the root link and everything fixed to it form the base (``-1``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from robot_dynamics.errors import ModelError
from robot_dynamics.multibody import joints as jt
from robot_dynamics.multibody.coupling import couple
from robot_dynamics.multibody.inertia import add_part, body_parameters, placed
from robot_dynamics.multibody.inertia import check_inertia as _check_inertia
from robot_dynamics.multibody.description import RobotDescription
from robot_dynamics.multibody.mass_check import mass_matrix_problem
from robot_dynamics.kernels.layout import (armature_view, gravity_view, inertia_view, pack_laws,
                                           pack_model, relations)
from robot_dynamics.multibody.model import Model, _frozen, _names, _num, _nums
from robot_dynamics.spatial.algebra import spatial_inertia

#: The mass matrix is singular when its smallest eigenvalue is below this fraction of its largest.
VALIDATE_POLICIES = ("strict", "warn")


@dataclass
class _Body:
    mass: float = 0.0
    first_moment: np.ndarray = field(default_factory=lambda: np.zeros(3))  # Σ m c
    inertia_origin: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # about origin
    links: list = field(default_factory=list)  # URDF links merged into this body


def _validation_policy(validate, allow_massless) -> str:
    if allow_massless is not None:
        warnings.warn("allow_massless is deprecated: use validate='warn' (a massless moving link "
                      "now loads by default when the mass matrix stays positive definite)",
                      DeprecationWarning, stacklevel=4)
        if allow_massless:
            validate = "warn"
    if validate not in VALIDATE_POLICIES:
        raise ModelError(f"validate: expected one of {list(VALIDATE_POLICIES)}, got {validate!r}")
    return validate


def _structure(desc: RobotDescription, src: str):
    """Links by name, each link's parent joint, each link's child joints, and the root.

    Raises :class:`ModelError` naming duplicates, undefined links, links with two parents,
    every kinematic cycle and every link not connected to the root.
    """
    links = {}
    for link in desc.links:
        if link.name in links:
            raise ModelError(f"{src}: link {link.name!r} is defined twice")
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

    def subtree(start):  # links reachable from start, depth-first, children in file order
        order, stack = [], [start]
        while stack:
            lname = stack.pop()
            order.append(lname)
            stack.extend(j.child for j in reversed(children[lname]))
        return order

    roots = [name for name in links if name not in parent_joint]
    trees = sorted((subtree(r) for r in roots), key=len, reverse=True)
    order = trees[0] if trees else []
    root = order[0] if order else None
    if len(order) == len(links):
        return links, parent_joint, children, root, order
    # Not one tree: name every cycle (each link has one parent, so following parents from a
    # link outside the tree ends in a cycle or at another root) and every loose link.
    reached = set(order)
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = done
    cycles, cycle_links = [], set()
    file_order = {j.name: k for k, j in enumerate(desc.joints)}
    for start in links:
        if start in reached or start in state:
            continue
        walk, lname = [], start
        while lname is not None and lname not in reached and lname not in state:
            state[lname] = 1
            walk.append(lname)
            lname = parent_joint[lname].parent if lname in parent_joint else None
        if lname is not None and state.get(lname) == 1:  # closed on this walk
            cyc = walk[walk.index(lname):]
            cycle_links.update(cyc)
            loop = [parent_joint[n].name for n in reversed(cyc)]  # parent to child
            first = min(range(len(loop)), key=lambda k: file_order[loop[k]])
            cycles.append(loop[first:] + loop[:first])  # from the joint written first
        for n in walk:
            state[n] = 2
    parts = [f"joints {_names(c)} form a closed kinematic loop" for c in cycles]
    loose = [n for n in links if n not in reached and n not in cycle_links]
    if loose:
        where = f"root link {root!r}" if root is not None else "a root link"
        parts.append(f"link(s) {_names(loose)} are not connected to {where}")
    raise ModelError(f"{src}: " + "; ".join(parts) + ": a URDF must be one tree with one root "
                     "(connect or remove those links; model closed loops with a loop-closure file)")


def build_model(desc: RobotDescription, *, gravity=(0.0, 0.0, -9.81), validate: str = "strict",
                allow_massless: bool | None = None, mimic: bool = False) -> Model:
    """Validate a :class:`RobotDescription` and reduce it to a :class:`Model`.

    ``validate`` (``"strict"`` | ``"warn"``): see :func:`robot_dynamics.parsers.urdf.load_urdf`. The
    physics checked is the one the dynamics uses: each merged moving rigid body (never the fixed
    base), then — when a body's spatial inertia is singular — the mass matrix at sample
    configurations. Linear in the number of links.

    ``mimic=True``: movable joints with a ``<mimic>`` tag follow their leader and the result is
    a :class:`robot_dynamics.multibody.coupling.MimicModel` in the independent coordinates (default
    ``mimic=False``: every movable joint is independent, as Pinocchio's default).
    """
    validate = _validation_policy(validate, allow_massless)
    if not isinstance(mimic, (bool, np.bool_)):  # ("yes" would be true, "false" too)
        raise ModelError(f"mimic: expected True or False, got {mimic!r}")
    src = desc.source
    links, parent_joint, children, root, order = _structure(desc, src)
    problems = []

    model = Model()
    model.name, model.source, model.base_link = desc.name, src, root
    body_of = {root: -1}  # link → body index
    T_body_link = {root: np.eye(4)}  # link frame placed in its body's frame
    bodies: list[_Body] = []
    base = _Body()
    names, lnames, types, kinds, parents, axes, rots, trans = [], [], [], [], [], [], [], []
    lower, upper, effort, velocity, damping, friction = [], [], [], [], [], []
    inverted = []  # joints whose lower limit exceeds the upper: loaded as unlimited

    def add_link_inertia(link, body: _Body, T: np.ndarray):
        body.links.append(link.name)
        if link.mass == 0 and not link.inertia.any():
            return
        c, Ic = placed(T, link.com, link.inertia, link.inertia_rotation)
        body.mass, body.first_moment, body.inertia_origin = add_part(
            (body.mass, body.first_moment, body.inertia_origin), link.mass, c, Ic)

    add_link_inertia(links[root], base, np.eye(4))
    for lname in order[1:]:  # depth-first, so bodies are numbered parents first
        j = parent_joint[lname]
        kind = jt.kind_of(j.type, j.name, src)
        T_joint = T_body_link[j.parent] @ j.origin
        if kind is None:  # fixed: fold into the parent's body
            b = body_of[j.parent]
            body_of[lname] = b
            T_body_link[lname] = T_joint
            add_link_inertia(links[lname], base if b < 0 else bodies[b], T_joint)
            continue
        axis = np.asarray(j.axis, float)
        norm = float(np.linalg.norm(axis))
        if not np.isfinite(norm) or norm < 1e-12:
            raise ModelError(f"{src}: joint {j.name!r}: axis {_nums(axis)} is not a direction")
        lo, hi = j.lower, j.upper
        if lo > hi:  # pybullet's robots write lower="1" upper="-1" for "no limits"
            inverted.append(f"{j.name!r} ({_num(lo)} > {_num(hi)})")
            lo, hi = -np.inf, np.inf
        for fname in ("effort", "velocity", "damping", "friction"):
            if getattr(j, fname) < 0:
                raise ModelError(f"{src}: joint {j.name!r}: {fname} must be >= 0, got "
                                 f"{_num(getattr(j, fname))}")
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
        lower.append(lo)
        upper.append(hi)
        effort.append(j.effort)
        velocity.append(j.velocity)
        damping.append(j.damping)
        friction.append(j.friction)

    n = len(bodies)
    if n == 0:
        raise ModelError(f"{src}: robot {desc.name!r} has no movable joint (nothing to simulate; "
                         "a floating base is not modelled)")
    masses, coms, inertias = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
    spatial = np.zeros((n, 6, 6))
    degenerate = False
    for i, body in enumerate(bodies):
        m, c, Ic = body_parameters((body.mass, body.first_moment, body.inertia_origin))
        problem, singular = _check_inertia(m, c, Ic)
        degenerate |= singular
        if problem:
            merged = [x for x in body.links if x != lnames[i]]
            also = f", with fixed link(s) {_names(merged)}" if merged else ""
            problems.append(
                f"{src}: link {lnames[i]!r} (moved by joint {names[i]!r}{also}): {problem}; fix "
                "its <inertial> (mass, origin, inertia) or load with validate='warn'")
        masses[i], coms[i], inertias[i] = m, c, Ic
        spatial[i] = spatial_inertia(m, c, Ic)
    if inverted:  # not a physics problem: loads under either policy, with a warning
        warnings.warn(f"{src}: joint(s) {', '.join(inverted)} have lower limit > upper limit, "
                      "read as 'no limits' (the pybullet convention): loaded without position "
                      "limits", UserWarning, stacklevel=3)
    if problems and validate == "strict":
        raise ModelError(problems[0] + (f" (and {len(problems) - 1} more moving bodies)"
                                        if len(problems) > 1 else ""))

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
    #: <transmission> mechanicalReduction per joint; nan where no transmission drives it alone
    model.mechanical_reduction = _frozen([desc.transmissions.get(nm, np.nan) for nm in names])
    #: <mimic> tags of movable joints: follower → (leader, multiplier, offset); modelled by
    #: robot_dynamics.algorithm.coupled (couple, at the end) with mimic=True
    model.mimic = {j.name: j.mimic for j in desc.joints if j.mimic and j.name in model._joint_index}
    model.base_mass = base.mass
    model.frames = {name: (body_of[name], T) for name, T in T_body_link.items()}
    children_of = [[] for _ in range(n)]
    for i, p in enumerate(parents):
        if p >= 0:
            children_of[p].append(i)
    model.children = children_of
    model.gravity = gravity
    model.armature = np.zeros(n)
    model._kargs = tuple(np.array(x) for x in (  # writable copies for the kernels
        model.kinds, model.parents, model.axes, model.joint_rotations, model.joint_translations,
        model.spatial_inertias, model.motion_subspaces))
    model._mb = pack_model(model)  # the same, flat, for the fused entry points
    model._I6 = inertia_view(model)  # spatial inertias in the packed model (set_payload writes)
    #: each body as built (the base is -1): its sums (mass, first moment, inertia about the
    #: origin) and parameters, so a payload adds to the sums and its removal restores them
    model._rigid = {i: ((b.mass, b.first_moment, b.inertia_origin), masses[i], coms[i],
                        inertias[i], spatial[i]) for i, b in enumerate(bodies)}
    model._rigid[-1] = ((base.mass, base.first_moment, base.inertia_origin), base.mass)
    model._g = gravity_view(model)  # gravity lives in the packed model; the setter writes it
    model._arm = armature_view(model)  # so does the armature (its setter writes it)
    model._rel = (*relations(model.parents), np.array(model.parents))  # see kernels/layout
    model._no_friction = pack_laws(np.zeros(n, dtype=np.int64), np.zeros((n, 8)))  # "no laws"

    for problem in problems:  # validate == "warn" here
        warnings.warn(problem, UserWarning, stacklevel=3)
    if mimic and model.mimic:  # followers move with their leaders: independent coordinates
        model = couple(model)
    if degenerate or problems:  # some spatial inertia is singular: is M still invertible?
        # rnea, inverse dynamics and M itself need no inverse: the model loads, and only what
        # inverts M (forward dynamics, Simulator) refuses, with this message (mass_matrix_problem)
        model._mass_matrix_checked = True
        model._mass_check = mass_matrix_problem  # re-run when armature or payloads change
        model.mass_matrix_problem = mass_matrix_problem(model)
        if model.mass_matrix_problem:
            warnings.warn(model.mass_matrix_problem, UserWarning, stacklevel=3)
    return model
