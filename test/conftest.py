"""Shared test helpers: example-robot-data URDFs and the map to Pinocchio's q (test-only)."""
from __future__ import annotations

import os
import site

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def erd_urdf(relpath: str) -> str:
    """Path of a URDF shipped by the example-robot-data wheel, e.g. 'panda_description/urdf/panda.urdf'."""
    for base in site.getsitepackages() + [site.getusersitepackages()]:
        path = os.path.join(base, "cmeel.prefix/share/example-robot-data/robots", relpath)
        if os.path.isfile(path):
            return path
    pytest.skip(f"example-robot-data not installed ({relpath})")


PANDA = "panda_description/urdf/panda.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"


def bundled(name: str) -> str:
    return os.path.join(REPO, "urdf", name)


class PinMap:
    """Maps our one-angle-per-joint vectors to a Pinocchio model built from the same URDF."""

    def __init__(self, model, urdf_path):
        pin = pytest.importorskip("pinocchio")
        self.pin = pin
        self.pmodel = pin.buildModelFromUrdf(urdf_path)
        self.pdata = self.pmodel.createData()
        self.jids = [self.pmodel.getJointId(n) for n in model.joint_names]
        self.idx_v = np.array([self.pmodel.joints[j].idx_v for j in self.jids])
        assert self.pmodel.nv == model.nv

    def q(self, q):
        out = np.zeros(self.pmodel.nq)
        for qi, jid in zip(q, self.jids):
            j = self.pmodel.joints[jid]
            if j.nq == 2:  # continuous: (cos, sin)
                out[j.idx_q], out[j.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                out[j.idx_q] = qi
        return out

    def v(self, v):
        out = np.zeros(self.pmodel.nv)
        out[self.idx_v] = v
        return out

    def ours(self, vec):
        """A Pinocchio nv-vector in our joint order."""
        return np.asarray(vec)[self.idx_v]

    def ours_matrix(self, M):
        return np.asarray(M)[np.ix_(self.idx_v, self.idx_v)]

    def wrenches(self):
        """Pinocchio's data.f (after rnea) in our order, (nv, 6) [f; n] in the joint frame."""
        return np.array([self.pdata.f[j].vector for j in self.jids])


def random_state(model, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    q = rng.uniform(lo, hi)
    v = scale * rng.uniform(-1.5, 1.5, model.nv)
    a = scale * rng.uniform(-3.0, 3.0, model.nv)
    return q, v, a
