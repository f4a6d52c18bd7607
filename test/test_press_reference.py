"""The press reference (robot_dynamics.control.press, ROS-free): the contact point's Jacobian,
the least-norm IK, the path it gives (onto the surface, along it at each level) and the
reference of a level, q_d = q* − K_p⁻¹ M(q*)⁻¹ J(q*)ᵀ n F (seed 004 §2.7: the computed-torque
controller's spring balancing the surface's push at the pose q* where the point is F/k deep):
held there, the core Simulator's arm under computed torque presses with the level's force."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control.press import (contact_point, inverse_position, point_jacobian,
                                          press_duration, press_offset, press_reference)
from robot_dynamics.errors import InputError
from robot_dynamics.parsers.resources import robot_path
from robot_dynamics.simulation.contact import PlaneContact

Q0 = np.array([0.0, 0.3, 0.0, -1.2, 0.0, 0.9, 0.0])  # arm7's first demo pose
KP = np.array([400.0] * 4 + [625.0] * 3)


@pytest.fixture(scope="module")
def arm():
    model = rd.load_urdf(robot_path("arm7"))
    data = model.create_data()
    x0 = rd.frame_placement(model, (rd.forward_kinematics(model, data, Q0), data)[1],
                            "tool0")[:3, 3]
    contact = PlaneContact(model, "tool0", plane_point=x0 + [0.0, 0.0, 0.03],
                           normal=(0.0, 0.0, -1.0), stiffness=2e4, damping=200.0)
    return model, contact, x0


def test_point_jacobian_is_the_derivative_of_the_point(arm):
    model, contact, x0 = arm
    data = model.create_data()
    np.testing.assert_allclose(contact_point(model, data, Q0, contact), x0, atol=1e-15)
    J = point_jacobian(model, data, Q0, contact)
    h = 1e-6
    for j in range(model.nv):
        dq = np.zeros(model.nv)
        dq[j] = h
        fd = (contact_point(model, data, Q0 + dq, contact)
              - contact_point(model, data, Q0 - dq, contact)) / (2 * h)
        np.testing.assert_allclose(J[:, j], fd, atol=1e-8)


def test_inverse_position_reaches_and_refuses_out_of_reach(arm):
    model, contact, x0 = arm
    data = model.create_data()
    target = x0 + [0.05, -0.04, 0.03]
    q = inverse_position(model, data, Q0, contact, target)
    np.testing.assert_allclose(contact_point(model, data, q, contact), target, atol=1e-10)
    with pytest.raises(InputError, match="out of reach"):
        inverse_position(model, data, Q0, contact, x0 + [5.0, 0.0, 0.0])


def test_press_reference_path(arm):
    """Onto the surface, along it at zero force (no offset: the point on the surface), deeper
    than F/k at a force (the offset); back up at the end."""
    model, contact, x0 = arm
    data = model.create_data()
    slide = np.array([0.08, 0.06, 0.0])
    traj, levels = press_reference(model, contact, Q0, [0.0, 20.0], KP, slide=slide,
                                   move_time=0.5)
    np.testing.assert_allclose(traj.positions[0], Q0)
    # the length `sim --scenario press` bounds before it loads anything (press_duration)
    assert traj.duration == pytest.approx(press_duration(2, 0.5), rel=1e-12)
    # back up where it started (the posture may differ by the least-norm steps' drift)
    np.testing.assert_allclose(contact_point(model, data, traj.positions[-1], contact), x0,
                               atol=1e-9)
    surface = x0 + [0.0, 0.0, 0.03]
    zero, twenty = levels
    assert zero.depth == 0.0 and twenty.depth == pytest.approx(20.0 / 2e4, rel=1e-12)

    def depth(t):  # of the reference's point, beyond the surface (the normal points down)
        x = contact_point(model, data, traj.sample(t)[0], contact)
        return (contact.plane_point - x) @ contact.normal, x

    for a, b in zero.slides:
        for t in np.linspace(a, b, 7):
            assert depth(t)[0] == pytest.approx(0.0, abs=1e-6)  # (between samples: 1e-8)
    x_mid = depth(0.5 * sum(zero.slides[0]))[1]
    np.testing.assert_allclose(x_mid - surface, 0.5 * slide, atol=1e-6)
    q = inverse_position(model, data, Q0, contact, surface + [0.0, 0.0, twenty.depth])
    offset = press_offset(model, data, q, contact, KP, 20.0)
    assert np.abs(offset).max() > 1e-3  # the controller's spring needs it
    for a, b in twenty.slides:
        for t in np.linspace(a, b, 7):
            assert depth(t)[0] > 2 * twenty.depth
    with pytest.raises(InputError, match="forces must be numbers ≥ 0"):
        press_reference(model, contact, Q0, [-1.0], KP, slide=slide)
    # a force whose depth F/k is out of reach says so (it said only "cannot reach [...]")
    with pytest.raises(InputError, match=r"^forces: a force of 1e\+06 N puts the point 50 m into "
                                         r"the surface \(its stiffness is 20000 N/m\): out of "
                                         r"reach from [0-9.]+ N on; the point on 'tool0' "
                                         r"cannot reach"):
        press_reference(model, contact, Q0, [10.0, 1e6], KP, slide=slide)


def test_reference_gives_the_force_under_computed_torque(arm):
    """No friction anywhere: the arm held by computed torque (the plant's own model) at a
    level's reference settles where the surface pushes with the level's force."""
    model, contact, x0 = arm
    force = 40.0
    traj, (level,) = press_reference(model, contact, Q0, [force], KP, slide=np.zeros(3),
                                     move_time=0.5)
    q_d = traj.sample(level.slides[0][0])[0]
    sim = rd.Simulator(model, dt=1e-3, external=contact)
    sim.reset(q_d)
    ctl = rd.ComputedTorque(KP, 2.0 * np.sqrt(KP), q_d)
    sim.run(1.5, ctl)
    assert contact.normal_force == pytest.approx(force, rel=1e-4), contact.normal_force
