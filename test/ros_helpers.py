"""Real ROS 2 for tests: node subprocesses on an isolated DDS domain, and an in-test rclpy node.

No fake middleware: the nodes under test run as their own processes (``python -m
robot_dynamics.ros.<name> --ros-args ...``) and talk to the test's node over DDS on loopback.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

DOMAIN_ID = str(11 + os.getpid() % 150)  # one DDS domain per test session: no cross-talk
ENV = dict(os.environ, ROS_DOMAIN_ID=DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
           PYTHONUNBUFFERED="1", RCUTILS_COLORIZED_OUTPUT="0")


class NodeProcess:
    """A node started as ``python -m robot_dynamics.ros.<module>`` with parameters."""

    def __init__(self, module, params=None, remaps=None):
        args = [sys.executable, "-m", f"robot_dynamics.ros.{module}", "--ros-args"]
        for key, value in (params or {}).items():
            args += ["-p", f"{key}:={_param(value)}"]
        for src, dst in (remaps or {}).items():
            args += ["-r", f"{src}:={dst}"]
        self.proc = subprocess.Popen(args, env=ENV, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def wait_log(self, needle, timeout=20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.log:
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return needle in self.log
            time.sleep(0.05)
        return False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(2)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def held_controller(robot, prefix):
    """id_controller answering ``<prefix>_states`` on ``<prefix>_commands`` with kp = kd = 0 and
    friction along the measured velocity: at a held state its effort is the friction-aware
    inverse dynamics (the payload tests read the payload's share of it); started and ready."""
    node = NodeProcess("id_controller", {"robot": robot, "kp": [0.0], "kd": [0.0],
                                         "friction_velocity_blend": 1.0,
                                         "joint_states_topic": prefix + "_states",
                                         "command_topic": prefix + "_commands",
                                         "stale_timeout": 30.0})
    assert node.wait_log("computed-torque control", 60), node.log
    return node


def _param(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_param(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def action_client(node, action_type, name):
    """An rclpy ActionClient that may be called from the test's thread while the probe's executor
    thread takes the responses.

    rclpy before 8 (Jazzy's 7.1) registers a request's sequence number only after sending it, so a
    response the executor thread takes in between is dropped ("Ignoring unexpected goal response")
    and the request's future never completes: ros2/rclpy#1123, fixed by a lock in #1308 (Kilted).
    The same lock here, around sending and registering and around taking a response; on Kilted it
    only repeats the client's own."""
    from rclpy.action import ActionClient

    class LockedActionClient(ActionClient):
        def __init__(self, *args, **kwargs):
            self._request_lock = threading.RLock()
            super().__init__(*args, **kwargs)

        def send_goal_async(self, *args, **kwargs):
            with self._request_lock:
                return super().send_goal_async(*args, **kwargs)

        def _cancel_goal_async(self, *args, **kwargs):
            with self._request_lock:
                return super()._cancel_goal_async(*args, **kwargs)

        def _get_result_async(self, *args, **kwargs):
            with self._request_lock:
                return super()._get_result_async(*args, **kwargs)

        async def execute(self, taken_data):
            with self._request_lock:  # the base's execute never suspends: the lock is held whole
                return await super().execute(taken_data)

    return LockedActionClient(node, action_type, name)


class RosProbe:
    """An rclpy node in the test process on the same domain, spun in a background thread."""

    def __init__(self, name="probe"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=int(DOMAIN_ID))
        self.node = rclpy.create_node(name, context=self.context)
        from rclpy.executors import SingleThreadedExecutor

        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stop = False
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self):
        while not self._stop and self.context.ok():
            self.executor.spin_once(timeout_sec=0.01)

    def collect(self, msg_type, topic, qos=None):
        """Subscribe and return the list the messages are appended to."""
        from robot_dynamics.ros.common import STATE_QOS

        box = []
        self.node.create_subscription(msg_type, topic, lambda m: box.append(m), qos or STATE_QOS)
        return box

    def wait_for(self, predicate, timeout=20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return predicate()

    def set_parameters(self, node_name, timeout=20.0, **values):
        """SetParameters on ``/<node_name>`` over DDS; returns {name: (successful, reason)}."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        client = self.node.create_client(SetParameters, f"/{node_name}/set_parameters")
        assert client.wait_for_service(timeout_sec=timeout), f"no /{node_name}/set_parameters"
        request = SetParameters.Request(
            parameters=[Parameter(k, value=v).to_parameter_msg() for k, v in values.items()])
        future = client.call_async(request)
        assert self.wait_for(future.done, timeout), "SetParameters did not answer"
        self.node.destroy_client(client)
        return {k: (r.successful, r.reason) for k, r in zip(values, future.result().results)}

    def close(self):
        self._stop = True
        self._thread.join(timeout=5)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def effort_steps(t, tau, min_steps=100):
    """Per-step effort changes max_j |Δτ_j| between consecutive states of a series, largest first.

    A loaded machine can drop states on the way to a probe, and a gap of k steps shows k steps of
    change as one (CI once saw 2.3 N·m against 0.48 N·m per step around it: a 5-step gap), so
    only neighbours one simulation step apart count.
    """
    dt = np.diff(t)
    consecutive = dt < 1.5 * dt.min()
    assert consecutive.sum() >= min_steps, \
        f"the probe saw only {consecutive.sum()} pairs of consecutive states"
    return np.sort(np.abs(np.diff(tau, axis=0))[consecutive].max(axis=1))[::-1]
