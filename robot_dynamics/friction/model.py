"""One friction law per joint: the friction map J⊥ → J∥ of the whole arm (seed 004 §2.5)."""
from __future__ import annotations

import numpy as np

from robot_dynamics.multibody import joints as jt
from robot_dynamics.errors import InputError, ModelError, as_vector, check_friction
from robot_dynamics.friction.base import FrictionLaw
from robot_dynamics.friction.composite import CompositeFriction, part_name
from robot_dynamics.friction.none import NoFriction
from robot_dynamics.friction.packing import pack_friction
from robot_dynamics.kernels.friction import (MAX_PARTS, friction_kernel, friction_parts_kernel,
                                             friction_split_kernel)


class FrictionModel:
    """Friction laws in the model's joint order. Use :func:`friction_from_config` to build one.

    It records the :class:`~robot_dynamics.multibody.model.Model` it was built for (``model``; without
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
        self._part_index = None
        self._split_ids = None
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

    def part_table(self, model, wrenches, q, v, directions):
        """Unchecked (float64 arrays of the right shapes): (nv, MAX_PARTS) magnitudes, column j
        the j-th name of ``part_names[i]``; rows sum to :meth:`magnitudes`. The energy audit's
        per-step path (:func:`robot_dynamics.algorithm.energy.split_friction_dissipation`)."""
        n = model.nv
        table = np.zeros((n, max([MAX_PARTS] + [len(p) for p in self.part_names])))
        if self._packed is not None:
            friction_parts_kernel(self._packed[0], self._packed[1], model._kargs[0],
                                  model._kargs[2], wrenches, v, directions, table)
            return table
        prismatic = model.kinds == jt.PRISMATIC
        for i in np.flatnonzero(self.active):
            law = self.laws[i]
            args = (wrenches[i], model.axes[i], bool(prismatic[i]), q[i], v[i], directions[i])
            values = (law.parts(*args) if isinstance(law, CompositeFriction)
                      else [law.magnitude(*args)])
            table[i, :len(values)] = values
        return table

    def split_dissipation(self, model, wrenches, q, v_end, tauf, v_mid, h, parts, total=None):
        """Add one step's friction dissipation by part to ``parts`` (name → J); see
        :func:`robot_dynamics.algorithm.energy.split_friction_dissipation`. Unchecked float64 arrays."""
        if self._packed is None:
            e = -h * tauf * v_mid
            if total is not None and e.sum() != 0.0:
                e = e * (total / e.sum())
            table = self.part_table(model, wrenches, q, v_end, -np.sign(tauf))
            mags = table.sum(axis=1)
            table *= np.divide(e, mags, out=np.zeros_like(e), where=mags > 0)[:, None]
            for name, (rows, cols) in self.part_index.items():
                parts[name] = parts.get(name, 0.0) + float(table[rows, cols].sum())
            return parts
        if self._split_ids is None:
            names = list(self.part_index)
            ids = np.full((model.nv, MAX_PARTS), -1, dtype=np.int64)
            for k, name in enumerate(names):
                rows, cols = self.part_index[name]
                ids[rows, cols] = k
            self._split_ids = (names, ids, np.zeros(len(names)))
        names, ids, out = self._split_ids
        out[:] = 0.0
        friction_split_kernel(self._packed[0], self._packed[1], model._kargs[0], model._kargs[2],
                              wrenches, v_end, tauf, v_mid, h,
                              np.nan if total is None else float(total), ids, out)
        for name, value in zip(names, out):
            parts[name] = parts.get(name, 0.0) + value
        return parts

    @property
    def part_index(self) -> dict:
        """{part name: (rows, columns)} of :meth:`part_table`."""
        if self._part_index is None:
            index = {}
            for i, names in enumerate(self.part_names):
                for j, name in enumerate(names):
                    rows, cols = index.setdefault(name, ([], []))
                    rows.append(i)
                    cols.append(j)
            self._part_index = {k: (np.array(r), np.array(c)) for k, (r, c) in index.items()}
        return self._part_index

    def parts(self, model, wrenches, q, v, directions=None) -> dict:
        """Each named part's magnitude: {part name: (nv,) ≥ 0} (zero on joints without that
        part); the values of a joint sum to its :meth:`magnitudes` entry."""
        n = model.nv
        self.magnitudes(model, wrenches, q, v, directions)  # checks every argument
        table = self.part_table(model, np.array(wrenches, dtype=np.float64),
                                np.array(q, dtype=np.float64), np.array(v, dtype=np.float64),
                                np.zeros(n) if directions is None else
                                np.array(directions, dtype=np.float64))
        out = {}
        for name, (rows, cols) in self.part_index.items():
            out[name] = np.zeros(n)
            out[name][rows] = table[rows, cols]
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
