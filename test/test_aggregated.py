"""Seed 004's aggregated objects: eq. 2.3.7 reproduces RNEA, S A = M, the isomorphism inverts,
and the maintaining map returns the reactions RNEA finds."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.aggregated import aggregate, efforts_to_joints, joints_to_efforts
from conftest import PANDA, REPO, erd_urdf, random_state

TREE = "talos_data/robots/talos_reduced.urdf"  # 32 dof, branched


@pytest.mark.parametrize("robot", [PANDA, TREE])
def test_parametrisation_2_3_7_reproduces_rnea(robot):
    model = rd.load_urdf(erd_urdf(robot))
    data = model.create_data()
    for seed in range(3):
        q, v, _ = random_state(model, seed)
        agg = aggregate(model, data, q, v)
        for k in range(3):
            qdd = np.random.default_rng(10 * seed + k).normal(size=model.nv)
            rd.rnea(model, data, q, v, qdd)
            W = rd.joint_wrenches(model, data)
            np.testing.assert_allclose(agg.fn(qdd), W, atol=1e-9 * max(1, np.abs(W).max()))
        M = rd.mass_matrix(model, data, q)
        np.testing.assert_allclose(agg.mass_matrix, M, atol=1e-10)
        np.testing.assert_allclose(agg.bias, rd.bias_forces(model, data, q, v), atol=1e-9)


def test_velocity_basis_gives_kinetic_energy_of_mass_matrix():
    """Σ ½ m |v_C|² + ½ ω·I ω from vω = Σ q̇_α vω_α equals ½ q̇ᵀ M q̇."""
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q, v, _ = random_state(model, 4)
    agg = aggregate(model, data, q, v)
    vw = (agg.velocity_basis @ v).reshape(-1, 6)
    R = data.oMi[:, :3, :3]
    T = 0.0
    for i in range(model.nv):
        Iw = R[i] @ model.inertias[i] @ R[i].T
        T += 0.5 * model.masses[i] * vw[i, :3] @ vw[i, :3] + 0.5 * vw[i, 3:] @ Iw @ vw[i, 3:]
    M = rd.mass_matrix(model, data, q)
    assert T == pytest.approx(0.5 * v @ M @ v, rel=1e-12)
    # PL_α paired with vω_β is M_αβ (power pairing of V and E, §2.2)
    np.testing.assert_allclose(agg.velocity_basis.T @ agg.PL, M, atol=1e-10)


def test_isomorphism_E_J_round_trip():
    model = rd.load_urdf(erd_urdf(TREE))
    data = model.create_data()
    q, v, _ = random_state(model, 2)
    rd.forward_kinematics(model, data, q)
    FN = np.random.default_rng(0).normal(size=6 * model.nv)
    np.testing.assert_allclose(joints_to_efforts(model, data, efforts_to_joints(model, data, FN)), FN,
                               atol=1e-10)


def test_maintaining_map_returns_rnea_reactions():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q, v, a = random_state(model, 5)
    agg = aggregate(model, data, q, v)
    mmap = agg.maintaining_map()
    tau = rd.rnea(model, data, q, v, a)  # axial efforts that produce q̈ = a
    W = rd.joint_wrenches(model, data)
    normal = W - np.einsum("ij,ij->i", model.motion_subspaces, W)[:, None] * model.motion_subspaces
    np.testing.assert_allclose(mmap.normal_wrenches(tau), normal, atol=1e-9 * np.abs(W).max())
    coords = mmap(tau)
    assert coords.shape == (model.nv, 5)
    np.testing.assert_allclose(np.linalg.norm(coords, axis=1), np.linalg.norm(normal, axis=1),
                               atol=1e-9 * np.abs(W).max())


@pytest.mark.parametrize("robot", ["planar_2r", PANDA])
def test_perfect_reaction_1_3_5_7_is_the_recursions_joint_wrench_under_external_efforts(robot):
    """Seed 004 §1.3.4–1.3.5 against the recursions: with external efforts FN_ext and no motor
    effort, FN_vin = FN_* − FN_ext⊥ maps (E → J) to the joint wrenches rnea gives at the
    acceleration forward dynamics gives; those have no axial part (a perfect reaction), and
    FN_ext + FN_vin maintains that motion (= Σ q̈_α PL_α + FN(q, q̇, 0))."""
    model = rd.load_urdf(erd_urdf(robot) if robot == PANDA else
                         os.path.join(REPO, "urdf", "planar_2r.urdf"))
    assert not np.any(model.armature)
    data, rec = model.create_data(), model.create_data()
    rng = np.random.default_rng(3)
    for seed in range(3):
        q, v, _ = random_state(model, seed)
        fext = rng.uniform(-20, 20, (model.nv, 6))
        agg = aggregate(model, data, q, v, fext=fext)
        FN_vin = agg.perfect_reaction()
        fn_vin = efforts_to_joints(model, data, FN_vin).reshape(-1, 6)
        # the seed's perfect reactions: no motor, no URDF damping (panda's; issue 33)
        qdd = rd.forward_dynamics(model, rec, q, v, np.zeros(model.nv), fext=fext, damping=False)
        rd.rnea(model, rec, q, v, qdd, fext=fext)
        scale = np.abs(rec.f).max()
        np.testing.assert_allclose(fn_vin, rec.f, atol=1e-9 * scale)
        axial = agg.S @ efforts_to_joints(model, data, FN_vin)
        assert np.abs(axial).max() < 1e-9 * scale  # no work along the joints: perfect
        np.testing.assert_allclose(agg.FN_ext + FN_vin, agg.PL @ qdd + agg.FN0,
                                   atol=1e-9 * np.abs(agg.FN0).max())
        assert np.abs(agg.FN_ext).max() > 1.0  # the external efforts are there
        # without them the reaction is the maintaining-normal effort FN_*
        np.testing.assert_allclose(agg.perfect_reaction(np.zeros_like(agg.FN_ext)),
                                   agg.maintaining_normal, atol=1e-12 * scale)
        np.testing.assert_allclose(agg.velocity_basis.T @ agg.maintaining_normal, 0,
                                   atol=1e-9 * scale)
