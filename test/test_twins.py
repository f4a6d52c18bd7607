"""Every compiled kernel against its readable twin in robot_dynamics.reference (one table).

Each row: the public algorithm (compiled), the NumPy statement of the same computation under
``robot_dynamics.reference`` with the same signature, what is compared, and the tolerance. The
scenario tests elsewhere (stick/slip runs, stops, gear meshes) hold the twins to each other on
particular motions; this table holds them on random states of every bundled robot, two
example-robot-data arms and a mimic model.
"""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from robot_dynamics.kernels.contact import plane_contact
from robot_dynamics.reference import contact as ref_contact
from robot_dynamics.reference import dynamics as ref_dynamics
from robot_dynamics.reference import forward_dynamics as ref_fd
from robot_dynamics.reference import kinematics as ref_kinematics
from conftest import PANDA, REPO, UR5, erd_urdf, random_state

ROBOTS = sorted(glob.glob(os.path.join(REPO, "urdf", "*.urdf"))) + [PANDA, UR5, "mimic"]
LOAD = {"default": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.01,
                    "k2": 0.005, "k3": 0.002}}


def _forward_kinematics(fk):
    def run(model, data, q, v, a):
        fk(model, data, q)
        return data.oMi.copy()
    return run


def _fext(model, q):
    """External wrenches on every body (of the full tree for a mimic model), fixed by q."""
    seed = int(1e6 * abs(float(q[0]))) % 2**32
    return np.random.default_rng(seed).normal(scale=10.0, size=(model.full.nv, 6))


def _fd(fd, law, external=False):
    def run(model, data, q, v, a):
        friction = None if law is None else friction_from_config(law, model)
        tau = rd.rnea(model, model.create_data(), q, v, a)
        if external:
            return fd(model, data, q, v, tau, friction, on_failure="report", fext=_fext(model, q))
        return fd(model, data, q, v, tau, friction, on_failure="report")
    return run


def _fd_of_id(fd, law, external=False, damping=True):
    """Forward dynamics (issue 33: its joints feel −d∘q̇ with ``damping``, the model's own URDF
    damping: panda's 0.003–0.3, zero on the bundled robots) on inverse dynamics' efforts."""
    def run(model, data, q, v, a):
        friction = None if law is None else friction_from_config(law, model)
        fext = _fext(model, q) if external else None
        tau = rd.inverse_dynamics(model, model.create_data(), q, v, a, friction, fext=fext,
                                  damping=damping)
        return fd(model, data, q, v, tau, friction, on_failure="report", fext=fext,
                  damping=damping)
    return run


def _id(inverse_dynamics, external=False, law=LOAD):
    """Motor efforts (issue 33: fn∥ + armature∘q̈ − τf + d∘q̇) on the model's own URDF damping
    (panda's 0.003–0.3; zero on the bundled robots)."""
    def run(model, data, q, v, a):
        friction = None if law is None else friction_from_config(law, model)
        return inverse_dynamics(model, data, q, v, a, friction,
                                fext=_fext(model, q) if external else None)
    return run


def _contact(law):
    """A point–plane contact on the last body of the (full) tree at (q, v): the plane 1 cm
    beyond the point along a tilted normal, so it pushes (spring, damper and friction)."""
    def run(model, data, q, v, a):
        full = model.full
        if full is not model:
            q, v = model.expand(q), model.expand_velocity(v)
        d = full.create_data()
        rd.forward_kinematics(full, d, q)
        rd.rnea(full, d, q, v, np.zeros(full.nv))
        b, c, n = full.nv - 1, np.array([0.01, 0.02, 0.03]), np.array([0.0, 0.6, 0.8])
        x = d.oMi[b, :3, :3] @ c + d.oMi[b, :3, 3]
        out = np.zeros((full.nv, 6))
        law(d.oMi, d.v, b, c, x + 0.01 * n, n, 1e4, 5.0, 0.5, 1e-3, out, np.zeros(3))
        assert out.any()
        return out
    return run


