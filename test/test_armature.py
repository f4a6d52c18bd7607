"""Armature (reflected rotor inertia, issue 16): ``model.armature`` in every algorithm, as
Pinocchio's — M + diag(armature), τ = Sᵀ fn + armature ∘ q̈ (the joint wrenches exclude the
rotors), FD with M + diag(armature) — compiled kernels and their reference twins alike."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch, joint_wrenches_batch, rnea_batch
from robot_dynamics.reference.dynamics import mass_matrix as mass_matrix_reference
from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference
from robot_dynamics.friction import friction_from_config
from robot_dynamics.reference.dynamics import rnea as rnea_reference
from conftest import PANDA, UR5, PinMap, REPO, bundled, erd_urdf, random_state

ROBOTS = [PANDA, UR5, "arm7.urdf"]
# every built-in law kind on one robot (the default covers the joints not listed)
ALL_LAWS = {
    "default": {"model": "load_dependent", "coulomb": 0.4, "viscous": 0.1, "k1": 0.004,
                "k2": 0.001, "k3": 0.0005},
    "joints": {
        "panda_joint1": {"model": "classic", "coulomb": 1.5, "viscous": 0.5,
                         "stribeck": {"static": 2.0, "velocity": 0.05}},
        "shoulder_pan_joint": {"model": "classic", "coulomb": 1.5, "viscous": 0.5,
                               "stribeck": {"static": 2.0, "velocity": 0.05}},
        "joint_a1": {"model": "classic", "coulomb": 1.5, "viscous": 0.5,
                     "stribeck": {"static": 2.0, "velocity": 0.05}},
        "panda_joint2": {"model": "bearing", "mu": 0.05, "pin_radius": 0.02,
                         "friction_arm": 0.03, "bending_arm": 0.08, "preload": 0.3},
        "shoulder_lift_joint": {"model": "bearing", "mu": 0.05, "pin_radius": 0.02,
                                "friction_arm": 0.03, "bending_arm": 0.08, "preload": 0.3},
        "joint_a2": {"model": "bearing", "mu": 0.05, "pin_radius": 0.02, "friction_arm": 0.03,
                     "bending_arm": 0.08, "preload": 0.3},
        "panda_joint3": {"model": "load_dependent", "form": "2.5.5", "coulomb": 0.8,
                         "viscous": 0.3, "k1": 0.005, "k2": 0.002},
        "elbow_joint": {"model": "load_dependent", "form": "2.5.5", "coulomb": 0.8,
                        "viscous": 0.3, "k1": 0.005, "k2": 0.002},
        "joint_a3": {"model": "load_dependent", "form": "2.5.5", "coulomb": 0.8, "viscous": 0.3,
                     "k1": 0.005, "k2": 0.002},
    },
}


def _path(robot):
    return bundled(robot) if robot.endswith(".urdf") and "/" not in robot else erd_urdf(robot)


def _laws(model):
    cfg = dict(ALL_LAWS)
    cfg["joints"] = {k: v for k, v in ALL_LAWS["joints"].items() if k in model.joint_names}
    return friction_from_config(cfg, model)


def _armature(model, seed=5):
    return np.random.default_rng(seed).uniform(0.05, 2.0, model.nv)


def _pin_with_armature(model, path, armature):
    pm = PinMap(model, path)
    pm.pmodel.armature = pm.v(armature)
    pm.pdata = pm.pmodel.createData()
    return pm


def _close(x, ref, tol=1e-9):
    np.testing.assert_allclose(x, ref, rtol=0, atol=tol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("robot", ROBOTS, ids=os.path.basename)
def test_id_m_fd_match_pinocchio_armature(robot):
    path = _path(robot)
    model = rd.load_urdf(path)
    data, ref = model.create_data(), model.create_data()  # Data made before the armature is set
    arm = _armature(model)
    model.armature = arm
    pm = _pin_with_armature(model, path, arm)
    pin = pm.pin
    for seed in range(3):
        q, v, a = random_state(model, seed)
        pq, pv, pa = pm.q(q), pm.v(v), pm.v(a)
        ptau = pm.ours(pin.rnea(pm.pmodel, pm.pdata, pq, pv, pa))
        Wp = pm.wrenches()  # Pinocchio's data.f: without the rotors
        for fn in (rd.rnea, rnea_reference):
            _close(fn(model, data, q, v, a), ptau)
            _close(rd.joint_wrenches(model, data), Wp)
        pM = pin.crba(pm.pmodel, pm.pdata, pq)
        pM = pm.ours_matrix(np.triu(pM) + np.triu(pM, 1).T)
        _close(rd.mass_matrix(model, data, q), pM)
        _close(mass_matrix_reference(model, ref, q), pM)
        # bias and gravity: no armature (Pinocchio's nle and generalized gravity)
        _close(rd.bias_forces(model, data, q, v),
               pm.ours(pin.nonLinearEffects(pm.pmodel, pm.pdata, pq, pv)))
        _close(rd.gravity_torques(model, data, q),
               pm.ours(pin.computeGeneralizedGravity(pm.pmodel, pm.pdata, pq)))
        tau = ptau + np.random.default_rng(seed).normal(size=model.nv)
        pqdd = pm.ours(pin.aba(pm.pmodel, pm.pdata, pq, pv, pm.v(tau)))
        # Pinocchio's aba and rnea have no URDF damping (panda's 0.003–0.3): damping=False
        _close(rd.forward_dynamics(model, data, q, v, tau, damping=False), pqdd)
        _close(forward_dynamics_reference(model, ref, q, v, tau, damping=False), pqdd)
        _close(rd.forward_dynamics(model, data, q, v, ptau, damping=False), a)  # round trip
    # the rotors matter here: without them Pinocchio's M differs by diag(armature)
    model.armature = np.zeros(model.nv)
    np.testing.assert_allclose(np.diag(pM) - np.diag(rd.mass_matrix(model, data, q)), arm,
                               rtol=1e-12)


@pytest.mark.parametrize("robot", ROBOTS, ids=os.path.basename)
def test_friction_id_and_fd_with_armature_match_pinocchio(robot):
    """Friction-aware ID: τ = fn∥ + armature∘q̈ − τf with τf from the link-side wrenches
    (Pinocchio's data.f); FD with friction (compiled, and the Python twin with the Python
    solver) solves Pinocchio's (M + diag(armature)) q̈ + b = τ + τf, and inverts ID (without
    the URDF damping d∘q̇, which the motor effort holds and Pinocchio and FD do not: panda's
    0.003–0.3)."""
    from robot_dynamics.control.friction_compensation import compensated_inverse_dynamics

    path = _path(robot)
    model = rd.load_urdf(path)
    fr = _laws(model)
    arm = _armature(model, 9)
    model.armature = arm
    pm = _pin_with_armature(model, path, arm)
    pin = pm.pin
    data, ref = model.create_data(), model.create_data()
    rng = np.random.default_rng(3)
    stuck_seen = False
    for seed in range(4):
        q, v, a = random_state(model, seed)
        pq, pv = pm.q(q), pm.v(v)
        # ID with friction against Pinocchio's rnea and the laws at Pinocchio's wrenches
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        ptau = pm.ours(pin.rnea(pm.pmodel, pm.pdata, pq, pv, pm.v(a)))
        Wp = pm.wrenches()
        mag = np.array([fr.laws[i].magnitude(Wp[i], model.axes[i], model.kinds[i] == 1, q[i],
                                             v[i]) for i in range(model.nv)])
        _close(data.tau_friction, -mag * np.sign(v))
        _close(tau, ptau + mag * np.sign(v) + model.damping * v)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr, damping=False)
        _close(tau, ptau + mag * np.sign(v))
        # ... and its Python path (smoothing), and the controller's compensation, carry it too
        model.armature = np.zeros(model.nv)
        tau0 = rd.inverse_dynamics(model, data, q, v, a, friction=fr, smoothing_velocity=1e-3)
        c0 = compensated_inverse_dynamics(model, data, q, v, a, fr, v + 0.1)
        model.armature = arm
        _close(rd.inverse_dynamics(model, data, q, v, a, friction=fr, smoothing_velocity=1e-3)
               - tau0, arm * a)
        _close(compensated_inverse_dynamics(model, data, q, v, a, fr, v + 0.1) - c0, arm * a)
        # FD round trip (every joint sliding)
        _close(rd.forward_dynamics(model, data, q, v, tau, fr, damping=False), a)
        _close(rd.forward_dynamics(model, data, q, v, rd.inverse_dynamics(model, data, q, v, a,
                                                                          friction=fr), fr), a)
        # FD with resting joints: compiled against the twin, both against Pinocchio's ABA
        v[rng.random(model.nv) < 0.5] = 0.0
        pv = pm.v(v)
        tau = rd.gravity_torques(model, data, q) * rng.uniform(0.2, 1.2) + rng.normal(
            size=model.nv)
        a1 = rd.forward_dynamics(model, data, q, v, tau, fr, damping=False)  # as pin.aba below
        a2 = forward_dynamics_reference(model, ref, q, v, tau, fr, damping=False)
        _close(a1, a2)
        _close(data.tau_friction, ref.tau_friction)
        assert data.fd_report.stuck == ref.fd_report.stuck
        stuck_seen = stuck_seen or bool(data.fd_report.stuck)
        _close(a1, pm.ours(pin.aba(pm.pmodel, pm.pdata, pq, pv, pm.v(tau + data.tau_friction))))
    assert stuck_seen  # stiction, with the rotors in M, was exercised


def test_kernels_and_twins_agree_with_armature():
    """rnea/crba kernels, the batch functions and the simulator's fused step against their
    NumPy statements, armature on (friction, stops and stiction exercised)."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = _laws(model)
    model.armature = _armature(model, 2)
    fast, ref = model.create_data(), model.create_data()
    Q, V, A = (np.array(x) for x in zip(*(random_state(model, s) for s in range(8))))
    for q, v, a in zip(Q, V, A):
        np.testing.assert_allclose(rd.rnea(model, fast, q, v, a),
                                   rnea_reference(model, ref, q, v, a), atol=1e-10, rtol=0)
        np.testing.assert_allclose(fast.f, ref.f, atol=1e-10, rtol=0)
        np.testing.assert_allclose(rd.mass_matrix(model, fast, q),
                                   mass_matrix_reference(model, ref, q), atol=1e-10, rtol=0)
    one = [rd.rnea(model, fast, q, v, a) for q, v, a in zip(Q, V, A)]
    np.testing.assert_allclose(rnea_batch(model, Q, V, A), one, atol=1e-10, rtol=0)
    one = [rd.inverse_dynamics(model, fast, q, v, a, friction=fr) for q, v, a in zip(Q, V, A)]
    np.testing.assert_allclose(inverse_dynamics_batch(model, Q, V, A, fr), one, atol=1e-10,
                               rtol=0)
    W = []
    for q, v, a in zip(Q, V, A):
        rd.rnea(model, fast, q, v, a)
        W.append(rd.joint_wrenches(model, fast))  # link-side: the rotors are not in them
    np.testing.assert_allclose(joint_wrenches_batch(model, Q, V, A), W, atol=1e-10, rtol=0)
    # the fused simulation step against the Python scheme: friction, stiction and the stops
    sims = [rd.Simulator(model, fr, dt=1e-3, compiled=c) for c in (True, False)]
    data = model.create_data()
    q0 = model.upper_limits - np.linspace(0.02, 0.3, model.nv)  # some joints reach their stop

    def controller(t, q, v):
        return rd.gravity_torques(model, data, q) + 40.0 * np.sin(7 * t + np.arange(model.nv))

    runs = []
    for sim in sims:
        sim.reset(q0)
        runs.append(sim.run(0.25, controller))
    fast_run, slow_run = runs
    np.testing.assert_allclose(fast_run["q"], slow_run["q"], atol=1e-9)
    np.testing.assert_allclose(fast_run["v"], slow_run["v"], atol=1e-8)
    np.testing.assert_allclose(fast_run["tau_friction"], slow_run["tau_friction"], atol=1e-7)
    assert (fast_run["v"] == 0).any()  # some joint stuck exactly at some step
    assert sims[0].limit_steps > 0 and sims[0].limit_steps == sims[1].limit_steps
    a1, a2 = sims[0].audit, sims[1].audit
    for name in ("motor_work", "friction_dissipation", "limit_dissipation", "kinetic"):
        assert getattr(a1, name) == pytest.approx(getattr(a2, name), rel=1e-8, abs=1e-12)


