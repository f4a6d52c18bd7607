"""Trajectory interpolation: exact on polynomials it should reproduce, continuous, validated."""
import numpy as np
import pytest

from robot_dynamics.errors import InputError
from robot_dynamics.control.trajectory import JointTrajectory, minimum_jerk


def test_quintic_reproduces_a_quintic_polynomial_exactly():
    c = np.array([0.2, -1.0, 0.5, 0.3, -0.2, 0.05])
    p = np.polynomial.Polynomial(c)
    t = np.array([0.0, 0.7, 1.5, 2.0])
    traj = JointTrajectory(t, p(t)[:, None], p.deriv()(t)[:, None], p.deriv(2)(t)[:, None])
    for s in np.linspace(0.01, 1.99, 37):
        q, v, a = traj.sample(s)
        assert q[0] == pytest.approx(p(s), abs=1e-12)
        assert v[0] == pytest.approx(p.deriv()(s), abs=1e-11)
        assert a[0] == pytest.approx(p.deriv(2)(s), abs=1e-10)


def test_cubic_when_only_velocities_and_holds_outside():
    t = np.array([1.0, 2.0])
    traj = JointTrajectory(t, [[0.0, 1.0], [1.0, 3.0]], [[0.0, 0.0], [0.0, 0.0]])
    q, v, _ = traj.sample(1.5)
    np.testing.assert_allclose(q, [0.5, 2.0])
    np.testing.assert_allclose(v, [1.5, 3.0])  # cubic smoothstep: peak velocity 1.5 Δq / T
    q, v, a = traj.sample(0.0)
    np.testing.assert_allclose(q, [0.0, 1.0]) and np.testing.assert_allclose(v, 0)
    q, v, a = traj.sample(9.0)
    np.testing.assert_allclose(q, [1.0, 3.0]) and np.testing.assert_allclose(a, 0)


def test_minimum_jerk_is_rest_to_rest_and_continuous():
    traj = minimum_jerk([0.0, 0.0], [1.0, -2.0], 2.0, points=7)
    ts = np.linspace(0, 2, 401)
    Q = np.array([traj.sample(t)[0] for t in ts])
    assert np.max(np.abs(np.diff(Q, axis=0))) < 0.02
    np.testing.assert_allclose(traj.sample(2.0)[0], [1.0, -2.0])
    np.testing.assert_allclose(traj.sample(1.0)[0], [0.5, -1.0], atol=1e-12)


@pytest.mark.parametrize("args,needle", [
    (([0.0, 0.0], [[0.0], [1.0]]), "strictly increasing"),
    (([0.0, 1.0], [[0.0], [np.nan]]), "non-finite"),
    (([0.0, 1.0], [[0.0], [1.0]], [[0.0]]), "velocities has shape"),
    (([0.0], [[0.0], [1.0]]), "1 times for 2 points"),
])
def test_bad_trajectories(args, needle):
    with pytest.raises(InputError, match=needle):
        JointTrajectory(*args)
