"""Inverse dynamics over N samples at once, in parallel over chunks of samples
(robot_dynamics.algorithm.batch is the entry point)."""
from __future__ import annotations

from numba import prange

from robot_dynamics.kernels.jit import njit

from robot_dynamics.kernels.dynamics import (add_joint_damping, add_rotor_effort,
                                             placements_kernel, rnea_passes_ext)
from robot_dynamics.kernels.friction import id_friction_kernel
from robot_dynamics.kernels.layout import (_v, laws_views, model_armature, model_damping,
                                           model_gravity, model_views, unowned)

CHUNKS = 64  # work units of the parallel loop (each reuses one scratch block)


@njit(parallel=True, cache=True)
def id_batch(mb, fr, Q, V, A, tol, with_friction, damped, scratch, TAU, F, TAUF, FEXT):
    """RNEA (and, with friction, seed 004 §2.7 steps 2–4; with ``damped``, the URDF damping
    d∘q̇ after them) for every sample, in parallel over chunks of samples; every array is viewed
    without reference counts (see layout.unowned).
    τ includes the rotors' armature ∘ q̈ (as :func:`~robot_dynamics.algorithm.rnea.rnea`).
    ``FEXT`` (N, n, 6): each sample's external wrenches on the bodies (0 samples: none)."""
    N = Q.shape[0]
    n, kinds, parents, axes, R0, p0, I6, S = model_views(mb)
    gravity = model_gravity(mb)
    arm = model_armature(mb)
    damping = model_damping(mb)
    codes, params = laws_views(fr, n)
    Q, V, A, TAU, F, TAUF = (unowned(Q), unowned(V), unowned(A), unowned(TAU), unowned(F),
                             unowned(TAUF))
    external = FEXT.shape[0] > 0
    FEXT = unowned(FEXT)
    scratch = unowned(scratch)
    chunks = scratch.shape[0]
    for c in prange(chunks):
        block = scratch[c]
        R = _v(block, 0, (n, 3, 3))
        p = _v(block, 9 * n, (n, 3))
        vel = _v(block, 12 * n, (n, 6))
        acc = _v(block, 18 * n, (n, 6))
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            placements_kernel(kinds, axes, R0, p0, Q[k], R, p)
            rnea_passes_ext(parents, I6, S, gravity, V[k], A[k], R, p, vel, acc, F[k], TAU[k],
                            FEXT[k] if external else F[k][:0])
            add_rotor_effort(arm, A[k], TAU[k])
            if with_friction:  # τ = fn∥ + armature ∘ q̈ − τf in place
                id_friction_kernel(codes, params, kinds, axes, F[k], Q[k], V[k], A[k], TAU[k], tol,
                                   TAUF[k], TAU[k])
            if damped:  # τ += d∘q̇ (as id_entry's)
                add_joint_damping(damping, V[k], TAU[k])
