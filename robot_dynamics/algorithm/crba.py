"""Mass matrix (composite rigid body algorithm), bias and gravity efforts.

Seed 004 §2.6: with A = [pl_1 … pl_n] the joint-wrench directors and b = fn(q, q̇, 0), the
axial selection gives the links' mass matrix S A and the bias S b. The actuators' rotors add
their reflected inertia (``model.armature``, as Pinocchio's): M(q) = S A + diag(armature); they
spin about the joint axes, so they change neither the bias nor the joint wrenches. The CRBA
computes M in O(n·depth) without forming A; :mod:`robot_dynamics.algorithm.aggregated` forms A explicitly
for users who want it.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import F64, check_data, plain, run_converted
from robot_dynamics.kernels.dynamics import crba_entry, rnea_entry
from robot_dynamics.algorithm.rnea import _rnea_entry, _rnea_fast


@by_model
def mass_matrix(model, data, q) -> np.ndarray:
    """Joint-space mass matrix M(q) (nv, nv), symmetric positive definite, including the
    rotors' ``diag(model.armature)``.

    Fills ``data.M``, the composite inertias ``data.Ic``, the transforms ``data.X`` and the body
    poses ``data.oMi`` (compiled kernel; :func:`robot_dynamics.reference.dynamics.mass_matrix` is its statement).
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "mass_matrix")
    try:
        if q.dtype is F64 and q.flags.carray and crba_entry(model._mb, q, data._work):
            return data.M.copy()
    except (AttributeError, TypeError):  # not a float64 C vector: converted below
        pass
    mb, work = model._mb, data._work
    run_converted("mass_matrix", (("q", q, model.nq),), lambda q: crba_entry(mb, q, work))
    return data.M.copy()


@by_model
def bias_forces(model, data, q, v) -> np.ndarray:
    """b(q, q̇) = C(q, q̇) q̇ + g(q) (nv,): the efforts at zero acceleration (rnea with a = 0;
    the armature does not enter)."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "bias_forces")
    zero = np.zeros(model.nv)
    if plain(q, v) and _rnea_plain(model, data, q, v, zero):
        return data.tau.copy()
    return _rnea_entry(model, data, q, v, zero, "bias_forces")


@by_model
def gravity_torques(model, data, q) -> np.ndarray:
    """g(q) (nv,): the joint efforts that hold the robot still against gravity."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "gravity_torques")
    zero = np.zeros(model.nv)
    if plain(q) and _rnea_plain(model, data, q, zero, zero):
        return data.tau.copy()
    return _rnea_entry(model, data, q, zero, zero, "gravity_torques")


def _rnea_plain(model, data, q, v, a) -> bool:
    try:  # a 2-D float64 array passes errors.plain but not the kernel's signature
        return rnea_entry(model._mb, q, v, a, data._work)
    except TypeError:
        return False


@by_model
def coriolis_torques(model, data, q, v) -> np.ndarray:
    """C(q, q̇) q̇ (nv,): velocity-product efforts without gravity."""
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "coriolis_torques")
    zero = np.zeros(model.nv)

    def run(q, v):
        _rnea_fast(model, data, q, v, zero, np.zeros(3))
        return bool(np.isfinite(data.tau).all() and np.isfinite(data.f).all())

    run_converted("coriolis_torques", (("q", q, model.nq), ("v", v, model.nv)), run)
    return data.tau.copy()
