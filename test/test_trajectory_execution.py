"""joint_trajectory_controller semantics, ROS-free: validation codes, start and replacement of the
reference, tolerances and how goals end."""
import numpy as np
import pytest

from robot_dynamics.control import execution as te
from robot_dynamics.control.execution import (GoalExecution, GoalRejected, SegmentTolerances,
    TrajectoryExecution, goal_tolerances, validate_trajectory)

JOINTS = ["a", "b", "c"]
LOWER, UPPER = np.array([-1.0, -2.0, -3.0]), np.array([1.0, 2.0, 3.0])


def _validate(names=JOINTS, times=(1.0, 2.0), positions=None, **kw):
    if positions is None:
        positions = [[0.1] * len(names), [0.2] * len(names)]
    kw.setdefault("lower", LOWER)
    kw.setdefault("upper", UPPER)
    return validate_trajectory(names, times, positions, controller_joints=JOINTS, **kw)


@pytest.mark.parametrize("kw,code,needle", [
    (dict(names=["a", "b", "x"]), te.INVALID_JOINTS, "Incoming joint x"),
    (dict(names=["a", "b"], positions=[[0, 0], [0, 0]]), te.INVALID_JOINTS, "missing ['c']"),
    (dict(names=["a", "a", "b"]), te.INVALID_JOINTS, "more than once"),
    (dict(names=[]), te.INVALID_JOINTS, "Empty joint names"),
    (dict(times=(), positions=[]), te.INVALID_GOAL, "Empty trajectory"),
    (dict(positions=[[0, 0, 0], [0, 0]]), te.INVALID_GOAL, "positions (2) at point #1"),
    (dict(times=(1.0, 1.0)), te.INVALID_GOAL, "not strictly increasing"),
    (dict(times=(0.0,), positions=[[0, 0, 0]]), te.INVALID_GOAL, "time_from_start 0"),
    (dict(positions=[[0, 0, 0], [0, np.nan, 0]]), te.INVALID_GOAL,
     "positions of joint b is not finite"),
    (dict(positions=[[0, 0, 0], [0, 2.5, 0]]), te.INVALID_GOAL, "of joint b is outside its limits"),
    (dict(velocities=[[0, 0, 0], [0, 0, 0.3]]), te.INVALID_GOAL, "joint c is not zero"),
    (dict(velocities=[[0, 0, 0], []]), te.INVALID_GOAL, "give them for every point"),
    (dict(stamp=100.0, now=110.0), te.OLD_HEADER_TIMESTAMP, "ends in the past"),
    # a wall-clock stamp against a simulator's clock: it would never start
    (dict(stamp=1.7955e9, now=131.2), te.INVALID_GOAL,
     "header stamp 1795500000.000000 s is 1.8e+09 s ahead of the joint states' clock"),
])
def test_bad_goals_rejected_with_jtc_codes(kw, code, needle):
    with pytest.raises(GoalRejected) as info:
        _validate(**kw)
    assert info.value.code == code
    assert needle in str(info.value)


