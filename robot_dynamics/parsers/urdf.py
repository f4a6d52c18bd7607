"""URDF adapter: the only module of robot_dynamics that touches XML.

It reads a URDF (or a xacro file, expanded with the PyPI ``xacro`` package) with ``lxml`` into a
:class:`~robot_dynamics.multibody.description.RobotDescription` and hands it to
:func:`~robot_dynamics.multibody.build.build_model`. Meshes are never loaded.

What is read, and checked (every problem is a one-line :class:`ModelError` naming the file, the
line, the link or joint, the element and the attribute):

* ``<robot>``'s direct ``<link>`` children: ``<inertial>`` (``origin``, ``mass``, ``inertia``);
* ``<robot>``'s direct ``<joint>`` children: ``type``, ``parent``, ``child``, ``origin``,
  ``axis``, ``limit``, ``dynamics``, ``mimic``;
* every ``<transmission>`` (also inside ``<ros2_control>``): the ``mechanicalReduction``
  (or ``mechanical_reduction``) of a transmission that drives one joint alone.

Everything else — ``<gazebo>``, ``<ros2_control>``, ``<material>``, ``<visual>``,
``<collision>``, sensors, plugins, unknown tags — is ignored for dynamics: its numbers are not
parsed, so a ``value=`` of a Gazebo plugin can never stop a robot from loading.
"""
from __future__ import annotations

import math
import os
import re

import numpy as np

from robot_dynamics.multibody.description import JointSpec, LinkSpec, RobotDescription
from robot_dynamics.errors import ModelError
from robot_dynamics.multibody.build import build_model
from robot_dynamics.multibody.model import Model
from robot_dynamics.spatial.algebra import rpy_matrix

_XACRO_SUBST = re.compile(r"\$\{[^}]*\}|\$\(\s*(find|arg|eval)\b[^)]*\)")
_XACRO_PACKAGE = re.compile(r"\$\(\s*find\s+([^)\s]+)\s*\)|package://([^/\s\"'<>]+)")
_ENCODING_DECL = re.compile(r"^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*(['\"])[^'\"]*\2", re.S)


def _is_path(source) -> bool:
    return isinstance(source, os.PathLike) or (isinstance(source, str) and "<" not in source)


def _parser():
    from lxml import etree

    # huge_tree: a robot with 100 000 frames is a legitimate (large) file
    return etree.XMLParser(remove_comments=True, remove_pis=True, huge_tree=True)


def _read_root(source, xacro_args=None):
    """Return (root element, source name) from a path, an XML string or bytes.

    A path ending in ``.xacro`` (or any source when ``xacro_args`` is given) is expanded first.
    The encoding of a file is the one its XML prolog declares (UTF-8 without a prolog).
    """
    from lxml import etree

    if _is_path(source):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise ModelError(_missing(path))
        if path.endswith(".xacro") or xacro_args is not None:
            data, name = _expand_xacro(path, None, xacro_args).encode("utf-8"), path
        else:
            with open(path, "rb") as fh:
                data, name = fh.read(), path
    elif isinstance(source, (bytes, bytearray)):
        data, name = bytes(source), "<string>"
        if xacro_args is not None:
            data = _expand_xacro(None, data, xacro_args).encode("utf-8")
    elif isinstance(source, str):
        name = "<string>"
        if xacro_args is not None:
            data = _expand_xacro(None, source.encode("utf-8"), xacro_args).encode("utf-8")
        else:
            # the text is already decoded: drop a declared encoding and parse it as UTF-8
            data = _ENCODING_DECL.sub(r"\1", source, count=1).encode("utf-8")
    else:
        raise ModelError(
            f"load_urdf: expected a path or an XML string, got {type(source).__name__}")
    try:
        root = etree.fromstring(data, _parser())
    except (etree.XMLSyntaxError, ValueError, LookupError) as exc:
        raise ModelError(f"{name}: malformed XML: {exc}") from None
    if root is None:
        raise ModelError(f"{name}: malformed XML: no root element")
    return root, name


def _missing(path: str) -> str:
    """Why ``path`` cannot be read as a URDF file, with the way to a bundled robot of that
    name (``load_urdf('arm7')`` → ``robot_path('arm7')``)."""
    if not path:
        return "load_urdf: empty path"
    if os.path.isdir(path):
        return f"{path}: is a directory, not a URDF file"
    if os.sep not in path and not (os.altsep and os.altsep in path):
        from robot_dynamics.parsers.resources import robot_path

        try:
            robot_path(path)
        except ModelError:
            pass
        else:
            return (f"{path}: no such URDF file; the bundled robot {path!r} is "
                    f"load_urdf(robot_path({path!r})) (robot_dynamics.parsers.resources)")
    return f"{path}: no such URDF file"


