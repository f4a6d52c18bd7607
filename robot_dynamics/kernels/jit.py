"""The one compiler setting of every kernel: numba's ``njit`` with floating-point contraction.

``fastmath={"contract"}`` lets LLVM fuse a product and a sum into one fused multiply-add where
the processor has it (x86-64 with FMA, AArch64): one rounding instead of two, so each fused
``a*b + c`` is at least as accurate, and the spatial algebra of the recursions — sums of
products throughout — runs faster. Issue 35 measured it in one process against the same
kernels without it: 2–6 % less time per Simulator step in every motion class on panda and ur5
(docs/measurements.md). Nothing else of fast-math: no assumption that values are finite (the
kernels test for NaN and Inf: overflows, bad inputs), no reassociation of sums (their order
stays the source's), no approximate reciprocals.

Results therefore differ from a build without contraction (and from the NumPy twins, which
NumPy computes unfused) by rounding, ~1e-16 relative per operation; on one machine they are
deterministic, so a compiled path against another compiled path (rollouts against
``Simulator.run``, a reset's replay) stays bit for bit.
"""
from __future__ import annotations

import functools

import numba

#: numba's fast-math flags of every kernel (see the module docstring)
FASTMATH = frozenset({"contract"})

#: ``numba.njit`` with :data:`FASTMATH`: ``@njit``, ``@njit(cache=True)``, ``@njit(sig, ...)``
njit = functools.partial(numba.njit, fastmath=set(FASTMATH))
