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


def test_missing_file_named(tmp_path):
    with pytest.raises(rd.ModelError, match="no_such.urdf"):
        rd.load_urdf("/tmp/no_such.urdf")
    # a bundled robot's name is not a file: the error says how to load it
    with pytest.raises(rd.ModelError, match=r"arm7: no such URDF file; the bundled robot 'arm7' "
                                            r"is load_urdf\(robot_path\('arm7'\)\)"):
        rd.load_urdf("arm7")
    with pytest.raises(rd.ModelError, match="load_urdf: empty path"):
        rd.load_urdf("")
    with pytest.raises(rd.ModelError, match="is a directory, not a URDF file"):
        rd.load_urdf(str(tmp_path))


def test_massless_end_link_loads_and_only_what_inverts_m_refuses():
    """A massless link at the end of the chain: M is singular. The model loads by default (as
    Pinocchio loads it) with one warning naming the joint that moves nothing; rnea, inverse
    dynamics and M work; forward dynamics and the Simulator refuse with that same message."""
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": ""}
    message = (r"mass matrix is singular.*joint\(s\) \['j2'\] move no inertia \(link\(s\) "
               r"\['l2'\].*forward dynamics and simulation cannot run")
    with pytest.warns(UserWarning, match=message) as record:
        model = rd.load_urdf(urdf(links=links))
    assert len(record) == 1 and model.masses[1] == 0.0
    assert model.mass_matrix_problem == str(record[0].message)
    assert "\n" not in model.mass_matrix_problem
    data = model.create_data()
    q, v, a = np.array([0.3, -0.2]), np.array([0.1, 0.4]), np.array([1.0, -2.0])
    tau = rd.rnea(model, data, q, v, a)
    assert np.all(np.isfinite(tau)) and tau[1] == 0.0  # j2 moves nothing
    np.testing.assert_allclose(rd.inverse_dynamics(model, data, q, v, a), tau)
    for call in (lambda: rd.forward_dynamics(model, data, q, v, tau),
                 lambda: rd.Simulator(model)):
        with pytest.raises(rd.ModelError) as exc:
            call()
        assert str(exc.value) == model.mass_matrix_problem
    with pytest.warns(UserWarning, match=r"\['j2'\] move no inertia") as record:
        assert rd.load_urdf(urdf(links=links), validate="warn").mass_matrix_problem
    assert len(record) == 1
    with pytest.warns(DeprecationWarning, match="allow_massless"), pytest.warns(UserWarning):
        assert rd.load_urdf(urdf(links=links), allow_massless=True).nv == 2


def test_armature_or_a_payload_makes_a_singular_mass_matrix_invertible():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": ""}
    with pytest.warns(UserWarning, match="mass matrix is singular"):
        model = rd.load_urdf(urdf(links=links))
    data, q, v = model.create_data(), np.array([0.3, -0.2]), np.zeros(2)
    model.armature = [0.0, 0.01]  # a rotor on j2: M + diag(armature) is positive definite
    assert model.mass_matrix_problem is None
    assert np.all(np.isfinite(rd.forward_dynamics(model, data, q, v, np.ones(2))))
    model.armature = 0.0
    with pytest.raises(rd.ModelError, match=r"\['j2'\] move no inertia"):
        rd.forward_dynamics(model, data, q, v, np.ones(2))
    model.set_payload("l2", 0.5, com=(0.0, 0.0, 0.1))
    assert model.mass_matrix_problem is None and rd.Simulator(model).model is model
    model.set_payload("l2", None)
    with pytest.raises(rd.ModelError, match=r"\['j2'\] move no inertia"):
        rd.Simulator(model)


def test_inverted_limits_mean_no_limits():
    """lower > upper (pybullet's lower="1" upper="-1") is read as 'no limits', with a warning
    naming the joints, by default and with validate="warn"."""
    text = urdf().replace('lower="-3" upper="3"', 'lower="1" upper="-1"', 1)
    for validate in ("strict", "warn"):
        with pytest.warns(UserWarning, match=r"joint\(s\) 'j1' \(1 > -1\) have lower limit > "
                          r"upper limit, read as 'no limits'") as record:
            model = rd.load_urdf(text, validate=validate)
        assert len(record) == 1
        assert model.lower_limits[0] == -np.inf and model.upper_limits[0] == np.inf
        assert (model.lower_limits[1], model.upper_limits[1]) == (-3, 3)  # j2 untouched
    both = urdf().replace('lower="-3" upper="3"', 'lower="1" upper="-1"')
    with pytest.warns(UserWarning, match=r"'j1' \(1 > -1\), 'j2' \(1 > -1\)"):
        assert np.all(np.isinf(rd.load_urdf(both).upper_limits))


