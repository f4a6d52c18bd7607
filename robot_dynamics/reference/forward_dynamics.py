"""Forward dynamics with friction (seed 004 §2.8) step by step in Python: b and fn(q, q̇, 0), M,
the wrench directors, then the friction solve's Python statement — the statement of the fused
kernel kernels/fd.py that :func:`robot_dynamics.algorithm.forward_dynamics.forward_dynamics` runs.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.forward_dynamics import forward_dynamics_steps


def forward_dynamics(model, data, q, v, tau, friction=None, *, tol=1e-10, max_iter=50,
                     velocity_tolerance=1e-9, on_failure="raise", fext=None,
                     damping=True) -> np.ndarray:
    """:func:`robot_dynamics.algorithm.forward_dynamics.forward_dynamics`, same arguments and
    effects (``data.tau_friction``, ``data.fd_report``), every step in Python (``fext`` enters
    b and fn(q, q̇, 0); ``damping``: the solve runs on τ − d∘q̇, d = ``model.damping``, the
    inverse of inverse dynamics' + d∘q̇)."""
    return forward_dynamics_steps(model, data, q, v, tau, friction, tol=tol, max_iter=max_iter,
                                  velocity_tolerance=velocity_tolerance, on_failure=on_failure,
                                  reference_solver=True, fext=fext, damping=damping)
