"""Flat memory layout shared by the compiled entry points and :class:`~robot_dynamics.model.Data`.

A numba call costs about 0.08 µs per argument before any work is done, so the per-call entry
points take few arguments:

* the model as two flat arrays built once per model by :func:`pack_model`: ``ib`` (int64: n,
  joint kinds, parents, then the offsets of the work fields below) and ``fb`` (float64: axes,
  joint rotations and translations at q = 0, spatial inertias, motion subspaces, gravity; the
  Model's gravity setter writes that last slot, and ``model._g`` is a view of it);
* the workspace as one flat float64 array ``data._work`` and one int64 array ``data._iwork``.
  ``data.liMi_R``, ``data.v``, ``data.f``, ``data.M`` … are views into ``_work``
  (:func:`make_work`), so a kernel that fills the flat array fills the documented Data buffers.

The field tables below are the single statement of the layout: :func:`pack_model` turns them into
offsets (stored in ``ib``), and :func:`model_views` / :func:`work_views` (compiled) cut the flat
arrays back into shaped views with those offsets.
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# Float work fields, in order: (name, shape as a function of n). The first eleven are Data's
# documented buffers; the rest is scratch of the fused forward-dynamics / simulation kernels.
WORK_FIELDS = (
    ("liMi_R", lambda n: (n, 3, 3)),  # parent ← body rotation
    ("liMi_p", lambda n: (n, 3)),  # parent ← body translation
    ("v", lambda n: (n, 6)),  # body velocities
    ("a", lambda n: (n, 6)),  # body accelerations (include −g)
    ("f", lambda n: (n, 6)),  # joint wrenches fn
    ("tau", lambda n: (n,)),
    ("tau_friction", lambda n: (n,)),
    ("X", lambda n: (n, 6, 6)),  # motion transforms parent → body
    ("Ic", lambda n: (n, 6, 6)),  # composite inertias
    ("oMi", lambda n: (n, 4, 4)),  # world ← body
    ("M", lambda n: (n, n)),
    ("W0", lambda n: (n, 6)),  # fn(q, q̇, 0)
    ("D", lambda n: (n, n, 6)),  # directors pl_α
    ("Meff", lambda n: (n, n)),  # M (+ h·diag(damping) in the simulator)
    ("L", lambda n: (n, n)),  # Cholesky factor of the free block
    ("Wt", lambda n: (n, 6)),  # wrenches at a trial acceleration
    ("motion", lambda n: (n, 6)),  # directors' scratch
    ("vecs", lambda n: (24, n)),  # vectors: the solver's and the step's (kernels/stiction.py, fd.py)
    ("sums", lambda n: (8,)),  # scalars out of the simulation step (energy audit increments)
)
# Int work fields: stick/slip state of the friction solve and its report.
IWORK_FIELDS = (
    ("stuck", lambda n: (n,)),
    ("at_rest", lambda n: (n,)),
    ("idx", lambda n: (5, n)),  # free joints, stuck joints, subtree flags, free position, free parent
    ("info", lambda n: (8,)),  # converged, method, iterations, active-set changes, non-unique
)


def _offsets(fields, n):
    out = [0]
    for _, shape in fields:
        out.append(out[-1] + int(np.prod(shape(n))))
    return out


def _views(buffer, fields, offsets, n):
    return {name: buffer[offsets[k]:offsets[k + 1]].reshape(shape(n))
            for k, (name, shape) in enumerate(fields)}


def make_work(n: int):
    """(work, iwork, views): the flat arrays for ``n`` joints and every field as a view (dict)."""
    fo, io = _offsets(WORK_FIELDS, n), _offsets(IWORK_FIELDS, n)
    work, iwork = np.zeros(fo[-1]), np.zeros(io[-1], dtype=np.int64)
    views = _views(work, WORK_FIELDS, fo, n)
    views.update(_views(iwork, IWORK_FIELDS, io, n))
    views["liMi_R"][:] = np.eye(3)
    views["oMi"][:] = np.eye(4)
    return work, iwork, views


_NF, _NI = len(WORK_FIELDS) + 1, len(IWORK_FIELDS) + 1  # offsets stored per table


def relations(parents):
    """CSR (ptr, idx) of the joints related to each joint i — its ancestors, itself and its
    descendants, increasing — the only α with a non-zero director pl_α at joint i."""
    n = len(parents)
    related = [set([i]) for i in range(n)]
    for i in range(n):
        j = parents[i]
        while j >= 0:
            related[i].add(j)
            related[j].add(i)
            j = parents[j]
    ptr = np.cumsum([0] + [len(r) for r in related])
    idx = np.concatenate([sorted(r) for r in related]) if n else np.zeros(0)
    return ptr.astype(np.int64), idx.astype(np.int64)


def pack_model(model):
    """(ib, fb): the model's constant arrays, the work offsets and the joint relations (CSR),
    flat and writable."""
    n = model.nv
    ptr, idx = relations(model.parents)
    ib = np.concatenate([[n], model.kinds, model.parents, _offsets(WORK_FIELDS, n),
                         _offsets(IWORK_FIELDS, n), ptr, idx]).astype(np.int64)
    fb = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in (
        model.axes, model.joint_rotations, model.joint_translations, model.spatial_inertias,
        model.motion_subspaces, model.gravity)])
    return ib, fb


@intrinsic
def _pointer(typingctx, address):
    """The integer ``address`` as a void pointer (for :func:`numba.carray`)."""
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@njit(cache=True)
def _v(buf, start, shape):
    """C-contiguous view of ``buf[start:]`` with ``shape``, built in ~1 ns (``reshape`` costs
    ~20 ns, and an ``as_strided`` view is of 'A' layout, slower to index). The caller keeps
    ``buf`` alive; :func:`pack_model` / :func:`make_work` sized it for every view."""
    return carray(_pointer(buf.ctypes.data + start * buf.itemsize), shape, dtype=buf.dtype)


@njit(cache=True)
def unowned(x):
    """The C-contiguous array ``x`` as a view without a reference count: sub-views of it
    (``params[i]``) then cost no atomic increments in the hot loops. The caller keeps ``x`` alive."""
    return carray(_pointer(x.ctypes.data), x.shape, dtype=x.dtype)


@njit(cache=True)
def model_views(ib, fb):
    """(n, kinds, parents, axes, R0, p0, I6, S) as shaped views of the packed model."""
    n = ib[0]
    return (n, ib[1:1 + n], ib[1 + n:1 + 2 * n], _v(fb, 0, (n, 3)), _v(fb, 3 * n, (n, 3, 3)),
            _v(fb, 12 * n, (n, 3)), _v(fb, 15 * n, (n, 6, 6)), _v(fb, 51 * n, (n, 6)))


@njit(cache=True)
def model_gravity(ib, fb):
    """Gravity (3,), the last entries of the packed model (``model._g`` is a view of them)."""
    n = ib[0]
    return fb[57 * n:57 * n + 3]


def gravity_view(model):
    """``model._fb``'s gravity slot, written by the Model's gravity setter."""
    n = model.nv
    return model._fb[57 * n:57 * n + 3]


@njit(cache=True)
def model_relations(ib):
    """(ptr, idx, parents): the CSR of :func:`relations` and the parent array."""
    n = ib[0]
    start = 1 + 2 * n + _NF + _NI
    ptr = ib[start:start + n + 1]
    return ptr, ib[start + n + 1:start + n + 1 + ptr[n]], ib[1 + n:1 + 2 * n]


@njit(cache=True)
def work_views(ib, w):
    """The Data buffers as views of the work array, in WORK_FIELDS order up to M."""
    n = ib[0]
    o = ib[1 + 2 * n:]
    return (_v(w, o[0], (n, 3, 3)), _v(w, o[1], (n, 3)), _v(w, o[2], (n, 6)),
            _v(w, o[3], (n, 6)), _v(w, o[4], (n, 6)), w[o[5]:o[6]], w[o[6]:o[7]],
            _v(w, o[7], (n, 6, 6)), _v(w, o[8], (n, 6, 6)), _v(w, o[9], (n, 4, 4)),
            _v(w, o[10], (n, n)))


@njit(cache=True)
def scratch_views(ib, w, iw):
    """The scratch fields after M:
    (W0, D, Meff, L, Wt, motion, vecs, sums, stuck, at_rest, idx, info)."""
    n = ib[0]
    o = ib[1 + 2 * n:]
    oi = o[_NF:_NF + _NI]
    return (_v(w, o[11], (n, 6)), _v(w, o[12], (n, n, 6)), _v(w, o[13], (n, n)),
            _v(w, o[14], (n, n)), _v(w, o[15], (n, 6)), _v(w, o[16], (n, 6)),
            _v(w, o[17], (24, n)), w[o[18]:o[19]], iw[oi[0]:oi[1]], iw[oi[1]:oi[2]],
            _v(iw, oi[2], (5, n)), iw[oi[3]:oi[4]])
