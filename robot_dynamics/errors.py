"""Errors raised by robot_dynamics, and the guards every public entry point applies.

Every message names what is wrong: the file, link, joint or argument, and the offending value.

The guards, cheapest first, so that a well-formed call pays almost nothing for them:

* :func:`check_data` / :func:`check_friction` — a :class:`~robot_dynamics.multibody.model.Data` or a
  :class:`~robot_dynamics.friction.FrictionModel` records the model it was made for; the entry
  points compare ``data._model is model`` (one identity test) and call these only when it fails.
  A compiled kernel sizes its loops from the model and writes the Data's buffers, so a Data of
  another robot would make it write past them: that is refused, naming both robots.
* :func:`plain` — whether vectors can go to a compiled entry point as they are (C-contiguous,
  aligned, writable float64); anything else (lists, tuples, read-only, strided, float32/int) is
  converted once by :func:`as_vector`, so no new numba specialisation is ever compiled for it.
* :func:`raise_overflow` — finite inputs so large that the dynamics leave the float64 range
  (``v = 1e154`` squares to ``1e308``) give non-finite outputs. Entry points check their outputs
  once after the compiled call; only when that fails does this search which input did it.
"""
from __future__ import annotations

import argparse
import math
import os

import numpy as np

F64 = np.dtype(np.float64)


class ModelError(ValueError):
    """A robot description (URDF, DH table, loop-closure file) cannot make a valid model."""


class InputError(ValueError):
    """A state or effort vector given to an algorithm is malformed (size, NaN, Inf), or so large
    that the result overflows (message starting ``overflow:``)."""


class MismatchError(ValueError):
    """A Data workspace or a friction model used with a Model it was not made for."""