def test_energy_audit_closes_with_armature_and_every_friction_kind():
    """10 s of tracking with the rotors, every built-in friction law and URDF damping:
    ΔT + ΔV = W_motor − D_friction − D_damping, T including ½ Σ armature q̇². Measured
    (dt = 1 ms): relative residual ~6e-8, the rotors' kinetic energy ~1 J at the end."""
    with open(bundled("arm7.urdf")) as fh:
        text = fh.read().replace('damping="0.0"', 'damping="0.5"')
    model = rd.load_urdf(text)
    fr = _laws(model)
    arm = np.array([2.5, 2.5, 1.2, 1.2, 0.4, 0.2, 0.2])  # N²·J of harmonic drives of that size
    model.armature = arm
    sim = rd.Simulator(model, fr, dt=1e-3)
    q0 = np.array([0.1, 0.5, -0.2, -1.0, 0.3, 0.6, 0.0])
    sim.reset(q0)
    cd = model.create_data()
    amp, w = np.array([0.6, 0.4, 0.5, 0.5, 0.8, 0.6, 1.0]), np.linspace(0.7, 1.9, 7)

    def controller(t, q, v):
        qd, vd, ad = q0 + amp * np.sin(w * t), amp * w * np.cos(w * t), -amp * w * w * np.sin(w * t)
        return rd.inverse_dynamics(model, cd, q, v, ad + 30 * (vd - v) + 300 * (qd - q),
                                   friction=fr)

    out = sim.run(10.0, controller)
    audit = sim.audit
    assert audit.motor_work > 10 and audit.friction_dissipation > 10
    assert audit.damping_dissipation > 1
    assert abs(audit.relative_residual) < 1e-6, str(audit)
    # the rotors' kinetic energy is in T: without it the audit would be off by far more
    rotor = 0.5 * arm @ sim.v ** 2
    assert rotor > 1e4 * abs(audit.residual)
    # computed torque with the rotors in the model tracks the reference
    assert np.abs(out["q"][-1] - (q0 + amp * np.sin(w * sim.t))).max() < 0.05


