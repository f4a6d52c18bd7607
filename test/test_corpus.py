"""Every URDF of example-robot-data: loads with the defaults and agrees with Pinocchio, or is
refused for a reason the issue allows — with a message naming the link or joint and the remedy —
and then loads with validate="warn" and agrees with Pinocchio.

Allowed refusals by default: a moving body no rigid body could have (triangle inequality,
indefinite inertia), no movable joint (and a file that is only an unexpanded xacro stub, which
Pinocchio cannot read either). A singular mass matrix (massless moving links, as the fingers of
romeo.urdf) loads with a warning naming the joints; rnea and M agree with Pinocchio, and forward
dynamics refuses with that same message. One random state per robot.
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
)
#: the warning (and forward dynamics' refusal) of a singular mass matrix, naming the joints
SINGULAR = (r"the mass matrix is singular .*: joint\(s\) \['[^']+'.*\] move no inertia "
            r"\(link\(s\) \['[^']+'.*forward dynamics and simulation cannot run.*make those "
            r"joints fixed")


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
    if model.mass_matrix_problem:  # loaded with a singular M: forward dynamics refuses
        assert re.search(SINGULAR, model.mass_matrix_problem), model.mass_matrix_problem
        assert w[0] <= 1e-9 * w[-1]  # Pinocchio's M is singular too
        with pytest.raises(rd.ModelError) as exc:
            rd.forward_dynamics(model, data, q, v, tau + 0.1)
        assert str(exc.value) == model.mass_matrix_problem
        return False
    if w[0] > 1e-9 * w[-1]:  # FD where M is positive definite
        qdd = rd.forward_dynamics(model, data, q, v, tau + 0.1, damping=False)  # as pin.aba
        pqdd = pin.aba(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(tau + 0.1))
        np.testing.assert_allclose(qdd, pm.ours(pqdd), rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(pqdd).max()))
        return True
    return False


def _load(path, **options):
    """The model and the UserWarnings its loading gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rd.load_urdf(path, **options)
    return model, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_corpus_robot(path):
    try:
        model, problems = _load(path)
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
        model, problems = _load(path, validate="warn")
        assert problems and all(w.startswith(path) for w in problems)
    singular = [w for w in problems if "mass matrix is singular" in w]
    assert singular == ([model.mass_matrix_problem] if model.mass_matrix_problem else [])
    fd = agrees_with_pinocchio(model, path)
    assert fd == (model.mass_matrix_problem is None)


def test_humanoid_with_massless_fingers_loads_and_only_forward_dynamics_refuses():
    """romeo.urdf, whose finger links carry no mass (refused by default before): loads with one
    warning naming the finger joints; rnea and M agree with Pinocchio; forward dynamics and the
    Simulator refuse with the warning's message."""
    path = os.path.join(ROOT, "romeo_description/urdf/romeo.urdf")
    if not os.path.isfile(path):
        pytest.skip("romeo.urdf not in this example-robot-data")
    model, problems = _load(path)
    assert problems == [model.mass_matrix_problem]
    assert re.search(SINGULAR, model.mass_matrix_problem) and "\n" not in problems[0]
    assert "'LHand', 'LFinger12'" in problems[0] and "(24 in all)" in problems[0]
    assert not agrees_with_pinocchio(model, path)  # rnea and M compared; FD refused
    with pytest.raises(rd.ModelError) as exc:
        rd.Simulator(model)
    assert str(exc.value) == model.mass_matrix_problem
