"""The payload parameters every node has (issue 32), as Franka's ``SetLoad`` / UR's ``set_payload``.

Parameters (``params.PAYLOAD``): ``payload.link`` (string, '' = none), ``payload.mass`` (kg, 0 =
none), ``payload.com`` (3 numbers, m, link frame), ``payload.inertia`` (ixx ixy ixz iyy iyz izz,
kg·m², about the com, link-frame axes) and ``payload_file`` (a YAML ``payload:`` section,
:func:`robot_dynamics.parsers.payload.payloads_in`).

Semantics. The four ``payload.*`` parameters are one set: the node's model carries the payload
they describe — none while ``payload.link`` is '' or ``payload.mass`` is 0 — plus the entries of
``payload_file`` (the ``payload.*`` set replaces the file's entry on the same link). A change,
one parameter at a time (``ros2 param set``) or several at once (SetParametersAtomically), is
checked together with the values it leaves unchanged: when the resulting set is valid it is
applied at once (:meth:`Model.set_payload` on the node's own model: every algorithm the node
runs sees it at its next computation), else the whole call is refused with a one-line reason
naming the parameter, logged, and the previous payload stays. Each parameter is always checked
for its own form (a known link, a finite mass, 3 finite com coordinates, a rigid body's inertia),
even while the set describes no payload, so that a typo is refused when it is made: to move a
payload to another link or give it another inertia one parameter at a time, every step is a
valid set. A mass beyond 1e4 kg, a com 10 m or more from its link, or an inertia entry beyond
1e4 kg·m², is refused as a unit mistake (nothing non-finite can come out of the model).

The message (:class:`PayloadTopic`, the simulator and id_controller). ``~/payload``
(geometry_msgs/msg/InertiaStamped) sets the same four parameters in one
SetParametersAtomically call on the node itself: ``header.frame_id`` → ``payload.link``,
``inertia.m`` → ``payload.mass``, ``inertia.com`` → ``payload.com``, ``inertia.ixx ixy ixz iyy
iyz izz`` → ``payload.inertia`` (about the com, link-frame axes); ``inertia.m`` 0 clears the
set (link '', mass 0, com and inertia zeros), whatever the rest says. Same effect, same checks
as setting the parameters (which then read what the message set: ``ros2 param get`` agrees);
a bad message is refused with one warning naming the message's field (``rejected payload
message: inertia.com: expected 3 finite numbers …``), the payload stays and the node keeps
running. ``~/clear_payload`` (std_srvs/Trigger) clears the set; ``payload_file``'s entries
stay (they are the file's). Franka's SetLoad is a service of its own type; a pip-installable
package cannot generate a .srv (rosidl needs a colcon build), so the load travels as a
standard message, as issue 32's "parameter and service" reads here: the parameters, this
message, and a Trigger to clear.
"""
from __future__ import annotations

import os

import numpy as np

from robot_dynamics.errors import ModelError
# the limits (MAX_MASS, MAX_COM, MAX_INERTIA) are the multibody layer's, next to the payload's
# own checks: the sweep (simulation layer, which may not import ros) checks them too
from robot_dynamics.multibody.model import (MAX_INERTIA, com_refusal, mass_refusal,
                                            payload_parameters, unknown_link)

#: the node parameters (params.PAYLOAD), in the order they are declared
NAMES = ("payload.link", "payload.mass", "payload.com", "payload.inertia", "payload_file")
#: the set that describes one payload: parameter → field of Model.set_payload
FIELDS = {"payload.link": "link", "payload.mass": "mass", "payload.com": "com",
          "payload.inertia": "inertia"}


def inertia_matrix(values) -> np.ndarray:
    """ixx ixy ixz iyy iyz izz → the symmetric 3×3 matrix."""
    xx, xy, xz, yy, yz, zz = values
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


def _finite(name, value, n, what):
    """``value`` as a list of ``n`` finite floats, or ValueError naming parameter ``name``."""
    values = _listed(value)
    if len(values) != n or not np.all(np.isfinite(values)):
        raise ValueError(f"parameter {name}: expected {n} finite numbers {what}, got {values}")
    return values


def _listed(values) -> list:
    return [float(x) for x in values]


