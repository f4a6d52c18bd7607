"""Is a model's mass matrix invertible? Checked at sample configurations when some moving body's
spatial inertia is singular (massless links): forward dynamics and the Simulator need M⁻¹, rnea
and inverse dynamics do not (the reason is kept in ``model.mass_matrix_problem``)."""
from __future__ import annotations

from robot_dynamics.multibody.dispatch import by_model

import numpy as np

from robot_dynamics.kernels.dynamics import crba_entry
from robot_dynamics.multibody.coupling import MimicModel
from robot_dynamics.multibody.model import _names, _num

#: M is singular when its smallest eigenvalue is below this fraction of its largest
_MASS_MATRIX_RTOL = 1e-12
_MASS_MATRIX_SAMPLES = 3


@by_model
def sampled_mass_matrix(model, data, q) -> np.ndarray:
    """M(q), armature included, by the compiled CRBA."""
    crba_entry(model._mb, q, data._work)
    return data.M.copy()


@sampled_mass_matrix.register(MimicModel)
def _(model, data, q) -> np.ndarray:
    G = model.coupling
    M = G.T @ sampled_mass_matrix(model.full, data.full, model.expand(q)) @ G
    return M + np.diag(model.armature)


def mass_matrix_problem(model) -> str | None:
    """None when M(q) (armature included) is positive definite at one of a few sample
    configurations inside the limits; else a one-line message, the model's source first, naming
    the joints of M's null space (the joints moving no inertia): the reason
    ``model.mass_matrix_problem`` that forward dynamics and the Simulator raise."""
    data = model.create_data()
    rng = np.random.default_rng(0)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    for _ in range(_MASS_MATRIX_SAMPLES):
        M = sampled_mass_matrix(model, data, rng.uniform(lo, hi))
        w, V = np.linalg.eigh(0.5 * (M + M.T))
        top = max(float(np.abs(w).max()), 1e-300)
        if w[0] > _MASS_MATRIX_RTOL * top:
            return None
    null = V[:, w <= _MASS_MATRIX_RTOL * top]
    weight = np.abs(null).max(axis=1)
    idx = np.flatnonzero(weight > 1e-6 * weight.max())
    joints, moved = [model.joint_names[i] for i in idx], [model.link_names[i] for i in idx]
    return (f"{model.source}: the mass matrix is singular (smallest eigenvalue {_num(w[0])}, "
            f"largest {_num(top)} at sample configurations): joint(s) {_names(joints)} move no "
            f"inertia (link(s) {_names(moved)} and what they carry), so forward dynamics and "
            "simulation cannot run (rnea, inverse dynamics and the mass matrix can); give the "
            "links they move mass and inertia, make those joints fixed, or give them armature")
