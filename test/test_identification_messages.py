"""Identification input messages: plain numbers and every missing column, in one line."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.identification.differentiate import step_lengths
from robot_dynamics.identification.io import load_csv
from conftest import bundled


@pytest.fixture(scope="module")
def planar():
    return rd.load_urdf(bundled("planar_2r.urdf"))


def test_repeated_time_stamp_names_plain_numbers():
    """A repeated stamp reads 't=0.0 after t=0.0', not numpy's repr np.float64(0.0)."""
    with pytest.raises(rd.InputError) as info:
        step_lengths(np.array([0.0, 0.0, 0.01]))
    text = str(info.value)
    assert "row 1: t=0.0 after t=0.0" in text, text
    assert "np." not in text and "float64" not in text, text


def test_csv_missing_columns_are_all_listed(planar, tmp_path):
    """A CSV lacking q, v and tau of one joint names the three columns, not only the first."""
    elbow = planar.joint_names[-1]
    cols = ["t"] + [f"{k}_{j}" for k in ("q", "v", "tau") for j in planar.joint_names]
    keep = [c for c in cols if not c.endswith("_" + elbow)]
    path = tmp_path / "log.csv"
    np.savetxt(path, np.zeros((3, len(keep))), delimiter=",", header=",".join(keep), comments="")
    with pytest.raises(rd.InputError) as info:
        load_csv(str(path), planar)
    want = [f"{k}_{elbow}" for k in ("q", "v", "tau")]
    assert str(info.value) == f"{path}: missing column(s) {want}"
