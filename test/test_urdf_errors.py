"""Bad robot descriptions and bad state vectors give clear errors naming what is wrong."""
import numpy as np
import pytest

import robot_dynamics as rd

INERTIAL = ('<inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="{m}"/>'
            '<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')


def urdf(links=None, joints=None, name="r"):
    links = links if links is not None else {
        "base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    joints = joints if joints is not None else [
        ("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2")]
    body = "".join(f'<link name="{n}">{inner}</link>' for n, inner in links.items())
    for jname, jtype, parent, child in joints:
        body += (f'<joint name="{jname}" type="{jtype}"><parent link="{parent}"/>'
                 f'<child link="{child}"/><origin xyz="0 0 0.2" rpy="0 0 0"/><axis xyz="0 1 0"/>'
                 '<limit effort="10" velocity="2" lower="-3" upper="3"/></joint>')
    return f'<?xml version="1.0"?><robot name="{name}">{body}</robot>'


def test_valid_urdf_loads():
    model = rd.load_urdf(urdf())
    assert model.joint_names == ["j1", "j2"] and model.nv == 2


@pytest.mark.parametrize("text,needle", [
    ('<robot name="r"><link name="a"></robot>', "malformed XML"),
    ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="x" value="1"/>'
     '<link name="a"/></robot>', "unexpanded xacro"),
    (urdf().replace('xyz="0 0 0.2"', 'xyz="0 0 ${l1}"', 1), "unexpanded xacro"),
    (urdf().replace('<mass value="1"/>', '<mass value="nan"/>', 1), "link 'l1'"),
    (urdf().replace('<mass value="1"/>', '<mass value="abc"/>', 1), "not a number"),
])
def test_unreadable_files(text, needle):
    with pytest.raises(rd.ModelError, match=needle):
        rd.load_urdf(text)


def test_missing_file_named():
    with pytest.raises(rd.ModelError, match="no_such.urdf"):
        rd.load_urdf("/tmp/no_such.urdf")


def test_moving_link_without_inertial():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": ""}
    with pytest.raises(rd.ModelError, match=r"link 'l2' \(moved by joint 'j2'\) has no <inertial>"):
        rd.load_urdf(urdf(links=links))
    assert rd.load_urdf(urdf(links=links), allow_massless=True).masses[1] == 0.0


@pytest.mark.parametrize("mass", ["0", "-1"])
def test_non_positive_mass(mass):
    links = {"base": "", "l1": INERTIAL.format(m=mass, ixx=0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="link 'l1'"):
        rd.load_urdf(urdf(links=links))


def test_inertia_not_positive_definite():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=-0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="link 'l1': inertia is not positive definite"):
        rd.load_urdf(urdf(links=links))


def test_inertia_breaks_triangle_inequality():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.05), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="link 'l1'.*triangle inequality"):
        rd.load_urdf(urdf(links=links))


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_unsupported_joint_types(jtype):
    joints = [("j1", jtype, "base", "l1"), ("j2", "revolute", "l1", "l2")]
    with pytest.raises(rd.ModelError, match=f"joint 'j1': a {jtype} joint"):
        rd.load_urdf(urdf(joints=joints))


def test_link_with_two_parents():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2"),
              ("j3", "revolute", "base", "l2")]
    with pytest.raises(rd.ModelError, match="link 'l2' has two parents"):
        rd.load_urdf(urdf(links=links, joints=joints))


def test_unknown_link_in_joint():
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "ghost")]
    with pytest.raises(rd.ModelError, match="joint 'j2': child link 'ghost' is not defined"):
        rd.load_urdf(urdf(joints=joints))


@pytest.mark.parametrize("arg,value,needle", [
    ("q", np.zeros(3), r"q in rnea: expected shape \(2,\)"),
    ("v", [0.0, np.nan], r"v in rnea: non-finite value\(s\) at index \[1\]"),
    ("a", [np.inf, 0.0], r"a in rnea: non-finite"),
    ("q", ["x", 1], "q in rnea: cannot be read"),
])
def test_bad_state_vectors(arg, value, needle):
    model = rd.load_urdf(urdf())
    data = model.create_data()
    args = {"q": np.zeros(2), "v": np.zeros(2), "a": np.zeros(2)}
    args[arg] = value
    with pytest.raises(rd.InputError, match=needle):
        rd.rnea(model, data, **args)


def test_bad_gravity():
    model = rd.load_urdf(urdf())
    with pytest.raises(rd.ModelError, match="gravity"):
        model.gravity = (0.0, np.nan, 1.0)
