"""What a run of the nodes inside this process needs, for ``robot-dynamics sim`` and
``robot-dynamics record``: SIGINT/SIGTERM handling around the executor (:class:`Signals`),
progress on stderr, the recording of every state the simulator publishes (through its
``state_observers``), and a ROS namespace of the run alone."""
from __future__ import annotations

import bisect
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field

import numpy as np

#: the composition's topics (absolute names, as the nodes declare them)
TOPICS = ("/joint_states", "/effort_controller/commands", "/id_controller/joint_trajectory",
          "/clock", "/diagnostics")


class Interrupted(Exception):
    """SIGINT or SIGTERM during the run; ``code`` is the exit status (128 + signal)."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.code = 128 + signum


class Signals:
    """Inside ``with Signals() as signals:`` SIGINT/SIGTERM raise :class:`Interrupted` (the run
    stops, the nodes are destroyed); the previous handlers come back at the end.

    While an executor spins (:meth:`spin_once`) the exception is held until the spin returns:
    raised inside rclpy's C++ layer it would come out as a pybind11 conversion error. Outside a
    ``with`` block :meth:`spin_once` just spins (no handler is installed)."""

    def __init__(self):
        self.pending = []  # signals that came while rclpy was spinning
        self.in_spin = False
        self._previous = {}

    def __enter__(self):
        self._previous = {s: signal.signal(s, self._handler)
                          for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc):
        for s, h in self._previous.items():
            signal.signal(s, h)
        self._previous = {}
        return False

    def _handler(self, signum, frame):
        if self.in_spin:
            self.pending.append(signum)
        else:
            raise Interrupted(signum)

    def spin_once(self, executor, timeout_sec):
        """``executor.spin_once``, then :class:`Interrupted` if SIGINT/SIGTERM came meanwhile."""
        self.in_spin = True
        try:
            executor.spin_once(timeout_sec=timeout_sec)
        finally:
            self.in_spin = False
        if self.pending:
            raise Interrupted(self.pending.pop())


class Progress:
    """Progress of a long run on stderr: silent for the first ``quiet`` wall seconds; then one
    updating line on a terminal, else a line per simulated second.

    The time left is the simulated time left over the pace of the recent run (simulated
    seconds per wall second over the later half of the wall time since the first step), shown
    only once that pace is measured: at least ``min_wall`` wall seconds and ``min_share`` of the
    total simulated since the first step. The start-up before the first step (nodes, kernels
    loaded or compiled) and the slow first steps after it are left out: the pace from the start
    said "about 6 min left" at 0.04 s simulated of a run that took 17 s. As tqdm, which shows
    no time left before its rate is known and weighs recent rates (its ``smoothing``), but
    without its exponential average of single updates (the spins' jitter). ``clock``: the wall
    clock (tests give a fake one)."""

    def __init__(self, total, stream=None, quiet=2.0, *, clock=time.monotonic, min_wall=2.0,
                 min_share=0.05):
        stream = sys.stderr if stream is None else stream  # the current one, not import time's
        self.total, self.stream, self.quiet = total, stream, quiet
        self.clock, self.min_wall, self.min_share = clock, min_wall, min_share
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.wall0 = clock()
        self.last_second, self.last_draw, self.drawn = -1, 0.0, False
        self.samples = []  # (wall, simulated) since the first step, at least 0.1 s of wall apart

    def update(self, t):
        wall = self.clock() - self.wall0
        if t > 0.0 and (not self.samples or wall - self.samples[-1][0] >= 0.1):
            self.samples.append((wall, t))
        if wall < self.quiet:
            return
        if self.tty:
            if wall - self.last_draw >= 0.2:
                self.last_draw = wall
                self.stream.write(f"\r  simulated {t:6.2f} / {self.total:.2f} s  "
                                  f"(wall {wall:5.1f} s{self._left(t, wall)})   ")
                self.stream.flush()
                self.drawn = True
        elif int(t) > self.last_second:  # (a line at 1.99 s counts for 2: none at 2.00 s)
            self.last_second = int(t + 0.05)
            self.stream.write(f"  simulated {t:.2f} / {self.total:.2f} s (wall {wall:.1f} s"
                              f"{self._left(t, wall)})\n")
            self.stream.flush()

    def seconds_left(self, t, wall):
        """Wall seconds left at the recent pace, or None while it is not measured yet."""
        if not self.samples or t >= self.total:
            return None
        wall1, t1 = self.samples[0]  # the first step
        if wall - wall1 < self.min_wall or t - t1 < self.min_share * self.total:
            return None
        half = 0.5 * (wall + wall1)  # the pace over the later half since the first step
        i = bisect.bisect_left(self.samples, (half, -math.inf))
        wall_a, t_a = self.samples[min(i, len(self.samples) - 1)]
        if wall - wall_a <= 0.0 or t <= t_a:
            wall_a, t_a = wall1, t1
        if wall - wall_a <= 0.0 or t <= t_a:
            return None
        return (self.total - t) * (wall - wall_a) / (t - t_a)

    def _left(self, t, wall) -> str:
        """', about 23 min left' at the recent pace (e.g. --rate 100000: x0.005 real time); ''
        while the pace is not measured."""
        left = self.seconds_left(t, wall)
        if left is None:
            return ""
        return (f", about {left:.0f} s left" if left < 120 else
                f", about {left / 60:.0f} min left" if left < 7200 else
                f", about {left / 3600:.1f} h left")

    def close(self):
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


@dataclass
class Recording:
    """Every state the simulator published, with the plant's friction effort of that step."""
    t: list = field(default_factory=list)
    q: list = field(default_factory=list)
    v: list = field(default_factory=list)
    tau: list = field(default_factory=list)
    tau_friction: list = field(default_factory=list)

    def arrays(self):
        return {k: np.asarray(getattr(self, k), dtype=float)
                for k in ("t", "q", "v", "tau", "tau_friction")}


def record_published_states(sim, rec=None) -> Recording:
    """Record into ``rec`` (None: a new :class:`Recording`, returned) each JointState the
    simulator node ``sim`` publishes from now on, through its ``state_observers`` (in process:
    nothing lost, and the plant friction effort belongs to the same step)."""
    from robot_dynamics.ros.common import stamp_to_seconds

    rec = Recording() if rec is None else rec
    # mimic joints: /joint_states names the followers too; record the coordinates
    sel = sim.model.independent if sim.model.coupling is not None else slice(None)

    def on_state(msg):
        rec.t.append(stamp_to_seconds(msg.header.stamp))
        rec.q.append(np.array(msg.position, dtype=float)[sel])
        rec.v.append(np.array(msg.velocity, dtype=float)[sel])
        rec.tau.append(np.array(msg.effort, dtype=float)[sel])
        rec.tau_friction.append(np.array(sim.sim.tau_friction, dtype=float))

    sim.state_observers.append(on_state)
    return rec


def record_normal_force(sim, contact) -> list:
    """The normal force [N] of ``contact`` (a PlaneContact on the simulator node's model, the
    plant's own or a twin of it) at each state the simulator node ``sim`` publishes from now on:
    what the plant applies over the step from that state (the contact is evaluated at a step's
    start). Call it after :func:`record_published_states`: one value per recorded state."""
    sel = sim.model.independent if sim.model.coupling is not None else slice(None)
    forces = []

    def on_state(msg):
        contact.wrench(np.array(msg.position, dtype=float)[sel],
                       np.array(msg.velocity, dtype=float)[sel])
        forces.append(contact.normal_force)

    sim.state_observers.append(on_state)
    return forces


def record_modes(sim) -> list:
    """The simulator node's modes in the order it runs them: its mode now, then each switch
    (a ``mode`` parameter change) as it happens (through its ``mode_observers``)."""
    modes = [sim.mode]

    def on_mode(mode):
        if mode != modes[-1]:
            modes.append(mode)

    sim.mode_observers.append(on_mode)
    return modes


def private_namespace() -> str:
    """A ROS namespace of this run alone, ``/robot_dynamics_sim_<pid>_<random>``: two demos at
    once (in one process or several), or a node started by hand, never share a name."""
    import secrets

    return f"/robot_dynamics_sim_{os.getpid()}_{secrets.token_hex(4)}"


def private_remaps(prefix=None):
    """ROS remapping rules that move the composition's topics under ``prefix`` (default
    :func:`private_namespace`)."""
    prefix = prefix or private_namespace()
    rules = []
    for topic in TOPICS:
        rules += ["-r", f"{topic}:={prefix}{topic}"]
    return rules
