"""Friction laws and configs: magnitudes as documented, pluggable, bad configs named."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import FrictionLaw, friction_from_config, load_components, register_law
from robot_dynamics.friction.load_dependent import LoadDependentFriction
from conftest import bundled

E = np.array([0.0, 0.0, 1.0])
WRENCH = np.array([3.0, 4.0, 2.0, 6.0, 8.0, 5.0])  # f = (3,4,2), n = (6,8,5) about z


def test_load_components():
    c = load_components(WRENCH, E)
    assert c == pytest.approx((2.0, 5.0, 5.0, 10.0))


def test_load_dependent_revolute_and_prismatic_terms():
    law = LoadDependentFriction(coulomb=0.5, viscous=0.2, k1=0.1, k2=0.01, k3=0.02)
    # revolute eq. 2.5.6: c + v|q̇| + k1|n⊥| + k2|f⊥| + k3|f∥|
    assert law.magnitude(WRENCH, E, False, 0.0, -2.0) == pytest.approx(0.5 + 0.4 + 1.0 + 0.05 + 0.04)
    # prismatic eq. 2.5.7: c + v|q̇| + k1|f⊥| + k2|n⊥| + k3|n∥|
    assert law.magnitude(WRENCH, E, True, 0.0, 1.0) == pytest.approx(0.5 + 0.2 + 0.5 + 0.1 + 0.1)
    f55 = LoadDependentFriction(coulomb=0.0, k1=0.1, k2=0.01, form="2.5.5")
    assert f55.magnitude(WRENCH, E, False, 0, 0) == pytest.approx(1.0 + 0.01 * np.sqrt(29.0))


def test_coefficients_may_be_functions_of_joint_state():
    law = LoadDependentFriction(coulomb=lambda q, qd: 1.0 + q, k1=lambda q, qd: 0.1 * abs(qd))
    assert law.magnitude(WRENCH, E, False, 0.5, 2.0) == pytest.approx(1.5 + 0.2 * 10.0)
    with pytest.raises(ValueError, match="no YAML form"):
        law.to_config()


def test_classic_stribeck_and_asymmetry():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    fr = friction_from_config({"joints": {
        "shoulder": {"model": "classic", "coulomb": 1.0, "viscous": 0.5,
                     "stribeck": {"static": 1.5, "velocity": 0.1}},
        "elbow": {"model": "classic", "coulomb_positive": 1.0, "coulomb_negative": 0.4}}}, model)
    sh, el = fr.laws
    assert sh.magnitude(WRENCH, E, False, 0, 0.0) == pytest.approx(1.5)  # breakaway
    assert sh.magnitude(WRENCH, E, False, 0, 0.1) == pytest.approx(1.0 + 0.5 * np.exp(-1) + 0.05)
    assert sh.magnitude(WRENCH, E, False, 0, 5.0) == pytest.approx(1.0 + 2.5, rel=1e-9)
    assert el.magnitude(WRENCH, E, False, 0, 1.0) == 1.0
    assert el.magnitude(WRENCH, E, False, 0, -1.0) == 0.4
    assert el.breakaway(WRENCH, E, False, 0, direction=-1) == 0.4


def test_bearing_law():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    fr = friction_from_config({"default": {"model": "bearing", "mu": 0.1, "pin_radius": 0.02,
                                           "friction_arm": 0.03, "bending_arm": 0.05,
                                           "preload": 0.2}}, model)
    # 0.2 + 0.1 (0.02 (5 + 10/0.05) + 0.03·2)
    expected = 0.2 + 0.1 * (0.02 * (5.0 + 10.0 / 0.05) + 0.03 * 2.0)
    assert fr.laws[0].magnitude(WRENCH, E, False, 0, 1.0) == pytest.approx(expected)


def test_callable_law_and_registry():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    seen = {}

    def law(normal, other, q, qd):
        seen["args"] = (normal.copy(), other.copy(), q, qd)
        return 0.1 * np.linalg.norm(normal) + 0.3

    fr = friction_from_config({"default": {"model": "callable", "function": law}}, model)
    assert fr.laws[0].magnitude(WRENCH, E, False, 0.2, -1.0) == pytest.approx(1.3)
    np.testing.assert_allclose(seen["args"][0], [6.0, 8.0, 0.0])  # n⊥ for a revolute joint
    np.testing.assert_allclose(seen["args"][1], [3.0, 4.0, 2.0])  # whole f
    bad = friction_from_config({"default": {"model": "callable", "function": lambda *a: -1}}, model)
    with pytest.raises(ValueError, match="must return a finite magnitude >= 0"):
        bad.laws[0].magnitude(WRENCH, E, False, 0, 0)

    class Constant(FrictionLaw):
        name = "constant_test"

        def __init__(self, level):
            self.level = level

        def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0):
            return self.level

        def to_config(self):
            return {"model": self.name, "level": self.level}

    register_law("constant_test", lambda params, where: Constant(float(params["level"])))
    fr = friction_from_config({"default": {"model": "constant_test", "level": 0.7}}, model)
    data = model.create_data()
    tau = rd.inverse_dynamics(model, data, [0.1, 0.2], [1.0, -1.0], [0, 0], friction=fr)
    tau0 = rd.rnea(model, data, [0.1, 0.2], [1.0, -1.0], [0, 0])
    np.testing.assert_allclose(tau - tau0, [0.7, -0.7])


@pytest.mark.parametrize("config,needle", [
    ({"default": {"model": "teflon"}}, "unknown friction model 'teflon'"),
    ({"joints": {"wrist": {"model": "classic", "coulomb": 1}}}, r"joint\(s\) \['wrist'\] are not"),
    ({"joints": {"elbow": {"model": "classic", "coulomb": -1}}}, "joint 'elbow': field 'coulomb' must be >= 0"),
    ({"joints": {"elbow": {"model": "load_dependent", "k1": 0.1}}}, "joint 'elbow': missing field 'coulomb'"),
    ({"joints": {"elbow": {"coulomb": 1}}}, "joint 'elbow': missing field 'model'"),
    ({"joints": {"elbow": {"model": "classic", "coulomb": 1, "stribeck": {"static": 2}}}},
     "stribeck: missing field 'velocity'"),
    ({"joints": {"elbow": {"model": "classic", "colomb": 1}}}, r"unknown field\(s\) \['colomb'\]"),
    ({"defaults": {}}, r"unknown top-level key\(s\) \['defaults'\]"),
])
def test_bad_configs_name_joint_and_field(config, needle):
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    with pytest.raises(rd.ModelError, match=needle):
        friction_from_config(config, model)


def test_yaml_round_trip(tmp_path):
    import yaml

    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = friction_from_config(bundled("../config/arm7_friction.yaml"), model)
    path = tmp_path / "f.yaml"
    path.write_text(yaml.safe_dump(fr.to_config()))
    again = friction_from_config(str(path), model)
    assert again.to_config() == fr.to_config()
    with pytest.raises(rd.ModelError, match="no such friction file"):
        friction_from_config(str(tmp_path / "missing.yaml"), model)
