"""Axial and normal components of a joint's reaction wrench (seed 004 §2.4–2.5).

For joint axis ``e`` and joint wrench ``fn = [f; n]`` (joint frame, torque about the joint point):
``f∥ = f·e``, ``f⊥ = |f − (f·e) e|``, ``n∥ = n·e``, ``n⊥ = |n − (n·e) e|``. For a revolute joint
``n∥`` is the axial (J∥) component, the rest is the reaction (J⊥); for a prismatic joint ``f∥``
is axial. Friction laws read the reaction components (eq. 2.5.5–2.5.7).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class LoadComponents(NamedTuple):
    f_par: float  # signed axial force f·e
    f_perp: float  # magnitude of the force normal to the axis
    n_par: float  # signed axial torque n·e
    n_perp: float  # magnitude of the torque normal to the axis (bending moment)


def load_components(wrench, axis, prismatic: bool = False) -> LoadComponents:
    """Split ``wrench`` (6,) along/normal to ``axis`` (3,). ``prismatic`` is accepted for symmetry
    with the laws; the split itself does not depend on the joint type."""
    f, n = wrench[:3], wrench[3:]
    fp = float(f @ axis)
    npar = float(n @ axis)
    # the rejection vectors' norms, not √(|f|² − f∥²): that difference cancels where the wrench
    # is nearly axial (a vertical base joint carrying the arm's weight), leaving √ of a multiple
    # of ulp(|f|²) — a staircase in the loads that the friction solve cannot converge across
    # (issue 35; kernels/friction.py _rejection computes the same)
    f_perp = _norm3(f[0] - fp * axis[0], f[1] - fp * axis[1], f[2] - fp * axis[2])
    n_perp = _norm3(n[0] - npar * axis[0], n[1] - npar * axis[1], n[2] - npar * axis[2])
    return LoadComponents(fp, f_perp, npar, n_perp)


def _norm3(x0, x1, x2) -> float:
    """√(x0² + x1² + x2²) summed in the kernel's order (kernels/friction.py _rejection)."""
    return math.sqrt(float(x0) * float(x0) + float(x1) * float(x1) + float(x2) * float(x2))


def normal_vectors(wrench, axis):
    """The vectors ``(f − f∥ e, n − n∥ e)`` in the joint frame (for callable laws)."""
    f, n = np.asarray(wrench[:3], float), np.asarray(wrench[3:], float)
    return f - (f @ axis) * axis, n - (n @ axis) * axis
