"""One friction law per joint: the friction map J⊥ → J∥ of the whole arm (seed 004 §2.5)."""
from __future__ import annotations

import numpy as np

from .. import joints as jt
from ..errors import ModelError
from .base import FrictionLaw
from .none import NoFriction
from ..kernels.friction import friction_kernel, pack_friction


class FrictionModel:
    """Friction laws in the model's joint order. Use :func:`friction_from_config` to build one."""

    def __init__(self, joint_names, laws):
        if len(joint_names) != len(laws):
            raise ModelError(f"{len(laws)} friction laws for {len(joint_names)} joints")
        for name, law in zip(joint_names, laws):
            if not isinstance(law, FrictionLaw):
                raise ModelError(f"joint {name!r}: {law!r} is not a FrictionLaw")
        self.joint_names = list(joint_names)
        self.laws = list(laws)
        self.active = np.array([not isinstance(law, NoFriction) for law in laws])
        self._packed = pack_friction(self)  # None: some law needs the Python path

    def _check(self, model):
        if list(model.joint_names) != self.joint_names:
            raise ModelError(f"friction model is for joints {self.joint_names}, "
                             f"robot {model.name!r} has {model.joint_names}")

    def magnitudes(self, model, wrenches, q, v, directions=None) -> np.ndarray:
        """Friction magnitudes (nv,) ≥ 0 for joint wrenches (nv, 6) at state (q, q̇).

        ``directions`` (nv,) gives the sign of motion of joints with ``q̇_i = 0`` (breakaway).
        """
        out = np.zeros(model.nv)
        if self._packed is not None:
            d = np.zeros(model.nv) if directions is None else np.asarray(directions, dtype=float)
            friction_kernel(self._packed[0], self._packed[1], model._kargs[0], model._kargs[2],
                            np.ascontiguousarray(wrenches), np.asarray(q, dtype=float),
                            np.asarray(v, dtype=float), d, out)
            return out
        prismatic = model.kinds == jt.PRISMATIC
        for i in np.flatnonzero(self.active):
            d = 0.0 if directions is None else directions[i]
            out[i] = self.laws[i].magnitude(wrenches[i], model.axes[i], bool(prismatic[i]),
                                            q[i], v[i], d)
        return out

    def bounds(self, model, wrenches, q, directions) -> np.ndarray:
        """Stiction bounds (nv,): the largest friction each joint can hold at rest."""
        if self._packed is not None:
            return self.magnitudes(model, wrenches, q, np.zeros(model.nv), directions)
        out = np.zeros(model.nv)
        prismatic = model.kinds == jt.PRISMATIC
        for i in np.flatnonzero(self.active):
            out[i] = self.laws[i].breakaway(wrenches[i], model.axes[i], bool(prismatic[i]),
                                            q[i], directions[i])
        return out

    def to_config(self) -> dict:
        """The mapping (YAML structure) that rebuilds this model: one entry per joint."""
        return {"joints": {n: law.to_config() for n, law in zip(self.joint_names, self.laws)}}

    def __repr__(self) -> str:
        return f"FrictionModel({dict(zip(self.joint_names, self.laws))})"