def _checked(model, link, mass, com, inertia, where):
    """A Payload (mass 1 stands for 0 while checking the forms), or ValueError naming the
    parameter (``where``: 'parameter payload' or the file's entry)."""
    try:
        p = payload_parameters(link, 1.0 if mass == 0 else mass, com, inertia, where)
    except ModelError as exc:
        text = str(exc)
        if where == "parameter payload":  # "…payload: com: …" → "parameter payload.com: …"
            for field in ("mass", "com", "inertia"):
                text = text.replace(f"{where}: {field}: ", f"parameter payload.{field}: ", 1)
        raise ValueError(text) from None
    why = com_refusal(p.com)
    if why is not None:
        name = "parameter payload.com" if where == "parameter payload" else f"{where}: com"
        raise ValueError(f"{name}: {why}, got {p.com.tolist()}")
    big = float(np.abs(p.inertia).max())
    if big > MAX_INERTIA:
        name = "parameter payload.inertia" if where == "parameter payload" else f"{where}: inertia"
        raise ValueError(f"{name}: entry {big:g} kg·m² beyond {MAX_INERTIA:g} (kg·m², not "
                         "g·mm²?)")
    return p


class NodePayload:
    """The payload parameters of ``node`` acting on ``model`` (module docstring).

    ``declare()`` declares them from the node's table, checks the start-up values (ValueError
    naming the parameter: the node refuses to start) and applies them. In the node's
    SetParameters callback: :meth:`validate` each payload parameter of the call, then
    :meth:`check` the call's payload values together (ValueError → refuse the call), then, once
    the whole call is accepted, :meth:`commit`. ``lock`` (optional) is held while the model
    changes: a node computing on another thread holds it around its computation. ``on_change``
    (optional) is called around each change, ``on_change("before")`` and
    ``on_change("after")`` (the simulator keeps its energy audit balanced)."""

    def __init__(self, node, model, lock=None, on_change=None):
        self.node, self.model, self.lock, self.on_change = node, model, lock, on_change
        self.values = {}
        self.applied = {}  # link → Payload this node set on the model

    def declare(self):
        from robot_dynamics.ros.common import declare

        self.values = {name: declare(self.node, name) for name in NAMES}
        for name in NAMES:  # each value's form first: the message names the parameter
            self.values[name] = self.validate(name, self.values[name])
        self.commit({})
        return self

    # -- checks -------------------------------------------------------------------------------
    def validate(self, name, value):
        """``value`` of payload parameter ``name`` as kept (lists of floats), or ValueError
        naming it. Its relation to the other parameters is :meth:`check`'s."""
        if name == "payload.link":
            if value and value not in self.model.frames:
                raise ValueError(f"parameter payload.link: {unknown_link(self.model, value)}")
            return value
        if name == "payload.mass":
            value = float(value)
            why = mass_refusal(value)
            if why is not None:
                raise ValueError(f"parameter payload.mass: {why}")
            return value
        if name == "payload.com":
            return _finite(name, value, 3, "(m, link frame)")
        if name == "payload.inertia":
            return _finite(name, value, 6, "ixx ixy ixz iyy iyz izz (kg·m², about the com)")
        if name == "payload_file":
            return str(value).strip()
        raise KeyError(name)

    def desired(self, values) -> dict:
        """link → Payload that ``values`` (all five parameters) describe, or ValueError."""
        out = {}
        path = values["payload_file"]
        if path:
            from robot_dynamics.parsers.payload import payloads_in

            try:
                entries = payloads_in(os.path.expanduser(path), self.model)
            except ModelError as exc:
                raise ValueError(f"parameter payload_file: {exc}") from None
            for p in entries:
                out[p.link] = _checked(self.model, p.link, p.mass, p.com, p.inertia,
                                       f"parameter payload_file: {path}: payload on {p.link!r}")
        link, mass = values["payload.link"], values["payload.mass"]
        p = _checked(self.model, link or "?", mass, values["payload.com"],
                     inertia_matrix(values["payload.inertia"]), "parameter payload")
        if link and mass > 0:
            out[link] = p
        return out

    def check(self, updates) -> dict:
        """The payloads after a call setting ``updates`` (validated payload parameters), or
        ValueError naming the parameter."""
        mine = {k: v for k, v in updates.items() if k in NAMES}
        want = self.desired({**self.values, **mine})
        self._checked = (mine, want)  # commit applies it: the file is not read twice
        return want

    # -- applying -----------------------------------------------------------------------------
    def commit(self, updates):
        """Apply the payload parameters of ``updates`` (an accepted call): the model carries
        the payloads the parameters now describe. Logs what changed."""
        updates = {k: v for k, v in updates.items() if k in NAMES}
        checked, self._checked = getattr(self, "_checked", None), None
        want = checked[1] if checked is not None and checked[0] == updates else \
            self.check(updates)
        self.values.update(updates)
        if _same(want, self.applied):
            if updates and self.values["payload.mass"] > 0 and not self.values["payload.link"]:
                self.node.get_logger().info("payload.mass is set but payload.link is '': no "
                                            "payload (set payload.link to apply it)")
            return
        if self.on_change is not None:
            self.on_change("before")
        if self.lock is not None:
            with self.lock:
                self._write(want)
        else:
            self._write(want)
        if self.on_change is not None:
            self.on_change("after")
        self.node.get_logger().info(describe(want))

    def _write(self, want):
        for link in self.applied:
            if link not in want:
                self.model.set_payload(link, None)
        for link, p in want.items():
            self.model.set_payload(link, p.mass, p.com, p.inertia)
        self.applied = dict(want)


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        a[k].mass == b[k].mass and np.array_equal(a[k].com, b[k].com)
        and np.array_equal(a[k].inertia, b[k].inertia) for k in a)


