"""Payloads (issue 32): ``model.set_payload(link, mass, com, inertia)`` at run time equals the same
mass merged into the URDF as a fixed child link; removing it restores the built model bit for bit;
an existing Data and Simulator see it; mimic models reach their full tree; bad input and bad YAML
give one-line errors naming the field."""
from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import ModelError
from robot_dynamics.parsers.payload import payload_from_config

from conftest import PANDA, bundled, erd_urdf, random_state

TOL = 1e-12
MASS, COM = 2.7, np.array([0.03, -0.02, 0.08])
INERTIA = np.array([[0.012, 0.001, -0.002], [0.001, 0.010, 0.0015], [-0.002, 0.0015, 0.006]])


def with_fixed_child(urdf_path: str, parent: str, mass, com, inertia) -> str:
    """The URDF text with a link of this inertia fixed to ``parent`` at its origin."""
    text = open(urdf_path, encoding="utf-8").read()
    com = [repr(float(x)) for x in com]
    I = [[repr(float(x)) for x in row] for row in np.asarray(inertia)]
    mass = repr(float(mass))
    extra = f"""
  <link name="payload_link"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="0 0 0"/>
    <mass value="{mass}"/><inertia ixx="{I[0][0]}" ixy="{I[0][1]}" ixz="{I[0][2]}"
    iyy="{I[1][1]}" iyz="{I[1][2]}" izz="{I[2][2]}"/></inertial></link>
  <joint name="payload_fixed" type="fixed"><parent link="{parent}"/><child link="payload_link"/>
    <origin xyz="0 0 0" rpy="0 0 0"/></joint>
</robot>"""
    head, _, _ = text.rpartition("</robot>")
    return head + extra


def numbers(model, data, seed=0):
    """rnea, M and forward dynamics at a random state (copies)."""
    q, v, a = random_state(model, seed)
    tau = np.array(rd.rnea(model, data, q, v, a))
    M = np.array(rd.mass_matrix(model, data, q))
    qdd = np.array(rd.forward_dynamics(model, data, q, v, tau + 1.0))
    return tau, M, qdd


def assert_close(ours, ref):
    for x, y in zip(ours, ref):
        np.testing.assert_allclose(x, y, rtol=0, atol=TOL)


ROBOTS = [("arm7", lambda: bundled("arm7.urdf"), "tool0"),  # tool0: fixed to link_7 (two joints)
          ("panda", lambda: erd_urdf(PANDA), "panda_hand_tcp")]  # fixed, rotated by the hand


@pytest.mark.parametrize("name, path, link", ROBOTS, ids=[r[0] for r in ROBOTS])
def test_payload_equals_the_mass_merged_into_the_urdf(name, path, link, tmp_path):
    path = path()
    merged_file = tmp_path / "merged.urdf"
    merged_file.write_text(with_fixed_child(path, link, MASS, COM, INERTIA))
    merged = rd.load_urdf(str(merged_file))
    model = rd.load_urdf(path)
    data = model.create_data()  # made before the payload: must see it
    plain = numbers(model, data)
    sim = rd.Simulator(model, None, dt=1e-3)  # so is this simulator
    model.set_payload(link, MASS, COM, INERTIA)
    assert list(model.payloads) == [link] and model.payloads[link].mass == MASS

    ref = numbers(merged, merged.create_data())
    assert np.abs(ref[0] - plain[0]).max() > 0.1  # the payload matters at this state
    assert_close(numbers(model, data), ref)  # the old Data
    assert_close(numbers(model, model.create_data()), ref)  # a new one
    for field in ("masses", "coms", "inertias", "spatial_inertias"):  # the Python-side fields
        np.testing.assert_allclose(getattr(model, field), getattr(merged, field), rtol=0,
                                   atol=TOL)
    sim_ref = rd.Simulator(merged, None, dt=1e-3)
    q, v, _ = random_state(model, 3)
    tau = np.linspace(-2.0, 2.0, model.nv)
    for s in (sim, sim_ref):
        s.reset(q, v)
        for _ in range(5):
            s.step(tau)
    np.testing.assert_allclose(sim.q, sim_ref.q, rtol=0, atol=TOL)
    np.testing.assert_allclose(sim.v, sim_ref.v, rtol=0, atol=1e-10)


