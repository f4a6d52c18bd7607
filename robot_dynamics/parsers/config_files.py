"""Configuration files (friction laws, loop closures, DH tables): a mapping or a YAML path."""
from __future__ import annotations

import os

from robot_dynamics.errors import ModelError


def load_mapping(config, kind: str):
    """Return ``(mapping, source)``: ``config`` itself, or the YAML file it names.

    ``kind`` names the file in errors ("friction", "loop-closure", "DH"); ``source`` is the file
    path (or ``"<kind> config"``) for the caller's own messages. A friction or actuators config
    may also be named as on the command line: ``"none"``, or a bundled config's name
    (``"arm7_friction"``; an unknown name lists them).
    """
    if not isinstance(config, (str, os.PathLike)):
        return config, f"{kind} config"
    import yaml

    source = os.fspath(config)
    if not os.path.isfile(source):
        bare = os.sep not in source and not (os.altsep and os.altsep in source)
        if not (bare and kind in ("friction", "actuators")):
            raise ModelError(f"{source}: no such {kind} file")
        if source == "none":
            return {}, "none"
        from robot_dynamics.parsers.resources import config_path

        source = config_path(source, kind)
    with open(source, encoding="utf-8") as fh:
        try:
            mapping = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
            what = getattr(exc, "problem", None) or str(exc)
            raise ModelError(f"{where}: malformed YAML: {' '.join(str(what).split())}") from None
    if mapping is None:  # an empty file is a mistake, not "nothing configured"
        none = {"friction": "'default: {model: none}'", "actuators": "'default: none'"}.get(kind)
        raise ModelError(f"{source}: the {kind} file is empty" +
                         (f" (to configure none, write {none})" if none else ""))
    return mapping, source


def joint_entries(config, source: str, model, what: str) -> list:
    """The per-joint entries of a ``{default: …, joints: {name: …}}`` mapping, in the model's
    joint order: ``(entry, where)`` for each joint (``entry`` None where the mapping says
    nothing), ``where`` naming the file and the joint for error messages. ``what`` says what a
    joint maps to ("laws", "actuators") in the one-line errors."""
    if not isinstance(config, dict):
        raise ModelError(f"{source}: expected a mapping with 'default' and/or 'joints'")
    unknown = sorted(set(config) - {"default", "joints"})
    if unknown:
        raise ModelError(f"{source}: unknown top-level key(s) {unknown}; use 'default', 'joints'")
    joints = config.get("joints") or {}
    if not isinstance(joints, dict):
        raise ModelError(f"{source}: 'joints' must map joint names to {what}")
    missing = sorted(set(joints) - set(model.joint_names))
    if missing:
        raise ModelError(f"{source}: joint(s) {missing} are not movable joints of robot "
                         f"{model.name!r} ({model.joint_names})")
    default = config.get("default")
    out = []
    for name in model.joint_names:
        if name in joints:
            out.append((joints[name], f"{source}: joint {name!r}"))
        elif default is not None:
            out.append((default, f"{source}: default (joint {name!r})"))
        else:
            out.append((None, f"{source}: joint {name!r}"))
    return out