def _expand_xacro(path, data, args) -> str:
    """Expand a xacro file (or text) with the PyPI ``xacro`` package; ``args`` are its
    ``<xacro:arg>`` values. A package that ``$(find pkg)`` / ``package://pkg`` cannot resolve is
    named in the error."""
    try:
        import xacro
    except ImportError:
        raise ModelError(f"{path or '<string>'}: expanding xacro needs the 'xacro' package "
                         "(pip install xacro)") from None
    import xml.dom.minidom

    name = path or "<string>"
    mappings = {str(k): str(v) for k, v in (args or {}).items()}
    if mappings:  # xacro ignores a value for an argument the file does not declare (a typo)
        text = data.decode("utf-8", "replace") if data is not None else _slurp(path)
        declared = set(_XACRO_ARG.findall(text))
        unknown = sorted(set(mappings) - declared)
        if unknown and "include" not in text:  # (an included file may declare it)
            raise ModelError(f"{name}: xacro_args {unknown} are not arguments of this file "
                             f"(it declares {sorted(declared) or 'no <xacro:arg>'})")
    try:
        if path is not None:
            doc = xacro.process_file(path, mappings=mappings)
        else:
            doc = xml.dom.minidom.parseString(data)
            xacro.process_doc(doc, mappings=mappings)  # expands in place
        return doc.toxml()
    except (Exception, SystemExit) as exc:  # xacro raises XacroException, OSError, SystemExit
        text = data.decode("utf-8", "replace") if data is not None else _slurp(path)
        missing = [p for p in _packages_in(text, str(exc)) if not _package_found(p)]
        if missing:
            raise ModelError(
                f"{name}: xacro cannot resolve package(s) {missing} ($(find …) / package://): "
                "source the ROS workspace that provides them (AMENT_PREFIX_PATH), or replace "
                "them by relative paths") from None
        msg = " ".join(str(exc).split())
        raise ModelError(f"{name}: xacro expansion failed: {msg}") from None


#: the names of a xacro file's ``<xacro:arg name="…">`` declarations
_XACRO_ARG = re.compile(r"<xacro:arg\s[^>]*?\bname\s*=\s*[\"']([^\"']+)[\"']")