def test_removing_restores_the_plain_model_bit_for_bit():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    packed = model._mb.copy()
    fields = {f: getattr(model, f).copy() for f in ("masses", "coms", "inertias",
                                                    "spatial_inertias")}
    plain = numbers(model, data)
    model.set_payload("tool0", MASS, COM, INERTIA)
    model.set_payload("link_3", 1.0)  # a second body
    assert not np.array_equal(numbers(model, data)[1], plain[1])
    model.set_payload("tool0", None)
    model.set_payload("link_3", None)
    model.set_payload("link_3", None)  # removing what is not there: nothing to do
    assert dict(model.payloads) == {}
    assert model._mb.tobytes() == packed.tobytes()
    for f, value in fields.items():
        assert getattr(model, f).tobytes() == value.tobytes(), f
    for x, y in zip(numbers(model, data), plain):
        assert x.tobytes() == y.tobytes()


def test_setting_twice_replaces():
    once, twice = rd.load_urdf(bundled("arm7.urdf")), rd.load_urdf(bundled("arm7.urdf"))
    once.set_payload("tool0", 3.0, (0, 0, 0.1))
    twice.set_payload("tool0", 1.0, (0.2, 0, 0), np.eye(3) * 0.01)
    twice.set_payload("tool0", 3.0, (0, 0, 0.1))
    assert twice.payloads["tool0"].mass == 3.0 and len(twice.payloads) == 1
    assert twice._mb.tobytes() == once._mb.tobytes()
    assert_close(numbers(twice, twice.create_data()), numbers(once, once.create_data()))


def test_payload_is_read_only():
    model = rd.load_urdf(bundled("arm7.urdf"))
    model.set_payload("tool0", 1.0, (0, 0, 0.05))
    with pytest.raises(TypeError):
        model.payloads["link_2"] = model.payloads["tool0"]
    with pytest.raises(ValueError):
        model.payloads["tool0"].com[0] = 1.0


def test_payload_on_a_link_fixed_to_the_base_moves_no_joint():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    base, plain = model.base_mass, numbers(model, data)
    model.set_payload("link_0", 5.0, (0.1, 0, 0))
    assert model.base_mass == pytest.approx(base + 5.0, abs=1e-12)
    for x, y in zip(numbers(model, data), plain):
        assert x.tobytes() == y.tobytes()
    model.set_payload("link_0", None)
    assert model.base_mass == base


def test_mimic_model_payload_on_a_finger(tmp_path):
    path = bundled("arm7_gripper_mimic.urdf")
    merged_file = tmp_path / "merged.urdf"
    merged_file.write_text(with_fixed_child(path, "right_finger", 0.4, (0.0, -0.01, 0.03),
                                            np.diag([2e-4, 2e-4, 1e-4])))
    merged = rd.load_urdf(str(merged_file), mimic=True)
    model = rd.load_urdf(path, mimic=True)
    assert model.coupling is not None and "finger_right" in model.followers
    data = model.create_data()
    plain = numbers(model, data)
    model.set_payload("right_finger", 0.4, (0.0, -0.01, 0.03), np.diag([2e-4, 2e-4, 1e-4]))
    assert list(model.payloads) == ["right_finger"] == list(model.full.payloads)
    ref = numbers(merged, merged.create_data())
    assert np.abs(ref[0] - plain[0]).max() > 1e-3
    assert_close(numbers(model, data), ref)
    model.set_payload("right_finger", None)
    for x, y in zip(numbers(model, data), plain):
        assert x.tobytes() == y.tobytes()


BAD = [
    (dict(link="tool", mass=1.0), "link: robot 'arm7' has no link 'tool'; did you mean 'tool0'"),
    (dict(link="tool0", mass=0.0), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=-1.0), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=float("nan")), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=float("inf")), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass="heavy"), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=True), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass="3"), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=[3.0]), "mass: expected a finite number > 0"),
    (dict(link="tool0", mass=1.0, com=("0", "0", "0")), "com: expected 3 finite numbers"),
    (dict(link="tool0", mass=1.0, com=None), "com: expected 3 finite numbers"),
    (dict(link="tool0", mass=1.0, com=(0, 0)), "com: expected 3 finite numbers"),
    (dict(link="tool0", mass=1.0, com=(0, 0, np.inf)), "com: expected 3 finite numbers"),
    (dict(link="tool0", mass=1.0, inertia=np.eye(2)), "inertia: expected a 3x3 matrix"),
    (dict(link="tool0", mass=1.0, inertia={"ixx": 1.0}), "inertia: expected a 3x3 matrix"),
    (dict(link="tool0", mass=1.0, inertia=np.full((3, 3), np.nan)),
     "inertia: expected a 3x3 matrix"),
    (dict(link="tool0", mass=1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]),
     "inertia: not symmetric"),
    (dict(link="tool0", mass=1.0, inertia=np.diag([-0.1, 0.2, 0.2])),
     "inertia: inertia is not positive semi-definite"),
    (dict(link="tool0", mass=1.0, inertia=np.diag([0.01, 0.01, 0.03])),
     "inertia: principal moments [0.01, 0.01, 0.03] break the triangle inequality"),
]


