"""One friction law per joint: the friction map J⊥ → J∥ of the whole arm (seed 004 §2.5)."""
from __future__ import annotations

import numpy as np

from .. import joints as jt
from ..errors import InputError, ModelError, as_vector, check_friction
from .base import FrictionLaw
from .composite import CompositeFriction, part_name
from .none import NoFriction
from ..kernels.friction import MAX_PARTS, friction_kernel, friction_parts_kernel, pack_friction


class FrictionModel:
    """Friction laws in the model's joint order. Use :func:`friction_from_config` to build one.

    It records the :class:`~robot_dynamics.model.Model` it was built for (``model``; without
    one, the first model with the same joints it is used with): every algorithm taking a
    friction model refuses one of another robot (:func:`~robot_dynamics.errors.check_friction`),
    whose per-joint laws would be read past their end.
    """

    def __init__(self, joint_names, laws, model=None):
        if len(joint_names) != len(laws):
            raise ModelError(f"{len(laws)} friction laws for {len(joint_names)} joints")
        for name, law in zip(joint_names, laws):
            if not isinstance(law, FrictionLaw):
                raise ModelError(f"joint {name!r}: {law!r} is not a FrictionLaw")
        self.joint_names = list(joint_names)
        self.laws = list(laws)
        self.active = np.array([not isinstance(law, NoFriction) for law in laws])
        #: per joint, the names of its law's parts (composite laws) or its part name
        #: (``gear_mesh`` or ``bearing``); none for a joint without friction
        self.part_names = [law.part_names if isinstance(law, CompositeFriction) else
                           ([] if isinstance(law, NoFriction) else [part_name(law)])
                           for law in laws]
        #: the energy audit splits the friction dissipation by part (energy.py)
        self.has_parts = (any(isinstance(law, CompositeFriction) for law in laws)
                          or len({n for names in self.part_names for n in names}) > 1)
        self._packed = pack_friction(self)  # None: some law needs the Python path
        self._model = None
        if model is not None:
            check_friction(model, self, "FrictionModel")

    def magnitudes(self, model, wrenches, q, v, directions=None) -> np.ndarray:
        """Friction magnitudes (nv,) ≥ 0 for joint wrenches (nv, 6) at state (q, q̇).

        ``directions`` (nv,) gives the sign of motion of joints with ``q̇_i = 0`` (breakaway).
        """
        if self._model is not model:
            check_friction(model, self, "FrictionModel.magnitudes")
        n = model.nv
        q = as_vector("q", q, n, where="FrictionModel.magnitudes")
        v = as_vector("v", v, n, where="FrictionModel.magnitudes")
        d = (np.zeros(n) if directions is None else
             as_vector("directions", directions, n, where="FrictionModel.magnitudes"))
        wrenches = np.ascontiguousarray(wrenches, dtype=np.float64)
        if wrenches.shape != (n, 6):
            raise InputError(f"wrenches in FrictionModel.magnitudes: expected shape ({n}, 6), "
                             f"got {wrenches.shape}")
        out = np.zeros(n)
        if self._packed is not None:
            if not wrenches.flags.writeable:
                wrenches = wrenches.copy()  # the kernel's one specialisation takes writable arrays
            friction_kernel(self._packed[0], self._packed[1], model._kargs[0], model._kargs[2],
                            wrenches, q, v, d, out)
            return out
        prismatic = model.kinds == jt.PRISMATIC
        for i in np.flatnonzero(self.active):
            out[i] = self.laws[i].magnitude(wrenches[i], model.axes[i], bool(prismatic[i]),
                                            q[i], v[i], d[i])
        return out

    def parts(self, model, wrenches, q, v, directions=None) -> dict:
        """Each named part's magnitude: {part name: (nv,) ≥ 0} (zero on joints without that
        part); the values of a joint sum to its :meth:`magnitudes` entry."""
        n = model.nv
        mags = self.magnitudes(model, wrenches, q, v, directions)  # checks every argument
        out = {}
        if self._packed is not None:
            wr = np.array(wrenches, dtype=np.float64)
            d = np.zeros(n) if directions is None else np.array(directions, dtype=np.float64)
            table = np.zeros((n, MAX_PARTS))
            friction_parts_kernel(self._packed[0], self._packed[1], model._kargs[0],
                                  model._kargs[2], wr, np.array(v, dtype=np.float64), d, table)
            for i, names in enumerate(self.part_names):
                for j, name in enumerate(names):
                    out.setdefault(name, np.zeros(n))[i] = table[i, j]
            return out
        prismatic = model.kinds == jt.PRISMATIC
        d = np.zeros(n) if directions is None else np.asarray(directions, dtype=float)
        for i in np.flatnonzero(self.active):
            law = self.laws[i]
            args = (wrenches[i], model.axes[i], bool(prismatic[i]), q[i], v[i], d[i])
            values = law.parts(*args) if isinstance(law, CompositeFriction) else [mags[i]]
            for name, value in zip(self.part_names[i], values):
                out.setdefault(name, np.zeros(n))[i] = value
        return out

    def bounds(self, model, wrenches, q, directions) -> np.ndarray:
        """Stiction bounds (nv,): the largest friction each joint can hold at rest."""
        if self._model is not model:
            check_friction(model, self, "FrictionModel.bounds")
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
