"""Flat memory layout shared by the compiled entry points and :class:`~robot_dynamics.multibody.model.Data`.

A numba call pays a fixed cost per array argument before any work is done (docs/measurements.md),
so the per-call entry points take few arguments, each one flat float64 array:

* the model, built once per model by :func:`pack_model`: an int section (n, joint kinds,
  parents, the offsets of the work fields below, the joint relations) kept as int64 bit
  patterns, then the floats (axes, joint rotations and translations at q = 0, spatial inertias,
  motion subspaces, gravity, the URDF joint damping, armature; the Model's gravity and armature
  setters write those
  last slots, and ``model._g`` / ``model._arm`` are views of them; ``Model.set_payload`` writes
  the spatial inertias through ``model._I6``);
* the friction laws (:func:`pack_laws`): one int code and ``LAW_PARAMS`` parameters per joint
  (a composite law packs up to three built-in laws in its block, :mod:`.friction`);
* the workspace ``data._work``. ``data.liMi_R``, ``data.v``, ``data.f``, ``data.M`` … are views
  into it (:func:`make_work`), so a kernel that fills the flat array fills the documented Data
  buffers; the int fields (the friction solve's stick/slip state and report) are int64 views.

The field tables below are the single statement of the layout: :func:`pack_model` turns them into
offsets, and :func:`model_views` / :func:`work_views` / :func:`scratch_views` (compiled) cut the
flat arrays back into shaped views with those offsets.
"""
from __future__ import annotations

import numpy as np
from numba import carray, types

from robot_dynamics.kernels.jit import njit
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
    ("sums", lambda n: (8,)),  # scalars out of the simulation step (energy audit increments);
    # [7]: calls in a row that held every joint at rest (kernels/articulated.py HELD_CALLS)
    # forward dynamics by articulated recursions (kernels/articulated.py), world frame
    ("Iw", lambda n: (n, 6, 6)),  # link inertias
    ("IA", lambda n: (n, 6, 6)),  # articulated inertias
    ("ab", lambda n: (12, n, 6)),  # spatial vectors per joint
    ("abv", lambda n: (7, n)),  # scalars per joint
)
# Int work fields: stick/slip state of the friction solve and its report.
IWORK_FIELDS = (
    ("stuck", lambda n: (n,)),
    ("at_rest", lambda n: (n,)),
    ("idx", lambda n: (5, n)),  # free joints, [0]: W holds W(a), flags, free position, free parent
    ("info", lambda n: (8,)),  # converged, method, iterations, active-set changes, non-unique
)


def _offsets(fields, n, start=0):
    out = [start]
    for _, shape in fields:
        out.append(out[-1] + int(np.prod(shape(n))))
    return out


_WORK_OFFSETS: dict = {}  # n → work_offsets(n) (every Data of an n-joint model needs them)


def work_offsets(n):
    """Offsets in the work array of every float field, then every int field (one list)."""
    o = _WORK_OFFSETS.get(n)
    if o is None:
        fo = _offsets(WORK_FIELDS, n)
        o = _WORK_OFFSETS[n] = tuple(fo + _offsets(IWORK_FIELDS, n, fo[-1])[1:])
    return list(o)


def make_work(n: int):
    """(work, views): the flat array for ``n`` joints and every field as a view (dict); the int
    fields are int64 views of their slots."""
    o = work_offsets(n)
    work = np.zeros(o[-1])
    views = {}
    for k, (name, shape) in enumerate(WORK_FIELDS + IWORK_FIELDS):
        chunk = work[o[k]:o[k + 1]]
        views[name] = (chunk if k < len(WORK_FIELDS) else chunk.view(np.int64)).reshape(shape(n))
    views["liMi_R"][:] = np.eye(3)
    views["oMi"][:] = np.eye(4)
    return work, views


_NO = len(WORK_FIELDS) + len(IWORK_FIELDS) + 1  # work offsets stored in the packed model