def test_massless_virtual_link_is_fine_when_mass_is_downstream():
    """Two revolute joints through a massless 'virtual' link (a 2-dof joint): M stays PD."""
    links = {"base": "", "l1": "", "l2": INERTIAL.format(m=1, ixx=0.01)}
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2")]
    text = urdf(links=links, joints=joints).replace('<axis xyz="0 1 0"/>', '<axis xyz="1 0 0"/>', 1)
    model = rd.load_urdf(text)
    assert model.masses[0] == 0.0 and model.nv == 2


@pytest.mark.parametrize("mass,needle", [("0", "rotational inertia .* without mass"),
                                         ("-1", "mass -1 is negative")])
def test_non_positive_mass(mass, needle):
    links = {"base": "", "l1": INERTIAL.format(m=mass, ixx=0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match=f"link 'l1' \\(moved by joint 'j1'\\): {needle}"):
        rd.load_urdf(urdf(links=links))


def test_inertia_not_positive_definite():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=-0.01), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="link 'l1'.*: inertia is not positive semi-definite "
                       r"\(principal moments \[-0.01, 0.01, 0.01\]\); fix its <inertial>"):
        rd.load_urdf(urdf(links=links))


def test_inertia_breaks_triangle_inequality():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.05), "l2": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="link 'l1'.*triangle inequality") as err:
        rd.load_urdf(urdf(links=links))
    assert "np.float64" not in str(err.value) and "[0.01, 0.01, 0.05]" in str(err.value)


def test_warn_loads_and_warns_once_per_problem():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.05),
             "l2": INERTIAL.format(m=1, ixx=-0.01)}
    with pytest.raises(rd.ModelError, match=r"link 'l1'.*\(and 1 more moving bodies\)"):
        rd.load_urdf(urdf(links=links))
    with pytest.warns(UserWarning) as record:
        model = rd.load_urdf(urdf(links=links), validate="warn")
    messages = [str(w.message) for w in record if w.category is UserWarning]
    assert len(messages) == 2 and "link 'l1'" in messages[0] and "link 'l2'" in messages[1]
    assert model.inertias[0][0, 0] == pytest.approx(0.05)


def test_bad_validate_value():
    with pytest.raises(rd.ModelError,
                       match=r"validate: expected one of \['strict', 'warn'\], got 'no'"):
        rd.load_urdf(urdf(), validate="no")


def test_fixed_base_inertia_is_not_checked():
    """The root link (and what is fixed to it) never moves: its inertia is not in the dynamics."""
    links = {"base": INERTIAL.format(m=1, ixx=-5), "l1": INERTIAL.format(m=1, ixx=0.01),
             "l2": INERTIAL.format(m=1, ixx=0.01), "cam": INERTIAL.format(m=0, ixx=1)}
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2"),
              ("cam_joint", "fixed", "base", "cam")]
    assert rd.load_urdf(urdf(links=links, joints=joints)).nv == 2


def test_inertia_checked_on_the_merged_body():
    """A point-mass link (zero inertia, rounding 1e-20 as in icub) fixed to a link with inertia:
    the merged rigid body is fine; alone at the chain's end it is a point mass and still fine."""
    point = ('<inertial><origin xyz="0.008 0 0.05"/><mass value="0.27"/><inertia ixx="0" ixy="0" '
             'ixz="1.35525e-20" iyy="0" iyz="0" izz="0"/></inertial>')
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": point,
             "foot": INERTIAL.format(m=0.5, ixx=0.01)}
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2"),
              ("foot_joint", "fixed", "l2", "foot")]
    model = rd.load_urdf(urdf(links=links, joints=joints))
    assert model.masses[1] == pytest.approx(0.77)
    links.pop("foot")
    assert rd.load_urdf(urdf(links=links, joints=joints[:2])).masses[1] == pytest.approx(0.27)


def test_no_movable_joint():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01)}
    with pytest.raises(rd.ModelError, match="robot 'r' has no movable joint"):
        rd.load_urdf(urdf(links=links, joints=[("j1", "fixed", "base", "l1")]))


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


# -- structure ------------------------------------------------------------------------------------

def test_cycle_and_loose_links_are_named():
    links = {"base": "", **{f"l{i}": INERTIAL.format(m=1, ixx=0.01) for i in range(1, 6)}}
    joints = [("j1", "revolute", "base", "l1"),
              ("a", "revolute", "l4", "l2"), ("b", "revolute", "l2", "l3"),
              ("c", "revolute", "l3", "l4"), ("d", "revolute", "l3", "l5")]
    with pytest.raises(rd.ModelError) as err:
        rd.load_urdf(urdf(links=links, joints=joints))
    msg = str(err.value)
    assert "joints ['a', 'b', 'c'] form a closed kinematic loop" in msg
    assert "link(s) ['l5'] are not connected to root link 'base'" in msg


