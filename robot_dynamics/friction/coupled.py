"""A full model's friction seen from the independent coordinates of a mimic model
(robot_dynamics.multibody.coupling): coordinate β's friction is the sum over the full joints it
drives, each from its own reaction wrench (docs/method.md, "coupled joints")."""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import check_friction
from robot_dynamics.kernels.layout import pack_laws
from robot_dynamics.multibody.coupling import MimicModel


class CoupledFriction:
    """A full model's :class:`~robot_dynamics.friction.FrictionModel` seen from the independent
    coordinates (the interface :func:`robot_dynamics.algorithm.friction_solve.solve_with_friction` uses):
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

    _packed = None  # solve_with_friction takes the reference path (robot_dynamics.algorithm.friction_solve)

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


@by_model
def python_step_reason(model, friction) -> str:
    """Why a Simulator of ``model`` (mimic joints) with ``friction`` steps through the Python
    statement rather than the compiled step, or "" when it does not (a model without mimic
    joints: never for this reason)."""
    return ""


@python_step_reason.register(MimicModel)
def _(model, friction) -> str:
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