@pytest.mark.parametrize("kwargs, message", BAD, ids=[m.split(":")[0] + str(k) for k, (_, m)
                                                      in enumerate(BAD)])
def test_bad_input_is_refused_in_one_line_naming_the_field(kwargs, message):
    model = rd.load_urdf(bundled("arm7.urdf"))
    packed = model._mb.copy()
    with pytest.raises(ModelError) as err:
        model.set_payload(**kwargs)
    text = str(err.value)
    assert message in text and "\n" not in text, text
    assert dict(model.payloads) == {} and model._mb.tobytes() == packed.tobytes()


def test_unknown_link_lists_the_links_of_a_mimic_model():
    model = rd.load_urdf(bundled("arm7_gripper_mimic.urdf"), mimic=True)
    with pytest.raises(ModelError, match="did you mean 'left_finger'"):
        model.set_payload("left_fingr", 0.1)


GOOD_YAML = """
controller: {kp: 100}     # other sections are not read
payload:
  - link: tool0
    mass: 2.7
    com: [0.03, -0.02, 0.08]
    inertia: {ixx: 0.012, ixy: 0.001, ixz: -0.002, iyy: 0.010, iyz: 0.0015, izz: 0.006}
  - link: link_4
    mass: 1.5
"""


def test_payload_from_yaml_equals_set_payload(tmp_path):
    path = tmp_path / "payload.yaml"
    path.write_text(GOOD_YAML)
    model, direct = rd.load_urdf(bundled("arm7.urdf")), rd.load_urdf(bundled("arm7.urdf"))
    loads = payload_from_config(model, str(path))
    assert [p.link for p in loads] == ["tool0", "link_4"] == list(model.payloads)
    direct.set_payload("tool0", MASS, COM, INERTIA)
    direct.set_payload("link_4", 1.5)
    assert model._mb.tobytes() == direct._mb.tobytes()
    one = rd.load_urdf(bundled("arm7.urdf"))  # one entry, as a mapping, also works
    payload_from_config(one, {"payload": {"link": "link_4", "mass": 1.5,
                                          "inertia": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]}})
    assert one.payloads["link_4"].inertia[2, 2] == 0.1


