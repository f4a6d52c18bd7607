"""The vector guards name None as None: not a shape () nor a non-finite NaN."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import InputError, as_batch, as_vector
from conftest import bundled


def test_none_vector_says_none():
    with pytest.raises(InputError, match=r"^q in rnea: got None, expected 7 numbers$"):
        as_vector("q", None, 7, where="rnea")
    with pytest.raises(InputError, match=r"^Q in rnea_batch: got None, expected an \(N, 3\) "
                                          r"array$"):
        as_batch("Q", None, 3, where="rnea_batch")


def test_none_entry_is_not_a_number():
    with pytest.raises(InputError, match=r"^v in rnea: not a number \(None\) at index \[1\]$"):
        as_vector("v", [1.0, None, 0.0], 3, where="rnea")
    with pytest.raises(InputError, match=r"^Q: not a number \(None\) at index \[\[1, 2\]\]$"):
        as_batch("Q", [[0.0, 0.0, 0.0], [0.0, 0.0, None]], 3)


def test_fast_path_returns_the_array_itself():
    x = np.zeros(3)
    assert as_vector("q", x, 3) is x


def test_rnea_names_none_inputs():
    model = rd.load_urdf(bundled("planar_2r.urdf"))
    data, z = model.create_data(), np.zeros(model.nv)
    with pytest.raises(InputError, match=rf"^q in rnea: got None, expected {model.nv} numbers"):
        rd.rnea(model, data, None, z, z)
    with pytest.raises(InputError, match=r"^q in rnea: not a number \(None\) at index \[0\]"):
        rd.rnea(model, data, [None] + [0.0] * (model.nv - 1), z, z)
    with pytest.raises(InputError, match=r"^tau in forward_dynamics: not a number \(None\)"):
        rd.forward_dynamics(model, data, z, z, [None] * model.nv)
