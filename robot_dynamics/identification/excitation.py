"""Excitation trajectories for identification: finite Fourier series within the joint limits.

    q_i(t) = q0_i + Σ_l (a_il / (ω_f l)) sin(ω_f l t) − (b_il / (ω_f l)) cos(ω_f l t)

(Swevers et al.'s periodic excitation), scaled so every joint stays inside ``margin`` of its
position limits and below ``margin`` of its velocity limit, with velocities crossing zero
(both friction directions).

:func:`design_excitation` chooses the coefficients a, b so that each joint's friction regressor
(:mod:`.regressors`, the law to identify) is well conditioned: it minimises the largest
column-scaled condition number over the joints (plus a tenth of their mean), evaluated on a
coarse time grid over the run (at most one period), with a (1+1) evolution strategy after a few
random starts — a few hundred evaluations of Newton–Euler on ≤ 50 samples. Load columns the
robot cannot excite at all (:func:`.fit.structural_loads`) are left out of the criterion. With
actuator ``terms`` (issue 16) their columns — armature sign(q̇)·q̈, gear mesh |n∥| motoring and
back-driven — are part of each joint's regressor.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.algorithm.batch import joint_wrenches_batch


def _limits(model, margin):
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    vmax = np.where(np.isfinite(model.velocity_limits) & (model.velocity_limits > 0),
                    model.velocity_limits, 2.0)
    return 0.5 * (lo + hi), 0.5 * (hi - lo) * margin, margin * vmax


def fourier_trajectory(model, a, b, t, base_frequency=0.1, margin=0.8):
    """(Q, V, A) at times ``t`` for coefficients ``a, b`` (nv, harmonics), scaled into the
    limits: each joint's series is centred and shrunk until position and velocity fit."""
    center, half, vmax = _limits(model, margin)
    harmonics = a.shape[1]
    w = 2 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    q = s @ (a / w).T - c @ (b / w).T
    v = c @ a.T + s @ b.T
    acc = -s @ (a * w).T + c @ (b * w).T
    # the mean over one period is the constant term; centre on it
    period = np.arange(0.0, 1.0 / base_frequency, 1e-3 / base_frequency)
    q0 = (np.sin(np.outer(period, w)) @ (a / w).T - np.cos(np.outer(period, w)) @ (b / w).T
          ).mean(0)
    # extreme values over one full period, so the scale does not depend on the grid
    sp, cp = np.sin(np.outer(period, w)), np.cos(np.outer(period, w))
    qp = sp @ (a / w).T - cp @ (b / w).T - q0
    vp = cp @ a.T + sp @ b.T
    # (the sampled maximum may miss the true one by ≤ (2π·harmonics/1000)²/2 ≈ 3e-4: 1e-3 spare)
    scale = (1 - 1e-3) * np.minimum(half / np.maximum(np.abs(qp).max(0), 1e-12),
                                    vmax / np.maximum(np.abs(vp).max(0), 1e-12))
    return center + scale * (q - q0), scale * v, scale * acc


def fourier_excitation(model, duration=20.0, rate=200.0, harmonics=4, base_frequency=0.1,
                       margin=0.8, seed=0):
    """Random Fourier coefficients (no design): (t, Q, V, A), each (N, nv) except t."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 1.0 / rate)
    a, b = rng.normal(size=(2, model.nv, harmonics))
    return (t, *fourier_trajectory(model, a, b, t, base_frequency, margin))


def excitation_cost(model, Q, V, A, law="load_dependent", min_velocity=0.05, present=None,
                    terms=()):
    """Per-joint column-scaled condition numbers of the friction regressors (with the actuator
    ``terms``' columns, :data:`.regressors.TERMS`) for a trajectory (inf where a joint has fewer
    than 10 moving samples or a singular regressor)."""
    from robot_dynamics.identification.fit import structural_loads
    from robot_dynamics.identification.regressors import TERMS, regressor

    extra = [True] * sum(len(TERMS[x]) for x in terms)

    if present is None:
        present = structural_loads(model)
    W = joint_wrenches_batch(model, Q, V, A)
    conds = np.full(model.nv, np.inf)
    for i in range(model.nv):
        moving = np.abs(V[:, i]) > min_velocity
        if moving.sum() < 10:
            continue
        X = regressor(law, V[moving, i], W[moving, i], model.axes[i], model.kinds[i], terms,
                      a=A[moving, i], S=model.motion_subspaces[i])
        if law == "load_dependent":
            X = X[:, [True, True, *present[i], *extra]]
        rms = np.sqrt(np.mean(X ** 2, axis=0))
        if np.any(rms == 0):
            continue
        s = np.linalg.svd(X / rms, compute_uv=False)
        if s[-1] > 0:
            conds[i] = s[0] / s[-1]
    return conds


def design_excitation(model, duration=20.0, rate=200.0, *, law="load_dependent", harmonics=4,
                      base_frequency=0.1, margin=0.8, evaluations=200, grid_rate=5.0, seed=0,
                      min_velocity=0.05, terms=()):
    """Optimised Fourier excitation: (t, Q, V, A) and the per-joint condition numbers reached.

    ``terms``: actuator terms to identify as well (``"armature"``, ``"gear_mesh"``): their
    columns join the criterion — the gear mesh's needs each joint both motoring and back-driven.

    Returns ``(t, Q, V, A, conds)``; ``conds`` evaluated on the returned (fine) trajectory.
    """
    from robot_dynamics.identification.fit import structural_loads

    rng = np.random.default_rng(seed)
    present = structural_loads(model)
    # the recorded part of one period (a shorter run must be well conditioned on its own)
    grid = np.arange(0.0, min(duration, 1.0 / base_frequency), 1.0 / grid_rate)
    shape = (2, model.nv, harmonics)

    def cost(x):
        Q, V, A = fourier_trajectory(model, x[0], x[1], grid, base_frequency, margin)
        logc = np.log10(np.minimum(excitation_cost(model, Q, V, A, law, min_velocity, present,
                                                   terms), 1e12))
        return float(logc.max() + 0.1 * logc.mean())

    starts = max(evaluations // 10, 1)
    best = min((rng.normal(size=shape) for _ in range(starts)), key=cost)
    f_best, step = cost(best), 0.3
    for _ in range(evaluations - starts):
        trial = best + step * rng.normal(size=shape)
        f = cost(trial)
        if f < f_best:
            best, f_best, step = trial, f, step * 1.5
        else:
            step *= 0.9 ** 0.25  # the 1/5 success rule
    t = np.arange(0.0, duration, 1.0 / rate)
    Q, V, A = fourier_trajectory(model, best[0], best[1], t, base_frequency, margin)
    return t, Q, V, A, excitation_cost(model, Q, V, A, law, min_velocity, present, terms)
