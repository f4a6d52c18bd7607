"""`robot-dynamics sim --scenario press` end to end (issue 32's last demo): arm7's tool pressing
up against a surface (a compiled PlaneContact in the simulator node's plant; the default,
overhead) with rising force and sliding along it. Shortened (two levels, 0.6 s slides).
Checked: the normal force reported is the PlaneContact's own at each recorded state; the
plant's joint friction effort while sliding at the highest force exceeds the one at zero
force by at least half, and by within 25 %, of what the friction law gives for the contact's
load at those states (seed 004 eq. 2.5.6: the joint reactions that carry the pushing force,
docs/method.md §1b); the report prints the numbers; the plot is written."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

FORCES = (0.0, 50.0)


def _fresh_contact(summary, model=None):
    """A new PlaneContact with the run's surface (its place, normal and parameters), on a model
    loaded here: what the recorded normal force must equal."""
    from robot_dynamics.parsers.resources import robot_path
    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.ros.demo.scenarios import PRESS_TABLE
    from robot_dynamics.simulation.contact import PlaneContact

    model = model or load_urdf(robot_path("arm7"), mimic=True)
    t = summary["table"]
    return PlaneContact(model, summary["link"], plane_point=t.plane_point, normal=t.normal,
                        **PRESS_TABLE)


@pytest.fixture(scope="module")
def press_run(tmp_path_factory):
    from robot_dynamics.ros.demo.run import DemoOptions, run_demo

    plot = tmp_path_factory.mktemp("press") / "press.png"
    lines = []
    summary = run_demo(DemoOptions(robot="arm7", scenario="press", press_forces=FORCES,
                                   move_time=0.6, settle=0.1, plot=str(plot)), log=lines.append)
    return summary, "\n".join(lines), plot


@pytest.mark.slow
def test_press_reports_the_plane_contacts_own_normal_force(press_run):
    s, out, _ = press_run
    assert s["valid"], s["reasons"]
    data = s["data"]
    table = _fresh_contact(s)
    expected = []
    for q, v in zip(data["q"], data["v"]):
        table.wrench(q, v)
        expected.append(table.normal_force)
    np.testing.assert_allclose(data["normal_force"], expected, rtol=1e-12, atol=1e-9)
    zero, high = s["press"]
    for n in (zero, high):
        assert n["samples"] > 100, n["samples"]
        assert n["normal_force"] == pytest.approx(float(np.mean(data["normal_force"][n["window"]])))
    # pressed at the high level (not exactly: the controller's friction compensation points
    # along its position error, into the surface, and pushes too: ~+30 %), not at zero
    assert 0.5 * FORCES[1] < high["normal_force"] < 1.5 * FORCES[1], high["normal_force"]
    assert zero["normal_force"] < 0.2 * high["normal_force"], zero["normal_force"]
    assert high["normal_force_min"] > 0
    # the printed table: one row per level, its normal force as measured
    assert "scenario press: 'tool0' pressing up against a surface above it" in out, out
    rows = [line.split() for line in out.splitlines()]
    for n in (zero, high):
        assert [f"{n['force']:g}", "N", f"{n['normal_force']:.2f}", "N"] in [r[:4] for r in rows], \
            out


@pytest.mark.slow
def test_press_friction_grows_with_the_force_by_the_laws_margin(press_run):
    """At the high level's slide states, the plant's friction law gives Δ = mean|τf| with the
    contact's wrench − without it (inverse dynamics at the recorded q, q̇ and the q̈ between
    states); the measured friction effort rises from the zero level by at least Δ/2 — and by
    Δ within 25 % — on every joint where Δ is a tenth of the largest or more and that slides
    through both windows."""
    from robot_dynamics.algorithm.inverse_dynamics import inverse_dynamics
    from robot_dynamics.parsers.resources import bundled_robot, robot_path
    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.ros.common import load_actuators, load_friction
    from robot_dynamics.ros.demo.config import default_actuators

    s, _, _ = press_run
    data = s["data"]
    model = load_urdf(robot_path("arm7"), mimic=True)
    law = load_friction("", bundled_robot("arm7"), model)
    _, law = load_actuators(default_actuators("arm7"), model, law)
    table = _fresh_contact(s, model)
    zero, high = s["press"]
    t, v = data["t"], data["v"]
    a = np.gradient(v, t, axis=0)
    d = model.create_data()
    idx = np.flatnonzero(high["window"])
    with_, without = [], []
    for k in idx:
        fext = table.wrench(data["q"][k], v[k])
        inverse_dynamics(model, d, data["q"][k], v[k], a[k], law, fext=fext)
        with_.append(np.abs(d.tau_friction))
        inverse_dynamics(model, d, data["q"][k], v[k], a[k], law)
        without.append(np.abs(d.tau_friction))
    delta = np.mean(with_, axis=0) - np.mean(without, axis=0)
    assert delta.max() > 0, delta
    sliding = [np.abs(v[n["window"]]).min(axis=0) > 1e-3 for n in (zero, high)]
    joints = np.flatnonzero((delta >= 0.1 * delta.max()) & sliding[0] & sliding[1])
    assert len(joints), (delta, sliding)
    rise = high["friction"] - zero["friction"]
    for i in joints:
        assert rise[i] > 0.5 * delta[i], (model.joint_names[i], rise, delta)
        # and it is the law's rise (measured 2.5e-3 to 4 % apart: the zero level's states are
        # not quite the high level's)
        assert abs(rise[i] - delta[i]) < 0.25 * delta[i], (model.joint_names[i], rise, delta)


@pytest.mark.slow
def test_press_plot_is_written(press_run):
    _, out, plot = press_run
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert f"plot saved to {plot}" in out


def test_press_options_need_the_press_scenario(capsys):
    from robot_dynamics.ros.demo.arguments import main

    with pytest.raises(SystemExit) as exc:
        main(["--press-forces", "10", "20"])
    assert exc.value.code == 2
    assert "--press-forces needs --scenario press" in capsys.readouterr().err


def test_press_surfaces_face_the_tool():
    """overhead: above the tool's start point by PRESS_APPROACH, normal down (out of the
    surface, towards the tool); table: below it, normal up."""
    import robot_dynamics as rd
    from robot_dynamics.parsers.resources import robot_path
    from robot_dynamics.ros.demo.scenarios import PRESS_APPROACH, press_link, press_table

    model = rd.load_urdf(robot_path("arm7"))
    q = np.array([0.0, 0.3, 0.0, -1.2, 0.0, 0.9, 0.0])
    data = model.create_data()
    rd.forward_kinematics(model, data, q)
    x0 = rd.frame_placement(model, data, "tool0")[:3, 3]
    assert press_link(model) == "tool0"
    for surface, side in (("overhead", -1.0), ("table", 1.0)):
        c = press_table(model, "tool0", q, surface)
        np.testing.assert_allclose(c.normal, [0.0, 0.0, side])
        np.testing.assert_allclose(c.plane_point, x0 - PRESS_APPROACH * c.normal, atol=1e-12)
        c.wrench(q, np.zeros(model.nv))
        assert c.depth == pytest.approx(-PRESS_APPROACH) and c.normal_force == 0.0


def test_press_starts_where_the_tool_can_slide():
    """planar_2r's demo starts outstretched: its tool can only move up and down there (the
    press scenario refused the robot). The scenario now starts from the first pose of the demo
    trajectory from which the tool slides along the surface without a near-singular swing;
    arm7 keeps its start; five_bar, whose tool reaches no tangent from any pose, is refused
    with the start pose's reason."""
    import robot_dynamics as rd
    from robot_dynamics.control.press import point_jacobian
    from robot_dynamics.errors import InputError
    from robot_dynamics.parsers.resources import robot_path
    from robot_dynamics.ros.demo.scenario import demo_trajectory
    from robot_dynamics.ros.demo.scenarios import (PRESS_RATE, PRESS_SLIDE, press_link,
                                                   press_slide, press_start, press_table)

    for robot, first in (("arm7", 0), ("planar_2r", 1)):
        model = rd.load_urdf(robot_path(robot))
        poses = demo_trajectory(model, robot).positions
        link = press_link(model)
        if first:  # the start pose itself is refused, with its reason
            with pytest.raises(InputError, match="cannot move along the surface"):
                q0 = poses[0]
                press_slide(model, press_table(model, link, q0), q0)
        q, table, slide = press_start(model, link, poses)
        np.testing.assert_array_equal(q, poses[first])
        assert abs(slide @ table.normal) < 1e-12 and np.linalg.norm(slide) == pytest.approx(
            PRESS_SLIDE)
        J = point_jacobian(model, model.create_data(), q, table)
        np.testing.assert_allclose(J @ np.linalg.lstsq(J, slide, rcond=None)[0], slide,
                                   atol=1e-9)  # reachable at first order
        assert np.linalg.norm(np.linalg.pinv(J) @ slide) <= PRESS_RATE * PRESS_SLIDE
    model = rd.load_urdf(robot_path("five_bar"))
    with pytest.raises(InputError, match="nor from the demo trajectory"):
        press_start(model, press_link(model), demo_trajectory(model, "five_bar").positions)