def test_good_goals_accepted():
    cmd = _validate(names=["c", "a", "b"], velocities=[[1, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(cmd.joints, [2, 0, 1])
    assert cmd.velocities.shape == (2, 3) and cmd.accelerations is None
    part = _validate(names=["b"], positions=[[0.1], [0.2]], allow_partial=True)
    np.testing.assert_array_equal(part.joints, [1])
    ok = _validate(velocities=[[0, 0, 0], [0, 0, 0.3]], allow_nonzero_end_velocity=True)
    assert ok.velocities[-1, 2] == 0.3


def test_tolerance_resolution_follows_joint_tolerance_semantics():
    d = SegmentTolerances.from_parameters(JOINTS, {"a": 0.1}, {"b": 0.02}, 0.01, 0.5)
    assert d.path.position.tolist() == [0.1, 0, 0] and d.goal.velocity.tolist() == [0.01] * 3
    g = goal_tolerances(d, JOINTS, path_tolerance=[("a", -1.0, 0.0, 0.0), ("c", 0.3, 0.2, 0.0)],
                        goal_tolerance=[("b", 0.0, -1.0, 0.0)], goal_time_tolerance=0.0)
    assert g.path.position.tolist() == [0.0, 0.0, 0.3]  # erased, default, override
    assert g.path.velocity.tolist() == [0.0, 0.0, 0.2]
    assert g.goal.position[1] == 0.02 and g.goal.velocity.tolist() == [0.01, 0.0, 0.01]
    assert g.goal_time == 0.5
    assert d.path.position[0] == 0.1  # defaults untouched
    with pytest.raises(GoalRejected, match="-2.0"):
        goal_tolerances(d, JOINTS, goal_tolerance=[("a", -2.0, 0, 0)])
    with pytest.raises(GoalRejected, match="'x' specified in goal.path_tolerance") as info:
        goal_tolerances(d, JOINTS, path_tolerance=[("x", 0.1, 0, 0)])
    assert info.value.code == te.INVALID_JOINTS


def _execution(q0=(0.0, 0.0, 0.0), tol=None):
    ex = TrajectoryExecution(JOINTS, tol or SegmentTolerances.from_parameters(JOINTS, {}, {}))
    ex.update(10.0, np.array(q0, float), np.zeros(3))  # first state: held
    return ex


def _start(ex, cmd, now, tol=None, source="action"):
    goal = GoalExecution(tol or ex.defaults, source)
    ex.install(ex.prepare(cmd, now), goal)
    return goal


def test_first_point_reached_over_its_time_from_start_not_as_a_step():
    ex = _execution()
    cmd = _validate(times=(5.0,), positions=[[0.8, -1.0, 2.0]])
    _start(ex, cmd, 10.0)
    goal = np.array([0.8, -1.0, 2.0])
    q, v, _ = ex.reference.sample(10.0)
    np.testing.assert_allclose(q, 0) and np.testing.assert_allclose(v, 0)
    progress = [ex.reference.sample(10.0 + s)[0] / goal for s in (1.0, 2.4, 2.5, 5.0)]
    assert np.all(progress[0] < 0.2) and np.all(progress[1] < 0.5)
    np.testing.assert_allclose(progress[2], 0.5, atol=1e-12)  # symmetric cubic: half way at T/2
    np.testing.assert_allclose(progress[3], 1.0)


@pytest.mark.parametrize("with_acc", [False, True])
def test_replacement_continues_from_the_current_reference(with_acc):
    ex = _execution()
    first = _validate(times=(1.0, 2.0), positions=[[0.5, 0.5, 0.5], [0.9, 0.9, 0.9]],
                      velocities=[[0.6, 0.6, 0.6], [0, 0, 0]])
    _start(ex, first, 10.0)
    old = ex.reference
    acc = dict(accelerations=[[0, 0, 0]]) if with_acc else {}
    second = _validate(times=(1.5,), positions=[[-0.5, 0.2, 0.0]], velocities=[[0, 0, 0]], **acc)
    ex.install(ex.prepare(second, 10.7), GoalExecution(ex.defaults))
    for k in range(2 + with_acc):  # position, velocity (and acceleration) continuous
        np.testing.assert_allclose(ex.reference.sample(10.7)[k], old.sample(10.7)[k], atol=1e-12)
    np.testing.assert_allclose(ex.reference.sample(12.2)[0], [-0.5, 0.2, 0.0])


@pytest.mark.parametrize("with_acc", [False, True])
def test_replacement_starts_at_the_first_sample_that_tracks_it(with_acc):
    """Prepared at one state's time (10.7), first tracked at a later one (10.75: states came in
    while it was prepared, off the control thread): the new reference starts there, continuing
    the old one's position, velocity and acceleration (JTC starts at its first sample)."""
    ex = _execution()
    first = _validate(times=(1.0, 2.0), positions=[[0.5, 0.5, 0.5], [0.9, 0.9, 0.9]],
                      velocities=[[0.6, 0.6, 0.6], [0, 0, 0]], accelerations=[[0.0] * 3] * 2)
    _start(ex, first, 10.0)
    old = ex.reference
    acc = dict(accelerations=[[0.0] * 3, [0.0] * 3]) if with_acc else {}
    second = _validate(times=(0.2, 1.5), positions=[[0.3, 0.35, 0.4], [-0.5, 0.2, 0.0]],
                       velocities=[[-0.5] * 3, [0.0] * 3], **acc)
    prepared = ex.prepare(second, 10.7)
    jump = np.abs(prepared.sample(10.75)[2] - old.sample(10.75)[2]).max()
    assert jump > 1.0  # what tracking the prepared reference at 10.75 would step the effort by
    ex.install(prepared, GoalExecution(ex.defaults), second)
    q_d, v_d, a_d = ex.update(10.75, old.sample(10.75)[0], old.sample(10.75)[1])
    for k, value in enumerate((q_d, v_d, a_d)[:2 + with_acc]):
        np.testing.assert_allclose(value, old.sample(10.75)[k], atol=1e-12)
    # the first point and everything after it as sent
    for t in (10.9, 11.3, 12.2):
        for k in range(3):
            np.testing.assert_allclose(ex.update(t, q_d, v_d)[k], prepared.sample(t)[k],
                                       atol=1e-12)
    assert ex.reference is prepared  # once at the first point, the prepared trajectory itself
    # prepared so long ago that the first point has passed: prepared again from then
    ex = _execution()
    _start(ex, first, 10.0)
    prepared = ex.prepare(second, 10.7)
    ex.install(prepared, GoalExecution(ex.defaults), second)
    q_d, v_d, a_d = ex.update(10.95, old.sample(10.95)[0], old.sample(10.95)[1])
    np.testing.assert_allclose(q_d, old.sample(10.95)[0], atol=1e-12)
    np.testing.assert_allclose(v_d, old.sample(10.95)[1], atol=1e-12)
    np.testing.assert_allclose(ex.update(12.2, q_d, v_d)[0], [-0.5, 0.2, 0.0], atol=1e-12)


def test_future_stamp_keeps_the_current_reference_until_then_and_past_points_are_dropped():
    ex = _execution(q0=(0.1, 0.1, 0.1))
    cmd = _validate(times=(1.0, 2.0), positions=[[0.3] * 3, [0.4] * 3], stamp=12.0, now=10.0)
    _start(ex, cmd, 10.0)
    np.testing.assert_allclose(ex.reference.sample(11.5)[0], 0.1)
    np.testing.assert_allclose(ex.reference.sample(13.0)[0], 0.3)
    # spliced onto a moving reference: it keeps going until the stamp, then continues smoothly
    moving = _validate(times=(4.0,), positions=[[0.9] * 3])
    ex = _execution(q0=(0.1, 0.1, 0.1))
    _start(ex, moving, 10.0)
    old = ex.reference
    later = _validate(times=(1.0,), positions=[[0.0] * 3], velocities=[[0] * 3],
                      accelerations=[[0] * 3], stamp=11.0, now=10.5)
    ex.install(ex.prepare(later, 10.5), GoalExecution(ex.defaults))
    for t in (10.6, 10.999):
        np.testing.assert_allclose(ex.reference.sample(t)[1], old.sample(t)[1], atol=1e-12)
    for k in range(3):
        np.testing.assert_allclose(ex.reference.sample(11.0)[k], old.sample(11.0)[k], atol=1e-9)
    ex.update(11.2, ex.reference.sample(11.2)[0], np.zeros(3))
    assert ex.reference.times[0] == 11.0 and not hasattr(ex.reference, "before")
    late = _validate(times=(1.0, 2.0), positions=[[0.3] * 3, [0.4] * 3], stamp=9.0, now=10.5)
    ref = ex.prepare(late, 10.5)  # first point (10.0) is past: straight to the second at 11.0
    assert len(ref.times) == 2 and ref.times[0] == 10.5
    np.testing.assert_allclose(ref.sample(11.0)[0], 0.4)


def test_partial_goal_keeps_the_other_joints_reference():
    ex = _execution(q0=(0.1, 0.2, 0.3))
    cmd = _validate(names=["b"], times=(1.0,), positions=[[0.7]], allow_partial=True)
    _start(ex, cmd, 10.0)
    np.testing.assert_allclose(ex.reference.sample(11.0)[0], [0.1, 0.7, 0.3])


def test_path_tolerance_violation_aborts_and_holds_measured_position():
    ex = _execution()
    tol = SegmentTolerances.from_parameters(JOINTS, {"a": 0.05}, {})
    goal = _start(ex, _validate(times=(1.0,), positions=[[0.5, 0, 0]]), 10.0, tol)
    ex.update(10.5, np.array([0.2, 0, 0]), np.zeros(3))  # reference is at 0.25: inside
    assert not goal.done
    q_meas = np.array([0.1, 0.01, 0])
    q_d, v_d, _ = ex.update(10.6, q_meas, np.zeros(3))
    assert goal.outcome.code == te.PATH_TOLERANCE_VIOLATED and goal.outcome.status == "aborted"
    assert "joint a" not in goal.outcome.text and "a position error" in goal.outcome.text
    np.testing.assert_allclose(q_d, q_meas) and np.testing.assert_allclose(v_d, 0)
    assert ex.holding and ex.goal is None


def test_goal_needs_position_and_stopped_velocity_and_goal_time_bounds_the_wait():
    tol = SegmentTolerances.from_parameters(JOINTS, {}, {n: 0.01 for n in JOINTS}, 0.01, 0.2)
    ex = _execution()
    goal = _start(ex, _validate(times=(1.0,), positions=[[0.5, 0, 0]]), 10.0, tol)
    q_end = np.array([0.5, 0, 0])
    ex.update(11.05, q_end, np.array([0.5, 0, 0]))  # on target but still moving: not yet
    assert not goal.done
    ex.update(11.1, q_end, np.zeros(3))
    assert goal.outcome.code == te.SUCCESSFUL and goal.outcome.status == "succeeded"
    np.testing.assert_allclose(ex.update(12.0, q_end, np.zeros(3))[0], q_end)  # last point held

    goal = _start(ex, _validate(times=(1.0,), positions=[[0.0, 0, 0]]), 12.0, tol)
    ex.update(13.1, np.array([0.3, 0, 0]), np.zeros(3))  # late but within goal_time
    assert not goal.done
    ex.update(13.25, np.array([0.3, 0, 0]), np.zeros(3))
    assert goal.outcome.code == te.GOAL_TOLERANCE_VIOLATED
    assert "goal_time_tolerance exceeding by 0.25" in goal.outcome.text
    np.testing.assert_allclose(ex.reference.sample(20.0)[0], [0.3, 0, 0])


def test_cancel_holds_where_the_arm_is_and_preemption_aborts_the_old_goal():
    ex = _execution()
    goal = _start(ex, _validate(times=(2.0,), positions=[[0.8, 0, 0]]), 10.0)
    ex.update(11.0, np.array([0.39, 0, 0]), np.array([0.6, 0, 0]))
    assert ex.cancel(goal) and goal.outcome.status == "canceled"
    np.testing.assert_allclose(ex.reference.sample(11.5)[0], [0.39, 0, 0])
    assert not ex.cancel(goal)  # not active any more

    first = _start(ex, _validate(times=(2.0,), positions=[[0.8, 0, 0]]), 11.5)
    second = _start(ex, _validate(times=(2.0,), positions=[[0.0, 0, 0]]), 12.0)
    assert first.outcome.code == te.INVALID_GOAL
    assert first.outcome.text == "Current goal preempted by new incoming action."
    assert ex.goal is second and not second.done


def test_next_point_index_for_feedback():
    ex = _execution()
    goal = GoalExecution(ex.defaults)
    cmd = _validate(times=(1.0, 2.0))
    ex.install(ex.prepare(cmd, 10.0), goal, cmd)
    assert [goal.next_point(t) for t in (10.5, 11.0, 11.5, 13.0)] == [0, 1, 1, 1]


def test_prepare_needs_a_state():
    ex = TrajectoryExecution(JOINTS, SegmentTolerances.from_parameters(JOINTS, {}, {}))
    with pytest.raises(GoalRejected, match="no joint state"):
        ex.prepare(_validate(), 0.0)


def test_effort_demand_names_the_joint_a_fast_trajectory_overloads():
    import robot_dynamics as rd
    from robot_dynamics.parsers.resources import robot_path
    from robot_dynamics.control.trajectory import minimum_jerk

    model = rd.load_urdf(robot_path("arm7"))
    friction = rd.friction_from_config("arm7_friction", model)
    q0, q1 = np.zeros(7), np.full(7, 0.5)
    assert te.effort_demand(model, minimum_jerk(q0, q1, 2.0, points=8), friction) is None
    joint, t, tau, limit = te.effort_demand(model, minimum_jerk(q0, q1, 0.1, points=8), friction)
    i = model.joint_index(joint)
    assert limit == model.effort_limits[i] and abs(tau) > limit and 0.0 <= t <= 0.1
    # the demand is the inverse dynamics of the reference there (friction and damping included)
    q, v, a = minimum_jerk(q0, q1, 0.1, points=8).sample(t)
    want = rd.inverse_dynamics(model, model.create_data(), q, v, a, friction) + model.damping * v
    assert tau == pytest.approx(want[i], rel=1e-12)
