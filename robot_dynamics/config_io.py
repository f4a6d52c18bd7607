"""Configuration files (friction laws, loop closures, DH tables): a mapping or a YAML path."""
from __future__ import annotations

import os

from .errors import ModelError


def load_mapping(config, kind: str):
    """Return ``(mapping, source)``: ``config`` itself, or the YAML file it names.

    ``kind`` names the file in errors ("friction", "loop-closure", "DH"); ``source`` is the file
    path (or ``"<kind> config"``) for the caller's own messages.
    """
    if not isinstance(config, (str, os.PathLike)):
        return config, f"{kind} config"
    import yaml

    source = os.fspath(config)
    if not os.path.isfile(source):
        raise ModelError(f"{source}: no such {kind} file")
    with open(source, encoding="utf-8") as fh:
        try:
            return yaml.safe_load(fh) or {}, source
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
            what = getattr(exc, "problem", None) or str(exc)
            raise ModelError(f"{where}: malformed YAML: {' '.join(str(what).split())}") from None
