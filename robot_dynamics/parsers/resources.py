"""Where the bundled robots (``urdf/``) and configurations (``config/``) live.

Looked up, in order: the ament index of a ROS 2 install (``share/robot_dynamics``), the
``share/robot_dynamics`` that ``pip install`` puts under ``sys.prefix``, the one under the prefix
the installed package itself lives in (``pip install --user`` or ``--prefix``:
``<prefix>/lib/pythonX.Y/site-packages/robot_dynamics``), then the source tree (an editable
install or a checkout: never another install's files).
"""
from __future__ import annotations

import difflib
import os
import sys
from functools import lru_cache

from robot_dynamics.errors import ModelError

PACKAGE = "robot_dynamics"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # robot_dynamics/
_SOURCE_TREE = os.path.dirname(_PACKAGE_DIR)


def _package_prefix(package_dir: str):
    """The install prefix (the scheme's "data" directory, where ``share/`` goes) of a package
    installed in ``<prefix>/lib/pythonX.Y/site-packages/<package>`` (or ``<prefix>/Lib/
    site-packages``, Windows), or None when ``package_dir`` is not in a site-packages."""
    site_dir = os.path.dirname(package_dir)
    if os.path.basename(site_dir) not in ("site-packages", "dist-packages"):
        return None
    up = os.path.dirname(site_dir)
    if os.path.basename(up).lower().startswith("python"):  # lib/pythonX.Y
        up = os.path.dirname(up)
    return os.path.dirname(up)  # above lib/ (lib64/, Lib/)


@lru_cache(maxsize=None)
def share_directory() -> str:
    """The directory holding ``urdf/``, ``config/`` and ``launch/``."""
    candidates = []
    try:  # a ROS 2 install
        from ament_index_python.packages import get_package_share_directory

        candidates.append(get_package_share_directory(PACKAGE))
    except Exception:  # not installed through colcon, or ament_index absent
        pass
    prefixes = [sys.prefix, _package_prefix(_PACKAGE_DIR)]
    for prefix in prefixes:
        path = prefix and os.path.join(prefix, "share", PACKAGE)
        if path and path not in candidates:
            candidates.append(path)
    candidates.append(_SOURCE_TREE)
    for path in candidates:
        if os.path.isdir(os.path.join(path, "urdf")):
            return path
    raise ModelError(f"cannot find the bundled robots: looked in {candidates}")


def _known(directory: str, suffix: str, also=(), family: str = "") -> list[str]:
    """The names one can type: 'arm7' for arm7.urdf, a xacro by its file name."""
    return sorted(f[:-len(suffix)] if f.endswith(suffix) else f
                  for f in os.listdir(directory) if f.endswith((suffix, *also))
                  and (not family or f.endswith(f"_{family}{suffix}")))


def _robot_files(directory: str) -> dict:
    """The bundled robots' names one types, each with its file: ``arm7`` for ``arm7.urdf``; a
    xacro by its bare name (``two_arms`` for ``two_arms.urdf.xacro``) when no plain URDF has
    that name, else the URDF is the robot and the xacro (``planar_2r.urdf.xacro``, the same arm
    written as xacro) is typed by its file name, unlisted."""
    files = sorted(os.listdir(directory))
    names = {f[:-len(".urdf")]: f for f in files if f.endswith(".urdf")}
    for f in files:
        if f.endswith(".xacro"):
            names.setdefault(robot_stem(f), f)
    return names


def bundled_robots() -> list[str]:
    """Every bundled robot by the bare name :func:`robot_path` takes (``arm7``, ``planar_2r``,
    ...), sorted; [] when the bundled files cannot be found."""
    try:
        return sorted(_robot_files(os.path.join(share_directory(), "urdf")))
    except (ModelError, OSError):
        return []


