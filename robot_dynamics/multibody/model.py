"""The constant :class:`Model` of a robot and its :class:`Data` workspace.

Follows Pinocchio's split: the Model holds what never changes (tree, placements, inertias,
limits); a Data holds the buffers one user's computations write. Algorithms take both.

:func:`robot_dynamics.multibody.build.build_model` makes a Model from a robot description.
"""
from __future__ import annotations

import difflib
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from robot_dynamics.errors import ModelError, as_vector
from robot_dynamics.multibody.inertia import add_part, body_parameters, check_inertia, placed
from robot_dynamics.spatial.algebra import spatial_inertia
from robot_dynamics.kernels.fd import ACC
from robot_dynamics.kernels.friction import ID_OUT
from robot_dynamics.kernels.layout import make_work

class Payload(NamedTuple):
    """A load carried by a link (:meth:`Model.set_payload`): ``mass`` (kg), ``com`` (3,) its
    centre of mass in the link frame, ``inertia`` (3, 3) about that centre, link-frame axes."""

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray


class Model:
    """Constant description of a fixed-base robot. See docs/ARCHITECTURE.md for every field."""

    coupling = None  # mimic joints: G of q_full = G q + o on a robot_dynamics.multibody.coupling.MimicModel
    #: None when the mass matrix is invertible; else the one-line reason (naming the joints that
    #: move no inertia) that forward dynamics and the Simulator raise — the model loads, and rnea,
    #: inverse dynamics and M need no inverse. Set by build_model, re-checked when armature or a
    #: payload changes on a model built with a singular spatial inertia.
    mass_matrix_problem: str | None = None
    _mass_matrix_checked = False  # some moving body's spatial inertia was singular at build

    def __init__(self):  # filled by build_model
        self.name = ""
        self.source = ""
        self.nq = self.nv = 0
        self.joint_names: list[str] = []
        self.link_names: list[str] = []
        self.joint_types: list[str] = []
        self.base_link = ""
        self._gravity = np.array([0.0, 0.0, -9.81])
        self._armature = np.zeros(0)
        self._payloads: dict[str, Payload] = {}

    # -- gravity and armature are the settable fields ---------------------------------------
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

    @property
    def armature(self) -> np.ndarray:
        """Reflected rotor inertia per joint (nv,) ≥ 0, as Pinocchio's ``model.armature``
        (N²·J_rotor of a gear of ratio N): M + diag(armature) in every algorithm, τ = Sᵀ fn +
        armature ∘ q̈ (the joint wrenches fn exclude the rotors). Zeros by default; set the whole
        array (``model.armature = a``, a scalar sets every joint) or from an actuator config,
        before or after creating Data / a Simulator (the packed model holds it: ``_arm``).
        See docs/ARCHITECTURE.md "Armature"."""
        return self._armature

    @armature.setter
    def armature(self, a) -> None:
        try:
            a = np.array(a, dtype=float) if np.ndim(a) else np.full(self.nv, float(a))
        except (TypeError, ValueError):  # (complex: TypeError)
            raise ModelError(f"armature: expected {self.nv} numbers >= 0, got {a!r}") from None
        if a.shape != (self.nv,) or not np.all(np.isfinite(a)) or np.any(a < 0):  # (1, nv) too
            raise ModelError(f"armature: expected {self.nv} finite numbers >= 0 (one per joint "
                             f"{self.joint_names}), got {a.tolist()}")
        if "_arm" in self.__dict__:  # the packed model's armature slots (set by build_model)
            self._arm[:] = a
        a.setflags(write=False)
        self._armature = a
        self._recheck_mass_matrix()

    def _recheck_mass_matrix(self) -> None:
        """Armature or a payload may make a singular mass matrix invertible (or singular again
        when removed): re-check, only for models whose build found a singular spatial inertia."""
        if self._mass_matrix_checked:
            self.mass_matrix_problem = self._mass_check(self)  # set with the flag by build_model

    # -- payloads: masses carried by links, set and removed at run time ------------------------
    @property
    def payloads(self) -> MappingProxyType:
        """The payloads set by :meth:`set_payload`, link name → :class:`Payload` (read-only)."""
        return MappingProxyType(self._payloads)

    def set_payload(self, link: str, mass, com=(0.0, 0.0, 0.0), inertia=None) -> None:
        """Let ``link`` carry a rigid load of ``mass`` kg > 0, centre of mass ``com`` in the link
        frame and rotational inertia ``inertia`` (3×3, about the centre of mass, link-frame
        axes; default zeros: a point mass); ``mass=None`` removes the link's payload.

        As Franka's ``SetLoad`` or UR's ``set_payload``, at run time: the model is not rebuilt,
        and every algorithm, an existing Data or Simulator and mimic models (through
        ``model.full``) see it at once. The load joins the body that moves ``link`` (a link
        fixed to another is placed with its fixed joints) exactly as a fixed child link of that
        mass in the URDF would (parallel-axis theorem); setting a link's payload again replaces
        it, and removing the last one of a body restores the built inertias bit for bit. A
        payload on a link fixed to the base moves no joint (it adds to ``base_mass`` only).
        Bad input raises a one-line :class:`ModelError` naming the field.
        """
        body, _ = self._payload_frame(link)
        if mass is None:
            if self._payloads.pop(link, None) is not None:
                self._refresh_body(body)
            return
        self._payloads[link] = payload_parameters(link, mass, com, inertia)
        self._refresh_body(body)

    def _payload_frame(self, link):
        frames = self.__dict__.get("frames", {})
        if isinstance(link, str) and link in frames:
            return frames[link]
        raise ModelError(f"set_payload: link: {unknown_link(self, link)}")

    def _refresh_body(self, body: int) -> None:
        """Write the inertia of ``body`` (as built, plus its payloads) wherever it is read: the
        packed model (``_I6``), the kernels' copies (``_kargs``) and the per-body fields."""
        sums, *built = self._rigid[body]
        loads = [(p, self.frames[p.link][1]) for p in self._payloads.values()
                 if self.frames[p.link][0] == body]
        for p, Tl in loads:
            sums = add_part(sums, p.mass, *placed(Tl, p.com, p.inertia))
        if body < 0:  # fixed to the base: no joint moves it
            self.base_mass = built[0] if not loads else float(sums[0])
            return
        if loads:
            m, c, Ic = body_parameters(sums)
            I6 = spatial_inertia(m, c, Ic)
        else:  # as built, bit for bit
            m, c, Ic, I6 = built
        self._I6[body] = I6
        self._kargs[5][body] = I6
        for name, value in (("masses", m), ("coms", c), ("inertias", Ic),
                            ("spatial_inertias", I6)):
            a = np.array(getattr(self, name))
            a[body] = value
            a.setflags(write=False)
            setattr(self, name, a)
        self._recheck_mass_matrix()

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

    # -- the mimic API (robot_dynamics.multibody.coupling.MimicModel) on a robot with no coupling: every
    # movable joint is its own coordinate, so code written for ``mimic=True`` runs on any robot
    followers = MappingProxyType({})  # follower joint → its leader (none here)

    @property
    def full(self) -> "Model":
        """The model of every movable joint: this one (no joint follows another)."""
        return self

    @property
    def full_joint_names(self) -> list[str]:
        """Names of every movable joint, in :meth:`expand`'s order: ``joint_names``."""
        return self.joint_names

    def expand(self, q) -> np.ndarray:
        """Positions of every movable joint (``full_joint_names``): q itself here."""
        return as_vector("q", q, self.nq, where="expand").copy()

    def expand_velocity(self, v) -> np.ndarray:
        """Velocities (or accelerations) of every movable joint: v itself here."""
        return as_vector("v", v, self.nv, where="expand_velocity").copy()

    def reduce_effort(self, tau_full) -> np.ndarray:
        """Efforts on the coordinates of every movable joint's efforts: the same here."""
        return as_vector("tau_full", tau_full, self.nv, where="reduce_effort").copy()

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
        """The :class:`~robot_dynamics.algorithm.friction_solve.FrictionSolveReport` of the last forward-dynamics
        call on this Data (built on first read from the compiled solver's state)."""
        if callable(self._report):  # a compiled solve left its report in the work arrays
            self._report = self._report(self._model, self._views)
        return self._report

    @fd_report.setter
    def fd_report(self, report):
        self._report = report



