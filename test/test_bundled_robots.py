"""The bundled robots (urdf/) and configurations (config/): structure, physical plausibility,
seed 000's RRP kinematics, and the YAML files' documented structure (docs/robots.md)."""
import glob
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from conftest import REPO, bundled, random_state

pin = pytest.importorskip("pinocchio")

# name: (movable joint types in URDF order, plausible total URDF mass range [kg] incl. the base link)
# arm7: the real LBR iiwa 14 R820 weighs about 30 kg (KUKA datasheet); the CAD-estimated link
# masses of the description (docs/robots.md) sum to less (22.5 kg), so 15–35 kg.
ROBOTS = {
    "rrp": (["revolute", "revolute", "prismatic"], (3.0, 10.0)),
    "planar_2r": (["revolute"] * 2, (2.0, 5.0)),
    "arm7": (["revolute"] * 7, (15.0, 35.0)),
    "arm7_gripper": (["revolute"] * 7 + ["prismatic"] * 2, (15.0, 36.0)),
    "arm7_gripper_mimic": (["revolute"] * 7 + ["prismatic"] * 2, (15.0, 36.0)),  # full tree
    "five_bar": (["revolute"] * 4, (1.0, 2.0)),  # the tree of the parallel example (0.4+0.4+0.3+0.3)
}

# Seed 000's symbols with the values of docs/robots.md (design parameters, not computed output).
H, L1, L2, L3, L1G, L2G, L3G = 0.4, 0.3, 0.35, 0.5, 0.15, 0.175, 0.25

LAW_FIELDS = {
    "none": set(),
    "classic": {"coulomb", "viscous", "stribeck", "coulomb_positive", "coulomb_negative"},
    "load_dependent": {"coulomb", "viscous", "k1", "k2", "k3", "form"},
    "bearing": {"pin_radius", "friction_arm", "bending_arm", "mu", "preload", "stribeck"},
}
REQUIRED = {"none": set(), "classic": set(), "load_dependent": {"coulomb", "k1", "k2", "k3"},
            "bearing": {"pin_radius", "friction_arm", "bending_arm", "mu"}}


def _urdf_inertials(path):
    """(link, mass, 3×3 inertia) for every <inertial> of the URDF file, read straight from the XML."""
    out = []
    for link in ET.parse(path).getroot().iter("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        a = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        I = np.array([[a["ixx"], a["ixy"], a["ixz"]],
                      [a["ixy"], a["iyy"], a["iyz"]],
                      [a["ixz"], a["iyz"], a["izz"]]])
        out.append((link.get("name"), float(inertial.find("mass").get("value")), I))
    return out


def _assert_physical(where, m, I):
    assert m > 0, f"{where}: mass {m}"
    ev = np.linalg.eigvalsh(I)
    assert ev.min() > 0, f"{where}: inertia not positive definite {ev}"
    s = ev.sum()
    assert np.all(s - 2 * ev >= -1e-12), f"{where}: principal moments violate the triangle inequality {ev}"


def _pin_type(joint):
    name = joint.shortname()
    if name.startswith("JointModelP"):
        return "prismatic"
    if name.startswith("JointModelRUB"):
        return "continuous"
    if name.startswith("JointModelR"):
        return "revolute"
    return name


