"""The test-only control_msgs (test/interfaces/control_msgs, built by
scripts/build_test_interfaces.sh) is wire-identical to upstream control_msgs and works over DDS.

Upstream's FollowJointTrajectory type hash is the contract: MoveIt built against the real
control_msgs only talks to a server whose types hash the same. Two variants, as upstream has them
(scripts/build_test_interfaces.sh builds the one of this interpreter's rclpy): 'kilted'
(Kilted/rolling, control_msgs >= 6.3, feedback with `index` and `multi_dof_index`) and 'jazzy'
(control_msgs' jazzy branch, without them).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import control_msgs_variant
from ros_helpers import RosProbe, action_client

UPSTREAM_HASH = {
    "kilted": "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    # built with the Jazzy wheels from test/interfaces/variants/jazzy, whose fields (comments
    # aside) are those of control_msgs' jazzy branch, file by file
    "jazzy": "RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
}
VARIANT = control_msgs_variant()
ACTION = "/iface_test/follow_joint_trajectory"


def _prefix() -> Path:
    import control_msgs

    # <prefix>/lib/pythonX.Y/site-packages/control_msgs/__init__.py
    return Path(control_msgs.__file__).resolve().parents[4]


def _type_hashes(relpath: str, package: str = "control_msgs", prefix: Path | None = None) -> dict:
    path = (prefix or _prefix()) / "share" / package / relpath
    data = json.loads(path.read_text())
    return {entry["type_name"]: entry["hash_string"] for entry in data["type_hashes"]}


def test_action_type_hash_equals_upstream(follow_joint_trajectory):
    assert (_prefix() / "share" / "control_msgs" / "variant").read_text().strip() == VARIANT
    hashes = _type_hashes("action/FollowJointTrajectory.json")
    assert hashes["control_msgs/action/FollowJointTrajectory"] == UPSTREAM_HASH[VARIANT]


def test_referenced_types_hash_as_the_installed_packages(follow_joint_trajectory):
    """Every type the action uses from another package hashes exactly as that package's own
    installed description: the build saw the same builtin_interfaces / std_msgs / trajectory_msgs /
    geometry_msgs as the nodes use at run time."""
    import sys

    hashes = _type_hashes("action/FollowJointTrajectory.json")
    checked = 0
    for type_name, hash_string in hashes.items():
        package, kind, name = type_name.split("/")
        if package == "control_msgs":
            continue
        # the ROS wheels' share/: this interpreter's, or a --system-site-packages venv's base
        prefix = next((Path(p) for p in (sys.prefix, sys.base_prefix)
                       if (Path(p) / "share" / package).is_dir()), Path(sys.prefix))
        own = _type_hashes(f"{kind}/{name}.json", package, prefix)
        assert own[type_name] == hash_string, type_name
        checked += 1
    assert checked >= 8  # Duration, Time, Header, UUID, ServiceEventInfo, 2 trajectory, geometry


def test_fields_and_constants(follow_joint_trajectory):
    from control_msgs.msg import JointComponentTolerance, JointTolerance

    FJT = follow_joint_trajectory
    goal = FJT.Goal()
    goal.trajectory.joint_names = ["joint_a1"]
    goal.path_tolerance = [JointTolerance(name="joint_a1", position=0.1, velocity=-1.0)]
    goal.component_goal_tolerance = [
        JointComponentTolerance(joint_name="base", component=JointComponentTolerance.ROTATION)]
    goal.goal_time_tolerance.sec = 2
    assert goal.path_tolerance[0].velocity == -1.0
    fields = list(FJT.Feedback.get_fields_and_field_types())
    if VARIANT == "kilted":
        assert fields[-1] == "multi_dof_index" and "index" in fields
    else:
        assert fields[-1] == "multi_dof_error" and "index" not in fields
    r = FJT.Result
    assert (r.SUCCESSFUL, r.INVALID_GOAL, r.INVALID_JOINTS, r.OLD_HEADER_TIMESTAMP,
            r.PATH_TOLERANCE_VIOLATED, r.GOAL_TOLERANCE_VIOLATED) == (0, -1, -2, -3, -4, -5)
    assert FJT.Result().error_string == ""


class _EchoServer:
    """A tiny FollowJointTrajectory server: accepts goals whose joints it knows, streams one
    feedback per trajectory point, reports the point count; accepts cancels. Its execute callback
    is a coroutine so that, waiting for a cancel, it leaves the probe's one executor thread free."""

    def __init__(self, probe, fjt, joints):
        from rclpy.action import ActionServer, GoalResponse
        from rclpy.callback_groups import ReentrantCallbackGroup

        from rclpy.task import Future

        self.fjt, self.joints = fjt, joints
        self.cancel_seen = Future()
        self.server = ActionServer(
            probe.node, fjt, ACTION, self._execute,
            goal_callback=lambda g: (GoalResponse.ACCEPT
                                     if set(g.trajectory.joint_names) <= set(joints)
                                     else GoalResponse.REJECT),
            cancel_callback=self._cancel,
            callback_group=ReentrantCallbackGroup())

    def _cancel(self, _handle):
        from rclpy.action import CancelResponse

        if not self.cancel_seen.done():
            self.cancel_seen.set_result(True)
        return CancelResponse.ACCEPT

    async def _execute(self, handle):
        goal = handle.request
        for i, point in enumerate(goal.trajectory.points):
            fb = self.fjt.Feedback()
            fb.joint_names = list(goal.trajectory.joint_names)
            fb.desired = point
            if hasattr(fb, "index"):  # control_msgs >= 6.3 (Kilted)
                fb.index = i
            handle.publish_feedback(fb)
        result = self.fjt.Result()
        if goal.goal_time_tolerance.sec == 99:  # the "wait for a cancel" goal of the test
            await self.cancel_seen
            if handle.is_cancel_requested:
                handle.canceled()
                result.error_string = "canceled"
                return result
        result.error_code = len(goal.trajectory.points)
        result.error_string = ",".join(t.name for t in goal.goal_tolerance)
        handle.succeed()
        return result