def test_second_root_is_named():
    links = {"base": "", "l1": INERTIAL.format(m=1, ixx=0.01), "l2": INERTIAL.format(m=1, ixx=0.01),
             "world": ""}
    with pytest.raises(rd.ModelError, match=r"link\(s\) \['world'\] are not connected to root link "
                       "'base'"):
        rd.load_urdf(urdf(links=links))


def test_panda_with_a_cycle_is_refused_not_truncated():
    from conftest import PANDA, erd_urdf

    with open(erd_urdf(PANDA), encoding="utf-8") as fh:
        text = fh.read()
    # make the first joint hang from link 7: links 1..7 become a loop, the hand loose
    text = text.replace('<parent link="panda_link0"/>', '<parent link="panda_link7"/>', 1)
    with pytest.raises(rd.ModelError, match=r"joints \['panda_joint1', .*\] form a closed "
                       r"kinematic "
                       r"loop; link\(s\) \['panda_link8', .*\] are not connected to root link "
                       "'panda_link0'"):
        rd.load_urdf(text)


def test_self_loop_joint():
    joints = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l2", "l2")]
    with pytest.raises(rd.ModelError, match=r"joints \['j2'\] form a closed kinematic loop"):
        rd.load_urdf(urdf(joints=joints))


# -- malformed input ------------------------------------------------------------------------------

@pytest.mark.parametrize("old,new,needle", [
    ('<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>',
     r"joint 'j1': <axis xyz=\"0 1\"> has 2 number\(s\), expected 3"),
    ('<axis xyz="0 1 0"/>', '<axis xyz="0 1 0 1"/>', r"joint 'j1': <axis xyz=.*expected 3"),
    ('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>',
     r"joint 'j1': axis \[0, 0, 0\] is not a direction"),
    ('xyz="0 0 0.2"', 'xyz="0 0"', r"joint 'j1': <origin xyz=\"0 0\"> has 2 number"),
    ('rpy="0 0 0"/><axis', 'rpy="0 inf 0"/><axis',
     r"joint 'j1': <origin rpy=\"0 inf 0\"> is not finite"),
    ('lower="-3"', 'lower="low"', r"joint 'j1': <limit lower=\"low\"> is not a number"),
    ('effort="10"', 'effort="-10"', r"joint 'j1': effort must be >= 0, got -10"),
    ('<parent link="base"/>', '', r"joint 'j1': no <parent link="),
    ('type="revolute"', '', r"joint 'j1': no type attribute"),
    ('izz="0.01"', 'izz="1e400"', r"link 'l1': <inertia izz=\"1e400\"> is not finite"),
])
def test_malformed_fields_are_named(old, new, needle):
    with pytest.raises(rd.ModelError, match=needle):
        rd.load_urdf(urdf().replace(old, new, 1))


def test_empty_robot_is_a_xacro_stub():
    stub = ('<?xml version="1.0"?><robot xmlns:xacro="http://wiki.ros.org/xacro">'
            '<!-- generated by xacro --></robot>')
    with pytest.raises(rd.ModelError,
                       match="has no <link>: this looks like an unexpanded xacro stub"):
        rd.load_urdf(stub)


def test_root_element_must_be_robot():
    with pytest.raises(rd.ModelError, match=r"root element is <sdf>, expected <robot>"):
        rd.load_urdf('<sdf version="1.6"><model name="m"/></sdf>')


def test_encoding_from_the_prolog(tmp_path):
    text = urdf(name="bras_\u00e9").replace('<?xml version="1.0"?>',
                                             '<?xml version="1.0" encoding="ISO-8859-1"?>')
    path = tmp_path / "latin1.urdf"
    path.write_bytes(text.encode("latin-1"))
    assert rd.load_urdf(str(path)).name == "bras_\u00e9"
    assert rd.load_urdf(text).name == "bras_\u00e9"  # a str with a declared encoding
    bad = tmp_path / "bad.urdf"
    bad.write_bytes(urdf(name="bras_\u00e9").encode("latin-1"))  # no prolog encoding: UTF-8
    with pytest.raises(rd.ModelError, match="bad.urdf: malformed XML"):
        rd.load_urdf(str(bad))


# -- extension tags -------------------------------------------------------------------------------

