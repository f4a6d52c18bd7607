"""xacro robots load like their expanded URDF: the bundled planar_2r.urdf.xacro, arguments,
unresolvable packages named, and the nodes' `robot`/`validate` parameters."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from conftest import bundled

xacro = pytest.importorskip("xacro")

XACRO = bundled("planar_2r.urdf.xacro")
FIELDS = ("kinds", "parents", "axes", "joint_rotations", "joint_translations", "masses", "coms",
          "inertias", "spatial_inertias", "lower_limits", "upper_limits", "effort_limits",
          "velocity_limits", "damping", "urdf_friction")


def same_model(a, b, prefix=""):
    assert a.name == b.name and a.nv == b.nv
    assert [prefix + n for n in a.joint_names] == b.joint_names
    assert [prefix + n for n in a.link_names] == b.link_names
    assert {prefix + n for n in a.frames} == set(b.frames)
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def test_bundled_xacro_is_planar_2r():
    same_model(rd.load_urdf(bundled("planar_2r.urdf")), rd.load_urdf(XACRO))


def test_a_misspelt_xacro_argument_is_refused():
    """xacro itself ignores a value for an argument the file does not declare: the robot would
    load without the prefix the user asked for."""
    with pytest.raises(rd.ModelError, match=r"xacro_args \['prefx'\] are not arguments of this "
                                            r"file \(it declares \['prefix'\]\)"):
        rd.load_urdf(XACRO, xacro_args={"prefx": "left_"})
    with pytest.raises(rd.ModelError, match=r"\['x'\] .* \(it declares no <xacro:arg>\)"):
        rd.load_urdf(bundled("planar_2r.urdf"), xacro_args={"x": "1"})


def test_xacro_argument_matches_the_expanded_urdf(tmp_path):
    model = rd.load_urdf(XACRO, xacro_args={"prefix": "left_"})
    assert model.joint_names == ["left_shoulder", "left_elbow"]
    assert model.base_link == "left_base_link"
    expanded = tmp_path / "left.urdf"  # what `xacro planar_2r.urdf.xacro prefix:=left_` writes
    expanded.write_text(xacro.process_file(XACRO, mappings={"prefix": "left_"}).toprettyxml())
    same_model(rd.load_urdf(str(expanded)), model)
    same_model(rd.load_urdf(bundled("planar_2r.urdf")), model, prefix="left_")
    # the same dynamics, to the last bit
    q = np.array([0.3, -0.7])
    np.testing.assert_array_equal(rd.mass_matrix(model, model.create_data(), q),
                                  rd.mass_matrix(rd.load_urdf(XACRO), rd.load_urdf(XACRO)
                                                 .create_data(), q))


def test_xacro_text_with_arguments():
    with open(XACRO, encoding="utf-8") as fh:
        text = fh.read()
    with pytest.raises(rd.ModelError, match="unexpanded xacro"):
        rd.load_urdf(text)  # xacro text is expanded only when asked for
    assert rd.load_urdf(text, xacro_args={"prefix": "r_"}).joint_names == ["r_shoulder", "r_elbow"]


def test_bundled_xacro_by_name():
    from robot_dynamics.parsers.resources import robot_path, robot_stem

    assert robot_path("planar_2r.urdf.xacro") == os.path.join(os.path.dirname(XACRO),
                                                              "planar_2r.urdf.xacro")
    assert robot_stem(robot_path("planar_2r.urdf.xacro")) == "planar_2r"
    # listed by the name one types: planar_2r (its plain URDF), not the xacro's file name
    with pytest.raises(rd.ModelError, match=r"bundled robots: .*, planar_2r, rrp \(or a URDF"):
        robot_path("no_such_robot")


ROBOT = ('<?xml version="1.0"?><robot name="m" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '{include}<link name="a"/></robot>')


@pytest.mark.parametrize("include", [
    '<xacro:include filename="$(find no_such_description)/urdf/arm.xacro"/>',
    '<xacro:include filename="package://no_such_description/urdf/arm.xacro"/>',
])
def test_unresolvable_package_is_named(tmp_path, include):
    path = tmp_path / "m.urdf.xacro"
    path.write_text(ROBOT.format(include=include))
    with pytest.raises(rd.ModelError, match=r"m.urdf.xacro: xacro cannot resolve package\(s\) "
                       r"\['no_such_description'\].*AMENT_PREFIX_PATH"):
        rd.load_urdf(str(path))


def test_xacro_error_is_a_model_error(tmp_path):
    path = tmp_path / "bad.urdf.xacro"
    path.write_text(ROBOT.format(include='<link name="${undefined_property}"/>'))
    with pytest.raises(rd.ModelError, match=r"bad.urdf.xacro: xacro expansion failed: .*"
                       "undefined_property"):
        rd.load_urdf(str(path))


class FakeNode:
    """The parameter and logger surface load_robot uses (no ROS graph needed)."""

    def __init__(self, **params):
        self.params, self.lines = {"mimic": True, **params}, []  # mimic: a parameter default

    def get_parameter(self, name):
        return type("P", (), {"value": self.params[name]})

    def get_logger(self):
        node = self

        class Log:
            def info(self, msg):
                node.lines.append(("info", msg))

            def warning(self, msg):
                node.lines.append(("warning", msg))
        return Log()


def test_node_loads_xacro_and_logs_fixed_root():
    pytest.importorskip("rclpy")
    from robot_dynamics.ros.common import load_robot

    node = FakeNode(robot_description="", robot="planar_2r.urdf.xacro", validate="strict",
                    friction_config="", actuators="")
    model, friction = load_robot(node)
    assert model.joint_names == ["shoulder", "elbow"]
    assert friction is not None  # planar_2r_friction.yaml found from the xacro's stem
    assert node.lines == [("info", "robot 'planar_2r': 2 joints, modelled fixed at its root link "
                                   "'base_link' (floating bases are not modelled)")]


def test_node_validate_warn_logs_each_problem(tmp_path):
    pytest.importorskip("rclpy")
    from robot_dynamics.ros.common import load_robot

    with open(bundled("planar_2r.urdf"), encoding="utf-8") as fh:
        text = fh.read().replace('ixx="0.000625"', 'ixx="0.1"').replace(
            'ixx="0.000416667"', 'ixx="0.1"')  # two bodies break the triangle inequality
    node = FakeNode(robot_description=text, robot="x", validate="strict", friction_config="none",
                    actuators="")
    with pytest.raises(rd.ModelError, match="link 'upper_arm'.*triangle"):
        load_robot(node)
    node.params["validate"] = "warn"
    model, _ = load_robot(node)
    warnings_logged = [m for level, m in node.lines if level == "warning"]
    assert len(warnings_logged) == 2 and "'upper_arm'" in warnings_logged[0]
    assert "'forearm'" in warnings_logged[1] and model.nv == 2