def test_setting_armature_before_or_after_data_and_simulator():
    model = rd.load_urdf(bundled("arm7.urdf"))
    q, v, a = random_state(model, 4)
    early = model.create_data()
    sim_early = rd.Simulator(model, None, dt=1e-3)
    base = (rd.rnea(model, early, q, v, a), rd.mass_matrix(model, early, q))
    arm = _armature(model, 1)
    model.armature = arm
    late = model.create_data()
    for data in (early, late):
        np.testing.assert_allclose(rd.rnea(model, data, q, v, a), base[0] + arm * a, atol=1e-12)
        np.testing.assert_allclose(rd.mass_matrix(model, data, q), base[1] + np.diag(arm),
                                   atol=1e-12)
    sim_late = rd.Simulator(model, None, dt=1e-3)
    tau = rd.gravity_torques(model, late, q) + 5.0
    for sim in (sim_early, sim_late):
        sim.reset(q, v)
        sim.step(tau)
    np.testing.assert_array_equal(sim_early.q, sim_late.q)
    np.testing.assert_array_equal(sim_early.v, sim_late.v)
    expected = rd.forward_dynamics(model, late, q + 0.5e-3 * v, v, tau)  # the step's q̈, roughly
    assert np.abs((sim_late.v - v) / 1e-3 - expected).max() < 1e-2 * np.abs(expected).max()
    # read-only, validated, restorable
    with pytest.raises(ValueError):
        model.armature[0] = 1.0
    for bad in ([1.0] * 6, [-0.1] + [0.0] * 6, [np.nan] * 7, "x"):
        with pytest.raises(rd.ModelError, match="armature"):
            model.armature = bad
    np.testing.assert_array_equal(model.armature, arm)  # a rejected value changes nothing
    model.armature = 0.0  # a scalar: every joint
    np.testing.assert_array_equal(rd.rnea(model, early, q, v, a), base[0])
    np.testing.assert_array_equal(rd.mass_matrix(model, early, q), base[1])


