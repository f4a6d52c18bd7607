"""External wrenches over ROS: geometry_msgs/WrenchStamped → the core's ``fext`` (issue 32).

The simulator and dynamics_model nodes subscribe ``~/external_wrench``. A message names where
the wrench acts in ``header.frame_id``:

* ``<link>`` — a link (or URDF frame, e.g. ``tool0``) of the robot: force and torque in that
  link's own axes, the force applied at the link frame's origin, the torque about it (a
  WrenchStamped is expressed in its header's frame, as everywhere in ROS);
* ``<link>@world`` — the same point (the link frame's origin), force and torque in world axes
  (the robot's base frame). This is Gazebo's apply-link-wrench convention (gz-sim
  ApplyLinkWrench: world coordinates, applied at the link origin): the direction stays fixed in
  the world while the link turns, so the node re-expresses it at every step.

The wrench is what the environment applies **on** the link (a hand pushing it). One wrench per
link is held: a new message on the same link replaces it, a message on another link adds to it,
an all-zero wrench clears that link's. Anything else at a point of a link (an offset, several
points) is :func:`robot_dynamics.algorithm.external.point_force` from Python.

A message the node cannot use is refused with an :class:`InputError` naming the field
(``header.frame_id`` empty, unknown link, ``wrench.force.x`` not finite, ...).
"""
from __future__ import annotations

import math

import numpy as np

from robot_dynamics.algorithm.external import point_force, sensor_wrench
from robot_dynamics.errors import InputError

#: suffix of ``header.frame_id`` that makes the axes the world's (base frame)
WORLD = "@world"
FIELDS = ("force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z")


def parse(model, msg):
    """``(link, world, w)`` of a WrenchStamped: the link name, whether the axes are the world's,
    and the wrench (6,) [force; torque]; InputError naming the faulty field."""
    frame = msg.header.frame_id.strip()
    if not frame:
        raise InputError("header.frame_id is empty: name the link the wrench acts on "
                         f"(e.g. {model.link_names[-1]!r}, or {model.link_names[-1] + WORLD!r} "
                         "for world axes)")
    world = frame.endswith(WORLD)
    link = frame[:-len(WORLD)] if world else frame
    if link not in model.frames:
        known = sorted(model.frames)
        hint = (f"; for world axes write '<link>{WORLD}'" if link in ("world", "map", "odom")
                else "")
        raise InputError(f"header.frame_id: robot {model.name!r} has no link or frame {link!r} "
                         f"(links: {', '.join(known)}){hint}")
    w = msg.wrench
    values = (w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z)
    for name, x in zip(FIELDS, values):
        if not math.isfinite(x):
            raise InputError(f"wrench.{name} is not finite ({x})")
    return link, world, np.array(values, dtype=float)


class ExternalWrenches:
    """The wrenches a node holds, one per link, each until ``expires`` (None: until replaced)."""

    def __init__(self, model):
        self.model = model
        self.data = model.create_data()  # scratch for the kinematics of world-axis wrenches
        self.entries = {}  # link → (world, w (6,), fext (local ones, fixed) or None, expires)

    def __bool__(self):
        return bool(self.entries)

    def set(self, msg, now=0.0, duration=0.0) -> str:
        """Take a message (InputError if it is bad); return what was done, for the log."""
        link, world, w = parse(self.model, msg)
        if not w.any():
            had = self.entries.pop(link, None) is not None
            return f"external wrench on {link!r} cleared" if had else \
                f"zero external wrench on {link!r}: nothing to clear"
        fixed = None if world else sensor_wrench(self.model, link, w)
        expires = now + duration if duration > 0 else None
        self.entries[link] = (world, w, fixed, expires)
        axes = "world" if world else "link"
        held = f"for {duration:g} s" if expires is not None else "until replaced"
        return (f"external wrench on {link!r} ({axes} axes): force {_fmt(w[:3])} N, torque "
                f"{_fmt(w[3:])} N·m, held {held}")

    def clear(self) -> int:
        n = len(self.entries)
        self.entries.clear()
        return n

    def expire(self, now) -> list:
        """Drop the wrenches whose duration is over at ``now``; return their links."""
        gone = [k for k, (_, _, _, t) in self.entries.items() if t is not None and now >= t - 1e-12]
        for k in gone:
            del self.entries[k]
        return gone

    def fext(self, q):
        """The ``fext`` array (nv, 6) of the held wrenches at configuration ``q`` (world-axis
        ones need the pose), or None when none is held (the plain path runs)."""
        if not self.entries:
            return None
        out = None
        for link, (world, w, fixed, _) in self.entries.items():
            if world:
                out = point_force(self.model, self.data, q, link, w[:3], torque=w[3:], fext=out)
            elif out is None:
                out = fixed.copy()
            else:
                out += fixed
        return out

    def in_link_axes(self, q):
        """``[(link, force (3,), torque (3,))]`` in each link's own axes (for markers)."""
        from robot_dynamics.algorithm.kinematics import forward_kinematics, frame_placement

        out = []
        posed = False
        for link, (world, w, _, _) in self.entries.items():
            f, t = w[:3], w[3:]
            if world:
                if not posed:
                    forward_kinematics(self.model, self.data, q)
                    posed = True
                R = frame_placement(self.model, self.data, link)[:3, :3]
                f, t = R.T @ f, R.T @ t
            out.append((link, f, t))
        return out


def markers(entries, stamp, scale):
    """visualization_msgs/MarkerArray: per held wrench an ARROW from the link origin along the
    force (``scale`` m per N) and one along the torque (``scale`` m per N·m), in the link's
    frame (``frame_id`` = link: RViz places it by TF); a DELETEALL first, so cleared or expired
    wrenches disappear."""
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker, MarkerArray

    arr = MarkerArray()
    wipe = Marker()
    wipe.header.stamp, wipe.ns, wipe.action = stamp, "external_wrench", Marker.DELETEALL
    arr.markers.append(wipe)
    k = 0
    for link, f, t in entries:
        for vec, colour in ((f, (0.1, 0.4, 1.0)), (t, (0.7, 0.1, 0.9))):
            if not np.any(vec):
                continue
            m = Marker()
            m.header.stamp, m.header.frame_id = stamp, link
            m.ns, m.id, m.type, m.action = "external_wrench", k, Marker.ARROW, Marker.ADD
            tip = scale * np.asarray(vec, dtype=float)
            m.points = [Point(), Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
            m.scale.x, m.scale.y, m.scale.z = 0.01, 0.02, 0.02
            m.color.r, m.color.g, m.color.b = colour
            m.color.a = 0.9
            arr.markers.append(m)
            k += 1
    return arr


class RejectLog:
    """One warning per refused message: a repeat of the same refusal at most once a second (a
    publisher at 1 kHz must not flood the log), a different one at once (a throttle per call
    site would hide the second fault behind the first)."""

    def __init__(self, logger, what="external wrench", period=1.0):
        self.logger, self.what, self.period = logger, what, period
        self.last, self.when = None, -math.inf

    def __call__(self, exc):
        import time

        text, now = f"rejected {self.what}: {exc}", time.monotonic()
        if text != self.last or now - self.when >= self.period:
            self.logger.warning(text)
            self.last, self.when = text, now


def _fmt(x):
    return "[" + ", ".join(f"{v:g}" for v in x) + "]"
