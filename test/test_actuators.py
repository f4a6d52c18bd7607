"""Actuator model (issue 16): gear ratio, rotor inertia → armature, efficiencies, motor limits
and friction from YAML and URDF transmissions; config errors; the nodes' parameter."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction.actuators import actuators_from_config
from robot_dynamics.errors import ModelError
from robot_dynamics.friction import CompositeFriction, GearMeshFriction
from conftest import REPO, bundled

ARM7 = os.path.join(REPO, "urdf", "arm7.urdf")
P2R = os.path.join(REPO, "urdf", "planar_2r.urdf")
ARM7_ACT = os.path.join(REPO, "config", "arm7_actuators.yaml")


def pendulum(transmission=True):
    tr = ("""<transmission name="t"><type>transmission_interface/SimpleTransmission</type>
    <joint name="hinge"><hardwareInterface>hardware_interface/EffortJointInterface
    </hardwareInterface></joint><actuator name="m"><mechanicalReduction>120</mechanicalReduction>
    </actuator></transmission>""" if transmission else "")
    return rd.load_urdf(f"""<robot name="pendulum"><link name="base"/>
    <link name="rod"><inertial><origin xyz="0.4 0 0"/><mass value="2.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
    <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
    <axis xyz="0 1 0"/><limit effort="150" velocity="10"/></joint>{tr}</robot>""")


def test_reflected_quantities():
    model = rd.load_urdf(P2R)  # URDF effort limits 60, 30
    act = actuators_from_config({"joints": {
        "shoulder": {"gear_ratio": 100, "rotor_inertia": 2e-5, "efficiency_forward": 0.8,
                     "efficiency_backward": 0.6, "motor_torque_limit": 0.5,
                     "motor_coulomb": 0.01, "motor_viscous": 1e-5},
        "elbow": {"armature": 0.05, "mesh": 0.1, "gear_ratio": 50, "motor_torque_limit": 1.0}}},
        model)
    np.testing.assert_allclose(act.armature, [100**2 * 2e-5, 0.05])
    np.testing.assert_allclose(act.effort_limits, [50.0, 30.0])  # min(URDF, N·τ_max)
    sh = act["shoulder"]
    assert sh.coulomb == pytest.approx(1.0) and sh.viscous == pytest.approx(0.1)
    assert sh.gear.efficiency_forward == pytest.approx(0.8)
    assert sh.gear.efficiency_backward == pytest.approx(0.6)
    assert act["elbow"].gear.c_forward == act["elbow"].gear.c_backward == 0.1
    fr = act.friction(rd.friction_from_config({"default": {"model": "bearing", "mu": 0.01,
                                                           "pin_radius": 0.02}}, model))
    assert fr._packed is not None  # composite laws run compiled
    assert isinstance(fr.laws[0], CompositeFriction)
    assert fr.laws[0].part_names == ["bearing", "gear_mesh", "motor"]
    assert fr.laws[1].part_names == ["bearing", "gear_mesh"]
    alone = act.friction()  # no base friction: the actuator parts only
    assert alone.laws[0].part_names == ["gear_mesh", "motor"]
    assert isinstance(alone.laws[1], GearMeshFriction)
    rebuilt = actuators_from_config(act.to_config(), model)
    np.testing.assert_allclose(rebuilt.armature, act.armature)
    np.testing.assert_allclose(rebuilt.effort_limits, act.effort_limits)
    # applied to the model: Pinocchio-style armature and the effort limits the simulator uses
    act.apply(model)
    np.testing.assert_allclose(model.armature, act.armature)
    np.testing.assert_allclose(model.effort_limits, [50.0, 30.0])
    sim = rd.Simulator(model, fr)
    sim.step([200.0, 0.0])
    assert sim.tau_applied[0] == 50.0


def test_gear_ratio_from_urdf_transmission():
    model = pendulum()
    assert model.mechanical_reduction[0] == 120
    act = actuators_from_config({"joints": {"hinge": {"rotor_inertia": 1e-4,
                                                      "motor_torque_limit": 1.0}}}, model)
    assert act.armature[0] == pytest.approx(120**2 * 1e-4)
    assert act.effort_limits[0] == pytest.approx(120.0)  # below the URDF's 150
    # the config's gear_ratio wins over the URDF's
    act = actuators_from_config({"joints": {"hinge": {"gear_ratio": 10, "rotor_inertia": 1e-4}}},
                                model)
    assert act.armature[0] == pytest.approx(1e-2)


def test_none_when_absent():
    model = rd.load_urdf(P2R)
    for cfg in ({}, {"joints": {"elbow": "none"}}, {"default": "none"}):
        act = actuators_from_config(cfg, model)
        assert not act.armature.any()
        np.testing.assert_array_equal(act.effort_limits, model.effort_limits)
        assert act.friction().laws[0].name == "none"
    from robot_dynamics.friction.actuators import load_actuators

    fr = rd.friction_from_config({"default": {"model": "classic", "coulomb": 0.1}}, model)
    assert load_actuators("", model, fr) == (None, fr)


def test_bundled_arm7_actuators():
    model = rd.load_urdf(ARM7)
    urdf_limits = model.effort_limits.copy()
    act = actuators_from_config(ARM7_ACT, model)
    # reflected rotor inertia of the order of a lightweight arm's: kg·m² on the base axes,
    # decreasing toward the wrist; the motor limits reproduce the iiwa 14 joint limits
    assert (act.armature > 0.1).all() and (act.armature < 10).all()
    assert (np.diff(act.armature) <= 0).all()
    np.testing.assert_allclose(act.effort_limits, urdf_limits, rtol=1e-3)
    fr = act.friction(rd.friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"),
                                              model))
    assert fr._packed is not None and fr.has_parts
    for law in fr.laws:
        assert law.part_names == ["bearing", "gear_mesh", "motor"]
    # the batch kernel (parallel over samples) runs the composite laws as the per-call path
    from robot_dynamics.algorithm.batch import inverse_dynamics_batch

    act.apply(model)
    rng = np.random.default_rng(0)
    Q, V, A = rng.uniform(-1, 1, (20, 7)), rng.uniform(-1, 1, (20, 7)), rng.uniform(-3, 3, (20, 7))
    data = model.create_data()
    want = [rd.inverse_dynamics(model, data, q, v, a, friction=fr) for q, v, a in zip(Q, V, A)]
    np.testing.assert_allclose(inverse_dynamics_batch(model, Q, V, A, friction=fr), want,
                               rtol=1e-12, atol=1e-12)


def write(tmp_path, text):
    path = tmp_path / "act.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("text, words", [
    ("joints: {shoulder: {gear_ratio: 100, rotor_inertia: -1}}",
     ["joint 'shoulder'", "'rotor_inertia'", ">= 0"]),
    ("joints: {elbow: {efficiency_forward: 1.5}}", ["joint 'elbow'", "'efficiency_forward'"]),
    ("joints: {elbow: {efficiency_forward: 0.9, efficiency_backward: 1.2}}",
     ["joint 'elbow'", "'efficiency_backward'", "<= 1"]),
    ("joints: {elbow: {efficiency_backward: 0.5}}", ["joint 'elbow'", "'efficiency_forward'"]),
    ("joints: {elbow: {mesh: 0.1, efficiency_forward: 0.9}}", ["joint 'elbow'", "not both"]),
    ("joints: {elbow: {rotor_inertia: 1e-4}}",
     ["joint 'elbow'", "'rotor_inertia'", "'gear_ratio'", "mechanicalReduction"]),
    ("joints: {elbow: {gear_ratio: 0}}", ["joint 'elbow'", "'gear_ratio'", "non-zero"]),
    ("joints: {elbow: {gear_ratio: fast}}", ["joint 'elbow'", "'gear_ratio'", "number"]),
    ("joints: {elbow: {gear_ratio: .nan}}", ["joint 'elbow'", "'gear_ratio'", "finite"]),
    ("joints: {elbow: {gear_ratio: 50, rotor_inertia: 1e-4, armature: 0.1}}",
     ["joint 'elbow'", "'rotor_inertia'", "'armature'"]),
    ("joints: {elbow: {gear_ratio: 50, motor_torque_limit: 0}}",
     ["joint 'elbow'", "'motor_torque_limit'", "> 0"]),
    ("joints: {elbow: {ratio: 50}}", ["joint 'elbow'", "unknown field", "'ratio'"]),
    ("default: {gear_ratio: 50, motor_coulomb: -0.1}", ["default (joint 'shoulder')",
                                                        "'motor_coulomb'"]),
    ("joints: {wrist: {gear_ratio: 50}}", ["'wrist'", "not movable joints", "planar_2r"]),
    ("joints: {elbow: [1, 2]}", ["joint 'elbow'", "mapping"]),
    ("actuators: {}", ["unknown top-level key", "'actuators'"]),
    ("joints: [elbow]", ["'joints' must map"]),
    ("joints: {elbow: {gear_ratio: [50}", ["malformed YAML"]),
])
def test_config_errors_are_one_line_naming_file_joint_field(tmp_path, text, words):
    model = rd.load_urdf(P2R)
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as exc:
        actuators_from_config(path, model)
    msg = str(exc.value)
    assert "\n" not in msg.strip(), msg
    assert msg.startswith(path), msg
    for w in words:
        assert w in msg, msg


def test_missing_file_and_mimic_model():
    model = rd.load_urdf(P2R)
    with pytest.raises(ModelError, match="no such actuators file"):
        actuators_from_config("/nonexistent/act.yaml", model)
    mimic = rd.load_urdf(os.path.join(REPO, "urdf", "arm7_gripper_mimic.urdf"), mimic=True)
    with pytest.raises(ModelError, match="mimic"):
        actuators_from_config({}, mimic)


def test_node_parameter_rows():
    from robot_dynamics.ros import params

    for table in (params.SIMULATOR, params.ID_CONTROLLER, params.DYNAMICS_MODEL):
        row = params.row(table, "actuators")
        assert row.type == "string" and row.default == "" and row.read_only


def test_node_startup_applies_actuators():
    pytest.importorskip("rclpy")
    from robot_dynamics.ros.common import load_actuators

    model = rd.load_urdf(ARM7)
    act, fr = load_actuators("arm7_actuators", model, None)  # a bundled name, as the nodes
    np.testing.assert_allclose(model.armature, act.armature)
    assert fr.laws[0].part_names == ["gear_mesh", "motor"]
    assert load_actuators("none", rd.load_urdf(ARM7), None) == (None, None)
    with pytest.raises(ModelError, match="arm7_nothing"):
        load_actuators("arm7_nothing", model, None)


def test_identified_coefficients_are_an_actuator_config():
    """identification's FitResult.actuators ({joint: {armature, mesh_forward, mesh_backward}})
    is an actuator config as it is."""
    model = rd.load_urdf(P2R)
    fitted = {"shoulder": {"armature": 0.12, "mesh_forward": 0.25, "mesh_backward": 0.4},
              "elbow": {"armature": 0.05}}
    act = actuators_from_config({"joints": fitted}, model)
    np.testing.assert_allclose(act.armature, [0.12, 0.05])
    g = act["shoulder"].gear
    assert (g.c_forward, g.c_backward) == (0.25, 0.4)
    assert g.efficiency_forward == pytest.approx(0.8) and g.efficiency_backward == 0.6
    assert act["elbow"].gear is None
    again = actuators_from_config(act.to_config(), model)["shoulder"].gear
    assert (again.c_forward, again.c_backward) == (0.25, 0.4)
    with pytest.raises(ModelError, match="joint 'elbow'.*'mesh_forward'.*'mesh'"):
        actuators_from_config({"joints": {"elbow": {"mesh_forward": 0.1, "mesh": 0.1}}}, model)
    law = rd.friction_from_config({"default": {"model": "gear_mesh", "mesh_forward": 0.1,
                                               "mesh_backward": 0.3}}, model).laws[0]
    assert (law.c_forward, law.c_backward) == (0.1, 0.3)


@pytest.mark.parametrize("kind", ["friction", "actuators"])
def test_an_empty_config_file_is_refused(tmp_path, kind):
    """An empty (or comment-only) file is a mistake, not "nothing configured": one line naming
    the file and how to write "none"; the explicit "none" form is accepted."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    load = rd.friction_from_config if kind == "friction" else rd.actuators_from_config
    path = tmp_path / f"{kind}.yaml"
    path.write_text("# nothing yet\n")
    with pytest.raises(rd.ModelError, match=rf"{kind}\.yaml: the {kind} file is empty "
                                            r"\(to configure none, write 'default: "):
        load(str(path), model)
    path.write_text("default: {model: none}\n" if kind == "friction" else "default: none\n")
    load(str(path), model)
