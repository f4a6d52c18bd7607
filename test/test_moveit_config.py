"""The MoveIt example config for arm7 (config/arm7.srdf, joint_limits.yaml, kinematics.yaml,
moveit_controllers.yaml) agrees with urdf/arm7.urdf and with id_controller's action."""
from __future__ import annotations

import os

import numpy as np
import pytest
import yaml
from lxml import etree

from conftest import REPO
from robot_dynamics.reference.dynamics import mass_matrix as mass_matrix_reference
from robot_dynamics.reference.dynamics import rnea as rnea_reference
from robot_dynamics.parsers.urdf import load_urdf, parse_urdf

URDF = os.path.join(REPO, "urdf", "arm7.urdf")
CONFIG = os.path.join(REPO, "config")


@pytest.fixture(scope="module")
def desc():
    return parse_urdf(URDF)


@pytest.fixture(scope="module")
def srdf():
    return etree.parse(os.path.join(CONFIG, "arm7.srdf")).getroot()


def _yaml(name):
    with open(os.path.join(CONFIG, name), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _chain_joints(desc, base, tip):
    """The URDF's moving joints from ``base`` down to ``tip``, base first."""
    by_child = {j.child: j for j in desc.joints}
    joints, link = [], tip
    while link != base:
        assert link in by_child, f"{tip} does not descend from {base}"
        joint = by_child[link]
        joints.append(joint)
        link = joint.parent
    return [j for j in reversed(joints) if j.type != "fixed"]


def _group_joints(desc, srdf):
    (group,) = srdf.findall("group[@name='arm']")
    (chain,) = group.findall("chain")
    return _chain_joints(desc, chain.get("base_link"), chain.get("tip_link"))


def test_srdf_group_is_the_seven_arm_joints(desc, srdf):
    assert srdf.get("name") == "arm7" == desc.name
    assert [j.name for j in _group_joints(desc, srdf)] == [f"joint_a{i}" for i in range(1, 8)]


def test_srdf_group_states_are_complete_and_within_limits(desc, srdf):
    joints = {j.name: j for j in _group_joints(desc, srdf)}
    states = {s.get("name"): s for s in srdf.findall("group_state")}
    assert "home" in states
    for name, state in states.items():
        assert state.get("group") == "arm"
        values = {j.get("name"): float(j.get("value")) for j in state.findall("joint")}
        assert sorted(values) == sorted(joints), name
        for joint, value in values.items():
            assert joints[joint].lower <= value <= joints[joint].upper, (name, joint)
    # home is where the simulator starts (initial_positions default to zero)
    assert all(float(j.get("value")) == 0.0 for j in states["home"].findall("joint"))


def test_srdf_disables_exactly_the_adjacent_link_pairs(desc, srdf):
    links = {link.name for link in desc.links}
    adjacent = {frozenset((j.parent, j.child)) for j in desc.joints}
    disabled = {}
    for entry in srdf.findall("disable_collisions"):
        pair = frozenset((entry.get("link1"), entry.get("link2")))
        assert pair <= links, pair
        disabled[pair] = entry.get("reason")
    assert set(disabled) == adjacent
    assert set(disabled.values()) == {"Adjacent"}
    (virtual,) = srdf.findall("virtual_joint")
    assert virtual.get("child_link") == desc.joints[0].parent  # the root link


def test_joint_limits_match_the_urdf(desc, srdf):
    limits = _yaml("joint_limits.yaml")["joint_limits"]
    joints = _group_joints(desc, srdf)
    assert sorted(limits) == sorted(j.name for j in joints)
    for joint in joints:
        entry = limits[joint.name]
        assert entry["has_velocity_limits"] is True
        assert entry["max_velocity"] == pytest.approx(joint.velocity, rel=1e-6), joint.name
        assert entry["has_acceleration_limits"] is True
        assert 0.0 < entry["max_acceleration"] <= 10.0 * joint.velocity, joint.name
        assert not entry.get("has_position_limits", False) or (
            joint.lower <= entry["min_position"] < entry["max_position"] <= joint.upper)


def test_acceleration_limits_are_reachable_with_the_urdf_efforts():
    """From rest, accelerating any one joint at its limit needs at most the URDF effort limit on
    every joint (random poses within the limits; the file's derivation keeps a factor 2 spare)."""
    model = load_urdf(URDF)
    data = model.create_data()
    limits = _yaml("joint_limits.yaml")["joint_limits"]
    a_max = np.array([limits[name]["max_acceleration"] for name in model.joint_names])
    rng = np.random.default_rng(7)
    zero = np.zeros(model.nv)
    for _ in range(300):
        q = rng.uniform(model.lower_limits, model.upper_limits)
        M = mass_matrix_reference(model, data, q)
        g = rnea_reference(model, data, q, zero, zero)
        worst = np.abs(M) * a_max[None, :] + np.abs(g)[:, None]  # column i: joint i at a_max
        assert (worst <= model.effort_limits[:, None]).all()


def test_moveit_controllers_drive_the_group_through_id_controllers_action(desc, srdf):
    cfg = _yaml("moveit_controllers.yaml")
    manager = cfg["moveit_simple_controller_manager"]
    (name,) = manager["controller_names"]
    controller = manager[name]
    assert controller["type"] == "FollowJointTrajectory"
    # MoveIt's simple controller manager calls <controller name>/<action_ns>
    assert f"/{name}/{controller['action_ns']}" == "/id_controller/follow_joint_trajectory"
    assert controller["joints"] == [j.name for j in _group_joints(desc, srdf)]
    assert controller["joints"] == _yaml("arm7_controller.yaml")["id_controller"][
        "ros__parameters"]["joint_names"]


def test_kinematics_config_names_the_group(srdf):
    groups = {g.get("name") for g in srdf.findall("group")}
    kinematics = _yaml("kinematics.yaml")
    assert set(kinematics) <= groups
    assert kinematics["arm"]["kinematics_solver"] == "kdl_kinematics_plugin/KDLKinematicsPlugin"