def test_mimic_armature_is_on_the_coordinates_as_pinocchios():
    import pinocchio as pin

    path = bundled("arm7_gripper_mimic.urdf")
    model = rd.load_urdf(path, mimic=True)
    pmodel = pin.buildModelFromUrdf(path, mimic=True)
    assert pmodel.armature.shape == (model.nv,)  # Pinocchio's armature is per coordinate too
    arm = _armature(model, 7)
    model.armature = arm
    np.testing.assert_array_equal(model.full.armature, 0.0)
    jids = [pmodel.getJointId(n) for n in model.joint_names]
    idx = np.array([pmodel.joints[j].idx_v for j in jids])
    parm = np.zeros(pmodel.nv)
    parm[idx] = arm
    pmodel.armature = parm
    pdata = pmodel.createData()
    data = model.create_data()
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_gripper_friction.yaml"), model)
    for seed in range(2):
        q, v, a = random_state(model, seed)
        pq, pv, pa = (np.zeros(pmodel.nq) for _ in range(3))
        pq[idx], pv[idx], pa[idx] = q, v, a
        ptau = pin.rnea(pmodel, pdata, pq, pv, pa)[idx]
        _close(rd.rnea(model, data, q, v, a), ptau)
        pM = pin.crba(pmodel, pdata, pq)
        pM = (np.triu(pM) + np.triu(pM, 1).T)[np.ix_(idx, idx)]
        _close(rd.mass_matrix(model, data, q), pM)
        tau = ptau + 0.3
        pb = pin.nonLinearEffects(pmodel, pdata, pq, pv)[idx]
        _close(rd.forward_dynamics(model, data, q, v, tau), np.linalg.solve(pM, tau - pb))
        # with friction: the rotors add armature ∘ q̈ and nothing to the friction
        tf = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        tauf = data.tau_friction.copy()
        _close(tf, ptau - tauf)
        _close(rd.forward_dynamics(model, data, q, v, tf, friction=fr), a)