def relations(parents):
    """CSR (ptr, idx) of the joints related to each joint i — its ancestors, itself and its
    descendants, increasing — the only α with a non-zero director pl_α at joint i.

    When the joints are numbered depth-first (every model build_model makes), row i is the path
    from the root to i followed by the contiguous range of i's subtree, copied in slices: time
    proportional to the output. Any other numbering takes the general (set) path.
    """
    n = len(parents)
    parents = np.asarray(parents, dtype=np.int64)
    size = np.ones(n, dtype=np.int64)  # subtree sizes
    for i in range(n - 1, -1, -1):
        if parents[i] >= 0:
            size[parents[i]] += size[i]
    depth = np.zeros(n, dtype=np.int64)
    nxt = np.arange(1, n + 1)  # where the next child of each joint must start (depth-first)
    next_root = 0
    for i in range(n):
        p = parents[i]
        if p < 0:
            ok, next_root = i == next_root, i + size[i]
        else:
            ok, nxt[p] = i == nxt[p], i + size[i]
            depth[i] = depth[p] + 1
        if not ok:
            return _relations_general(parents)
    path = np.empty(n, dtype=np.int64)  # the current root-to-joint path
    every = np.arange(n, dtype=np.int64)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(depth + size, out=ptr[1:])
    idx = np.empty(ptr[-1], dtype=np.int64)
    for i in range(n):
        d, s0 = depth[i], ptr[i]
        path[d] = i
        idx[s0:s0 + d] = path[:d]
        idx[s0 + d:ptr[i + 1]] = every[i:i + size[i]]
    return ptr, idx


def _relations_general(parents):
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
    """The model as one flat writable float64 array: an int section (n, the start of the float
    section, joint kinds, parents, the work offsets, the joint relations as CSR) stored as int64
    bit patterns, then the floats (axes, R0, p0, spatial inertias, motion subspaces, gravity,
    the URDF joint damping d, armature: the last n floats)."""
    n = model.nv
    ptr, idx = relations(model.parents)
    ints = np.concatenate([[n, 0], model.kinds, model.parents, work_offsets(n), ptr, idx])
    ints = ints.astype(np.int64)
    ints[1] = len(ints)
    floats = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in (
        model.axes, model.joint_rotations, model.joint_translations, model.spatial_inertias,
        model.motion_subspaces, model.gravity, model.damping, model.armature)])
    mb = np.empty(len(ints) + len(floats))
    mb[:len(ints)].view(np.int64)[:] = ints
    mb[len(ints):] = floats
    return mb


#: parameters per joint in the packed laws: a composite law's block holds its part count and,
#: per part, a code and eight parameters (kernels/friction.py)
LAW_PARAMS = 32


def pack_laws(codes, params):
    """Friction laws as one flat float64 array: the n law codes (int64 bit patterns), then the
    (n, LAW_PARAMS) parameters (``params`` may be narrower: zero-padded). Returns
    (codes, params, buffer), the first two views of the third."""
    n = len(codes)
    params = np.asarray(params, dtype=np.float64).reshape(n, -1)
    buf = np.zeros((1 + LAW_PARAMS) * n)
    c, p = buf[:n].view(np.int64), buf[n:].reshape(n, LAW_PARAMS)
    c[:], p[:, :params.shape[1]] = codes, params
    return c, p, buf


@intrinsic
def _pointer(typingctx, address):
    """The integer ``address`` as a void pointer (for :func:`numba.carray`)."""
    sig = types.voidptr(address)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@njit(cache=True)
def _v(buf, start, shape):
    """C-contiguous view of ``buf[start:]`` with ``shape``, cheaper to build than ``reshape``
    (an ``as_strided`` view is of 'A' layout, slower to index). The caller keeps
    ``buf`` alive; :func:`pack_model` / :func:`make_work` sized it for every view."""
    return carray(_pointer(buf.ctypes.data + start * buf.itemsize), shape, dtype=buf.dtype)


@njit(cache=True)
def _vi(buf, start, shape):
    """:func:`_v` of int64 slots of the float64 array ``buf``."""
    return carray(_pointer(buf.ctypes.data + start * 8), shape, dtype=np.int64)


@njit(cache=True)
def unowned(x):
    """The C-contiguous array ``x`` as a view without a reference count: sub-views of it
    (``params[i]``) then cost no atomic increments in the hot loops. The caller keeps ``x`` alive."""
    return carray(_pointer(x.ctypes.data), x.shape, dtype=x.dtype)


@njit(cache=True)
def model_views(mb):
    """(n, kinds, parents, axes, R0, p0, I6, S) as shaped views of the packed model."""
    head = _vi(mb, 0, (2,))
    n, b = head[0], head[1]
    return (n, _vi(mb, 2, (n,)), _vi(mb, 2 + n, (n,)), _v(mb, b, (n, 3)),
            _v(mb, b + 3 * n, (n, 3, 3)), _v(mb, b + 12 * n, (n, 3)),
            _v(mb, b + 15 * n, (n, 6, 6)), _v(mb, b + 51 * n, (n, 6)))