def _wait(future, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert future.done(), "no answer over DDS"
    return future.result()


@pytest.fixture(scope="module")
def pair(follow_joint_trajectory):
    """Server and client in two separate participants (two rclpy contexts), same DDS domain;
    discovered once for the module."""
    server_probe, client_probe = RosProbe("fjt_server"), RosProbe("fjt_client")
    try:
        server = _EchoServer(server_probe, follow_joint_trajectory, ["joint_a1", "joint_a2"])
        client = action_client(client_probe.node, follow_joint_trajectory, ACTION)
        feedback = []
        client_probe.node.create_subscription(follow_joint_trajectory.Impl.FeedbackMessage,
                                              ACTION + "/_action/feedback", feedback.append, 10)
        assert client.wait_for_server(timeout_sec=10.0)
        # Both directions discovered before the first request (a request or feedback sent before
        # the other side's reader matched is lost): the server sees the client's three service
        # clients and both feedback readers (the ActionClient's and ours).
        node = server_probe.node
        assert server_probe.wait_for(
            lambda: all(node.count_clients(f"{ACTION}/_action/{s}") >= 1
                        for s in ("send_goal", "cancel_goal", "get_result"))
            and node.count_subscribers(f"{ACTION}/_action/feedback") >= 2
            and node.count_subscribers(f"{ACTION}/_action/status") >= 1, timeout=10.0)
        _warm_up(client, follow_joint_trajectory)
        yield server, client, client_probe, feedback
    finally:
        client_probe.close()
        server_probe.close()


def _answered(send, tries=20, timeout=1.0):
    """Send a request until one is answered. The graph can show the server's endpoints before
    DDS has matched its response writer with this client's reader (a response sent then is lost),
    so the first exchange on each of the three action services is retried."""
    for _ in range(tries):
        future = send()
        deadline = time.monotonic() + timeout
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        if future.done():
            return future.result()
    raise AssertionError("no answer over DDS")


def _warm_up(client, fjt):
    """One answered request per action service, with goals the server rejects or does not know."""
    import uuid

    from rclpy.action.client import ClientGoalHandle
    from unique_identifier_msgs.msg import UUID

    assert not _answered(lambda: client.send_goal_async(_goal(fjt, ["warm_up"], 1))).accepted
    unknown = ClientGoalHandle(client, UUID(uuid=list(uuid.uuid4().bytes)), None)
    _answered(unknown.cancel_goal_async)
    _answered(unknown.get_result_async)


def _goal(fjt, names, n_points):
    from builtin_interfaces.msg import Duration
    from control_msgs.msg import JointTolerance
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = fjt.Goal()
    goal.trajectory.joint_names = names
    goal.trajectory.points = [
        JointTrajectoryPoint(positions=[0.1 * (k + 1)] * len(names),
                             time_from_start=Duration(sec=k + 1)) for k in range(n_points)]
    goal.goal_tolerance = [JointTolerance(name=n, position=0.01) for n in names]
    return goal


def test_goal_round_trip_over_dds(pair, follow_joint_trajectory):
    server, client, _, messages = pair
    sent = client.send_goal_async(_goal(follow_joint_trajectory, ["joint_a1", "joint_a2"], 3))
    handle = _wait(sent)
    assert handle.accepted
    res = _wait(handle.get_result_async())
    from action_msgs.msg import GoalStatus

    assert res.status == GoalStatus.STATUS_SUCCEEDED
    assert res.result.error_code == 3
    assert res.result.error_string == "joint_a1,joint_a2"
    # read on the feedback topic itself: the ActionClient drops feedback that arrives after the
    # result, and the two travel on different DDS channels
    def ours():
        return [m.feedback for m in list(messages)
                if bytes(m.goal_id.uuid) == bytes(handle.goal_id.uuid)]

    deadline = time.monotonic() + 5.0
    while len(ours()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    feedback = ours()
    if VARIANT == "kilted":
        assert [f.index for f in feedback] == [0, 1, 2]
    assert [f.desired.positions[0] for f in feedback] == pytest.approx([0.1, 0.2, 0.3])
    assert feedback[2].desired.positions == pytest.approx([0.3, 0.3])
    assert feedback[0].joint_names == ["joint_a1", "joint_a2"]


def test_unknown_joint_rejected_and_cancel_accepted(pair, follow_joint_trajectory):
    from action_msgs.msg import GoalStatus

    server, client, _, _ = pair
    bad = _wait(client.send_goal_async(_goal(follow_joint_trajectory, ["joint_x"], 1)))
    assert not bad.accepted

    goal = _goal(follow_joint_trajectory, ["joint_a1"], 1)
    goal.goal_time_tolerance.sec = 99
    handle = _wait(client.send_goal_async(goal))
    assert handle.accepted
    cancel = _wait(handle.cancel_goal_async())
    assert len(cancel.goals_canceling) == 1
    res = _wait(handle.get_result_async())
    assert res.status == GoalStatus.STATUS_CANCELED
    assert res.result.error_string == "canceled"


def test_feedback_topic_carries_the_built_type_hash(pair, follow_joint_trajectory):
    """The hash the compiled type support announces over DDS is the generated description's."""
    _, _, client_probe, _ = pair
    expected = _type_hashes("action/FollowJointTrajectory.json")[
        "control_msgs/action/FollowJointTrajectory_FeedbackMessage"]
    topic = ACTION + "/_action/feedback"
    deadline = time.monotonic() + 10.0
    infos = []
    while not infos and time.monotonic() < deadline:
        infos = client_probe.node.get_publishers_info_by_topic(topic)
        time.sleep(0.05)
    assert infos, f"no publisher seen on {topic}"
    assert str(infos[0].topic_type_hash) == expected
    assert os.path.basename(infos[0].topic_type) == "FollowJointTrajectory_FeedbackMessage"