def test_every_bundled_urdf_is_covered():
    found = {os.path.basename(p)[:-5] for p in glob.glob(os.path.join(REPO, "urdf", "*.urdf"))}
    assert found == set(ROBOTS)


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_joint_counts_types_masses_and_inertias(robot):
    types, (lo, hi) = ROBOTS[robot]
    path = bundled(robot + ".urdf")
    model = rd.load_urdf(path)
    assert model.nv == model.nq == len(types)
    assert model.joint_types == types
    pmodel = pin.buildModelFromUrdf(path)
    assert pmodel.nv == len(types)
    ptypes = {pmodel.names[j]: _pin_type(pmodel.joints[j]) for j in range(1, pmodel.njoints)}
    assert {n: ptypes[n] for n in model.joint_names} == dict(zip(model.joint_names, types))
    # every link as written, our merged bodies, and Pinocchio's merged bodies are physical
    links = _urdf_inertials(path)
    for name, m, I in links:
        _assert_physical(f"{robot}/{name}", m, I)
    for i in range(model.nv):
        _assert_physical(f"{robot} body {model.link_names[i]}", model.masses[i], model.inertias[i])
    for j in range(1, pmodel.njoints):
        _assert_physical(f"pinocchio {robot} {pmodel.names[j]}", pmodel.inertias[j].mass,
                         pmodel.inertias[j].inertia)
    total = sum(m for _, m, _ in links)
    assert lo <= total <= hi, f"{robot}: total mass {total} kg outside [{lo}, {hi}]"
    # the moving part (what the joints carry) agrees with Pinocchio's merged bodies
    pin_moving = sum(pmodel.inertias[j].mass for j in range(1, pmodel.njoints))
    assert model.masses.sum() == pytest.approx(pin_moving, rel=1e-12)
    # limits: every joint has an effort and velocity limit and a finite position range
    for arr in (model.effort_limits, model.velocity_limits):
        assert np.all(np.isfinite(arr)) and np.all(arr > 0)
    assert np.all(np.isfinite(model.lower_limits)) and np.all(model.lower_limits < model.upper_limits)
    np.testing.assert_allclose(model.effort_limits, pmodel.effortLimit[[pmodel.joints[pmodel.getJointId(n)].idx_v
                                                                      for n in model.joint_names]])


def _seed000_frames(q):
    """Seed 000, example 3: [H]_{B1/can}, [H]_{B2/can}, [H]_{B3/can} and the CoMs (x_i, y_i, z_i)."""
    t1, t2, d3 = q
    c1, s1, c2, s2 = np.cos(t1), np.sin(t1), np.cos(t2), np.sin(t2)
    H1 = np.array([[c1, -s1, 0, 0], [s1, c1, 0, 0], [0, 0, 1, H], [0, 0, 0, 1.0]])
    H2 = np.array([[c1, -c2 * s1, s1 * s2, 0], [s1, c1 * c2, -c1 * s2, 0],
                   [0, s2, c2, H + L1], [0, 0, 0, 1.0]])
    H3 = np.array([[c1, -c2 * s1, s1 * s2, -c2 * s1 * L2], [s1, c1 * c2, -c1 * s2, c1 * c2 * L2],
                   [0, s2, c2, H + L1 + s2 * L2], [0, 0, 0, 1.0]])
    r3 = L2 - L3 + L3G + d3
    G = np.array([[0, 0, H + L1G],
                  [-c2 * s1 * L2G, c1 * c2 * L2G, H + L1 + s2 * L2G],
                  [-c2 * s1 * r3, c1 * c2 * r3, H + L1 + s2 * r3]])
    return (H1, H2, H3), G


def test_rrp_frames_and_centres_of_mass_follow_seed_000():
    path = bundled("rrp.urdf")
    model = rd.load_urdf(path)
    data = model.create_data()
    pmodel = pin.buildModelFromUrdf(path)
    pdata = pmodel.createData()
    jid = [pmodel.getJointId(n) for n in model.joint_names]
    assert model.joint_names == ["theta1", "theta2", "d3"]
    for seed in range(5):
        q, _, _ = random_state(model, seed)
        (H1, H2, H3), G = _seed000_frames(q)
        rd.forward_kinematics(model, data, q)
        pin.forwardKinematics(pmodel, pdata, q)
        np.testing.assert_allclose(rd.frame_placement(model, data, "link1"), H1, atol=1e-12)
        np.testing.assert_allclose(rd.frame_placement(model, data, "link2"), H2, atol=1e-12)
        # the seed's B3 sits at O3 (d3 = 0); the URDF link of the sliding body moves d3 along y2
        T3 = H3.copy()
        T3[:3, 3] += q[2] * H3[:3, 1]
        np.testing.assert_allclose(rd.frame_placement(model, data, "link3"), T3, atol=1e-12)
        for i in range(3):
            ours = data.oMi[i][:3, :3] @ model.coms[i] + data.oMi[i][:3, 3]
            theirs = pdata.oMi[jid[i]].act(pmodel.inertias[jid[i]].lever)
            np.testing.assert_allclose(ours, G[i], atol=1e-12, err_msg=f"CoM of body {i + 1}")
            np.testing.assert_allclose(theirs, G[i], atol=1e-12, err_msg=f"Pinocchio CoM {i + 1}")
    # the numbers of docs/robots.md are those in the file
    np.testing.assert_allclose(model.masses, [3.0, 2.0, 1.0])