#: (name, compiled call, reference call, tolerance); each call takes (model, data, q, v, a)
TWINS = [
    ("rnea", lambda m, d, q, v, a: rd.rnea(m, d, q, v, a),
     lambda m, d, q, v, a: ref_dynamics.rnea(m, d, q, v, a), 1e-10),
    ("joint wrenches", lambda m, d, q, v, a: (rd.rnea(m, d, q, v, a), d.f.copy())[1],
     lambda m, d, q, v, a: (ref_dynamics.rnea(m, d, q, v, a), d.f.copy())[1], 1e-10),
    ("mass_matrix", lambda m, d, q, v, a: rd.mass_matrix(m, d, q),
     lambda m, d, q, v, a: ref_dynamics.mass_matrix(m, d, q), 1e-10),
    ("wrench_directors", lambda m, d, q, v, a: rd.wrench_directors(m, d, q),
     lambda m, d, q, v, a: ref_dynamics.wrench_directors(m, d, q), 1e-10),
    ("placements", _forward_kinematics(rd.forward_kinematics),
     _forward_kinematics(ref_kinematics.placements), 1e-12),
    ("forward_dynamics", _fd(rd.forward_dynamics, None), _fd(ref_fd.forward_dynamics, None), 1e-9),
    ("forward_dynamics, load-dependent friction", _fd(rd.forward_dynamics, LOAD),
     _fd(ref_fd.forward_dynamics, LOAD), 1e-8),
    ("rnea with fext", lambda m, d, q, v, a: rd.rnea(m, d, q, v, a, _fext(m, q)),
     lambda m, d, q, v, a: ref_dynamics.rnea(m, d, q, v, a, _fext(m, q)), 1e-10),
    ("joint wrenches with fext",
     lambda m, d, q, v, a: (rd.rnea(m, d, q, v, a, _fext(m, q)), d.f.copy())[1],
     lambda m, d, q, v, a: (ref_dynamics.rnea(m, d, q, v, a, _fext(m, q)), d.f.copy())[1], 1e-10),
    ("forward_dynamics with fext", _fd(rd.forward_dynamics, None, True),
     _fd(ref_fd.forward_dynamics, None, True), 1e-9),
    ("forward_dynamics with fext, load-dependent friction", _fd(rd.forward_dynamics, LOAD, True),
     _fd(ref_fd.forward_dynamics, LOAD, True), 1e-8),
    ("plane contact", _contact(plane_contact), _contact(ref_contact.plane_contact), 1e-12),
    ("inverse_dynamics, load-dependent friction and URDF damping", _id(rd.inverse_dynamics),
     _id(ref_dynamics.inverse_dynamics), 1e-10),
    ("inverse_dynamics with fext, load-dependent friction and URDF damping",
     _id(rd.inverse_dynamics, True), _id(ref_dynamics.inverse_dynamics, True), 1e-10),
    ("inverse_dynamics, URDF damping only", _id(rd.inverse_dynamics, law=None),
     _id(ref_dynamics.inverse_dynamics, law=None), 1e-10),
    ("forward_dynamics of inverse_dynamics' efforts, URDF damping only",
     _fd_of_id(rd.forward_dynamics, None), _fd_of_id(ref_fd.forward_dynamics, None), 1e-9),
    ("forward_dynamics of inverse_dynamics' efforts, load-dependent friction and URDF damping",
     _fd_of_id(rd.forward_dynamics, LOAD), _fd_of_id(ref_fd.forward_dynamics, LOAD), 1e-8),
    ("forward_dynamics with fext of inverse_dynamics' efforts, load-dependent friction and "
     "URDF damping", _fd_of_id(rd.forward_dynamics, LOAD, True),
     _fd_of_id(ref_fd.forward_dynamics, LOAD, True), 1e-8),
    ("forward_dynamics of inverse_dynamics' efforts, damping=False",
     _fd_of_id(rd.forward_dynamics, LOAD, damping=False),
     _fd_of_id(ref_fd.forward_dynamics, LOAD, damping=False), 1e-8),
]


def _load(name):
    if name == "mimic":
        return rd.load_urdf(os.path.join(REPO, "urdf", "arm7_gripper_mimic.urdf"), mimic=True)
    return rd.load_urdf(name if os.path.isabs(name) else erd_urdf(name))


@pytest.fixture(scope="module", params=ROBOTS, ids=os.path.basename)
def model(request):
    return _load(request.param)


@pytest.mark.parametrize("name, compiled, readable, tol", TWINS, ids=[t[0] for t in TWINS])
def test_compiled_kernel_equals_its_readable_twin(model, name, compiled, readable, tol):
    if name == "placements" and model.coupling is not None:
        pytest.skip("a mimic model's poses are its full tree's (the full model is in the table)")
    for seed in range(3):
        q, v, a = random_state(model, seed)
        fast, ref = compiled(model, model.create_data(), q, v, a), \
            readable(model, model.create_data(), q, v, a)
        scale = max(1.0, float(np.abs(ref).max()))
        np.testing.assert_allclose(fast, ref, atol=tol * scale, rtol=0, err_msg=f"{name}, seed {seed}")