def unknown_link(model, link) -> str:
    """'robot … has no link …; did you mean …? (links: …)' for a link ``model`` lacks."""
    frames = model.frames
    close = difflib.get_close_matches(str(link), list(frames), n=3)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return f"robot {model.name!r} has no link {link!r}{hint} (links: {_names(frames, 12)})"


#: payload limits (robot_dynamics.ros.payload's parameters, the sweep's factors): a mass beyond
#: this [kg], a com farther than this from its link [m], or an inertia entry beyond this
#: [kg·m²]: a unit mistake (mass_refusal, com_refusal: the bounds themselves allowed)
MAX_MASS = 1e4
MAX_COM = 10.0
MAX_INERTIA = 1e4


def mass_refusal(mass):
    """Why payload ``mass`` [kg] is refused, or None: finite, from 0 to MAX_MASS inclusive.
    The one statement of the limit, for the nodes' parameter, the demo's --payload-mass and the
    sweep's payload_mass (:mod:`robot_dynamics.ros.payload`,
    :mod:`robot_dynamics.simulation.sweep`)."""
    if not np.isfinite(mass) or not 0 <= mass <= MAX_MASS:
        return (f"expected a number from 0 to {MAX_MASS:g} (kg, not g?; 0 = no payload), got "
                f"{mass:g}")
    return None