@pytest.mark.parametrize("entry, message", [
    ("link: tool0\n  mass: -2", "payload on 'tool0': mass: expected a finite number > 0"),
    ("link: tool0\n  mass: 1\n  com: [0, 0]", "payload on 'tool0': com: expected 3 finite"),
    ("link: tool0\n  mass: 1\n  inertia: {ixx: 0.01, iyy: 0.01, izz: 0.05}",
     "payload on 'tool0': inertia: principal moments"),
    ("link: tool0\n  mass: 1\n  inertia: {ixx: 0.01, jyy: 0.01}", "payload: inertia: unknown key"),
    ("link: tool0\n  mass: 1\n  weight: 2", "payload: unknown field(s) ['weight']"),
    ("mass: 1", "payload: link: missing"),
    ("link: tool_0\n  mass: 1", "payload: link: robot 'arm7' has no link 'tool_0'; did you mean"),
])
def test_yaml_with_a_bad_field_names_the_file_and_the_field(tmp_path, entry, message):
    path = tmp_path / "bad.yaml"
    path.write_text(f"payload:\n  {entry}\n")
    model = rd.load_urdf(bundled("arm7.urdf"))
    with pytest.raises(ModelError) as err:
        payload_from_config(model, str(path))
    text = str(err.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text
    assert dict(model.payloads) == {}


def test_yaml_checks_every_entry_before_setting_any(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("payload:\n  - {link: tool0, mass: 1}\n  - {link: link_2, mass: 0}\n")
    model = rd.load_urdf(bundled("arm7.urdf"))
    with pytest.raises(ModelError, match=r"payload\[1\] on 'link_2': mass"):
        payload_from_config(model, str(path))
    assert dict(model.payloads) == {}
    path.write_text("controller: {kp: 1}\n")
    with pytest.raises(ModelError, match="expected a 'payload' section"):
        payload_from_config(model, str(path))


def test_python_paths_see_the_payload():
    """The readable twins (spatial_inertias) and Lagrange–Euler (masses, coms, inertias) read the
    per-body fields: with a payload they still agree with the compiled recursions."""
    from robot_dynamics.formulations import lagrange_euler as le
    from robot_dynamics.reference import dynamics as twin

    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    model.set_payload("tool0", MASS, COM, INERTIA)
    q, v, a = random_state(model, 5)
    tau = np.array(rd.rnea(model, data, q, v, a))
    M = np.array(rd.mass_matrix(model, data, q))
    np.testing.assert_allclose(twin.rnea(model, model.create_data(), q, v, a), tau, atol=1e-10)
    np.testing.assert_allclose(twin.mass_matrix(model, model.create_data(), q), M, atol=1e-10)
    np.testing.assert_allclose(le.mass_matrix(model, q), M, atol=1e-10)
    np.testing.assert_allclose(le.inverse_dynamics(model, q, v, a), tau, atol=1e-9)


def test_friction_and_batch_see_the_payload(tmp_path):
    """The load-dependent friction reads the reactions carrying the payload: friction-aware ID,
    FD and batch ID equal the merged URDF's."""
    from robot_dynamics.algorithm.batch import inverse_dynamics_batch
    from robot_dynamics.parsers.resources import config_path

    path = bundled("arm7.urdf")
    merged_file = tmp_path / "merged.urdf"
    merged_file.write_text(with_fixed_child(path, "tool0", MASS, COM, INERTIA))
    merged, model = rd.load_urdf(str(merged_file)), rd.load_urdf(path)
    fr_m = rd.friction_from_config(config_path("arm7_friction"), merged)
    fr = rd.friction_from_config(config_path("arm7_friction"), model)
    data = model.create_data()
    q, v, a = random_state(model, 7)
    plain = np.array(rd.inverse_dynamics(model, data, q, v, a, friction=fr))
    plain_friction = np.array(data.tau_friction)
    model.set_payload("tool0", MASS, COM, INERTIA)
    ours = np.array(rd.inverse_dynamics(model, data, q, v, a, friction=fr))
    ours_friction = np.array(data.tau_friction)
    dm = merged.create_data()
    ref = rd.inverse_dynamics(merged, dm, q, v, a, friction=fr_m)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours_friction, dm.tau_friction, rtol=0, atol=1e-10)
    assert np.abs(ours_friction - plain_friction).max() > 1e-3  # the load changed the friction
    np.testing.assert_allclose(rd.forward_dynamics(model, data, q, v, ours, friction=fr),
                               rd.forward_dynamics(merged, dm, q, v, ref, friction=fr_m),
                               rtol=0, atol=1e-8)
    Q, V, A = (np.array([x, 0.5 * x]) for x in (q, v, a))
    np.testing.assert_allclose(inverse_dynamics_batch(model, Q, V, A, fr),
                               inverse_dynamics_batch(merged, Q, V, A, fr_m), rtol=0, atol=1e-10)
    assert not np.allclose(plain, ours)


def test_payload_limits_allow_their_bounds_and_refuse_past_them():
    """One statement of the limits (multibody.model), for the nodes and the demo's options: "at
    most 10 m" allows 10 m (it was refused, `>=`), and 10000 kg; a hair past either is refused
    with the message both say."""
    from robot_dynamics.multibody.model import MAX_COM, MAX_MASS, com_refusal, mass_refusal

    assert com_refusal([0.0, -MAX_COM, MAX_COM]) is None
    assert com_refusal([0.0, 0.0, -np.nextafter(MAX_COM, np.inf)]) == \
        "10 m from the link origin (at most 10 m: metres, not millimetres?)"
    assert "from the link origin" in com_refusal([np.nan, 0.0, 0.0])
    assert mass_refusal(MAX_MASS) is None and mass_refusal(0.0) is None
    for mass in (np.nextafter(MAX_MASS, np.inf), -1e-9, np.nan, np.inf):
        assert mass_refusal(mass).startswith("expected a number from 0 to 10000 (kg, not g?")
