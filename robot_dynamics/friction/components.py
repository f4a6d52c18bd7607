"""Axial and normal components of a joint's reaction wrench (seed 004 §2.4–2.5).

For joint axis ``e`` and joint wrench ``fn = [f; n]`` (joint frame, torque about the joint point):
``f∥ = f·e``, ``f⊥ = |f − (f·e) e|``, ``n∥ = n·e``, ``n⊥ = |n − (n·e) e|``. For a revolute joint
``n∥`` is the axial (J∥) component, the rest is the reaction (J⊥); for a prismatic joint ``f∥``
is axial. Friction laws read the reaction components (eq. 2.5.5–2.5.7).
"""
from __future__ import annotations

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
    f_perp = float(np.sqrt(max(f @ f - fp * fp, 0.0)))
    n_perp = float(np.sqrt(max(n @ n - npar * npar, 0.0)))
    return LoadComponents(fp, f_perp, npar, n_perp)


def normal_vectors(wrench, axis):
    """The vectors ``(f − f∥ e, n − n∥ e)`` in the joint frame (for callable laws)."""
    f, n = np.asarray(wrench[:3], float), np.asarray(wrench[3:], float)
    return f - (f @ axis) * axis, n - (n @ axis) * axis
