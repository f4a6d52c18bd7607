"""The joint-wrench directors pl_α (seed 004 eq. 2.3.7) from the composite inertias, O(n·depth).

``fn(q, q̇, q̈) = Σ_α q̈_α pl_α(q) + fn(q, q̇, 0)``: pl_α is the wrench every joint transmits for a
unit acceleration of joint α alone (no velocity, no gravity). With the composite inertia ``Ic_i``
of the subtree of body i (CRBA) and the motion transforms of the tree:

* joint i on the path from the base to α (i ancestor of α, or α itself):
  ``pl_α[i] = X_{α→i}ᵀ Ic_α S_α`` — the subtree of α is all that accelerates;
* joint i in the subtree of α: ``pl_α[i] = Ic_i X_{i←α} S_α``;
* any other joint: 0.

This is the matrix A of seed 004 §2.6 (column α, joint by joint), without the 6n × 6n objects
of :mod:`robot_dynamics.algorithm.aggregated`; forward dynamics with friction needs it at every step.
"""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.algorithm.crba import mass_matrix
from robot_dynamics.errors import check_data
from robot_dynamics.kernels.dynamics import directors_kernel


@by_model
def wrench_directors(model, data, q=None) -> np.ndarray:
    """``D`` (nv, nv, 6) with ``D[α, i] = pl_α`` at joint i (joint frame).

    With ``q`` it runs :func:`~robot_dynamics.algorithm.crba.mass_matrix` first; without, it uses the
    composite inertias and transforms already in ``data`` (after ``mass_matrix(model, data, q)``).
    """
    if getattr(data, "_model", None) is not model:
        check_data(model, data, "wrench_directors")
    if q is not None:
        mass_matrix(model, data, q)
    D = np.empty((model.nv, model.nv, 6))
    directors_kernel(model._kargs[1], model._kargs[6], data.liMi_R, data.liMi_p, data.X, data.Ic,
                     D, model._rel)
    return D


def wrenches_at(W0, D, a) -> np.ndarray:
    """Joint wrenches (nv, 6) for accelerations ``a``: ``W0 + Σ_α a_α D[α]`` (eq. 2.3.7)."""
    return W0 + np.tensordot(a, D, axes=(0, 0))
