"""URDF adapter: the only module of robot_dynamics that touches XML.

It reads a URDF with ``yourdfpy`` (``urdfpy`` does not import on Python ≥ 3.10) into a
:class:`~robot_dynamics.description.RobotDescription` and hands it to
:func:`~robot_dynamics.model.build_model`. Meshes are never loaded.
"""
from __future__ import annotations

import io
import os
import re

import numpy as np

from .description import JointSpec, LinkSpec, RobotDescription
from .errors import ModelError
from .model import Model, build_model

_XACRO_SUBST = re.compile(r"\$\{[^}]*\}|\$\(\s*(find|arg|eval)\b[^)]*\)")


def _read_text(path_or_xml) -> tuple[str, str]:
    """Return (xml_text, source_name) from a path or an XML string."""
    if isinstance(path_or_xml, os.PathLike) or (
        isinstance(path_or_xml, str) and "<" not in path_or_xml
    ):
        path = os.fspath(path_or_xml)
        if not os.path.isfile(path):
            raise ModelError(f"{path}: no such URDF file")
        with open(path, encoding="utf-8") as fh:
            return fh.read(), path
    if isinstance(path_or_xml, bytes):
        return path_or_xml.decode("utf-8"), "<string>"
    if isinstance(path_or_xml, str):
        return path_or_xml, "<string>"
    raise ModelError(f"load_urdf: expected a path or an XML string, got {type(path_or_xml).__name__}")


def _float(value, default: float) -> float:
    return default if value is None else float(value)


def parse_urdf(path_or_xml) -> RobotDescription:
    """Parse a URDF file or string into a neutral description (no validation of physics)."""
    import yourdfpy
    from lxml import etree

    text, source = _read_text(path_or_xml)
    try:
        root = etree.fromstring(text.encode("utf-8"))
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"{source}: malformed XML: {exc}") from None
    _check_not_xacro(root, source)
    if root.tag != "robot":
        raise ModelError(f"{source}: root element is <{root.tag}>, expected <robot>")
    _check_numbers(root, source)
    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(text.encode("utf-8")),
            build_scene_graph=False,
            build_collision_scene_graph=False,
            load_meshes=False,
            load_collision_meshes=False,
        )
    except Exception as exc:  # yourdfpy raises several types; say which file
        raise ModelError(f"{source}: cannot read URDF: {exc}") from None
    robot = urdf.robot

    links = []
    for link in robot.links:
        spec = LinkSpec(name=link.name)
        inertial = link.inertial
        if inertial is not None:
            spec.has_inertial = True
            spec.mass = _float(inertial.mass, 0.0)
            origin = np.eye(4) if inertial.origin is None else np.asarray(inertial.origin, float)
            spec.com = origin[:3, 3].copy()
            spec.inertia_rotation = origin[:3, :3].copy()
            spec.inertia = (
                np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, float)
            )
        links.append(spec)

    joints = []
    for j in robot.joints:
        spec = JointSpec(name=j.name, type=j.type, parent=j.parent, child=j.child)
        if j.origin is not None:
            spec.origin = np.asarray(j.origin, float)
        if j.axis is not None:
            spec.axis = np.asarray(j.axis, float)
        if j.limit is not None:
            spec.lower = _float(j.limit.lower, -np.inf)
            spec.upper = _float(j.limit.upper, np.inf)
            spec.effort = _float(j.limit.effort, np.inf)
            spec.velocity = _float(j.limit.velocity, np.inf)
        if j.type == "continuous":
            spec.lower, spec.upper = -np.inf, np.inf
        if j.dynamics is not None:
            spec.damping = _float(j.dynamics.damping, 0.0)
            spec.friction = _float(j.dynamics.friction, 0.0)
        joints.append(spec)
    return RobotDescription(name=robot.name, links=links, joints=joints, source=source)


def _check_not_xacro(root, source: str) -> None:
    """Refuse a xacro file: xacro elements or ``${…}``/``$(find …)`` left in attributes.

    A namespace declaration alone (``xmlns:xacro``) is harmless: xacro leaves it in its output.
    """
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue  # comments and processing instructions
        tag = el.tag
        in_xacro_ns = tag.startswith("{") and "xacro" in tag[1:tag.find("}")]
        bad = f"<xacro:{etree_local(tag)}>" if in_xacro_ns else None
        if bad is None:
            for attr, val in el.attrib.items():
                m = _XACRO_SUBST.search(val)
                if m:
                    bad = f"{attr}={m.group(0)!r}"
                    break
        if bad:
            raise ModelError(
                f"{source}:{el.sourceline}: unexpanded xacro ({bad}); run `xacro file.urdf.xacro"
                " > file.urdf` first and load the result"
            )