def test_rrp_inertias_are_those_of_the_documented_tubes_and_rod():
    model = rd.load_urdf(bundled("rrp.urdf"))
    # link 1: thin tube r = 40 mm along z1; link 2: thin tube r = 35 mm along y2; link 3: solid rod
    # r = 20 mm along y3 (docs/robots.md)
    def tube(m, r, L, axis):
        I = np.full(3, m * (r ** 2 / 2 + L ** 2 / 12))
        I[axis] = m * r ** 2
        return np.diag(I)
    rod = np.full(3, 1.0 * (0.02 ** 2 / 4 + L3 ** 2 / 12))
    rod[1] = 1.0 * 0.02 ** 2 / 2
    np.testing.assert_allclose(model.inertias[0], tube(3.0, 0.04, L1, 2), atol=1e-6)
    np.testing.assert_allclose(model.inertias[1], tube(2.0, 0.035, L2, 1), atol=1e-6)
    np.testing.assert_allclose(model.inertias[2], np.diag(rod), atol=1e-6)


def test_planar_2r_moves_in_a_vertical_plane_and_merges_its_tool():
    path = bundled("planar_2r.urdf")
    model = rd.load_urdf(path)
    data = model.create_data()
    q, _, _ = random_state(model, 3)
    rd.forward_kinematics(model, data, q)
    g = model.gravity / np.linalg.norm(model.gravity)
    for i in range(2):
        axis_world = data.oMi[i][:3, :3] @ model.axes[i]
        assert abs(axis_world @ g) < 1e-12  # gravity lies in the plane of motion
    # the fixed tool is folded into the forearm body: masses and first moments add up
    links = {name: m for name, m, _ in _urdf_inertials(path)}
    assert model.frames["tool"][0] == model.joint_index("elbow")
    assert model.masses[1] == pytest.approx(links["forearm"] + links["tool"], rel=1e-12)
    tip = rd.frame_placement(model, data, "tool")[:3, 3]
    assert np.linalg.norm(tip - data.oMi[1][:3, 3]) == pytest.approx(0.5, abs=1e-12)
    assert np.all(rd.gravity_torques(model, data, q) != 0)


def test_arm7_lengths_are_the_iiwa_14_datasheet_ones():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    rd.forward_kinematics(model, data, np.zeros(7))
    z = {n: rd.frame_placement(model, data, n)[:3, 3] for n in ("link_2", "link_4", "link_6", "flange")}
    for n, p in z.items():
        np.testing.assert_allclose(p[:2], 0.0, atol=1e-9, err_msg=n)  # upright at q = 0
    # base → shoulder 0.36, shoulder → elbow 0.42, elbow → wrist 0.40, wrist → flange 0.126
    assert z["link_2"][2] == pytest.approx(0.36, abs=1e-9)
    assert z["link_4"][2] - z["link_2"][2] == pytest.approx(0.42, abs=1e-9)
    assert z["link_6"][2] - z["link_4"][2] == pytest.approx(0.40, abs=1e-9)
    assert z["flange"][2] - z["link_6"][2] == pytest.approx(0.126, abs=1e-9)
    assert "tool0" in model.frames and model.frames["tool0"][0] == 6


