"""Seed 004's aggregated objects for the whole arm (§2.2–2.6), exposed for users who want them.

Spaces (docs/method.md §2), n bodies, everything 6n long, body by body:

* **V** — aggregated velocities ``(v_1, ω_1, …, v_n, ω_n)``, ``v_i`` the CoM velocity, world axes.
* **E** — efforts on bodies ``(F_1, N_1, …)``: resultant force and torque about ``C_i``, world axes.
* **J** — efforts exchanged in joints ``(f_1, n_1, …)``: what link ``parent(i)`` applies on link
  ``i``, torque about the joint point ``J_i``, in joint frame ``i`` (as ``data.f``).

:func:`aggregate` returns, at a state (q, q̇): the velocity basis ``vω_α`` (columns of
``velocity_basis``), the maintaining-effort directors ``PL_α`` (§2.2) and their images ``pl_α``
under the canonical isomorphism E → J (§2.3), and ``FN(q, q̇, 0)`` / ``fn(q, q̇, 0)``; so that

    fn(q, q̇, q̈) = Σ_α q̈_α pl_α(q) + fn(q, q̇, 0)                    (eq. 2.3.7)

With ``A = [pl_1 … pl_n]`` and ``b = fn(q, q̇, 0)``: ``S A`` is the links' mass matrix, ``S b``
the bias, and the J∥/J⊥ split (§2.4) gives the maintaining map J∥ → J⊥ (§2.6),
:class:`MaintainingMap`. The actuators' rotors (``model.armature``) are no body of E: a rotor
spins about its joint axis and takes ``armature_i q̈_i`` of the axial effort before it reaches
the link, so ``M(q) = S A + diag(armature)`` (:attr:`Aggregated.mass_matrix`) while the joint
wrenches ``fn`` (eq. 2.3.7) stay the link-side loads.
"""
from __future__ import annotations

from dataclasses import dataclass

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.multibody import joints as jt
from robot_dynamics.errors import as_vector, as_wrenches, check_data, raise_overflow
from robot_dynamics.algorithm.crba import mass_matrix
from robot_dynamics.algorithm.rnea import rnea
from robot_dynamics.spatial.algebra import force_cross


def _frames(model, data):
    """World rotation of each body, joint point J_i and CoM C_i (world), after kinematics."""
    R = data.oMi[:, :3, :3]
    J = data.oMi[:, :3, 3]
    C = J + np.einsum("nij,nj->ni", R, model.coms)
    return R, J, C


def _world_inertias(model, R):
    return np.einsum("nij,njk,nlk->nil", R, model.inertias, R)


def efforts_to_joints(model, data, FN) -> np.ndarray:
    """The canonical isomorphism E → J (seed 004 §2.3), for the pose in ``data``.

    Solves each link's balance ``F_i = f_i − Σ_c f_c``,
    ``N_i = n_i + C_iJ_i × f_i − Σ_c (n_c + C_iJ_c × f_c)`` from the leaves inwards (the
    backward pass of Newton–Euler; ``c`` runs over the children of ``i``). ``FN`` is (6n,) or
    (6n, k); returns ``fn`` in the same shape, each joint's wrench in its joint frame.
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "efforts_to_joints")
    R, J, C = _frames(model, data)
    FN = np.asarray(FN, dtype=float)
    flat = FN.ndim == 1
    E = FN.reshape(model.nv, 6, -1)
    f = np.zeros_like(E)  # world axes while summing
    for i in range(model.nv - 1, -1, -1):
        f[i, :3] += E[i, :3]
        f[i, 3:] += E[i, 3:] - np.cross(J[i] - C[i], f[i, :3], axis=0)
        p = model.parents[i]
        if p >= 0:  # joint i's effort on parent p, carried to p's balance about C_p
            f[p, :3] += f[i, :3]
            f[p, 3:] += f[i, 3:] + np.cross(J[i] - C[p], f[i, :3], axis=0)
    out = np.empty_like(f)
    out[:, :3] = np.einsum("nji,njk->nik", R, f[:, :3])
    out[:, 3:] = np.einsum("nji,njk->nik", R, f[:, 3:])
    return out.reshape(FN.shape) if not flat else out.reshape(-1)


def joints_to_efforts(model, data, fn) -> np.ndarray:
    """The inverse isomorphism J → E: the resultant effort on each body about its CoM (world)."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "joints_to_efforts")
    R, J, C = _frames(model, data)
    fn = np.asarray(fn, dtype=float)
    loc = fn.reshape(model.nv, 6, -1)
    f = np.einsum("nij,njk->nik", R, loc[:, :3])
    n = np.einsum("nij,njk->nik", R, loc[:, 3:])
    E = np.zeros_like(loc)
    for i in range(model.nv):
        E[i, :3] += f[i]
        E[i, 3:] += n[i] + np.cross(J[i] - C[i], f[i], axis=0)
        p = model.parents[i]
        if p >= 0:
            E[p, :3] -= f[i]
            E[p, 3:] -= n[i] + np.cross(J[i] - C[p], f[i], axis=0)
    return E.reshape(fn.shape)


