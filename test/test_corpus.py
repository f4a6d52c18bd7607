"""Every URDF of example-robot-data: loads with the defaults and agrees with Pinocchio, or is
refused for a reason the issue allows — with a message naming the link or joint and the remedy —
and then loads with validate="warn" and agrees with Pinocchio.

Allowed refusals by default: a moving body no rigid body could have (triangle inequality,
indefinite inertia), a singular mass matrix, no movable joint (and a file that is only an
unexpanded xacro stub, which Pinocchio cannot read either). One random state per robot.
"""
import glob
import os
import re
import site
import warnings

import numpy as np
import pytest

import robot_dynamics as rd
from conftest import PinMap, random_state


def _corpus():
    for base in site.getsitepackages() + [site.getusersitepackages()]:
        root = os.path.join(base, "cmeel.prefix/share/example-robot-data/robots")
        if os.path.isdir(root):
            return root, sorted(glob.glob(os.path.join(root, "**", "*.urdf"), recursive=True))
    return None, []


ROOT, FILES = _corpus()
if not FILES:
    pytest.skip("example-robot-data not installed", allow_module_level=True)

#: (pattern of the refusal, where the message must name a link or joint)
PHYSICS_REFUSALS = (
    r"link '[^']+' \(moved by joint '[^']+'.*\): principal moments .* break the triangle "
    r"inequality .*; fix its <inertial>.* or load with validate='warn'",
    r"link '[^']+' \(moved by joint '[^']+'.*\): inertia is not positive semi-definite .*; fix "
    r"its <inertial>.* or load with validate='warn'",
    r"the mass matrix is singular .*: joint\(s\) \['[^']+'.*\] move no inertia \(link\(s\) "
    r"\['[^']+'.*make those joints fixed, or load with validate='warn'",
)


def agrees_with_pinocchio(model, path):
    pm = PinMap(model, path)
    pin = pm.pin
    data = model.create_data()
    q, v, a = random_state(model, seed=len(model.joint_names))
    tau = rd.rnea(model, data, q, v, a)
    ptau = pin.rnea(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(a))
    np.testing.assert_allclose(tau, pm.ours(ptau), rtol=0, atol=1e-9 * max(1.0, np.abs(ptau).max()))
    M = rd.mass_matrix(model, data, q)
    pM = pin.crba(pm.pmodel, pm.pdata, pm.q(q))
    pM = pm.ours_matrix(np.triu(pM) + np.triu(pM, 1).T)
    np.testing.assert_allclose(M, pM, rtol=0, atol=1e-9 * max(1.0, np.abs(pM).max()))
    w = np.linalg.eigvalsh(pM)
    if w[0] > 1e-9 * w[-1]:  # FD where M is positive definite
        qdd = rd.forward_dynamics(model, data, q, v, tau + 0.1)
        pqdd = pin.aba(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(tau + 0.1))
        np.testing.assert_allclose(qdd, pm.ours(pqdd), rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(pqdd).max()))
        return True
    return False


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_corpus_robot(path):
    try:
        model = rd.load_urdf(path)
    except rd.ModelError as exc:
        msg = str(exc)
        assert msg.startswith(path + ": ") and "np.float64" not in msg
        if "has no <link>: this looks like an unexpanded xacro stub" in msg:
            pin = pytest.importorskip("pinocchio")
            with pytest.raises(Exception):  # Pinocchio cannot read it either
                pin.buildModelFromUrdf(path)
            return
        if re.search(r"robot '[^']*' has no movable joint", msg):
            pin = pytest.importorskip("pinocchio")
            assert pin.buildModelFromUrdf(path).nv == 0
            return
        assert any(re.search(p, msg) for p in PHYSICS_REFUSALS), msg
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = rd.load_urdf(path, validate="warn")
        problems = [w for w in caught if issubclass(w.category, UserWarning)]
        assert problems and all(str(w.message).startswith(path) for w in problems)
        fd = agrees_with_pinocchio(model, path)
        assert fd == ("mass matrix is singular" not in " ".join(str(w.message) for w in problems))
        return
    assert agrees_with_pinocchio(model, path)  # loaded by default: M positive definite