def test_aggregated_mass_matrix_and_maintaining_map_take_the_rotors():
    """Seed 004 §2.6 with rotors: M = S A + diag(armature); the maintaining map J∥ → J⊥ gives
    the normal reactions of the motion the axial efforts produce (FD), the wrenches fn of
    eq. 2.3.7 staying link-side."""
    from robot_dynamics.algorithm.aggregated import aggregate

    model = rd.load_urdf(bundled("arm7.urdf"))
    arm = _armature(model, 3)
    model.armature = arm
    data = model.create_data()
    q, v, _ = random_state(model, 6)
    agg = aggregate(model, data, q, v)
    M = rd.mass_matrix(model, data, q)
    np.testing.assert_allclose(agg.mass_matrix, M, atol=1e-10)
    np.testing.assert_allclose(agg.S @ agg.pl + np.diag(arm), M, atol=1e-10)
    tau = rd.gravity_torques(model, data, q) + np.linspace(-3, 3, model.nv)
    qdd = rd.forward_dynamics(model, data, q, v, tau)
    rd.rnea(model, data, q, v, qdd)
    np.testing.assert_allclose(agg.fn(qdd), data.f, atol=1e-9)
    np.testing.assert_allclose(agg.maintaining_map().normal_wrenches(tau),
                               (agg.N.T @ (agg.N @ data.f.reshape(-1))).reshape(-1, 6), atol=1e-9)


