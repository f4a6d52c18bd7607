"""The planar five-bar (a parallel mechanism): loop stays closed, energy is conserved, the
inverse dynamics of the actuated joints reproduces a prescribed end-effector path."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.formulations.closed_loop import load_loop_closure
from conftest import REPO, bundled

LOOP = os.path.join(REPO, "config", "five_bar_loop.yaml")


@pytest.fixture(scope="module")
def mech():
    return load_loop_closure(LOOP, rd.load_urdf(bundled("five_bar.urdf")))


@pytest.fixture(scope="module")
def hanging(mech):
    return mech.inverse_kinematics(np.array([0.0, -0.35]), np.array([1.3, -0.9, 1.8, 0.9]))


@pytest.mark.slow
def test_free_motion_keeps_loop_closed_and_conserves_energy(mech, hanging):
    q0 = mech.inverse_kinematics(np.array([0.08, -0.32]), hanging)
    # 1.5 s is a full swing (the left crank sweeps over 2 rad and back); 10 s took minutes
    out = mech.simulate(q0, np.zeros(4), 1.5, dt=1e-3)
    assert out["loop_error"].max() < 1e-8
    energy = out["energy"]
    assert np.abs(energy - energy[0]).max() < 1e-6 * abs(energy[0])
    assert np.ptp(out["q"][:, 0]) > 1.0  # it really swung


def test_inverse_dynamics_along_a_path_is_reproduced_by_forward_dynamics(mech, hanging):
    c, r, w = np.array([0.0, -0.32]), 0.04, 2 * np.pi

    def path(t):
        e = np.array([np.cos(w * t), np.sin(w * t)])
        return c + r * e, r * w * np.array([-e[1], e[0]]), -r * w * w * e

    solve = mech.inverse_dynamics_path(path, hanging)
    Q0, QD0, _, _ = solve([0.0])
    out = mech.simulate(Q0[0], QD0[0], 0.5, dt=1e-3, actuation=lambda t: solve([t])[3][0])
    ee = np.array([mech.end_effector_point(q)[0][[0, 2]] for q in out["q"]])
    ref = np.array([path(t)[0] for t in out["t"]])
    assert np.abs(ee - ref).max() < 1e-8
    # the passive joints carry no effort: λ balances them (checked through the residual)
    Q, QD, QDD, TAU = solve(out["t"][::100])
    assert np.all(np.isfinite(TAU)) and np.abs(TAU).max() > 0.1


def test_bad_loop_files_and_singular_configuration(mech):
    model = mech.model
    with pytest.raises(rd.ModelError, match="link 'ghost' is not a link of robot 'five_bar'"):
        load_loop_closure({"closures": [{"link_a": "ghost", "point_a": [0, 0, 0],
                                         "link_b": "right_distal", "point_b": [0.3, 0, 0],
                                         "components": ["x", "z"]}],
                           "actuated": ["left_motor", "right_motor"]}, model)
    with pytest.raises(rd.ModelError, match="closure 0: missing field 'point_b'"):
        load_loop_closure({"closures": [{"link_a": "left_distal", "point_a": [0, 0, 0],
                                         "link_b": "right_distal"}], "actuated": []}, model)
    with pytest.raises(rd.ModelError, match="actuated joint 'motor3'"):
        load_loop_closure({"closures": [], "actuated": ["motor3"]}, model)
    # end effector at the edge of the left chain's reach: the left arm is stretched straight
    edge = np.array([-0.1, 0.0]) + 0.5 * np.array([np.cos(-np.pi / 3), np.sin(-np.pi / 3)])
    with pytest.raises(rd.ModelError, match="singular configuration"):
        mech.inverse_kinematics(edge, np.array([1.0, -0.3, 1.8, 0.9]))
