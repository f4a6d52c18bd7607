"""Friction compensation direction: no chatter at rest, the plain law when asked for it."""
import numpy as np

import robot_dynamics as rd
from robot_dynamics.control.friction_compensation import (compensated_inverse_dynamics,
    direction_velocity)
from robot_dynamics.ros.common import load_friction
from robot_dynamics.parsers.resources import robot_path


def _arm():
    model = rd.load_urdf(robot_path("arm7"))
    return model, model.create_data(), load_friction("", "arm7", model)


def test_measured_velocity_blend_is_the_plain_inverse_dynamics():
    model, data, fr = _arm()
    rng = np.random.default_rng(4)
    q, v, a = rng.normal(size=(3, model.nv))
    w = direction_velocity(np.zeros(model.nv), np.zeros(model.nv), v, blend=1.0)
    np.testing.assert_array_equal(w, v)
    tau = compensated_inverse_dynamics(model, data, q, v, a, fr, w, blend=1.0)
    np.testing.assert_allclose(tau, rd.inverse_dynamics(model, data, q, v, a, friction=fr),
                               atol=1e-12)


def test_at_rest_the_effort_does_not_follow_the_dithering_measured_velocity():
    model, data, fr = _arm()
    q = np.array([0.3, 0.8, -0.2, -1.2, 0.1, 0.6, 0.0])
    e = np.full(model.nv, 2e-6)  # a tiny steady position error
    efforts, plain = [], []
    for sign in (1.0, -1.0):  # the measured velocity flips sign from one step to the next
        v = sign * 1e-5 * np.ones(model.nv)
        a = 400.0 * e - 40.0 * v
        w = direction_velocity(np.zeros(model.nv), e, v, error_gain=500.0)
        efforts.append(compensated_inverse_dynamics(model, data, q, v, a, fr, w,
                                                    smoothing_velocity=0.01))
        plain.append(rd.inverse_dynamics(model, data, q, v, a, friction=fr))
    jump = np.abs(efforts[0] - efforts[1]).max()
    jump_plain = np.abs(plain[0] - plain[1]).max()
    assert jump_plain > 1.0  # the measured-velocity law flips the whole friction effort
    assert jump < 1e-2 * jump_plain, (jump, jump_plain)


def test_away_from_the_reference_the_breakaway_friction_is_compensated_towards_it():
    model, data, fr = _arm()
    q, v = np.array([0.3, 0.8, -0.2, -1.2, 0.1, 0.6, 0.0]), np.zeros(7)
    e = np.full(model.nv, 1e-3)  # ε/Λ = 2e-5: well outside the band
    w = direction_velocity(np.zeros(7), e, v, error_gain=500.0)
    tau = compensated_inverse_dynamics(model, data, q, v, np.zeros(7), fr, w,
                                       smoothing_velocity=0.01)
    base = rd.inverse_dynamics(model, data, q, v, np.zeros(7))
    bound = fr.bounds(model, data.f, q, np.ones(7))  # breakaway efforts for positive motion
    np.testing.assert_allclose(tau - base, bound, rtol=1e-6, atol=1e-9)