def etree_local(tag: str) -> str:
    return tag.split("}", 1)[-1]


def _check_numbers(root, source: str) -> None:
    """Reject NaN/Inf and unreadable numbers in the attributes the dynamics reads."""
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in ("xyz", "rpy", "value", "ixx", "ixy", "ixz", "iyy", "iyz", "izz",
                     "effort", "velocity", "lower", "upper", "damping", "friction"):
            val = el.get(attr)
            if val is None:
                continue
            owner = el
            while owner is not None and owner.tag not in ("link", "joint"):
                owner = owner.getparent()
            who = f"{owner.tag} {owner.get('name')!r}" if owner is not None else "robot"
            try:
                nums = [float(x) for x in val.split()]
            except ValueError:
                raise ModelError(
                    f"{source}:{el.sourceline}: {who}: <{el.tag} {attr}={val!r}> is not a number"
                ) from None
            if not all(np.isfinite(nums)):
                raise ModelError(
                    f"{source}:{el.sourceline}: {who}: <{el.tag} {attr}={val!r}> is not finite"
                )


def load_urdf(path_or_xml, *, gravity=(0.0, 0.0, -9.81), allow_massless: bool = False) -> Model:
    """Build a :class:`~robot_dynamics.model.Model` from a URDF path or XML string.

    ``gravity`` is the world gravity vector in the root link's frame. ``allow_massless`` accepts
    moving bodies without mass (off by default: a moving link without ``<inertial>`` is almost
    always a mistake in a URDF used for dynamics).
    """
    return build_model(parse_urdf(path_or_xml), gravity=gravity, allow_massless=allow_massless)


def _rpy(R) -> tuple:
    """URDF roll-pitch-yaw of a rotation matrix (inverse of spatial.rpy_matrix)."""
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(R[2, 0]) < 1 - 1e-12:
        return float(np.arctan2(R[2, 1], R[2, 2])), pitch, float(np.arctan2(R[1, 0], R[0, 0]))
    return 0.0, pitch, float(np.arctan2(-R[0, 1], R[1, 1]))


def write_urdf(desc) -> str:
    """URDF text of a :class:`~robot_dynamics.description.RobotDescription` (no visuals)."""
    from lxml import etree

    def fmt(values):
        return " ".join(f"{float(v):.12g}" for v in values)

    robot = etree.Element("robot", name=desc.name)
    for link in desc.links:
        el = etree.SubElement(robot, "link", name=link.name)
        if link.has_inertial:
            inertial = etree.SubElement(el, "inertial")
            etree.SubElement(inertial, "origin", xyz=fmt(link.com),
                             rpy=fmt(_rpy(link.inertia_rotation)))
            etree.SubElement(inertial, "mass", value=f"{link.mass:.12g}")
            I = link.inertia
            etree.SubElement(inertial, "inertia", ixx=f"{I[0, 0]:.12g}", ixy=f"{I[0, 1]:.12g}",
                             ixz=f"{I[0, 2]:.12g}", iyy=f"{I[1, 1]:.12g}", iyz=f"{I[1, 2]:.12g}",
                             izz=f"{I[2, 2]:.12g}")
    for j in desc.joints:
        el = etree.SubElement(robot, "joint", name=j.name, type=j.type)
        etree.SubElement(el, "parent", link=j.parent)
        etree.SubElement(el, "child", link=j.child)
        etree.SubElement(el, "origin", xyz=fmt(j.origin[:3, 3]), rpy=fmt(_rpy(j.origin[:3, :3])))
        if j.type != "fixed":
            etree.SubElement(el, "axis", xyz=fmt(j.axis))
            lim = {"effort": j.effort, "velocity": j.velocity}
            if j.type != "continuous":
                lim.update(lower=j.lower, upper=j.upper)
            etree.SubElement(el, "limit", **{k: f"{v:.12g}" for k, v in lim.items()
                                             if np.isfinite(v)} or {"effort": "0", "velocity": "0"})
    return etree.tostring(robot, pretty_print=True, xml_declaration=True,
                          encoding="utf-8").decode("utf-8")
