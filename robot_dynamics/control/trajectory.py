"""Time-parameterised joint trajectories: the reference a controller tracks.

A trajectory is a list of waypoints (t_k, q_k, optional q̇_k, optional q̈_k), as in
``trajectory_msgs/JointTrajectory``. Between waypoints it is a quintic Hermite polynomial when
accelerations are given, a cubic Hermite one when only velocities are, and a cubic with
velocities chosen for continuous acceleration-free ends (finite differences, zero at both ends)
when only positions are. Before the first point it holds the first point; after the last, the
last (with zero velocity and acceleration).
"""
from __future__ import annotations

from bisect import bisect_right

import numpy as np

from robot_dynamics.errors import InputError


class JointTrajectory:
    """Interpolating reference ``sample(t) → (q_d, q̇_d, q̈_d)``."""

    def __init__(self, times, positions, velocities=None, accelerations=None):
        t = np.asarray(times, dtype=float)
        Q = np.atleast_2d(np.asarray(positions, dtype=float))
        if t.ndim != 1 or len(t) == 0 or Q.shape[0] != len(t):
            raise InputError(f"trajectory: {len(t)} times for {Q.shape[0]} points")
        if np.any(np.diff(t) <= 0):
            raise InputError("trajectory: time_from_start must be strictly increasing")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(Q))):
            raise InputError("trajectory: non-finite time or position")
        n = Q.shape[1]
        self.times, self.positions = t, Q
        self.has_acc = accelerations is not None
        V = self._opt("velocities", velocities, Q.shape)
        if V is None:
            V = finite_difference_velocities(t, Q)
        A = self._opt("accelerations", accelerations, Q.shape)
        self.velocities = V
        self.accelerations = A if A is not None else np.zeros_like(Q)
        self.nv = n
        self._coef = self._coefficients()  # (segments, 6, nv): polynomial in s ∈ [0, 1]
        self._t = t.tolist()  # plain floats for bisect

    def _coefficients(self) -> np.ndarray:
        h = np.diff(self.times)[:, None]
        q0, q1 = self.positions[:-1], self.positions[1:]
        v0, v1 = self.velocities[:-1] * h, self.velocities[1:] * h
        a0, a1 = self.accelerations[:-1] * h * h, self.accelerations[1:] * h * h
        if self.has_acc:  # quintic Hermite
            c = _quintic(q0, v0, a0, q1, v1, a1)
        else:  # cubic Hermite
            zero = np.zeros_like(q0)
            c = [q0, v0, 3 * (q1 - q0) - 2 * v0 - v1, 2 * (q0 - q1) + v0 + v1, zero, zero]
        return np.stack(c, axis=1)

    @staticmethod
    def _opt(name, arr, shape):
        if arr is None:
            return None
        arr = np.asarray(arr, dtype=float)
        if arr.shape != shape:
            raise InputError(f"trajectory: {name} has shape {arr.shape}, positions {shape}")
        if not np.all(np.isfinite(arr)):
            raise InputError(f"trajectory: non-finite {name}")
        return arr

    @property
    def duration(self) -> float:
        """Time of the last point (the times are relative to whatever origin they were given in)."""
        return float(self.times[-1])

    def sample(self, t: float):
        """Reference position, velocity, acceleration (each (nv,)) at time ``t``."""
        T = self._t
        if t < T[0] or len(T) == 1:
            return self.positions[0].copy(), np.zeros(self.nv), np.zeros(self.nv)
        if t > T[-1]:
            return self.positions[-1].copy(), np.zeros(self.nv), np.zeros(self.nv)
        k = min(bisect_right(T, t) - 1, len(T) - 2)  # at a point: its own velocity, acceleration
        h = self._t[k + 1] - self._t[k]
        s = (t - self._t[k]) / h
        s2, s3 = s * s, s * s * s
        hi, hi2 = 1.0 / h, 1.0 / (h * h)
        basis = np.array([[1.0, s, s2, s3, s2 * s2, s3 * s2],  # d^m/dt^m of s^i, m = 0, 1, 2
                          [0.0, hi, 2 * s * hi, 3 * s2 * hi, 4 * s3 * hi, 5 * s2 * s2 * hi],
                          [0.0, 0.0, 2 * hi2, 6 * s * hi2, 12 * s2 * hi2, 20 * s3 * hi2]])
        pos, vel, acc = basis @ self._coef[k]
        return pos, vel, acc


def finite_difference_velocities(times, positions, v_start=None) -> np.ndarray:
    """Waypoint velocities for positions-only points: central differences inside, zero at the
    last point, ``v_start`` (default zero) at the first."""
    t, Q = np.asarray(times, float), np.asarray(positions, float)
    V = np.zeros_like(Q)
    if len(t) > 2:
        V[1:-1] = (Q[2:] - Q[:-2]) / (t[2:] - t[:-2])[:, None]
    if v_start is not None:
        V[0] = v_start
    return V


def _quintic(q0, v0, a0, q1, v1, a1):
    c3 = 10 * (q1 - q0) - 6 * v0 - 4 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15 * (q1 - q0) + 8 * v0 + 7 * v1 + 1.5 * a0 - a1
    c5 = 6 * (q1 - q0) - 3 * v0 - 3 * v1 - 0.5 * a0 + 0.5 * a1
    return [q0, v0, 0.5 * a0, c3, c4, c5]


def minimum_jerk(q_start, q_goal, duration: float, points: int = 2) -> JointTrajectory:
    """A rest-to-rest minimum-jerk move (quintic with zero end velocity and acceleration)."""
    q_start, q_goal = np.asarray(q_start, float), np.asarray(q_goal, float)
    t = np.linspace(0.0, duration, max(points, 2))
    s = t / duration
    blend = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    dblend = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration
    ddblend = (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2
    d = q_goal - q_start
    return JointTrajectory(t, q_start + blend[:, None] * d, dblend[:, None] * d, ddblend[:, None] * d)