def axial_selector(model) -> np.ndarray:
    """``S`` (nv, 6nv): picks each joint's axial (J∥) component of an aggregated joint effort."""
    S = np.zeros((model.nv, 6 * model.nv))
    for i in range(model.nv):
        S[i, 6 * i:6 * i + 6] = model.motion_subspaces[i]
    return S


def normal_selector(model) -> np.ndarray:
    """``N`` (5nv, 6nv): orthonormal coordinates of each joint's J⊥ component (seed 004 §2.4)."""
    N = np.zeros((5 * model.nv, 6 * model.nv))
    for i in range(model.nv):
        N[5 * i:5 * i + 5, 6 * i:6 * i + 6] = jt.normal_basis(model.kinds[i], model.axes[i])
    return N


@dataclass
class Aggregated:
    """Seed 004's aggregated description of the arm at one state (q, q̇). Shapes with n = nv."""

    velocity_basis: np.ndarray  # (6n, n): column α is vω_α, [v_Ci; ω_i] per body, world axes
    PL: np.ndarray  # (6n, n): column α is PL_α = (m_i v_αi, I_i ω_αi)_i ∈ E
    FN0: np.ndarray  # (6n,): FN(q, q̇, 0) ∈ E, gravity included
    pl: np.ndarray  # (6n, n): column α is pl_α ∈ J (joint frames) — the matrix A of §2.6
    fn0: np.ndarray  # (6n,): fn(q, q̇, 0) ∈ J — the vector b of §2.6
    S: np.ndarray  # (n, 6n) axial selector
    N: np.ndarray  # (5n, 6n) normal selector
    armature: np.ndarray = None  # (n,) the rotors' reflected inertia (model.armature)
    FN_ext: np.ndarray = None  # (6n,): FN_ext ∈ E, the external efforts given to aggregate()

    # -- external efforts and perfect reactions (seed 004 §1.3.4–1.3.5) ----------------------
    def tangential_part(self, FN) -> np.ndarray:
        """FN∥ ∈ E∥ = M_q(0) = span(PL_α): ``PL c`` with ``Bᵀ PL c = Bᵀ FN`` (the part of FN that
        does work on the velocity basis B; §1.3.5.1, the power pairing of V and E)."""
        B = self.velocity_basis
        return self.PL @ np.linalg.solve(B.T @ self.PL, B.T @ np.asarray(FN, dtype=float))

    def normal_part(self, FN) -> np.ndarray:
        """FN⊥ ∈ E⊥: the part of FN that does no work for any virtual velocity (``Bᵀ FN⊥ = 0``)."""
        FN = np.asarray(FN, dtype=float)
        return FN - self.tangential_part(FN)

    @property
    def maintaining_normal(self) -> np.ndarray:
        """FN_*: the unique maintaining effort of the state that is normal (§1.3.5), the normal
        part of FN(q, q̇, 0)."""
        return self.normal_part(self.FN0)

    def perfect_reaction(self, FN_ext=None) -> np.ndarray:
        """FN_vin = FN_* − FN_ext⊥ (eq. 1.3.5.7): the constraint reaction without friction, for
        the external efforts ``FN_ext`` (default: those given to :func:`aggregate`, else none).
        FN_ext + FN_vin is then a maintaining effort of the state; its image in J
        (:func:`efforts_to_joints`) has no axial part."""
        if FN_ext is None:
            FN_ext = self.FN_ext
        if FN_ext is None:
            return self.maintaining_normal
        return self.maintaining_normal - self.normal_part(FN_ext)

    def fn(self, qdd) -> np.ndarray:
        """Eq. 2.3.7: the joint efforts (n, 6) that maintain the motion (q, q̇, q̈)."""
        return (self.pl @ np.asarray(qdd, dtype=float) + self.fn0).reshape(-1, 6)

    @property
    def mass_matrix(self) -> np.ndarray:
        """M = S A + diag(armature) (seed 004 §2.6 plus the rotors)."""
        M = self.S @ self.pl
        if self.armature is not None:
            M[np.diag_indices_from(M)] += self.armature
        return M

    @property
    def bias(self) -> np.ndarray:
        return self.S @ self.fn0

    def maintaining_map(self) -> "MaintainingMap":
        return MaintainingMap(self)


class MaintainingMap:
    """The affine map J∥ → J⊥ of seed 004 §2.6: axial efforts (motor + friction, one per joint)
    → the normal reactions (5 per joint, :func:`normal_selector` coordinates) that keep the
    joints together: ``fn⊥ = N A M⁻¹ (τ∥ − S b) + N b``, M with the rotors' armature.
    ``matrix`` and ``offset`` expose it."""

    def __init__(self, agg: Aggregated):
        M = agg.mass_matrix
        NA = agg.N @ agg.pl
        self.matrix = np.linalg.solve(M.T, NA.T).T  # N A M⁻¹
        self.offset = agg.N @ agg.fn0 - self.matrix @ agg.bias
        self._N = agg.N

    def __call__(self, tau_axial) -> np.ndarray:
        """Normal reactions (n, 5) for the axial efforts ``tau_axial`` (n,)."""
        return (self.matrix @ np.asarray(tau_axial, dtype=float) + self.offset).reshape(-1, 5)

    def normal_wrenches(self, tau_axial) -> np.ndarray:
        """The same reactions as joint-frame wrenches (n, 6) with zero axial component."""
        return (self._N.T @ (self.matrix @ np.asarray(tau_axial, dtype=float) + self.offset)).reshape(-1, 6)


