"""Excitation trajectories for identification: finite Fourier series within the joint limits.

    q_i(t) = q0_i + Σ_l (a_il / (ω_f l)) sin(ω_f l t) − (b_il / (ω_f l)) cos(ω_f l t)

(Swevers et al.'s periodic excitation), scaled so every joint stays inside its position limits
and below its velocity limit, and with velocities crossing zero often enough to see both
friction directions and loads that vary — what makes k1, k2, k3 identifiable.
"""
from __future__ import annotations

import numpy as np


def fourier_excitation(model, duration=20.0, rate=200.0, harmonics=4, base_frequency=0.1,
                       margin=0.8, seed=0):
    """Return (t, Q, V, A), each (N, nv), within ``margin`` of the limits."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, duration, 1.0 / rate)
    n = model.nv
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    vmax = np.where(np.isfinite(model.velocity_limits), model.velocity_limits, 2.0)
    center, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * margin
    w = 2 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, n, harmonics))
    Q = np.zeros((len(t), n))
    V = np.zeros_like(Q)
    A = np.zeros_like(Q)
    for i in range(n):
        s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
        q = s @ (a[i] / w) - c @ (b[i] / w)
        v = c @ a[i] + s @ b[i]
        acc = -s @ (a[i] * w) + c @ (b[i] * w)
        q0 = q.mean()
        scale = min(half[i] / max(np.abs(q - q0).max(), 1e-12),
                    margin * vmax[i] / max(np.abs(v).max(), 1e-12))
        Q[:, i] = center[i] + scale * (q - q0)
        V[:, i], A[:, i] = scale * v, scale * acc
    return t, Q, V, A