def test_dynamics_model_node_outputs_take_the_armature():
    pytest.importorskip("rclpy")
    from robot_dynamics.ros.dynamics_model import compute_outputs

    model = rd.load_urdf(bundled("arm7.urdf"))
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_friction.yaml"), model)
    data = model.create_data()
    q, v, _ = random_state(model, 2)
    effort = rd.gravity_torques(model, data, q) + 2.0
    before = compute_outputs(model, data, q, v, fr, "forward_dynamics", effort)
    arm = _armature(model, 8)
    model.armature = arm
    after = compute_outputs(model, data, q, v, fr, "forward_dynamics", effort)
    np.testing.assert_allclose(after["mass_matrix"], before["mass_matrix"] + np.diag(arm),
                               atol=1e-12)
    np.testing.assert_allclose(after["gravity"], before["gravity"], atol=1e-12)
    np.testing.assert_allclose(after["bias"], before["bias"], atol=1e-12)
    # the measured efforts accelerate the rotors too: less acceleration
    assert np.abs(after["acceleration"]).sum() < np.abs(before["acceleration"]).sum()
    np.testing.assert_allclose(rd.inverse_dynamics(model, data, q, v, after["acceleration"], fr),
                               effort, atol=1e-9)


def test_friction_identification_accounts_for_the_rotors():
    """The fitter's friction effort is τ − fn∥ − armature∘q̈: with the rotors in the model it
    recovers the coefficients of data generated with them (ignoring them, armature∘q̈ would
    be taken for friction)."""
    from robot_dynamics.identification import fit
    from robot_dynamics.identification import fourier_excitation

    model = rd.load_urdf(bundled("arm7.urdf"))
    model.armature = np.array([2.5, 2.5, 1.2, 1.2, 0.4, 0.2, 0.2])
    fr = friction_from_config({"default": {"model": "classic", "coulomb": 0.8, "viscous": 0.3}},
                              model)
    _, Q, V, A = fourier_excitation(model, duration=10.0, rate=200.0)
    tau = inverse_dynamics_batch(model, Q, V, A, fr)  # noiseless: the fit is exact
    for j in fit(model, Q, V, tau, A, law="classic").joints:
        truth = {"coulomb_positive": 0.8, "coulomb_negative": 0.8, "viscous": 0.3}
        assert j.coefficients == pytest.approx(truth, abs=1e-9), j.joint
        assert j.residual_rms < 1e-9


def test_formulations_take_or_refuse_armature():
    """Lagrange–Euler includes the rotors (M + diag(armature)); the symbolic redundant derivation,
    which models the links only, refuses the model instead of answering without them."""
    from robot_dynamics.formulations import lagrange_euler as le, redundant

    model = rd.load_urdf(bundled("rrp.urdf"))
    model.armature = [0.3, 0.2, 0.1]
    data = model.create_data()
    rng = np.random.default_rng(7)
    q, v, a = rng.uniform(-0.5, 0.5, (3, 3))
    np.testing.assert_allclose(le.inverse_dynamics(model, q, v, a), rd.rnea(model, data, q, v, a),
                               atol=1e-12)
    with pytest.raises(rd.ModelError, match="armature"):
        redundant.from_model(model)