@njit(cache=True)
def model_gravity(mb):
    """Gravity (3,) of the packed model (``model._g`` is a view of it)."""
    head = _vi(mb, 0, (2,))
    return _v(mb, head[1] + 57 * head[0], (3,))


@njit(cache=True)
def model_damping(mb):
    """The URDF joint damping d (n,) of the packed model (``model.damping``): the motor
    effort of inverse dynamics includes d∘q̇ (issue 33; ``Simulator(damping=True)`` applies it)."""
    head = _vi(mb, 0, (2,))
    return _v(mb, head[1] + 57 * head[0] + 3, (head[0],))


@njit(cache=True)
def model_armature(mb):
    """Armature (n,), the last entries of the packed model (``model._arm`` is a view of them):
    the reflected rotor inertia added to the diagonal of M and, times q̈, to τ."""
    head = _vi(mb, 0, (2,))
    return _v(mb, head[1] + 58 * head[0] + 3, (head[0],))


def _float_start(model):
    return int(model._mb[:2].view(np.int64)[1]) + 57 * model.nv


def gravity_view(model):
    """``model._mb``'s gravity slot, written by the Model's gravity setter."""
    b = _float_start(model)
    return model._mb[b:b + 3]


def inertia_view(model):
    """``model._mb``'s spatial inertias (n, 6, 6) in the body frames (``model_views``' I6),
    written by the Model's ``set_payload``."""
    n = model.nv
    b = int(model._mb[:2].view(np.int64)[1]) + 15 * n
    return model._mb[b:b + 36 * n].reshape(n, 6, 6)


def armature_view(model):
    """``model._mb``'s armature slots, written by the Model's armature setter."""
    b = _float_start(model) + 3 + model.nv  # after gravity and damping
    return model._mb[b:b + model.nv]


@njit(cache=True)
def model_relations(mb):
    """(ptr, idx, parents): the CSR of :func:`relations` and the parent array."""
    head = _vi(mb, 0, (2,))
    n = head[0]
    start = 2 + 2 * n + _NO
    ptr = _vi(mb, start, (n + 1,))
    return ptr, _vi(mb, start + n + 1, (ptr[n],)), _vi(mb, 2 + n, (n,))


@njit(cache=True)
def laws_views(fr, n):
    """(codes, params) of :func:`pack_laws`' buffer, without reference counts."""
    return _vi(fr, 0, (n,)), _v(fr, n, (n, LAW_PARAMS))


@njit(cache=True)
def work_views(mb, w):
    """The Data buffers as views of the work array, in WORK_FIELDS order up to M."""
    n = _vi(mb, 0, (1,))[0]
    o = _vi(mb, 2 + 2 * n, (_NO,))
    return (_v(w, o[0], (n, 3, 3)), _v(w, o[1], (n, 3)), _v(w, o[2], (n, 6)),
            _v(w, o[3], (n, 6)), _v(w, o[4], (n, 6)), _v(w, o[5], (n,)), _v(w, o[6], (n,)),
            _v(w, o[7], (n, 6, 6)), _v(w, o[8], (n, 6, 6)), _v(w, o[9], (n, 4, 4)),
            _v(w, o[10], (n, n)))


@njit(cache=True)
def scratch_views(mb, w):
    """The scratch fields after M:
    (W0, D, Meff, L, Wt, motion, vecs, sums, stuck, at_rest, idx, info)."""
    n = _vi(mb, 0, (1,))[0]
    o = _vi(mb, 2 + 2 * n, (_NO,))
    return (_v(w, o[11], (n, 6)), _v(w, o[12], (n, n, 6)), _v(w, o[13], (n, n)),
            _v(w, o[14], (n, n)), _v(w, o[15], (n, 6)), _v(w, o[16], (n, 6)),
            _v(w, o[17], (24, n)), _v(w, o[18], (8,)), _vi(w, o[23], (n,)), _vi(w, o[24], (n,)),
            _vi(w, o[25], (5, n)), _vi(w, o[26], (8,)))


@njit(cache=True)
def articulated_views(mb, w):
    """The scratch of kernels/articulated.py: (Iw, IA, ab, abv)."""
    n = _vi(mb, 0, (1,))[0]
    o = _vi(mb, 2 + 2 * n, (_NO,))
    return (_v(w, o[19], (n, 6, 6)), _v(w, o[20], (n, 6, 6)), _v(w, o[21], (12, n, 6)),
            _v(w, o[22], (7, n)))