def velocity_basis(model, data) -> np.ndarray:
    """vω_α for every α (§2.2), for the pose in ``data``: (6n, n), world axes."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "velocity_basis")
    n = model.nv
    R, J, C = _frames(model, data)
    B = np.zeros((6 * n, n))
    for alpha in range(n):
        e = R[alpha] @ model.axes[alpha]
        prismatic = jt.is_prismatic(model.kinds[alpha])
        for i in _subtree(model, alpha):
            if prismatic:
                B[6 * i:6 * i + 3, alpha] = e
            else:
                B[6 * i:6 * i + 3, alpha] = np.cross(e, C[i] - J[alpha])
                B[6 * i + 3:6 * i + 6, alpha] = e
    return B


def _subtree(model, alpha):
    inside = np.zeros(model.nv, dtype=bool)
    inside[alpha] = True
    for i in range(alpha + 1, model.nv):
        p = model.parents[i]
        inside[i] = p >= 0 and inside[p]
    return np.flatnonzero(inside)


def external_efforts(model, data, fext) -> np.ndarray:
    """FN_ext ∈ E (seed 004 eq. 1.3.4.1) of body wrenches ``fext`` (nv, 6) in Pinocchio's
    convention (row i on body i, body frame, torque about its origin), at the pose in ``data``:
    per body the force and the torque about its centre of mass, world axes."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "external_efforts")
    fext = as_wrenches("fext", fext, model.nv, where="external_efforts", names=model.link_names)
    R = data.oMi[:, :3, :3]
    out = np.zeros(6 * model.nv)
    for i in range(model.nv):
        f, n_origin = fext[i, :3], fext[i, 3:]
        out[6 * i:6 * i + 3] = R[i] @ f
        out[6 * i + 3:6 * i + 6] = R[i] @ (n_origin - np.cross(model.coms[i], f))
    return out


@by_model
def aggregate(model, data, q, v, fext=None) -> Aggregated:
    """Build the :class:`Aggregated` objects at (q, q̇). One RNEA pass (q̈ = 0) gives FN(q, q̇, 0).
    ``fext`` (nv, 6), Pinocchio's convention: the external efforts, kept as ``FN_ext`` ∈ E for
    :meth:`Aggregated.perfect_reaction` (FN(q, q̇, 0) itself has only gravity, as a base
    acceleration).

    Inputs too large for finite objects raise :class:`~robot_dynamics.errors.InputError`
    (``overflow: …``, naming them)."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "aggregate")
    q = as_vector("q", q, model.nq, where="aggregate")
    v = as_vector("v", v, model.nv, where="aggregate")
    with np.errstate(all="ignore"):  # overflow is reported below, naming the input
        agg = _aggregate(model, data, q, v)
    if not all(np.isfinite(x).all() for x in (agg.FN0, agg.pl, agg.fn0, agg.velocity_basis)):
        def finite(q, v):
            with np.errstate(all="ignore"):
                b = _aggregate(model, data, q, v)
            return all(np.isfinite(x).all() for x in (b.FN0, b.pl, b.fn0, b.velocity_basis))

        raise_overflow("aggregate", [("q", q), ("v", v)], finite)
    if fext is not None:
        agg.FN_ext = external_efforts(model, data, fext)
    return agg


def _aggregate(model, data, q, v) -> Aggregated:
    n = model.nv
    mass_matrix(model, data, q)  # fills the poses data.oMi
    rnea(model, data, q, v, np.zeros(n))  # fills data.v, data.a (gravity included)
    R, J, C = _frames(model, data)
    Iw = _world_inertias(model, R)
    FN0 = np.zeros(6 * n)
    for i in range(n):
        inertia = model.spatial_inertias[i]
        vi, ai = data.v[i], data.a[i]
        body = inertia @ ai + force_cross(vi) @ (inertia @ vi)  # seed 002 about the origin
        F, n_origin = body[:3], body[3:]
        N_com = n_origin - np.cross(model.coms[i], F)  # torque about C_i
        FN0[6 * i:6 * i + 3] = R[i] @ F
        FN0[6 * i + 3:6 * i + 6] = R[i] @ N_com
    B = velocity_basis(model, data)
    PL = np.zeros_like(B)
    for i in range(n):
        PL[6 * i:6 * i + 3] = model.masses[i] * B[6 * i:6 * i + 3]
        PL[6 * i + 3:6 * i + 6] = Iw[i] @ B[6 * i + 3:6 * i + 6]
    pl = efforts_to_joints(model, data, PL)
    fn0 = efforts_to_joints(model, data, FN0)
    return Aggregated(B, PL, FN0, pl, fn0, axial_selector(model), normal_selector(model),
                      np.array(model.armature))
