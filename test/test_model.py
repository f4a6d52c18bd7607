"""Model reduction: fixed joints merged exactly, tree ordering, limits and URDF dynamics kept."""
import os
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.spatial.algebra import rpy_matrix

BOX = ('<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m}"/>'
       '<inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def _link(name, m, xyz="0 0 0", rpy="0 0 0", ixx=0.02, iyy=0.03, izz=0.04, ixy=0.001):
    return f'<link name="{name}">' + BOX.format(m=m, xyz=xyz, rpy=rpy, ixx=ixx, iyy=iyy, izz=izz,
                                                 ixy=ixy) + "</link>"


def test_fixed_child_is_merged_exactly():
    """A link split in two by a fixed joint gives the same body as the hand-combined inertia."""
    split = ('<robot name="s"><link name="base"/>' + _link("a", 2.0, "0.1 0 0.2", "0.3 0.1 -0.2")
             + _link("b", 1.5, "0 0.1 0", "0 0.5 0")
             + '<joint name="j" type="revolute"><parent link="base"/><child link="a"/>'
             '<axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>'
             '<joint name="fix" type="fixed"><parent link="a"/><child link="b"/>'
             '<origin xyz="0.3 0 0" rpy="0 0 1.0"/></joint></robot>')
    model = rd.load_urdf(split)
    assert model.nv == 1 and model.frames["b"][0] == 0
    # combine by hand
    Ra, Rf, Rb = rpy_matrix([0.3, 0.1, -0.2]), rpy_matrix([0, 0, 1.0]), rpy_matrix([0, 0.5, 0])
    Iloc = np.array([[0.02, 0.001, 0], [0.001, 0.03, 0], [0, 0, 0.04]])
    ca, cb = np.array([0.1, 0, 0.2]), np.array([0.3, 0, 0]) + Rf @ np.array([0, 0.1, 0])
    Ia, Ib = Ra @ Iloc @ Ra.T, (Rf @ Rb) @ Iloc @ (Rf @ Rb).T
    m = 3.5
    c = (2.0 * ca + 1.5 * cb) / m

    def shift(I, mass, d):
        return I + mass * (d @ d * np.eye(3) - np.outer(d, d))

    Ic = shift(Ia, 2.0, ca - c) + shift(Ib, 1.5, cb - c)
    assert model.masses[0] == pytest.approx(m)
    np.testing.assert_allclose(model.coms[0], c, atol=1e-14)
    np.testing.assert_allclose(model.inertias[0], Ic, atol=1e-14)


def test_tree_order_parents_first_and_metadata():
    text = ('<robot name="t"><link name="base"/>' + "".join(_link(n, 1.0) for n in "abcd")
            + "".join(f'<joint name="{j}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
                      f'<axis xyz="1 0 0"/><limit effort="{e}" velocity="3" lower="-1" upper="1"/>'
                      f'<dynamics damping="0.5" friction="0.25"/></joint>'
                      for j, t, p, c, e in [("ja", "revolute", "base", "a", 7),
                                            ("jb", "prismatic", "a", "b", 8),
                                            ("jc", "continuous", "a", "c", 9),
                                            ("jd", "revolute", "c", "d", 10)])
            + "</robot>")
    model = rd.load_urdf(text)
    assert all(p < i for i, p in enumerate(model.parents))
    assert sorted(model.joint_names) == ["ja", "jb", "jc", "jd"]
    i = model.joint_index("jc")
    assert model.joint_types[i] == "continuous" and np.isinf(model.upper_limits[i])
    assert model.effort_limits[model.joint_index("jd")] == 10
    assert np.all(model.damping == 0.5) and np.all(model.urdf_friction == 0.25)
    assert model.parents[model.joint_index("jd")] == i
    with pytest.raises(rd.ModelError, match="no movable joint 'zz'"):
        model.joint_index("zz")


def test_mimic_tags_are_kept_and_modelled_on_request():
    from conftest import PANDA, erd_urdf

    model = rd.load_urdf(erd_urdf(PANDA))
    assert model.mimic == {"panda_finger_joint2": ("panda_finger_joint1", 1.0, 0.0)}
    assert "panda_finger_joint2" in model.joint_names  # by default an independent joint (nv = 9)
    coupled = rd.load_urdf(erd_urdf(PANDA), mimic=True)  # test_mimic.py
    assert coupled.nv == 8 and "panda_finger_joint2" not in coupled.joint_names


def test_relations_fast_path_equals_the_general_one():
    """kernels.layout.relations copies slices for depth-first numbering (linear in its output);
    the set-based general path is the specification, and any other numbering uses it."""
    from robot_dynamics.kernels.layout import _relations_general, relations

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(0, 25))
        parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)] if n else []
        children = {i: [] for i in range(-1, n)}
        for i, p in enumerate(parents):
            children[p].append(i)
        order, stack = [], list(reversed(children[-1]))
        while stack:  # renumber depth-first, as build_model does
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(children[i]))
        new = {old: k for k, old in enumerate(order)}
        dfs = [-1 if parents[old] < 0 else new[parents[old]] for old in order]
        for P in (dfs, parents):
            fast, ref = relations(P), _relations_general(P)
            np.testing.assert_array_equal(fast[0], ref[0])
            np.testing.assert_array_equal(fast[1], ref[1])


def test_long_chain_and_many_fixed_frames():
    """A 300-joint chain and 3000 fixed frames build (the frames placed exactly)."""
    from conftest import REPO

    sys.path.insert(0, os.path.join(REPO, "bench"))
    from bench_build import frames_urdf
    from bench_dynamics import chain_urdf

    chain = rd.load_urdf(chain_urdf(300))
    assert chain.nv == 300 and list(chain.parents) == list(range(-1, 299))
    model = rd.load_urdf(frames_urdf(3000))
    assert model.nv == 2 and len(model.frames) == 3003
    body, T = model.frames["f2999"]
    assert body == 1
    np.testing.assert_allclose(T[:3, 3], [0, 0, 0.02999], atol=1e-15)
    np.testing.assert_allclose(T[:3, :3], rpy_matrix([0, 0.1, 0]), atol=1e-15)
    assert model.frames["f2998"][0] == -1
