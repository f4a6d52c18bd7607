"""dynamics_model: the robot's dynamics at the measured state, for monitoring and RViz.

Subscribes ``joint_states``; at ``publish_rate`` it takes the newest valid state and publishes
(std_msgs/Float64MultiArray, labelled layouts):

* ``~/gravity`` g(q), ``~/bias`` C(q, q̇) q̇ + g(q), ``~/mass_matrix`` M(q) (row-major, dims
  ``rows``/``cols``; with the actuators' rotors, M + diag(``model.armature``)), ``~/friction``
  the friction effort τf the friction model predicts;
* ``~/wrench/<joint>`` (geometry_msgs/WrenchStamped): each joint's reaction wrench fn_i — what the
  parent link applies on the child — in the joint frame (``frame_id`` = child link), so RViz draws
  it on the robot;
* ``~/friction_markers`` (visualization_msgs/MarkerArray, when ``markers`` is true): an arrow
  along each joint axis, length proportional to its friction effort.

External wrenches (issue 32): ``~/external_wrench`` (geometry_msgs/WrenchStamped) takes the
simulator's messages (``frame_id`` = ``<link>`` in link axes or ``<link>@world`` in world axes,
applied at the link frame's origin; :mod:`robot_dynamics.ros.external_wrench`); one per link,
held until replaced, an all-zero wrench clears the link's. The joint wrenches, friction (and
the forward-dynamics acceleration) are computed with them (``inverse_dynamics(…, fext=…)``: the
reactions that carry the load), and ``~/external_wrench_markers`` (MarkerArray, when ``markers``
is true) draws an ARROW per held force (blue, ``marker_scale`` m per N) and torque (purple) at its
link. Remap it to ``/simulator/external_wrench`` to see what the simulator is pushed with. A bad
message is logged (naming the field) and refused.

The acceleration that enters the wrenches and friction is ``acceleration``: ``zero`` (quasi-
static) or ``forward_dynamics`` (q̈ from the measured efforts in the JointState, with friction
and the URDF joint damping: a measured effort contains d∘q̇, which ``forward_dynamics``' default
``damping=True`` takes out — issue 33, docs/identification.md "What a joint effort contains").

The payload parameters (``payload.link``, ``payload.mass``, ``payload.com``,
``payload.inertia``, ``payload_file``; :mod:`.payload`) put a load on the model: everything
published is computed with it (gravity, bias, mass matrix, the reactions and their friction).

``publish_rate``, ``acceleration``, ``markers``, ``marker_scale`` and the payload are live
(validated, rejected with a reason, applied at once); the robot, its friction and
``joint_states_topic`` are read-only. A state the core refuses is logged (throttled) and skipped: the node keeps running.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point, WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from visualization_msgs.msg import Marker, MarkerArray

from robot_dynamics.algorithm.crba import bias_forces, gravity_torques, mass_matrix
from robot_dynamics.errors import InputError
from robot_dynamics.algorithm.forward_dynamics import forward_dynamics
from robot_dynamics.algorithm.inverse_dynamics import inverse_dynamics
from robot_dynamics.algorithm.rnea import joint_wrenches
from robot_dynamics.ros.common import (STATE_QOS, JointStateMatcher, check_choice, declare,
    declare_robot_parameters, load_robot, on_set_parameters, run_node)
from robot_dynamics.ros.external_wrench import ExternalWrenches, RejectLog
from robot_dynamics.ros.external_wrench import markers as wrench_markers
from robot_dynamics.ros.params import DYNAMICS_MODEL, row
from robot_dynamics.ros.payload import NAMES as PAYLOAD_NAMES, NodePayload

ACCELERATION_SOURCES = row(DYNAMICS_MODEL, "acceleration").choices


def vector_msg(values, label):
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=len(values), stride=len(values))]
    msg.data = np.asarray(values, dtype=float).tolist()
    return msg


def matrix_msg(M):
    rows, cols = M.shape
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label="rows", size=rows, stride=rows * cols),
                      MultiArrayDimension(label="cols", size=cols, stride=cols)]
    msg.data = np.asarray(M, dtype=float).ravel().tolist()
    return msg


def compute_outputs(model, data, q, v, friction, acceleration="zero", effort=None, fext=None):
    """Everything the node publishes, computed by the core (the test reuses it as the oracle);
    ``fext`` (nv, 6) the external wrenches on the bodies (None: none)."""
    if acceleration == "forward_dynamics":
        if effort is None:
            raise InputError("acceleration=forward_dynamics needs JointState.effort")
        a = forward_dynamics(model, data, q, v, effort, friction=friction, fext=fext)
    else:
        a = np.zeros(model.nv)
    inverse_dynamics(model, data, q, v, a, friction=friction, fext=fext)
    tau_f = data.tau_friction.copy() if friction is not None else np.zeros(model.nv)
    wrenches = joint_wrenches(model, data)
    if model.coupling is not None:  # mimic joints: the rows of the independent joints
        wrenches = wrenches[model.independent]
    return {
        "gravity": gravity_torques(model, data, q),
        "bias": bias_forces(model, data, q, v),
        "mass_matrix": mass_matrix(model, data, q),
        "friction": tau_f,
        "wrenches": wrenches,
        "acceleration": a,
    }


class DynamicsModelNode(Node):
    node_name = "dynamics_model"
    parameter_table = "dynamics_model"  #: params.NODES key: what declare() reads

    def __init__(self, **kwargs):
        super().__init__(self.node_name, **kwargs)
        declare_robot_parameters(self)
        self.model, self.friction = load_robot(self)
        #: the payload parameters (payload.*, payload_file): the reactions published carry it
        self.payload = NodePayload(self, self.model).declare()
        rate = declare(self, "publish_rate")
        self.acceleration = declare(self, "acceleration")
        self.markers = declare(self, "markers")
        self.marker_scale = declare(self, "marker_scale")
        state_topic = declare(self, "joint_states_topic")
        self.data = self.model.create_data()
        self.matcher = JointStateMatcher(self.model.joint_names)
        self.latest = None
        self.create_subscription(JointState, state_topic, self.on_state, STATE_QOS)
        self.pubs = {name: self.create_publisher(Float64MultiArray, f"~/{name}", 10)
                     for name in ("gravity", "bias", "friction", "mass_matrix")}
        self.wrench_pubs = [self.create_publisher(WrenchStamped, f"~/wrench/{j}", 10)
                            for j in self.model.joint_names]
        self.marker_pub = self.create_publisher(MarkerArray, "~/friction_markers", 10)
        self.timer = self.create_timer(1.0 / rate, self.tick)
        self._setup_external_wrench()
        on_set_parameters(self, {
            "publish_rate": float,
            "acceleration": lambda v: check_choice("acceleration", v, ACCELERATION_SOURCES),
            "markers": bool, "marker_scale": float,
            **{name: (lambda v, name=name: self.payload.validate(name, v))
               for name in PAYLOAD_NAMES}}, self.apply_parameters, check=self.payload.check)

    def apply_parameters(self, updates):
        """Live parameters, validated by rclpy (type, range) and the callback (choices)."""
        for name in ("acceleration", "markers", "marker_scale"):
            if name in updates:
                setattr(self, name, updates[name])
        self.payload.commit(updates)  # (checked with the call: self.payload.check)
        if "publish_rate" in updates:
            self.destroy_timer(self.timer)
            self.timer = self.create_timer(1.0 / updates["publish_rate"], self.tick)

    # -- external wrenches (issue 32) -------------------------------------------------------
    def _setup_external_wrench(self):
        self.wrenches = ExternalWrenches(self.model)
        self._reject_wrench = RejectLog(self.get_logger())
        self.create_subscription(WrenchStamped, "~/external_wrench", self.on_external_wrench, 10)
        self.wrench_marker_pub = self.create_publisher(MarkerArray, "~/external_wrench_markers",
                                                       10)

    def on_external_wrench(self, msg):
        try:
            what = self.wrenches.set(msg)
        except InputError as exc:
            self._reject_wrench(exc)
            return
        self.get_logger().info(what)

    def publish_wrench_markers(self, stamp, q):
        self.wrench_marker_pub.publish(
            wrench_markers(self.wrenches.in_link_axes(q), stamp, self.marker_scale))

    def on_state(self, msg):
        need_effort = self.acceleration == "forward_dynamics"
        try:
            q, v, effort = self.matcher.read(msg, need_effort=need_effort)
        except InputError as exc:
            self.get_logger().warning(f"rejected JointState: {exc}", throttle_duration_sec=1.0)
            return
        self.latest = (msg.header.stamp, q, v, effort)

    def tick(self):
        if self.latest is None:
            return
        stamp, q, v, effort = self.latest
        self.latest = None
        if effort is None and self.acceleration == "forward_dynamics":
            self.get_logger().warning("acceleration=forward_dynamics needs JointState.effort: "
                                      "nothing published", throttle_duration_sec=1.0)
            return
        try:
            out = compute_outputs(self.model, self.data, q, v, self.friction, self.acceleration,
                                  effort, fext=self.wrenches.fext(q))
        except Exception as exc:  # noqa: BLE001 - a state the core refuses must not end the node
            self.get_logger().error(f"dynamics at the state of "
                                    f"t={stamp.sec + 1e-9 * stamp.nanosec:.3f} s failed "
                                    f"({type(exc).__name__}: {exc}); nothing published",
                                    throttle_duration_sec=1.0)
            return
        if not all(np.all(np.isfinite(x)) for x in out.values()):
            self.get_logger().error("dynamics at this state are not finite; nothing published",
                                    throttle_duration_sec=1.0)
            return
        for name in ("gravity", "bias", "friction"):
            self.pubs[name].publish(vector_msg(out[name], "joints"))
        self.pubs["mass_matrix"].publish(matrix_msg(out["mass_matrix"]))
        for i, pub in enumerate(self.wrench_pubs):
            w = WrenchStamped()
            w.header.stamp = stamp
            w.header.frame_id = self.model.link_names[i]
            f, n = out["wrenches"][i, :3], out["wrenches"][i, 3:]
            w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = map(float, f)
            w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = map(float, n)
            pub.publish(w)
        if self.markers:
            self.marker_pub.publish(self.friction_markers(stamp, out["friction"]))
            self.publish_wrench_markers(stamp, q)

    def friction_markers(self, stamp, tau_f):
        arr = MarkerArray()
        for i, name in enumerate(self.model.joint_names):
            m = Marker()
            m.header.stamp, m.header.frame_id = stamp, self.model.link_names[i]
            m.ns, m.id, m.type, m.action = "friction", i, Marker.ARROW, Marker.ADD
            tip = self.model.axes[i] * self.marker_scale * float(tau_f[i])
            m.points = [Point(), Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
            m.scale.x, m.scale.y, m.scale.z = 0.01, 0.02, 0.02
            m.color.r, m.color.g, m.color.b, m.color.a = 1.0, 0.3, 0.1, 0.9
            arr.markers.append(m)
        return arr


def main(args=None):
    run_node(DynamicsModelNode, args)


if __name__ == "__main__":
    main()
