"""Rigid bodies merged into one: the arithmetic shared by
:func:`~robot_dynamics.multibody.build.build_model` (fixed links folded into the body of their
parent) and :meth:`~robot_dynamics.multibody.model.Model.set_payload` (a payload added to a body
at run time).

A body is accumulated as three sums in its own frame — mass m, first moment Σ mᵢcᵢ and the
rotational inertia about the frame's origin Σ (I_Cᵢ − mᵢ[cᵢ]×[cᵢ]×) (parallel-axis theorem) —
so adding parts is exact and order-free up to rounding; :func:`body_parameters` turns the sums
back into (mass, centre of mass, inertia about the centre of mass).
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.spatial.algebra import skew

#: Inertia checks are relative to the body's own scale (its largest principal moment, or m·|c|²
#: when that is larger), plus an absolute floor far below any real body (1 g at 1 mm: 1e-9 kg·m²).
INERTIA_RTOL = 1e-9
INERTIA_ATOL = 1e-15


def _num(x) -> str:
    return f"{float(x):.6g}"


def _nums(xs) -> str:
    return "[" + ", ".join(_num(x) for x in xs) + "]"


def placed(T: np.ndarray, com, inertia_com, rotation=None) -> tuple[np.ndarray, np.ndarray]:
    """(c, I_C) in a body's frame of a part given in a frame placed at ``T`` (4×4, body ← frame):
    centre of mass ``com`` and inertia ``inertia_com`` about it, the latter expressed in the
    frame rotated by ``rotation`` (a URDF ``<inertial><origin rpy>``; None: the frame's axes)."""
    R = T[:3, :3] if rotation is None else T[:3, :3] @ rotation
    return T[:3, :3] @ np.asarray(com, float) + T[:3, 3], R @ np.asarray(inertia_com, float) @ R.T


def add_part(sums, mass: float, com: np.ndarray, inertia_com: np.ndarray):
    """The sums (mass, first moment, inertia about the origin) of a body with a part of ``mass``
    at ``com`` with inertia ``inertia_com`` about it (both in the body's frame) added."""
    m, first, about_origin = sums
    return (m + mass, first + mass * com,
            about_origin + (inertia_com - mass * (skew(com) @ skew(com))))


def body_parameters(sums) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia about the centre of mass) of a body's sums (the centre
    of mass of a massless body is its origin)."""
    m, first, about_origin = sums
    c = first / m if m > 0 else np.zeros(3)
    return m, c, about_origin + m * (skew(c) @ skew(c))


def check_inertia(m: float, c: np.ndarray, Ic: np.ndarray) -> tuple[str | None, bool]:
    """Check a rigid body (mass ``m``, CoM ``c``, inertia ``Ic`` about the CoM).

    Returns (problem, degenerate): ``problem`` says why no rigid body has these parameters
    (None when one could), ``degenerate`` whether its spatial inertia is singular (no mass, or a
    zero principal moment). Tolerances are relative to the body's own inertia scale (its largest
    principal moment, or m·|c|² when larger).
    """
    eig = np.linalg.eigvalsh(0.5 * (Ic + Ic.T))
    scale = max(float(np.abs(eig).max()), abs(m) * float(c @ c))
    tol = INERTIA_RTOL * scale + INERTIA_ATOL
    a, b, cmax = (float(x) for x in eig)
    if m < 0:
        return f"mass {_num(m)} is negative", True
    if m == 0 and cmax > tol:
        return f"rotational inertia (principal moments {_nums(eig)}) without mass", True
    if a < -tol:
        return (f"inertia is not positive semi-definite (principal moments {_nums(eig)})", True)
    if a + b < cmax - tol:
        return (f"principal moments {_nums(eig)} break the triangle inequality (I1 + I2 >= I3): "
                "no rigid body has this inertia", a <= tol)
    return None, m == 0 or a <= tol