def test_arm7_gripper_is_arm7_plus_a_branch_of_two_fingers():
    arm = rd.load_urdf(bundled("arm7.urdf"))
    grip = rd.load_urdf(bundled("arm7_gripper.urdf"))
    assert grip.joint_names[:7] == arm.joint_names
    i, j = grip.joint_index("finger_left"), grip.joint_index("finger_right")
    assert grip.parents[i] == grip.parents[j] == grip.joint_index("joint_a7")  # a branch
    # opposite finger axes in the gripper frame (they open symmetrically)
    ai = grip.joint_rotations[i] @ grip.axes[i]
    aj = grip.joint_rotations[j] @ grip.axes[j]
    np.testing.assert_allclose(ai, -aj, atol=1e-12)
    # the gripper's fixed body adds to link 7
    assert grip.masses[6] > arm.masses[6]


def _configs():
    return sorted(glob.glob(os.path.join(REPO, "config", "*_friction.yaml")))


def _check_law(where, entry):
    assert isinstance(entry, dict) and "model" in entry, f"{where}: needs a `model` key"
    law = entry["model"]
    assert law in LAW_FIELDS, f"{where}: unknown law {law!r}"
    fields = set(entry) - {"model"}
    assert fields <= LAW_FIELDS[law], f"{where}: unexpected fields {fields - LAW_FIELDS[law]}"
    assert REQUIRED[law] <= fields, f"{where}: missing {REQUIRED[law] - fields}"
    for key in fields - {"stribeck", "form"}:
        assert isinstance(entry[key], (int, float)) and entry[key] >= 0, f"{where}.{key}"
    if "stribeck" in entry:
        s = entry["stribeck"]
        assert set(s) == {"static", "velocity"} and s["velocity"] > 0, f"{where}.stribeck"
        assert s["static"] >= entry.get("coulomb", 0.0), f"{where}: static below Coulomb"


@pytest.mark.parametrize("path", _configs(), ids=os.path.basename)
def test_friction_configs_have_the_documented_structure(path):
    with open(path) as fh:
        text = fh.read()
    assert text.lstrip().startswith("#"), "every config starts with a comment header"
    cfg = yaml.safe_load(text)
    assert isinstance(cfg, dict) and set(cfg) <= {"default", "joints"} and "default" in cfg
    _check_law("default", cfg["default"])
    for name, entry in (cfg.get("joints") or {}).items():
        _check_law(name, entry)
    robot = os.path.basename(path)[: -len("_friction.yaml")]
    robots = sorted(ROBOTS) if robot == "no" else [robot]
    assert set(robots) <= set(ROBOTS)
    for r in robots:
        model = rd.load_urdf(bundled(r + ".urdf"))
        missing = set(cfg.get("joints") or {}) - set(model.joint_names)
        assert not missing, f"{path} names joints {missing} absent from {r}.urdf"
        fr = rd.friction_from_config(path, model)
        assert fr.joint_names == model.joint_names


def test_arm7_friction_is_larger_on_the_big_axes():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    fr = rd.friction_from_config(bundled("../config/arm7_friction.yaml"), model)
    q, _, _ = random_state(model, 1)
    rd.rnea(model, data, q, np.zeros(7), np.zeros(7))
    mag = fr.magnitudes(model, rd.joint_wrenches(model, data), q, np.zeros(7))
    assert np.all(mag[:2] >= 1.0) and np.all(mag[:2] <= 5.0)  # a few N·m on the large axes
    assert mag[:4].min() > mag[4:].max()  # less on the wrist
    assert np.all(mag < 0.05 * model.effort_limits)  # small against the drives


def test_arm7_controller_gains_are_critically_damped_for_arm7():
    with open(os.path.join(REPO, "config", "arm7_controller.yaml")) as fh:
        text = fh.read()
    assert text.lstrip().startswith("#")
    params = yaml.safe_load(text)["id_controller"]["ros__parameters"]
    model = rd.load_urdf(bundled("arm7.urdf"))
    assert params["joint_names"] == model.joint_names
    kp, kd = np.array(params["kp"], float), np.array(params["kd"], float)
    assert kp.shape == kd.shape == (7,)
    wn = np.sqrt(kp)
    assert np.all((wn >= 20.0) & (wn <= 30.0))
    np.testing.assert_allclose(kd, 2.0 * wn, rtol=1e-12)  # ζ = 1
    assert np.all(wn * 1e-3 < 0.1)  # well inside the 1 kHz loop