EXTENSIONS = '''
<gazebo reference="l1"><mu1 value="0.5"/><material value="PR2/Grey"/><kp>abc</kp></gazebo>
<gazebo><plugin name="p" filename="x.so"><robotNamespace>${ns}</robotNamespace></plugin></gazebo>
<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
  <joint name="j1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
  <actuator name="m1"><mechanicalReduction>50</mechanicalReduction></actuator></transmission>
<transmission name="diff"><joint name="j1"/><joint name="j2"/>
  <actuator name="m9"><mechanicalReduction>7</mechanicalReduction></actuator></transmission>
<ros2_control name="hw" type="system"><hardware><plugin>mock</plugin></hardware>
  <joint name="j2"><command_interface name="effort"><param name="min">-x</param></command_interface>
  </joint>
  <transmission name="t2"><plugin>transmission_interface/SimpleTransmission</plugin>
    <joint name="j2" role="joint1"><mechanical_reduction>-120.5</mechanical_reduction></joint>
  </transmission></ros2_control>
<sensor name="cam" value="not-a-number"/>
'''


def test_extension_tags_ignored_and_reductions_kept():
    text = urdf().replace("</robot>", EXTENSIONS + "</robot>")
    model = rd.load_urdf(text)
    plain = rd.load_urdf(urdf())
    np.testing.assert_array_equal(model.spatial_inertias, plain.spatial_inertias)
    # one transmission per joint gives its reduction; the two-joint one is not a per-joint value
    np.testing.assert_array_equal(model.mechanical_reduction, [50.0, -120.5])
    assert np.all(np.isnan(plain.mechanical_reduction))


def test_xacro_substitution_left_in_a_joint():
    with pytest.raises(rd.ModelError, match=r"<string>:1: unexpanded xacro \(xyz='\$\{l1\}'\)"):
        rd.load_urdf(urdf().replace('<axis xyz="0 1 0"/>', '<axis xyz="${l1}"/>', 1))


def test_mutated_urdfs_raise_only_model_errors():
    """Random edits of a URDF with every element the reader knows: each either loads or raises
    ModelError — never another exception type."""
    import random
    import re
    import warnings

    text = urdf().replace("</robot>", EXTENSIONS + "</robot>").replace(
        '<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><dynamics damping="0.1" friction="0.2"/>'
        '<mimic joint="j1" multiplier="2" offset="0.1"/>', 1)
    tokens = ['"', "<", ">", "/", " ", "nan", "1e999", "-1", "0", "abc", "", "${x}", "&", "\u00e9",
              "1 2", "1 2 3 4", '<link name="z"/>', "</joint>",
              '<joint name="q" type="revolute"><parent link="z"/><child link="base"/></joint>']
    rng = random.Random(11)
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(300):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t))
            j = min(len(t), i + rng.randint(0, 40))
            if rng.random() < 0.5:
                t = t[:i] + rng.choice(tokens) + t[j:]
            else:
                m = rng.choice(list(re.finditer(r"-?\d+(\.\d+)?", t)))
                t = t[:m.start()] + rng.choice(tokens) + t[m.end():]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rd.load_urdf(t, validate=rng.choice(["strict", "warn"]))
            outcomes["loaded"] += 1
        except rd.ModelError as exc:
            assert "np.float64" not in str(exc)
            outcomes["refused"] += 1
    assert outcomes["loaded"] > 0 and outcomes["refused"] > 0


def test_mimic_model_with_a_singular_mass_matrix_loads_and_refuses_forward_dynamics():
    """mimic=True: the check runs on the independent coordinates (j2 follows j1; j3 moves a
    massless link); a payload on that link lifts the refusal (re-checked through model.full)."""
    joint = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
             '<origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>'
             '<limit effort="1" velocity="1" lower="-1" upper="1"/>{3}</joint>')
    inertial = INERTIAL.format(m=1, ixx=0.01)
    text = ('<robot name="m"><link name="b"/>'
            f'<link name="l1">{inertial}</link><link name="l2">{inertial}</link><link name="l3"/>'
            + joint.format("j1", "b", "l1", "") + joint.format("j2", "l1", "l2", '<mimic joint="j1"/>')
            + joint.format("j3", "l2", "l3", "") + "</robot>")
    with pytest.warns(UserWarning, match=r"joint\(s\) \['j3'\] move no inertia") as record:
        model = rd.load_urdf(text, mimic=True)
    assert model.coupling is not None and model.joint_names == ["j1", "j3"]
    assert [str(w.message) for w in record] == [model.mass_matrix_problem]
    data, zero = model.create_data(), np.zeros(2)
    assert np.all(np.isfinite(rd.rnea(model, data, zero, zero, np.ones(2))))
    with pytest.raises(rd.ModelError) as exc:
        rd.forward_dynamics(model, data, zero, zero, zero)
    assert str(exc.value) == model.mass_matrix_problem
    model.set_payload("l3", 0.2, com=(0.0, 0.0, 0.1))
    assert model.mass_matrix_problem is None
    assert np.all(np.isfinite(rd.forward_dynamics(model, data, zero, zero, zero)))
