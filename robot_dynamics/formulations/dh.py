"""Denavit–Hartenberg tables (seed 003) as robot descriptions, and their export as URDF.

Standard (distal) convention: link frame i is placed in frame i−1 by
``T_i = Rz(θ_i) Tz(d_i) Tx(a_i) Rx(α_i)``; joint i turns θ_i (revolute) or slides d_i (prismatic)
about / along z_{i−1}; the table's θ (revolute) or d (prismatic) is the offset the joint
coordinate adds to. YAML::

    name: rrp_dh
    joints:                      # one row per joint, base to tip
      - {name: theta1, type: revolute, a: 0.0, alpha: 1.5707963, d: 0.7, theta: 1.5707963,
         mass: 3.0, com: [0, -0.15, 0], inertia: [ixx, iyy, izz, ixy, ixz, iyz],
         limits: {lower: -3.14, upper: 3.14, effort: 40, velocity: 2}}

``com`` and ``inertia`` (about the CoM) are in link frame i. Each row becomes a movable joint on
z_{i−1} (child: a massless motion frame) and a fixed joint ``Tz(d) Tx(a) Rx(α)`` to link frame i,
so the model keeps the DH link frames as URDF links.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics.parsers.config_files import load_mapping
from robot_dynamics.multibody.description import JointSpec, LinkSpec, RobotDescription
from robot_dynamics.errors import ModelError
from robot_dynamics.multibody.build import build_model
from robot_dynamics.spatial.algebra import homogeneous, rodrigues

REQUIRED = ("name", "type", "a", "alpha", "d", "theta", "mass", "com", "inertia")


def _rz(t):
    return homogeneous(rodrigues([0, 0, 1], t), np.zeros(3))


def _rx(t):
    return homogeneous(rodrigues([1, 0, 0], t), np.zeros(3))


def _tz(d):
    return homogeneous(np.eye(3), [0, 0, d])


def _tx(a):
    return homogeneous(np.eye(3), [a, 0, 0])


def description_from_dh(table) -> RobotDescription:
    """A :class:`RobotDescription` from a DH mapping or YAML path (errors name row and field)."""
    table, source = load_mapping(table, "DH")
    rows = table.get("joints") if isinstance(table, dict) else None
    if not rows:
        raise ModelError(f"{source}: expected a mapping with a non-empty 'joints' list")
    links = [LinkSpec(name="base_link")]
    joints = []
    parent = "base_link"
    for k, row in enumerate(rows):
        where = f"{source}: row {k}" + (f" ({row.get('name')})" if isinstance(row, dict) else "")
        if not isinstance(row, dict):
            raise ModelError(f"{where}: expected a mapping")
        missing = [f for f in REQUIRED if f not in row]
        if missing:
            raise ModelError(f"{where}: missing field(s) {missing}")
        kind = row["type"]
        if kind not in ("revolute", "prismatic"):
            raise ModelError(f"{where}: type must be revolute or prismatic, got {kind!r}")
        try:
            a, alpha, d, theta, mass = (float(row[f]) for f in ("a", "alpha", "d", "theta", "mass"))
            com = np.asarray(row["com"], dtype=float)
            inertia = np.asarray(row["inertia"], dtype=float)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{where}: {exc}") from None
        if com.shape != (3,) or inertia.shape != (6,):
            raise ModelError(f"{where}: com needs 3 numbers, inertia 6 (ixx iyy izz ixy ixz iyz)")
        ixx, iyy, izz, ixy, ixz, iyz = inertia
        name = str(row["name"])
        motion_link, link = f"{name}_frame", f"link_{k + 1}"
        limits = row.get("limits", {})
        if kind == "revolute":
            origin, tail = _rz(theta), _tz(d) @ _tx(a) @ _rx(alpha)
        else:
            origin, tail = _rz(theta) @ _tz(d), _tx(a) @ _rx(alpha)
        joints.append(JointSpec(
            name=name, type=kind, parent=parent, child=motion_link, origin=origin,
            axis=np.array([0.0, 0.0, 1.0]), lower=float(limits.get("lower", -np.inf)),
            upper=float(limits.get("upper", np.inf)), effort=float(limits.get("effort", np.inf)),
            velocity=float(limits.get("velocity", np.inf))))
        joints.append(JointSpec(name=f"{name}_dh", type="fixed", parent=motion_link, child=link,
                                origin=tail))
        links.append(LinkSpec(name=motion_link))
        links.append(LinkSpec(name=link, mass=mass, com=com, has_inertial=True,
                              inertia=np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])))
        parent = link
    return RobotDescription(name=str(table.get("name", "dh_robot")), links=links, joints=joints,
                            source=source)


def load_dh(table, gravity=(0.0, 0.0, -9.81)):
    """A core Model from a DH table (mapping or YAML path)."""
    return build_model(description_from_dh(table), gravity=gravity)


def dh_to_urdf(table) -> str:
    """The URDF text of a DH table (written by the URDF adapter, the only module with XML)."""
    from robot_dynamics.parsers.urdf import write_urdf

    return write_urdf(description_from_dh(table))