def _slurp(path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _packages_in(*texts) -> list[str]:
    out = []
    for text in texts:
        for m in _XACRO_PACKAGE.finditer(text):
            pkg = m.group(1) or m.group(2)
            if pkg not in out:
                out.append(pkg)
    return out


def _package_found(pkg: str) -> bool:
    try:
        from ament_index_python.packages import get_package_share_directory

        get_package_share_directory(pkg)
        return True
    except Exception:
        return False


class _Reader:
    """Reads numbers out of elements, with errors that name the file, line, owner and field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, el, who: str, what: str):
        line = f":{el.sourceline}" if el is not None and el.sourceline else ""
        raise ModelError(f"{self.source}{line}: {who}: {what}")

    def numbers(self, el, attr: str, count: int, who: str, default):
        val = el.get(attr)
        if val is None:
            return default
        try:
            nums = [float(x) for x in val.split()]
        except ValueError:
            m = _XACRO_SUBST.search(val)
            if m:
                _xacro_error(self.source, el, f"{attr}={m.group(0)!r}")
            self.fail(el, who, f"<{el.tag} {attr}=\"{val}\"> is not a number")
        if len(nums) != count:
            self.fail(el, who, f"<{el.tag} {attr}=\"{val}\"> has {len(nums)} number(s), "
                               f"expected {count}")
        if not all(math.isfinite(x) for x in nums):
            self.fail(el, who, f"<{el.tag} {attr}=\"{val}\"> is not finite")
        return nums if count > 1 else nums[0]

    def origin(self, el, who: str) -> np.ndarray:
        """4×4 placement of an ``<origin xyz rpy>`` element (a shared read-only identity when
        absent: a file with 100 000 frames makes no 100 000 identities)."""
        if el is None:
            return _EYE4
        xyz = self.numbers(el, "xyz", 3, who, None)
        rpy = self.numbers(el, "rpy", 3, who, None)
        if xyz is None and (rpy is None or not any(rpy)):
            return _EYE4
        T = np.zeros((4, 4))
        T[3, 3] = 1.0
        T[:3, :3] = rpy_matrix(rpy) if rpy is not None and any(rpy) else _EYE3
        if xyz is not None:
            T[:3, 3] = xyz
        return T

    def name(self, el, attr: str, who: str) -> str | None:
        val = el.get(attr)
        if val is not None and "$" in val:
            m = _XACRO_SUBST.search(val)
            if m:
                _xacro_error(self.source, el, f"{attr}={m.group(0)!r}")
        return val


def _constant(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


# Read-only defaults shared by every link and joint that does not state them.
_EYE4, _EYE3 = _constant(np.eye(4)), _constant(np.eye(3))
_ZERO3, _ZERO33 = _constant(np.zeros(3)), _constant(np.zeros((3, 3)))
_X_AXIS = _constant([1.0, 0.0, 0.0])


def parse_urdf(source, *, xacro_args=None) -> RobotDescription:
    """Parse a URDF (or xacro) file, XML string or bytes into a neutral description.

    Checks the syntax and every number the dynamics reads; the physics is checked by
    :func:`~robot_dynamics.multibody.build.build_model`.
    """
    root, src = _read_root(source, xacro_args)
    rd = _Reader(src)
    if not isinstance(root.tag, str) or root.tag != "robot":
        raise ModelError(f"{src}: root element is <{root.tag}>, expected <robot>")
    _check_not_xacro(root, src)
    link_els = list(root.iterchildren("link"))
    if not link_els:
        raise ModelError(
            f"{src}: <robot> has no <link>: this looks like an unexpanded xacro stub (a file that "
            "only includes or calls macros); load the .urdf.xacro it comes from, or expand it with "
            "`xacro file.urdf.xacro > file.urdf`")

    links = []
    for el in link_els:
        name = rd.name(el, "name", "link")
        if not name:
            rd.fail(el, "link", "<link> without a name")
        who = f"link {name!r}"
        inertial = _children(el).get("inertial")
        if inertial is None:
            links.append(LinkSpec(name, 0.0, _ZERO3, _EYE3, _ZERO33, False))
            continue
        parts = _children(inertial)
        T = rd.origin(parts.get("origin"), who)
        mass = parts.get("mass")
        mass = 0.0 if mass is None else rd.numbers(mass, "value", 1, who, 0.0)
        inertia = parts.get("inertia")
        if inertia is None:
            inertia = _ZERO33
        else:
            ixx, ixy, ixz, iyy, iyz, izz = (rd.numbers(inertia, a, 1, who, 0.0) for a in (
                "ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        links.append(LinkSpec(name, mass, T[:3, 3], T[:3, :3], inertia, True))

    joints = []
    for el in root.iterchildren("joint"):
        name = rd.name(el, "name", "joint")
        if not name:
            rd.fail(el, "joint", "<joint> without a name")
        who = f"joint {name!r}"
        jtype = el.get("type")
        if not jtype:
            rd.fail(el, who, "no type attribute (revolute, continuous, prismatic, fixed)")
        ends, parts = {}, _children(el)
        for role in ("parent", "child"):
            end = parts.get(role)
            if end is None or not end.get("link"):
                rd.fail(el, who, f"no <{role} link=\"…\"/>")
            ends[role] = rd.name(end, "link", who)
        axis = parts.get("axis")
        axis = _X_AXIS if axis is None or axis.get("xyz") is None else \
            np.array(rd.numbers(axis, "xyz", 3, who, None))
        spec = JointSpec(name, jtype, ends["parent"], ends["child"],
                         rd.origin(parts.get("origin"), who), axis)
        limit = parts.get("limit")
        if limit is not None:
            spec.lower = rd.numbers(limit, "lower", 1, who, -np.inf)
            spec.upper = rd.numbers(limit, "upper", 1, who, np.inf)
            spec.effort = rd.numbers(limit, "effort", 1, who, np.inf)
            spec.velocity = rd.numbers(limit, "velocity", 1, who, np.inf)
        if jtype == "continuous":
            spec.lower, spec.upper = -np.inf, np.inf
        dyn = parts.get("dynamics")
        if dyn is not None:
            spec.damping = rd.numbers(dyn, "damping", 1, who, 0.0)
            spec.friction = rd.numbers(dyn, "friction", 1, who, 0.0)
        mimic = parts.get("mimic")
        if mimic is not None:
            leader = mimic.get("joint")
            if not leader:
                rd.fail(mimic, who, "<mimic> without joint=")
            spec.mimic = (leader, rd.numbers(mimic, "multiplier", 1, who, 1.0),
                          rd.numbers(mimic, "offset", 1, who, 0.0))
        joints.append(spec)
    return RobotDescription(name=root.get("name") or "robot", links=links, joints=joints,
                            source=src, transmissions=_transmissions(root))


def _children(el) -> dict:
    """An element's children by tag (the first of each tag), in one pass over them."""
    out = {}
    for child in el:
        out.setdefault(child.tag, child)
    return out


def _transmissions(root) -> dict[str, float]:
    """joint → mechanical reduction, from every ``<transmission>`` (URDF's own, or inside
    ``<ros2_control>``) that drives exactly one joint and states one finite reduction.

    Transmissions are not URDF proper: one that cannot be read is ignored, never an error.
    """
    out = {}
    for tr in root.iter("transmission"):
        names = {j.get("name") for j in tr.iter("joint")} - {None}
        values = [el.text for tag in ("mechanicalReduction", "mechanical_reduction")
                  for el in tr.iter(tag)]
        if len(names) != 1 or not values:
            continue
        try:
            value = float(values[0])
        except (TypeError, ValueError):
            continue
        if math.isfinite(value):
            out[names.pop()] = value
    return out


def _check_not_xacro(root, source: str) -> None:
    """Refuse a xacro file: an element of the xacro namespace anywhere. (``${…}``/``$(…)``
    left in a name or number the dynamics reads is caught where it is read; extension tags such
    as ``<gazebo>`` may hold any text.) A namespace declaration alone (``xmlns:xacro``) is
    harmless: xacro leaves it in its output."""
    for ns in set(root.nsmap.values()) | {"http://www.ros.org/wiki/xacro",
                                          "http://wiki.ros.org/xacro"}:
        if ns and "xacro" in ns:
            el = next(root.iter(f"{{{ns}}}*"), None)
            if el is not None:
                _xacro_error(source, el, f"<xacro:{etree_local(el.tag)}>")


def _xacro_error(source, el, bad):
    raise ModelError(
        f"{source}:{el.sourceline}: unexpanded xacro ({bad}); load the .xacro file itself "
        "(load_urdf expands it) or run `xacro file.urdf.xacro > file.urdf` first")


def etree_local(tag: str) -> str:
    return tag.split("}", 1)[-1]


def load_urdf(source, *, validate: str = "strict", xacro_args: dict | None = None,
              gravity=(0.0, 0.0, -9.81), allow_massless: bool | None = None,
              mimic: bool = False) -> Model:
    """Build a :class:`~robot_dynamics.multibody.model.Model` from a URDF or xacro path, or an XML string.

    ``source``: a ``.urdf`` path, a ``.urdf.xacro``/``.xacro`` path (expanded with the PyPI
    ``xacro`` package, ``xacro_args`` giving its ``<xacro:arg>`` values, e.g.
    ``{"prefix": "left_"}``), or URDF text.

    ``validate``: ``"strict"`` (default) refuses, with a :class:`ModelError` naming the link and
    the fix, a moving body that no rigid body could have (negative mass, inertia without mass,
    an indefinite inertia, principal moments breaking the triangle inequality);
    ``"warn"`` loads such a robot anyway and emits one :class:`UserWarning` per problem.
    A mass matrix singular at sample configurations (joints that move no inertia, e.g.
    massless fingers) loads under either policy, as in Pinocchio, with a warning naming the
    joints; ``model.mass_matrix_problem`` keeps that message, which forward dynamics and the
    Simulator raise (rnea, inverse dynamics and M need no inverse). A joint whose lower limit
    exceeds its upper (pybullet's ``lower="1" upper="-1"``: no limits) loads unlimited, with
    a warning naming it.
    Only what the dynamics uses is checked: the merged moving rigid bodies, never the fixed
    base (the root link and the links fixed to it). A moving link without mass is fine when
    the mass matrix stays positive definite. ``allow_massless`` is a deprecated alias
    (``True`` means ``validate="warn"``).

    **Floating bases are not modelled**: the root link is fixed to the world (a quadruped or a
    humanoid is modelled as if its ``base`` were bolted down; a ``floating`` *joint* is
    refused). ``gravity`` is the world gravity vector in the root link's frame.

    **Mimic joints** (``<mimic joint multiplier offset>``): with ``mimic=True`` a follower moves
    as ``multiplier·q_leader + offset`` and the model (:class:`robot_dynamics.multibody.coupling.MimicModel`)
    has one coordinate per independent joint, as Pinocchio's
    ``buildModelFromUrdf(path, mimic=True)``; ``model.expand(q)`` gives every joint's position
    (``model.full_joint_names``). The default ``mimic=False`` (Pinocchio's default too) keeps
    every movable joint independent and the tags in ``model.mimic``; the nodes' ``mimic``
    parameter defaults to true.
    """
    return build_model(parse_urdf(source, xacro_args=xacro_args), gravity=gravity,
                       validate=validate, allow_massless=allow_massless, mimic=mimic)


def _rpy(R) -> tuple:
    """URDF roll-pitch-yaw of a rotation matrix (inverse of spatial.rpy_matrix)."""
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(R[2, 0]) < 1 - 1e-12:
        return float(np.arctan2(R[2, 1], R[2, 2])), pitch, float(np.arctan2(R[1, 0], R[0, 0]))
    return 0.0, pitch, float(np.arctan2(-R[0, 1], R[1, 1]))


def write_urdf(desc) -> str:
    """URDF text of a :class:`~robot_dynamics.multibody.description.RobotDescription` (no visuals)."""
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
