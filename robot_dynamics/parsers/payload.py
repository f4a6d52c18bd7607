"""Payloads from a configuration file: the ``payload:`` section of a YAML file (or mapping).

One payload, or a list of them, each with the fields of
:meth:`~robot_dynamics.multibody.model.Model.set_payload`::

    payload:
      link: tool0            # any link of the robot (a fixed one goes to the body carrying it)
      mass: 3.0              # kg > 0
      com: [0.0, 0.0, 0.05]  # m, link frame (default: the link origin)
      inertia: {ixx: 0.01, iyy: 0.01, izz: 0.005}   # about the com, link-frame axes:
                             # URDF-style entries (ixy, ixz, iyz default 0) or a 3x3 list;
                             # default zeros (a point mass)

The section may sit in a file with other sections (a controller's parameters); the other
top-level keys are not read. Errors are one line naming the file, the entry and the field.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.errors import ModelError
from robot_dynamics.multibody.model import payload_parameters, unknown_link
from robot_dynamics.parsers.config_files import load_mapping

FIELDS = ("link", "mass", "com", "inertia")
URDF_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _inertia(value, where: str):
    """A 3x3 matrix from URDF-style entries or a nested list (the list is checked later)."""
    if value is None or not isinstance(value, dict):
        return value
    unknown = sorted(set(value) - set(URDF_INERTIA))
    if unknown:
        raise ModelError(f"{where}: inertia: unknown key(s) {unknown}; use {list(URDF_INERTIA)} "
                         "or a 3x3 list")
    try:
        xx, xy, xz, yy, yz, zz = (float(value.get(k, 0.0)) for k in URDF_INERTIA)
    except (TypeError, ValueError):
        raise ModelError(f"{where}: inertia: expected numbers for {list(URDF_INERTIA)}, got "
                         f"{value!r}") from None
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def payloads_in(config, model) -> list:
    """The checked :class:`~robot_dynamics.multibody.model.Payload` entries of ``config``'s
    ``payload`` section (a mapping or a YAML path), without touching ``model`` (whose links
    they name)."""
    mapping, source = load_mapping(config, "payload")
    if not isinstance(mapping, dict) or "payload" not in mapping:
        raise ModelError(f"{source}: expected a 'payload' section (link, mass, com, inertia)")
    section = mapping["payload"]
    entries = section if isinstance(section, list) else [section]
    several = isinstance(section, list)
    out = []
    for k, entry in enumerate(entries):
        where = f"{source}: payload[{k}]" if several else f"{source}: payload"
        if not isinstance(entry, dict):
            raise ModelError(f"{where}: expected a mapping with {list(FIELDS)}, got {entry!r}")
        unknown = sorted(set(entry) - set(FIELDS))
        if unknown:
            raise ModelError(f"{where}: unknown field(s) {unknown}; use {list(FIELDS)}")
        for name in ("link", "mass"):
            if name not in entry:
                raise ModelError(f"{where}: {name}: missing (fields: {list(FIELDS)})")
        link = entry["link"]
        if not isinstance(link, str) or link not in model.frames:
            raise ModelError(f"{where}: link: {unknown_link(model, link)}")
        out.append(payload_parameters(link, entry["mass"], entry.get("com", (0.0, 0.0, 0.0)),
                                      _inertia(entry.get("inertia"), where),
                                      f"{where} on {link!r}"))
    return out


def payload_from_config(model, config) -> list:
    """Set on ``model`` the payload(s) of ``config`` (a YAML path or a mapping with a
    ``payload`` section, module docstring) with :meth:`Model.set_payload`; every entry is
    checked before any is set. Returns the :class:`Payload` entries set."""
    loads = payloads_in(config, model)
    for p in loads:
        model.set_payload(p.link, p.mass, p.com, p.inertia)
    return loads