def com_refusal(com):
    """Why payload ``com`` [m, link frame] is refused, or None: each coordinate at most
    MAX_COM from the link origin (MAX_COM itself allowed). The one statement of the limit, for
    the nodes' parameter and file entries, the demo's --payload-com and the sweep's
    payload_com."""
    far = float(np.abs(np.asarray(com, dtype=float)).max())
    if not far <= MAX_COM:
        return f"{far:g} m from the link origin (at most {MAX_COM:g} m: metres, not millimetres?)"
    return None


def payload_parameters(link: str, mass, com, inertia, where: str | None = None) -> Payload:
    """A checked :class:`Payload`, or a one-line :class:`ModelError` naming the field (mass > 0
    finite; com 3 finite numbers; inertia 3×3, finite, symmetric, positive semi-definite and
    within the triangle inequality I1 + I2 >= I3, as every rigid body)."""
    where = where or f"payload on {link!r}"
    m = _floats(mass, ())
    if m is None or not np.isfinite(m) or m <= 0:
        raise ModelError(f"{where}: mass: expected a finite number > 0 (kg), got {mass!r} "
                         "(mass=None removes the payload)")
    c = _floats(com, (3,))
    if c is None or not np.all(np.isfinite(c)):
        raise ModelError(f"{where}: com: expected 3 finite numbers (m, link frame), got "
                         f"{_shown(com)}")
    Ic = np.zeros((3, 3)) if inertia is None else _floats(inertia, (3, 3))
    if Ic is None or not np.all(np.isfinite(Ic)):
        raise ModelError(f"{where}: inertia: expected a 3x3 matrix of finite numbers (kg·m², "
                         f"about the com), got {_shown(inertia)}")
    asym = float(np.abs(Ic - Ic.T).max())
    if asym > 1e-9 * float(np.abs(Ic).max()) + 1e-15:
        raise ModelError(f"{where}: inertia: not symmetric (|I - Iᵀ| = {_num(asym)}): "
                         f"{Ic.tolist()}")
    problem, _ = check_inertia(m, c, Ic)
    if problem:
        raise ModelError(f"{where}: inertia: {problem}")
    c.setflags(write=False)
    Ic.setflags(write=False)
    return Payload(link, m, c, Ic)


def _floats(x, shape):
    """``x`` as a float array of ``shape`` (a float for ``()``), or None when it is not numbers
    (strings, booleans, None, ragged lists) of that shape."""
    try:
        a = np.array(x)
    except (TypeError, ValueError):
        return None
    if a.dtype.kind not in "iuf" or a.shape != shape:
        return None
    a = a.astype(float)
    return float(a) if shape == () else a


def _shown(x) -> str:
    """A value as one line (an array's repr spans several)."""
    return repr(x.tolist()) if isinstance(x, np.ndarray) else " ".join(repr(x).split())


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _num(x) -> str:
    """A number as a user reads it (never ``np.float64(…)``)."""
    return f"{float(x):.6g}"


def _nums(xs) -> str:
    return "[" + ", ".join(_num(x) for x in xs) + "]"


def _names(names, limit: int = 8) -> str:
    names = list(names)
    if len(names) <= limit:
        return repr(names)
    return repr(names[:limit])[:-1] + f", … ({len(names)} in all)]"