def describe(payloads: dict) -> str:
    """One log line: the payloads now carried."""
    if not payloads:
        return "payload: none"
    parts = []
    for link, p in payloads.items():
        I = p.inertia
        parts.append(f"{p.mass:g} kg on {link!r}, com {np.round(p.com, 6).tolist()} m, inertia "
                     f"[{I[0, 0]:g}, {I[0, 1]:g}, {I[0, 2]:g}, {I[1, 1]:g}, {I[1, 2]:g}, "
                     f"{I[2, 2]:g}] kg·m²")
    return "payload: " + "; ".join(parts)


#: payload parameter → the InertiaStamped field that sets it (the rejection names it)
MESSAGE_FIELDS = {"payload.link": "header.frame_id", "payload.mass": "inertia.m",
                  "payload.com": "inertia.com", "payload.inertia": "inertia.ixx..izz"}
#: the set that carries no payload (what inertia.m 0 and ~/clear_payload set)
CLEARED = {"payload.link": "", "payload.mass": 0.0, "payload.com": [0.0, 0.0, 0.0],
           "payload.inertia": [0.0] * 6}


def message_parameters(msg) -> dict:
    """geometry_msgs/InertiaStamped → the payload.* values it sets (:data:`CLEARED` for a mass
    of 0), or ValueError naming the field (an empty frame_id with a mass)."""
    i = msg.inertia
    mass = float(i.m)
    if mass == 0.0:
        return dict(CLEARED)
    link = msg.header.frame_id.strip()
    if not link:
        raise ValueError("header.frame_id: empty: name the link that carries the payload "
                         "(inertia.m 0 clears it)")
    return {"payload.link": link, "payload.mass": mass,
            "payload.com": [float(i.com.x), float(i.com.y), float(i.com.z)],
            "payload.inertia": [float(x) for x in (i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)]}


def message_reason(text: str) -> str:
    """A parameter check's reason, naming the message's fields instead of the parameters."""
    for name, field in MESSAGE_FIELDS.items():
        text = text.replace(f"parameter {name}:", f"{field}:")
    return text


class PayloadTopic:
    """``~/payload`` (InertiaStamped) and ``~/clear_payload`` (Trigger) on ``node``, whose
    :class:`NodePayload` is ``node.payload`` (module docstring). ``received`` / ``rejected``
    count the messages."""

    def __init__(self, node):
        from geometry_msgs.msg import InertiaStamped
        from std_srvs.srv import Trigger

        from robot_dynamics.ros.external_wrench import RejectLog

        self.node = node
        self.received = self.rejected = 0
        self._reject = RejectLog(node.get_logger(), "payload message")
        node.create_subscription(InertiaStamped, "~/payload", self.on_message, 10)
        node.create_service(Trigger, "~/clear_payload", self.on_clear)

    def on_message(self, msg):
        self.received += 1
        try:
            values = message_parameters(msg)
            # the parameters' own checks, first: a refusal names the message's field (the
            # parameter callback then repeats them and accepts)
            for name, value in values.items():
                values[name] = self.node.payload.validate(name, value)
            self.node.payload.check(values)
            self._set(values)
        except ValueError as exc:
            self.rejected += 1
            self._reject(message_reason(str(exc)))

    def on_clear(self, request, response):
        try:
            self._set(dict(CLEARED))
        except ValueError as exc:  # (a payload_file that no longer reads)
            response.success, response.message = False, str(exc)
            return response
        response.success, response.message = True, "payload cleared (payload.* set to none)"
        return response

    def _set(self, values):
        """One SetParametersAtomically call on the node itself (its callback applies it)."""
        from rclpy.parameter import Parameter

        result = self.node.set_parameters_atomically(
            [Parameter(name, value=value) for name, value in values.items()])
        if not result.successful:
            raise ValueError(result.reason)
