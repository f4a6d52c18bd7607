"""DH tables: the seed's RRP as a DH table has the dynamics of urdf/rrp.urdf; URDF export;
missing fields named."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.formulations.dh import dh_to_urdf, load_dh
from conftest import REPO, PinMap, bundled

DH = os.path.join(REPO, "config", "rrp_dh.yaml")


def test_dh_rrp_equals_urdf_rrp():
    a, b = rd.load_urdf(bundled("rrp.urdf")), load_dh(DH)
    assert a.joint_names == b.joint_names and a.joint_types == b.joint_types
    da, db = a.create_data(), b.create_data()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, acc = rng.uniform(-1, 1, (3, 3))
        np.testing.assert_allclose(rd.rnea(b, db, q, v, acc), rd.rnea(a, da, q, v, acc), atol=1e-12)
        # joint frames differ (DH vs URDF axes, other points on the axis): the reaction force
        # magnitudes do not depend on either
        np.testing.assert_allclose(np.linalg.norm(db.f[:, :3], axis=1),
                                   np.linalg.norm(da.f[:, :3], axis=1), atol=1e-12)
        np.testing.assert_allclose(rd.mass_matrix(b, db, q), rd.mass_matrix(a, da, q), atol=1e-12)


def test_exported_urdf_loads_in_pinocchio_with_the_same_dynamics(tmp_path):
    model = load_dh(DH)
    path = tmp_path / "rrp_dh.urdf"
    path.write_text(dh_to_urdf(DH))
    exported = rd.load_urdf(str(path))
    pm = PinMap(exported, str(path))
    data = model.create_data()
    q, v, a = np.array([0.3, -0.4, 0.1]), np.array([0.5, 1.0, -0.2]), np.array([1.0, -2.0, 0.5])
    tau = rd.rnea(model, data, q, v, a)
    np.testing.assert_allclose(pm.ours(pm.pin.rnea(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(a))),
                               tau, atol=1e-9)


@pytest.mark.parametrize("row,needle", [
    ({"name": "j", "type": "revolute", "a": 0, "alpha": 0, "d": 0, "theta": 0, "mass": 1,
      "com": [0, 0, 0]}, r"row 0 \(j\): missing field\(s\) \['inertia'\]"),
    ({"name": "j", "type": "spherical", "a": 0, "alpha": 0, "d": 0, "theta": 0, "mass": 1,
      "com": [0, 0, 0], "inertia": [1, 1, 1, 0, 0, 0]}, "type must be revolute or prismatic"),
    ({"name": "j", "type": "revolute", "a": 0, "alpha": 0, "d": 0, "theta": 0, "mass": 1,
      "com": [0, 0], "inertia": [1, 1, 1, 0, 0, 0]}, "com needs 3 numbers"),
])
def test_bad_dh_rows(row, needle):
    with pytest.raises(rd.ModelError, match=needle):
        load_dh({"joints": [row]})
