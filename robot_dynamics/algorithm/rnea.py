"""Recursive Newton–Euler (seed 004 §2.2–2.3): inverse dynamics and the joint wrenches fn.

Forward pass: body velocities and accelerations (gravity as a base acceleration −g), then the
body efforts FN_i = I_i a_i + v_i ×* I_i v_i (seed 002 about the body origin). Backward pass:
the canonical isomorphism E → J (docs/method.md §2.3), ``f_i = FN_i + Σ_children X_cᵀ f_c``, gives
the wrench fn_i each joint transmits; its axial component fn∥_i = S_iᵀ fn_i is what the
joint's actuator delivers to the link. The actuator's rotor (reflected inertia ``armature_i``,
Pinocchio's ``model.armature``) needs ``armature_i q̈_i`` more, so the joint effort is
``τ_i = S_iᵀ fn_i + armature_i q̈_i``. The joint wrenches exclude it (as Pinocchio's ``data.f``):
they are the link-side loads the friction laws read.

External efforts (docs/method.md §1b): ``fext`` (nv, 6), row i the wrench [force; torque] the
environment applies **on** body i, in body i's frame (the joint frame, as ``data.f``), torque
about that frame's origin — Pinocchio's ``fext``. It enters body i's balance in the backward
pass, ``f_i = I_i a_i + v_i ×* I_i v_i − f_i^ext + Σ_children X_cᵀ f_c``, so every joint's wrench
carries the external loads beyond it. :mod:`robot_dynamics.algorithm.external` builds ``fext``
from a force at a point of a link, or from a force/torque sensor's reading.

``rnea`` runs the compiled kernel (:mod:`robot_dynamics.kernels.dynamics`); its readable statement
is :func:`robot_dynamics.reference.dynamics.rnea`, and the tests hold the two to 1e-10.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.errors import F64, as_wrenches, check_data, run_converted
from robot_dynamics.kernels.dynamics import rnea_entry, rnea_fext_entry, rnea_kernel


@by_model
def rnea(model, data, q, v, a, fext=None) -> np.ndarray:
    """Frictionless inverse dynamics τ = M(q) a + b(q, v) (nv,), the rotors' armature ∘ a
    included (M includes diag(armature)).

    Also fills ``data.v``, ``data.a`` (body frame, ``a`` includes −g), ``data.f`` (joint
    wrenches fn, see :func:`joint_wrenches`) and ``data.tau``. ``q, v, a`` may be any sequences
    of numbers (converted once); :class:`~robot_dynamics.errors.InputError` names a malformed
    one, or (``overflow: …``) the entries too large for the result to be finite.

    ``fext`` (nv, 6), optional: the external wrench on each body (body frame, about its origin;
    Pinocchio's convention, see the module docstring); None (or zeros) for none.
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "rnea")
    try:  # float64 C arrays go straight to the kernel (it checks length and finiteness)
        if (q.dtype is F64 and v.dtype is F64 and a.dtype is F64 and q.flags.carray
                and v.flags.carray and a.flags.carray):
            if fext is None:
                if rnea_entry(model._mb, q, v, a, data._work):
                    return data.tau.copy()
            elif fext.dtype is F64 and rnea_fext_entry(model._mb, q, v, a, fext, data._work):
                return data.tau.copy()  # (a non-C fext: TypeError at dispatch)
    except (AttributeError, TypeError):  # a list, a tuple, a 2-D array: converted below
        pass
    if fext is not None:
        return _rnea_fext(model, data, q, v, a, fext, "rnea", fast=False)
    return _rnea_entry(model, data, q, v, a, "rnea")


def _rnea_entry(model, data, q, v, a, where) -> np.ndarray:
    """RNEA through the compiled entry point on converted inputs (errors named after ``where``)."""
    mb, work, n = model._mb, data._work, model.nv
    run_converted(where, (("q", q, model.nq), ("v", v, n), ("a", a, n)),
                  lambda q, v, a: rnea_entry(mb, q, v, a, work))
    return data.tau.copy()


def _rnea_fext(model, data, q, v, a, fext, where, fast=True) -> np.ndarray:
    """RNEA with external wrenches ``fext`` through the compiled entry point (errors named after
    ``where``); ``fast=False``: the direct call was already tried."""
    mb, work, n = model._mb, data._work, model.nv
    try:  # float64 C inputs straight to the kernel (it checks shapes and finiteness)
        if (fast and q.dtype is F64 and v.dtype is F64 and a.dtype is F64 and fext.dtype is F64
                and q.flags.carray and v.flags.carray and a.flags.carray and fext.flags.carray
                and rnea_fext_entry(mb, q, v, a, fext, work)):
            return data.tau.copy()
    except (AttributeError, TypeError):  # lists, tuples, other layouts: converted below
        pass
    F = check_fext(model, fext, where)
    run_converted(where, (("q", q, model.nq), ("v", v, n), ("a", a, n)),
                  lambda q, v, a: rnea_fext_entry(mb, q, v, a, F, work))
    return data.tau.copy()


def check_fext(model, fext, where) -> np.ndarray:
    """``fext`` as a finite float64 (nv, 6) C array, or a one-line InputError naming it (and
    the rows, with their bodies)."""
    return as_wrenches("fext", fext, model.nv, where=where, names=model.link_names)


def _rnea_fast(model, data, q, v, a, gravity=None) -> np.ndarray:
    """The RNEA kernel with another gravity (converted float64 vectors; no output check)."""
    g = model._g if gravity is None else np.asarray(gravity, dtype=float)
    rnea_kernel(*model._kargs, g, q, v, a, data.liMi_R, data.liMi_p, data.v, data.a, data.f,
                data.tau)
    return data.tau.copy()


def joint_wrenches(model, data) -> np.ndarray:
    """The joint wrenches fn ∈ J after :func:`rnea` (nv, 6) — seed 004's fn(q, q̇, q̈).

    Row i is the wrench link ``parent(i)`` applies on link i across joint i,
    ``[force, torque about the joint origin]`` in joint frame i (the child link's URDF frame
    after the joint's motion). Link i applies its opposite back (seed 004 §2.3). The actuators'
    rotors are not in it (as Pinocchio's ``data.f``): ``τ = Sᵀ fn + armature ∘ q̈``.
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "joint_wrenches")
    return data.f.copy()