#: file formats matplotlib writes (an output path given for a plot)
IMAGE_FORMATS = ("png", "pdf", "svg", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp")


def check_writable(path: str, what: str, image: bool = False) -> None:
    """Refuse now (InputError, one line naming the option ``what``) rather than after a long
    run an output ``path`` that cannot be written: a directory, a missing folder, no write
    permission, or (``image``) a format matplotlib does not write."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise InputError(f"{what} {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise InputError(f"{what} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InputError(f"{what} {path}: not writable")
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if image and ext not in IMAGE_FORMATS:
        raise InputError(f"{what} {path}: unknown image format {ext!r} (use .png, .pdf or .svg)")


def plain(*xs) -> bool:
    """True when every ``x`` is a C-contiguous, aligned, writable float64 array (what the compiled
    entry points take as is). Lists and tuples give False (they have no ``dtype``)."""
    try:
        for x in xs:
            if not (x.dtype is F64 and x.flags.carray):
                return False
    except AttributeError:
        return False
    return True


def as_vector(name: str, x, n: int, *, where: str = "") -> np.ndarray:
    """Return ``x`` as a finite float64 vector of length ``n``, or raise :class:`InputError`.

    The result is C-contiguous, aligned and writable (a copy when ``x`` is a list, a tuple, a
    read-only or strided array, or of another dtype), so the compiled kernels take it without a
    new specialisation. ``name`` is the argument's name as the user wrote it (``q``, ``v``, ``a``,
    ``tau``), and ``where`` the calling algorithm, so the message says which input of which call
    is wrong.
    """
    if (type(x) is np.ndarray and x.dtype is F64 and x.shape == (n,) and x.flags.carray
            and math.isfinite(x.sum())):
        return x  # fast path: already a finite float64 vector (a NaN or Inf makes the sum non-finite)
    ctx = f" in {where}" if where else ""
    if x is None:
        raise InputError(f"{name}{ctx}: got None, expected {n} numbers")
    arr = _float_array(name, x, ctx, "vector")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"{name}{ctx}: expected shape ({n},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr)).tolist()
        raise InputError(f"{name}{ctx}: non-finite value(s) at index {bad}: {arr[bad].tolist()}")
    if not (arr.dtype is F64 and arr.flags.carray):
        arr = np.array(arr, dtype=np.float64, order="C")  # read-only, strided, byte-swapped
    return arr


def real_array(x) -> np.ndarray:
    """``np.array(x, dtype=float64)`` (a new array), but a TypeError for complex values, whose
    imaginary part numpy would drop with only a warning."""
    arr = np.asarray(x)
    if arr.dtype.kind == "c":
        raise TypeError("complex values")
    if arr.dtype.kind == "O" and _none_at(arr):
        raise TypeError("None where a number is expected")  # numpy would read it as NaN
    return np.array(arr, dtype=np.float64)


def _none_at(arr) -> list:
    """The indices of the entries of object array ``arr`` that are None (numpy reads None as
    NaN: it would pass for a non-finite number)."""
    return [i if arr.ndim != 1 else i[0] for i in np.argwhere(np.equal(arr, None)).tolist()]


def _float_array(name, x, ctx, kind) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nesting
        raise InputError(f"{name}{ctx}: cannot be read as a float {kind} ({exc})") from None
    if arr.dtype.kind == "c":
        eg = f" (e.g. {complex(arr.ravel()[0])})" if arr.size else ""
        raise InputError(f"{name}{ctx}: complex values{eg}: expected real numbers")
    if arr.dtype.kind == "O":
        bad = _none_at(arr)
        if bad:
            raise InputError(f"{name}{ctx}: not a number (None) at index {bad[:10]}")
    try:
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}{ctx}: cannot be read as a float {kind} ({exc})") from None


def _body_names(names, rows) -> str:
    if names is None:
        return ""
    return " (" + ", ".join(f"body {names[r]!r}" for r in rows[:10]) + ")"


def as_wrenches(name: str, x, n: int, *, where: str = "", names=None,
                batch: bool = False) -> np.ndarray:
    """Return ``x`` as a finite float64 C array of shape (n, 6) — one wrench [force; torque] per
    body, ``fext`` — or (``batch``) (N, n, 6), or raise :class:`InputError` in one line naming
    ``name``, the expected shape and the rows (with the bodies' ``names``) holding a NaN/Inf."""
    ctx = f" in {where}" if where else ""
    shape = f"(N, {n}, 6)" if batch else f"({n}, 6)"
    if x is None:
        raise InputError(f"{name}{ctx}: got None, expected an array of shape {shape}")
    arr = _float_array(name, x, ctx, "array")
    if arr.shape[-2:] != (n, 6) or arr.ndim != (3 if batch else 2):
        raise InputError(f"{name}{ctx}: expected shape {shape} (a wrench [force; torque] per "
                         f"body, body frame), got {arr.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        total = arr.sum()
    if not math.isfinite(total) and not np.isfinite(arr).all():
        bad = ~np.isfinite(arr).all(axis=-1)
        if batch:
            k, i = (int(x) for x in np.argwhere(bad)[0])
            raise InputError(f"{name}{ctx}: non-finite value(s) in sample {k}, row {i}"
                             f"{_body_names(names, [i])}: {arr[k, i].tolist()}")
        rows = np.flatnonzero(bad).tolist()
        raise InputError(f"{name}{ctx}: non-finite value(s) in row(s) {rows[:10]}"
                         f"{_body_names(names, rows)}: {arr[rows[0]].tolist()}")
    if not (arr.dtype is F64 and arr.flags.carray and arr.flags.writeable):
        arr = np.array(arr, dtype=np.float64, order="C")
    return arr


def as_batch(name: str, X, n: int, *, where: str = "") -> np.ndarray:
    """:func:`as_vector` for an (N, n) array of samples (one row per sample)."""
    ctx = f" in {where}" if where else ""
    if X is None:
        raise InputError(f"{name}{ctx}: got None, expected an (N, {n}) array")
    arr = _float_array(name, X, ctx, "array")
    if arr.ndim != 2 or arr.shape[1] != n:
        raise InputError(f"{name}{ctx}: expected shape (N, {n}), got {arr.shape}")
    with np.errstate(over="ignore"):
        total = arr.sum()
    if not math.isfinite(total) and not np.isfinite(arr).all():
        rows = np.flatnonzero(~np.isfinite(arr).all(axis=1))
        raise InputError(f"{name}{ctx}: non-finite values in row(s) {rows[:10].tolist()}")
    if not (arr.dtype is F64 and arr.flags.carray):
        arr = np.array(arr, dtype=np.float64, order="C")
    return arr


def _robot(model) -> str:
    return f"robot {getattr(model, 'name', '?')!r} (nv={getattr(model, 'nv', '?')})"


def check_data(model, data, where: str) -> None:
    """Raise :class:`MismatchError` unless ``data`` was made for ``model`` (or for a model of
    the same structure: same joints, hence the same buffer sizes — a Data is only a workspace).

    Entry points call this only when ``data._model`` is not ``model``; an accepted sibling model
    becomes the Data's model, so the next call takes the identity test again.
    """
    own = getattr(data, "_model", None)
    if own is None or not hasattr(data, "_work"):
        raise MismatchError(f"{where}: expected a Data from model.create_data(), got "
                            f"{type(data).__name__}")
    if own.nv == model.nv and own.joint_names == model.joint_names:
        data._model = model
        return
    raise MismatchError(
        f"{where}: Data was created for {_robot(own)}, used with model {model.name!r} "
        f"(nv={model.nv}): create one with model.create_data()")


def check_friction(model, friction, where: str) -> None:
    """Raise :class:`MismatchError` unless ``friction`` was built for ``model`` (or for a model
    with the same joints, in the same order). ``None`` (no friction) always fits."""
    if friction is None or getattr(friction, "_model", None) is model:
        return
    names = getattr(friction, "joint_names", None)
    if names is None:
        raise MismatchError(f"{where}: friction must be a FrictionModel (friction_from_config), "
                            f"got {type(friction).__name__}")
    if list(names) == list(model.joint_names):
        friction._model = model
        return
    own = getattr(friction, "_model", None)
    made = (f"robot {own.name!r} (nv={own.nv})" if own is not None else
            f"joints {list(names)} (nv={len(names)})")
    raise MismatchError(
        f"{where}: friction model was made for {made}, used with model {model.name!r} "
        f"(nv={model.nv}): build one with friction_from_config(config, model)")


def raise_overflow(where: str, inputs, finite, batch_row=None) -> None:
    """Name the inputs that make a call's outputs non-finite, and raise ``InputError("overflow:
    ...")``.

    ``inputs`` is a list of (name, finite float64 vector); ``finite(*vectors)`` re-runs the call
    and says whether its outputs are finite. The largest entries are set to zero one at a time
    (largest magnitude first, across all inputs) until the outputs are finite, then each of them
    is given back its value if the outputs stay finite: the others are the culprits. Only ever
    run after a call already gave a non-finite output (a few dozen re-runs at most).
    """
    work = [np.array(x, dtype=np.float64) for _, x in inputs]
    order = sorted((-abs(float(x[i])), k, i) for k, x in enumerate(work) for i in range(len(x)))
    culprits = []
    for mag, k, i in order:
        if mag == 0.0:
            break
        work[k][i] = 0.0
        culprits.append((k, i))
        if finite(*work):
            break
    else:
        culprits = []
    for k, i in list(culprits[:-1]):  # keep only the entries that are needed for the overflow
        work[k][i] = inputs[k][1][i]
        if finite(*work):
            culprits.remove((k, i))
        else:
            work[k][i] = 0.0
    row = "" if batch_row is None else f"{batch_row}, "
    if culprits and finite(*work):
        named = ", ".join(f"{inputs[k][0]}[{row}{i}] = {float(inputs[k][1][i]):.6g}"
                          for k, i in culprits[:6])
        more = f" and {len(culprits) - 6} more" if len(culprits) > 6 else ""
        raise InputError(f"overflow: {named}{more} in {where}: the computation leaves the "
                         "float64 range (scale the input down)")
    raise InputError(f"overflow: in {where}: the result is not finite for finite inputs "
                     "(model or gravity too large?)")


def run_converted(where: str, specs, run) -> list:
    """The careful path of an entry point: convert every ``(name, x, n)`` of ``specs`` to a new
    float64 C vector and call ``run(*vectors)`` — the compiled call, which checks lengths and
    finiteness itself and returns True when its outputs are finite. Only when it returns False
    are the inputs examined (:func:`as_vector` names a malformed one) and, when they are well
    formed, the culprit of the overflow named (:func:`raise_overflow`). Returns the vectors."""
    try:
        vectors = [real_array(x) for _, x, _ in specs]
        if run(*vectors):
            return vectors
    except (TypeError, ValueError):  # ragged, 2-D (no kernel signature), not numbers
        pass
    vectors = [as_vector(name, x, n, where=where) for name, x, n in specs]
    if not run(*vectors):
        raise_overflow(where, [(spec[0], x) for spec, x in zip(specs, vectors)], run)
    return vectors


class OneLineParser(argparse.ArgumentParser):
    """The commands' argument parser: a mistake is one line naming it and exit 2 (argparse's
    own prints the whole usage before it)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def numbers(words, count: int) -> tuple:
    """``count`` finite numbers from an option's words, written either way: one comma-separated
    word (``0,0,0.1``, spaces after the commas allowed) or ``count`` words (``0 0 0.1``).
    ValueError with the one-line reason otherwise."""
    text = " ".join(words)
    items = [item.strip() for word in words for item in word.split(",")]
    try:
        values = tuple(float(item) for item in items)
    except ValueError:
        values = None
    if values is None or len(values) != count or (len(words) != 1 and len(words) != count):
        raise ValueError(f"expected {count} numbers, as X,Y,Z or X Y Z, got {text!r}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"expected {count} finite numbers, got {text!r}")
    return values


class NumbersAction(argparse.Action):
    """An option of ``count`` numbers (``--payload-com``) that takes both ways of writing them
    (:func:`numbers`): ``sim``'s ``--payload-com 0 0 0.1`` and ``sweep``'s ``--payload-com
    0,0,0.1`` alike, in both commands. The value is a tuple of floats; a mistake is the
    parser's one-line error naming the option. Its usage reads ``X,Y,Z | X Y Z``
    (:class:`HelpFormatter`)."""

    def __init__(self, option_strings, dest, count=3, **kwargs):
        kwargs["nargs"] = "+"
        kwargs.setdefault("metavar", "X,Y,Z | X Y Z")
        super().__init__(option_strings, dest, **kwargs)
        self.count = count

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            setattr(namespace, self.dest, numbers(values, self.count))
        except ValueError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The commands' help: the description and epilog as written; a :class:`NumbersAction`
    shown by its metavar alone (argparse would write ``X [X ...]`` for its one-or-more words)."""

    def _format_args(self, action, default_metavar):
        if isinstance(action, NumbersAction):
            return action.metavar
        return super()._format_args(action, default_metavar)