def robot_help() -> str:
    """The ``--help`` words for a robot argument: the full bundled list, then paths."""
    names = bundled_robots()
    listed = f" ({', '.join(names)})" if names else ""
    try:  # the xacro twins of listed robots, typed by their file name
        directory = os.path.join(share_directory(), "urdf")
        files = _robot_files(directory)  # the folder listed once, not once per xacro file
        twins = sorted(f for f in os.listdir(directory) if f.endswith(".xacro")
                       and files.get(robot_stem(f)) != f)
    except (ModelError, OSError):
        twins = []
    example = f", e.g. the bundled {', '.join(twins)}" if twins else ""
    return (f"bundled robot name{listed}, URDF path, or .urdf.xacro path (expanded with "
            f"xacro{example})")


def _resolve(kind: str, name: str, suffix: str, also=(), family: str = "", names=None) -> str:
    """The path of bundled ``name`` in ``share/<kind>``. ``names``: the typed names and their
    files (:func:`_robot_files`), else ``name`` + ``suffix`` unless it ends in one of them."""
    if os.path.isfile(name):
        return name
    directory = os.path.join(share_directory(), kind)
    fname = name if name.endswith((suffix, *also)) else name + suffix
    if names is not None and name in names:
        fname = names[name]
    path = os.path.join(directory, fname)
    if not os.path.isfile(path):
        if os.sep in name or (os.altsep and os.altsep in name):
            # a path, not a bundled name: listing the bundled files would only confuse
            raise ModelError(f"{name}: no such file")
        known = (sorted(names) if names is not None else
                 _known(directory, suffix, also, family))
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        if kind == "urdf":  # the words of --help (robot_help): the names, then paths
            raise ModelError(f"robot {name!r} is neither a bundled robot nor a file that "
                             f"exists; {hint}bundled robots: {', '.join(known)} (or a URDF or "
                             ".urdf.xacro path)")
        what = f"{family} config" if family else f"{kind} file"
        raise ModelError(f"no bundled {what} {name!r} (and no such file); {hint}"
                         f"bundled: {known}")
    return path


def robot_path(name: str) -> str:
    """Path of a bundled robot (``'arm7'`` → ``…/urdf/arm7.urdf``; a xacro-only robot's bare
    name → its ``.urdf.xacro``; ``'planar_2r.urdf.xacro'`` → ``…/urdf/planar_2r.urdf.xacro``),
    or ``name`` if it is a file (URDF or xacro). A bad name lists :func:`bundled_robots`."""
    if os.path.isfile(name):
        return name
    try:
        names = _robot_files(os.path.join(share_directory(), "urdf"))
    except OSError:
        names = None
    return _resolve("urdf", name, ".urdf", (".xacro",), names=names)


def robot_stem(name: str) -> str:
    """A robot's name without directory and ``.urdf``/``.xacro`` suffixes
    (``'/x/planar_2r.urdf.xacro'`` → ``'planar_2r'``): the prefix of its bundled
    configurations."""
    stem = os.path.basename(name)
    for suffix in (".xacro", ".urdf"):
        if stem.endswith(suffix):
            stem = stem[:-len(suffix)]
    return stem


def bundled_robot(robot: str, xml: str = ""):
    """The stem of the bundled robot that ``robot`` (a bundled name or a URDF/xacro path) is
    (``'arm7'``), or None when it is not one: only a bundled robot gets its bundled
    configurations (``<stem>_friction``, ``_actuators``, ``_controller``) by default. A user's
    file named like a bundled robot (``~/my/arm7.urdf``) is not the bundled one, nor is a
    ``robot_description`` (``xml``) other than the bundled file's text (a node given the XML of
    the user's own arm, ``robot`` left at its default)."""
    try:
        path = robot_path(robot)
    except ModelError:
        return None
    bundled = os.path.join(share_directory(), "urdf", os.path.basename(path))
    try:
        if not os.path.samefile(path, bundled):
            return None
        if xml.strip():
            with open(bundled, encoding="utf-8") as fh:
                if fh.read().strip() != xml.strip():
                    return None
    except OSError:
        return None
    return robot_stem(bundled)


def config_path(name: str, family: str = "") -> str:
    """Path of a bundled configuration (``'arm7_friction'`` → ``…/config/arm7_friction.yaml``),
    or ``name`` if it is a file. ``family`` (``'friction'``, ``'actuators'``): an unknown name
    lists only the bundled ``*_<family>`` configs."""
    return _resolve("config", name, ".yaml", family=family)
