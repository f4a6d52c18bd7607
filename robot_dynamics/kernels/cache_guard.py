"""Keep numba's on-disk cache consistent across edits of the kernel sources.

numba keys a cached function on its own file's timestamp only: a kernel inlining a function from
another file (every entry point here calls into dynamics.py, friction.py, stiction.py,
articulated.py, layout.py) would load stale machine code after that other file changed. :func:`guard` hashes the sources of
every module with compiled functions and, when the hash differs from the one stamped beside the
caches, deletes those caches before any kernel is imported — beside the sources, or under
``NUMBA_CACHE_DIR`` when that is set. Best effort: a read-only install (caches elsewhere,
sources unchanged) is left alone.
"""
from __future__ import annotations

import glob
import hashlib
import os
import sys

_KERNELS = os.path.dirname(os.path.abspath(__file__))  # every numba function lives here


def _cache_folders():
    """Where numba keeps the caches of the package's kernels: beside the sources, or under
    ``NUMBA_CACHE_DIR`` when that is set (numba's own rule for a user-provided cache folder)."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if not cache_dir:
        return [os.path.join(_KERNELS, "__pycache__")]
    from numba.core.caching import UserProvidedCacheLocator

    return [os.path.join(cache_dir, UserProvidedCacheLocator.get_suitable_cache_subpath(
        os.path.join(_KERNELS, "__init__.py")))]


#: The line printed on stderr before the kernels compile, on any output (a terminal, a pipe, a
#: CI log, ros2 launch), so the minutes that follow are not silence. The estimate is measured:
#: 2.5 minutes on a fresh clone with two cores, longer when other work shares them.
COMPILING = ("robot_dynamics: compiling the dynamics kernels (first use after an install or "
             "update: about 2-3 minutes on two free cores, longer on a busy machine; cached "
             "for later runs)")


def _announce() -> None:
    if sys.stderr is not None and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0"):
        try:
            print(COMPILING, file=sys.stderr, flush=True)
        except (OSError, ValueError):  # a closed or broken stderr: compile anyway
            pass


def guard() -> None:
    """Delete stale caches (see the module docstring) and, when a compile is about to start
    (caches just cleared, or none there yet), say so on stderr — one line, whatever stderr is."""
    digest = hashlib.sha256()
    for path in sorted(glob.glob(os.path.join(_KERNELS, "*.py"))):
        with open(path, "rb") as fh:
            digest.update(fh.read())
    folders = _cache_folders()
    stamp = os.path.join(folders[0], "sources.sha256")
    try:
        with open(stamp) as fh:
            if fh.read() == digest.hexdigest():
                if not any(glob.glob(os.path.join(f, "*.nbi")) for f in folders):
                    _announce()  # stamped, but no cache yet (e.g. interrupted before any)
                return
    except OSError:
        pass
    _announce()
    try:
        for folder in folders:
            for path in glob.glob(os.path.join(folder, "*.nb[ic]")):
                os.remove(path)
        os.makedirs(folders[0], exist_ok=True)
        with open(stamp, "w") as fh:
            fh.write(digest.hexdigest())
    except OSError:
        pass
