"""Mimic joints (robot_dynamics/mimic.py): the follower moves as multiplier·q_leader + offset,
nv counts the independent joints, and rnea / M / bias / FD agree with Pinocchio's
``buildModelFromUrdf(path, mimic=True)`` (MimicPinMap below); friction acts through the
coupling (seed 004 §2.7–2.8)."""
import warnings

import numpy as np
import pytest

import robot_dynamics as rd
from conftest import PANDA, UR5, bundled, erd_urdf, random_state

pin = pytest.importorskip("pinocchio")

GRIPPER = "arm7_gripper_mimic.urdf"
CORPUS = {  # example-robot-data files with movable mimic joints
    PANDA: True,  # True: Pinocchio builds its mimic model; False: compared through G
    "baxter_description/urdf/baxter.urdf": True,
    "pr2_description/urdf/pr2.urdf": True,
    "tiago_pro_description/robots/tiago_pro.urdf": True,
    "romeo_description/urdf/romeo.urdf": False,  # a leader after its followers
    "talos_data/robots/talos_full_v2.urdf": False,
}
GRIPPER_FRICTION = {
    "default": {"model": "load_dependent", "coulomb": 0.4, "viscous": 0.1, "k1": 0.004,
                "k2": 0.001, "k3": 0.0005},
    "joints": {"finger_left": {"model": "classic", "coulomb": 2.0, "viscous": 5.0},
               "finger_right": {"model": "load_dependent", "coulomb": 1.5, "viscous": 3.0,
                                "k1": 0.05, "k2": 0.01, "k3": 0.01}},
}


class MimicPinMap:
    """Pinocchio's reference for a model with mimic joints (``model.coupling`` set), in our
    independent coordinates: ``buildModelFromUrdf(path, mimic=True)`` when Pinocchio can build
    it (its ``nv`` counts the independent joints); otherwise (Pinocchio refuses a leader placed
    after its follower in its tree order) the full Pinocchio model at the expanded state, with
    the coupling rebuilt here from the URDF tags (``model.mimic``), efforts mapped by Gᵀ."""

    def __init__(self, model, urdf_path):
        self.pin, self.model = pin, model
        try:
            self.pmodel = pin.buildModelFromUrdf(urdf_path, mimic=True)
            self.native = True
        except Exception:  # noqa: BLE001 — Pinocchio's mimic builder refuses some trees
            self.pmodel = pin.buildModelFromUrdf(urdf_path)
            self.native = False
        self.pdata = self.pmodel.createData()
        names = list(model.joint_names) if self.native else list(model.full_joint_names)
        self.jids = [self.pmodel.getJointId(n) for n in names]
        self.idx_v = np.array([self.pmodel.joints[j].idx_v for j in self.jids])
        assert self.pmodel.nv == len(names)
        if not self.native:  # q_f = m q_l + o from the tags, one level (no chains)
            col = {n: k for k, n in enumerate(model.joint_names)}
            self.G = np.zeros((len(names), model.nv))
            self.o = np.zeros(len(names))
            for i, n in enumerate(names):
                if n in col:
                    self.G[i, col[n]] = 1.0
                else:
                    leader, m, off = model.mimic[n]
                    self.G[i, col[leader]], self.o[i] = m, off

    def _state(self, q, v=None):
        if self.native:
            qf, vf = q, v
        else:
            qf = self.G @ q + self.o
            vf = None if v is None else self.G @ v
        out = np.zeros(self.pmodel.nq)
        for qi, jid in zip(qf, self.jids):
            j = self.pmodel.joints[jid]
            if j.nq == 2:
                out[j.idx_q], out[j.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                out[j.idx_q] = qi
        if v is None:
            return out
        pv = np.zeros(self.pmodel.nv)
        pv[self.idx_v] = vf
        return out, pv

    def _effort(self, vec):
        vec = np.asarray(vec)[self.idx_v]
        return vec if self.native else self.G.T @ vec

    def rnea(self, q, v, a):
        pq, pv = self._state(q, v)
        _, pa = self._state(q, a)
        return self._effort(self.pin.rnea(self.pmodel, self.pdata, pq, pv, pa))

    def crba(self, q):
        M = self.pin.crba(self.pmodel, self.pdata, self._state(q))
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(self.idx_v, self.idx_v)]
        return M if self.native else self.G.T @ M @ self.G

    def fd(self, q, v, tau):
        """q̈ = M⁻¹ (τ − b) (Pinocchio's ABA does not take mimic joints)."""
        pq, pv = self._state(q, v)
        b = self._effort(self.pin.nonLinearEffects(self.pmodel, self.pdata, pq, pv))
        return np.linalg.solve(self.crba(q), tau - b)


def agrees_with_pinocchio_mimic(model, path, seed=0, tol=1e-9):
    """rnea, M and (where M is positive definite) FD of a mimic model against
    :class:`MimicPinMap`, to ``tol`` relative to the largest reference value. Returns whether
    FD was compared, and the largest relative errors (rnea, M, FD)."""
    ref = MimicPinMap(model, path)
    data = model.create_data()
    q, v, a = random_state(model, seed=seed)
    errors = []
    tau = rd.rnea(model, data, q, v, a)
    ptau = ref.rnea(q, v, a)
    errors.append(np.abs(tau - ptau).max() / max(1.0, np.abs(ptau).max()))
    M, pM = rd.mass_matrix(model, data, q), ref.crba(q)
    errors.append(np.abs(M - pM).max() / max(1.0, np.abs(pM).max()))
    w = np.linalg.eigvalsh(pM)
    fd = bool(w[0] > 1e-9 * w[-1])
    if fd:
        qdd = rd.forward_dynamics(model, data, q, v, tau + 0.1, damping=False)  # as aba: no
        pqdd = ref.fd(q, v, tau + 0.1)  # URDF damping (issue 33)
        errors.append(np.abs(qdd - pqdd).max() / max(1.0, np.abs(pqdd).max()))
    assert max(errors) <= tol, f"{path}: relative errors (rnea, M, FD) {errors}"
    return fd, errors


def _three_link(mimic_tag):
    """A planar-ish 3R arm whose third joint carries ``mimic_tag``."""
    def link(name, m):
        return (f'<link name="{name}"><inertial><origin xyz="0.1 0.02 0.01"/><mass value="{m}"/>'
                '<inertia ixx="0.01" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.015"/>'
                '</inertial></link>')

    def joint(name, parent, child, axis, extra=""):
        return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
                f'<child link="{child}"/><origin xyz="0.3 0 0.05" rpy="0.1 0 0"/>'
                f'<axis xyz="{axis}"/><limit lower="-2" upper="2" effort="50" velocity="2"/>'
                f'<dynamics damping="0.3" friction="0.2"/>{extra}</joint>')

    return ('<robot name="three">' + link("base", 1) + link("l1", 2) + link("l2", 1.5)
            + link("l3", 0.7) + joint("j1", "base", "l1", "0 0 1")
            + joint("j2", "l1", "l2", "0 1 0") + joint("j3", "l2", "l3", "0 1 0", mimic_tag)
            + "</robot>")


@pytest.fixture(scope="module")
def gripper():
    return rd.load_urdf(bundled(GRIPPER), mimic=True)


def test_independent_coordinates_match_pinocchios_mimic_model(gripper):
    model = gripper
    pmodel = pin.buildModelFromUrdf(bundled(GRIPPER), mimic=True)
    assert model.nq == model.nv == pmodel.nv == pmodel.nq == 8
    assert model.joint_names[-1] == "finger_left" and "finger_right" not in model.joint_names
    assert model.full_joint_names[-2:] == ["finger_left", "finger_right"]
    assert model.followers == {"finger_right": "finger_left"}
    # Pinocchio gives the follower no coordinate of its own: it shares its leader's index
    fr, fl = pmodel.joints[pmodel.getJointId("finger_right")], pmodel.joints[
        pmodel.getJointId("finger_left")]
    assert fr.nv == 0 and fr.idx_v == fl.idx_v
    G = model.coupling
    assert G.shape == (9, 8) and G[8, 7] == 1.0 and np.all(G[:8] == np.eye(8))
    q = random_state(model, seed=3)[0]
    np.testing.assert_array_equal(model.expand(q), np.append(q, q[7]))
    with pytest.raises(rd.ModelError, match="'finger_right'.*mimics 'finger_left'"):
        model.joint_index("finger_right")
    with pytest.raises(rd.InputError, match=r"q in rnea: expected shape \(8,\), got \(9,\)"):
        rd.rnea(model, model.create_data(), np.zeros(9), np.zeros(8), np.zeros(8))
    with pytest.raises(rd.InputError, match="non-finite"):
        rd.forward_dynamics(model, model.create_data(), q, np.full(8, np.nan), np.zeros(8))
    with pytest.raises(AttributeError, match="model.full.parents"):
        model.parents  # noqa: B018 — per-body fields are the full tree's
    # by default (mimic=False) every movable joint is independent, as Pinocchio's default
    full = rd.load_urdf(bundled(GRIPPER))
    assert full.nv == 9 and full.coupling is None and full.mimic == model.mimic


@pytest.mark.parametrize("seed", range(3))
def test_bundled_gripper_agrees_with_pinocchio(gripper, seed):
    fd, errors = agrees_with_pinocchio_mimic(gripper, bundled(GRIPPER), seed=seed, tol=1e-12)
    assert fd and len(errors) == 3
    ref = MimicPinMap(gripper, bundled(GRIPPER))
    assert ref.native
    data = gripper.create_data()
    q, v, _ = random_state(gripper, seed=seed)
    pq, pv = ref._state(q, v)
    nle = pin.nonLinearEffects(ref.pmodel, ref.pdata, pq, pv)
    grav = pin.computeGeneralizedGravity(ref.pmodel, ref.pdata, pq)
    for ours, theirs in ((rd.bias_forces(gripper, data, q, v), nle),
                         (rd.gravity_torques(gripper, data, q), grav),
                         (rd.coriolis_torques(gripper, data, q, v), nle - grav)):
        np.testing.assert_allclose(ours, ref._effort(theirs), rtol=0, atol=1e-12)


@pytest.mark.parametrize("relpath", sorted(CORPUS))
def test_corpus_mimic_robots_agree_with_pinocchio(relpath):
    path = erd_urdf(relpath)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # validate="warn" robots (their own test: test_corpus)
        try:
            model = rd.load_urdf(path, mimic=True)
        except rd.ModelError:
            model = rd.load_urdf(path, validate="warn", mimic=True)
    assert model.coupling is not None and model.nv < len(model.full_joint_names)
    assert MimicPinMap(model, path).native == CORPUS[relpath]
    for seed in range(2):
        agrees_with_pinocchio_mimic(model, path, seed=seed)


def test_multiplier_offset_and_reference_twins():
    """A revolute follower with multiplier −0.5 and offset 0.3: Pinocchio agrees, and the NumPy
    references (rnea_reference, mass_matrix_reference) equal the compiled path."""
    from robot_dynamics.reference.dynamics import mass_matrix as mass_matrix_reference
    from robot_dynamics.reference.dynamics import rnea as rnea_reference

    text = _three_link('<mimic joint="j2" multiplier="-0.5" offset="0.3"/>')
    model = rd.load_urdf(text, mimic=True)
    assert model.nv == 2 and model.joint_names == ["j1", "j2"]
    q, v, a = random_state(model, seed=1)
    np.testing.assert_allclose(model.expand(q), [q[0], q[1], -0.5 * q[1] + 0.3], atol=1e-15)
    np.testing.assert_allclose(model.expand_velocity(v), [v[0], v[1], -0.5 * v[1]], atol=1e-15)
    # damping and URDF friction seen by the coordinate: Σ G² d and Σ |G| f
    np.testing.assert_allclose(model.damping, [0.3, 0.3 * (1 + 0.25)])
    np.testing.assert_allclose(model.urdf_friction, [0.2, 0.2 * 1.5])
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".urdf") as fh:
        fh.write(text)
        fh.flush()
        assert MimicPinMap(model, fh.name).native
        for seed in range(3):
            agrees_with_pinocchio_mimic(model, fh.name, seed=seed, tol=1e-12)
    data = model.create_data()
    np.testing.assert_allclose(rnea_reference(model, data, q, v, a), rd.rnea(model, data, q, v, a),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(mass_matrix_reference(model, data, q),
                               rd.mass_matrix(model, data, q), rtol=0, atol=1e-12)
    # power: the coordinate efforts do the work of every joint's efforts (virtual power)
    tau = rd.rnea(model, data, q, v, a)
    full = model.full
    tau_full = rd.rnea(full, full.create_data(), model.expand(q), model.expand_velocity(v),
                       model.expand_velocity(a))
    assert tau @ v == pytest.approx(tau_full @ model.expand_velocity(v), rel=1e-12)


def test_kinematics_and_gravity_follow_the_coupling(gripper):
    data = gripper.create_data()
    q = random_state(gripper, seed=2)[0]
    rd.forward_kinematics(gripper, data, q)
    full, fdata = gripper.full, gripper.full.create_data()
    rd.forward_kinematics(full, fdata, gripper.expand(q))
    for link in ("left_finger", "right_finger", "link_7"):
        np.testing.assert_allclose(rd.frame_placement(gripper, data, link),
                                   rd.frame_placement(full, fdata, link), atol=1e-14)
    g0 = rd.gravity_torques(gripper, data, q)
    gripper.gravity = [0.0, 0.0, -3.0]
    try:
        np.testing.assert_allclose(gripper.full.gravity, [0, 0, -3.0])
        np.testing.assert_allclose(rd.gravity_torques(gripper, data, q), g0 * 3.0 / 9.81,
                                   atol=1e-12)
    finally:
        gripper.gravity = [0.0, 0.0, -9.81]


def test_mimic_chains_cycles_and_unknown_leaders():
    # chain: j3 mimics j2 which mimics j1 → q3 = 2 (−0.5 q1 + 0.1) + 0.2
    text = _three_link('<mimic joint="j2" multiplier="2" offset="0.2"/>').replace(
        '<axis xyz="0 1 0"/><limit', '<axis xyz="0 1 0"/><mimic joint="j1" multiplier="-0.5" '
        'offset="0.1"/><limit', 1)
    model = rd.load_urdf(text, mimic=True)
    assert model.joint_names == ["j1"] and model.followers == {"j2": "j1", "j3": "j1"}
    np.testing.assert_allclose(model.expand([0.4]), [0.4, -0.2 + 0.1, 2 * (-0.2 + 0.1) + 0.2])
    cyc = text.replace('<mimic joint="j1"', '<mimic joint="j3"', 1)
    with pytest.raises(rd.ModelError, match=r"<mimic> tags form a cycle: j\d -> j\d -> j\d"):
        rd.load_urdf(cyc, mimic=True)
    with pytest.warns(UserWarning, match="'j3' mimics 'nope', which is not a movable joint"):
        model = rd.load_urdf(_three_link('<mimic joint="nope"/>'), mimic=True)
    assert model.coupling is None and model.nv == 3


def test_inverse_dynamics_with_friction_through_the_coupling(gripper):
    """τ_motor = Gᵀ(fn∥_full − τf_full): every full joint's friction from its own wrench."""
    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper)
    assert fr.joint_names == gripper.full_joint_names and fr.active.all()
    full_fr = rd.friction_from_config(GRIPPER_FRICTION, gripper.full)
    data, fdata = gripper.create_data(), gripper.full.create_data()
    G = gripper.coupling
    for seed in range(4):
        q, v, a = random_state(gripper, seed=seed)
        tau = rd.inverse_dynamics(gripper, data, q, v, a, friction=fr)
        tau_full = rd.inverse_dynamics(gripper.full, fdata, gripper.expand(q),
                                       gripper.expand_velocity(v), gripper.expand_velocity(a),
                                       friction=full_fr)
        np.testing.assert_allclose(tau, G.T @ tau_full, rtol=0, atol=1e-12)
        np.testing.assert_allclose(data.tau_friction, G.T @ fdata.tau_friction, atol=1e-12)
        # the follower's friction is its own: both fingers dissipate, the coordinate sums them
        tf = fdata.tau_friction
        assert tf[7] * tf[8] > 0 and data.tau_friction[7] == pytest.approx(tf[7] + tf[8])
        assert data.tau_friction[7] * v[7] < 0
        smooth = rd.inverse_dynamics(gripper, data, q, v, a, friction=fr, smoothing_velocity=0.01)
        smooth_full = rd.inverse_dynamics(gripper.full, fdata, gripper.expand(q),
                                          gripper.expand_velocity(v), gripper.expand_velocity(a),
                                          friction=full_fr, smoothing_velocity=0.01)
        np.testing.assert_allclose(smooth, G.T @ smooth_full, rtol=0, atol=1e-12)
        frictionless = rd.rnea(gripper, data, q, v, a)
        assert abs(tau[7] - frictionless[7]) > 1.5 + 2.0  # both Coulomb levels at least


@pytest.mark.parametrize("seed", range(3))
def test_forward_dynamics_inverts_inverse_dynamics_with_friction(gripper, seed):
    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper)
    data = gripper.create_data()
    q, v, a = random_state(gripper, seed=seed)
    tau = rd.inverse_dynamics(gripper, data, q, v, a, friction=fr)
    qdd = rd.forward_dynamics(gripper, data, q, v, tau, friction=fr)
    assert data.fd_report.converged and data.fd_report.stuck == []
    np.testing.assert_allclose(qdd, a, rtol=0, atol=1e-8)
    # the reference entry point takes the same path
    from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference

    np.testing.assert_allclose(forward_dynamics_reference(gripper, data, q, v, tau, fr), qdd,
                               atol=1e-12)


def test_follower_sticks_with_its_leader(gripper):
    """Gripper at rest (the arm moving): the coordinate's stiction bound is the sum of both
    fingers' bounds; below it the pair stays stuck, above it both break away together."""
    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper)
    data = gripper.create_data()
    q, v, _ = random_state(gripper, seed=5)
    v[7] = 0.0
    q[7] = 0.02
    tau0 = rd.bias_forces(gripper, data, q, v)  # what holds the fingers with no friction
    rd.forward_dynamics(gripper, data, q, v, tau0, friction=fr)
    assert data.fd_report.stuck == ["finger_left"]
    # bounds of both fingers at the stuck solution (classic: 2 N; load-dependent: ≥ 1.5 N)
    W = rd.joint_wrenches(gripper, data)
    assert W.shape == (9, 6)
    bounds = fr.full.bounds(gripper.full, W, gripper.expand(q), np.ones(9))
    total = bounds[7] + bounds[8]
    assert bounds[7] == pytest.approx(2.0) and bounds[8] > 1.5
    for push, stuck in ((0.9 * total, True), (1.1 * total, False)):
        tau = tau0.copy()
        tau[7] += push
        qdd = rd.forward_dynamics(gripper, data, q, v, tau, friction=fr)
        assert data.fd_report.converged
        if stuck:  # finger_left (and with it finger_right) does not move
            assert data.fd_report.stuck == ["finger_left"] and qdd[7] == 0.0
            assert data.tau_friction[7] == pytest.approx(-push, rel=1e-6)
        else:
            assert data.fd_report.breaking_away == ["finger_left"] and qdd[7] > 0
            assert gripper.expand_velocity(qdd)[8] == qdd[7]


def test_simulator_keeps_the_fingers_stuck_together_and_balances_energy(gripper):
    """The simulator steps a mimic model through its Python path: the arm held by gravity
    compensation, the gripper at rest under a push below the pair's stiction bound stays
    exactly at rest; a larger push opens both fingers; the energy audit balances."""
    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper)
    data = gripper.create_data()
    q0 = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.7, 0.1, 0.02])
    for push, moves in ((1.5, False), (12.0, True)):
        # no stops: 12 N would carry the finger to its upper stop (0.04 m) within the run
        sim = rd.Simulator(gripper, friction=fr, dt=2e-3, limits=False)
        sim.reset(q0)
        for _ in range(40):
            tau = rd.gravity_torques(gripper, data, sim.q)
            tau[7] += push
            sim.step(tau)
        assert sim.report.converged
        if moves:
            assert sim.v[7] > 0 and sim.q[7] > q0[7] + 1e-4
            assert sim.report.stuck == [] or "finger_left" not in sim.report.stuck
        else:
            assert sim.v[7] == 0.0 and sim.q[7] == q0[7]
            assert "finger_left" in sim.report.stuck
        q_full = gripper.expand(sim.q)
        assert q_full[8] == q_full[7]  # the follower is where its leader says
        audit = sim.audit
        assert abs(audit.relative_residual) < 1e-3, str(audit)
        if moves:
            assert audit.motor_work > 0 and audit.friction_dissipation > 0


def test_simulator_node_publishes_the_follower():
    """/joint_states of a mimic robot names every movable joint, followers at G q + o, so
    robot_state_publisher can draw them."""
    pytest.importorskip("rclpy")
    from ros_helpers import NodeProcess, RosProbe
    from sensor_msgs.msg import JointState

    from robot_dynamics.ros.common import STATE_QOS

    q0 = [0.0, 0.4, 0.0, -1.0, 0.0, 0.5, 0.0, 0.015]
    node = NodeProcess("simulator", {"robot": "arm7_gripper_mimic", "mode": "fast",
                                     "initial_positions": q0, "friction_config": "none",
                                     "publish_every": 5})
    probe = RosProbe("mimic_sim_probe")
    try:
        assert node.wait_log("simulating", 30), node.log
        states = probe.collect(JointState, "/joint_states", STATE_QOS)
        assert probe.wait_for(lambda: len(states) > 5, timeout=20), node.log
        msg = states[-1]
        assert list(msg.name) == gripper_full_names()
        pos, vel = dict(zip(msg.name, msg.position)), dict(zip(msg.name, msg.velocity))
        assert pos["finger_right"] == pos["finger_left"]
        assert vel["finger_right"] == vel["finger_left"]
        assert len(msg.effort) == 9 and msg.effort[8] == 0.0
        assert "mimic joints follow their leaders" in node.log
    finally:
        probe.close()
        node.stop()


def gripper_full_names():
    return [f"joint_a{i}" for i in range(1, 8)] + ["finger_left", "finger_right"]


def test_dynamics_model_outputs_are_per_independent_joint(gripper):
    pytest.importorskip("rclpy")
    from robot_dynamics.ros.dynamics_model import compute_outputs

    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper)
    data = gripper.create_data()
    q, v, _ = random_state(gripper, seed=7)
    out = compute_outputs(gripper, data, q, v, fr, "zero", None)
    assert out["wrenches"].shape == (8, 6) and out["mass_matrix"].shape == (8, 8)
    rd.inverse_dynamics(gripper, data, q, v, np.zeros(8), friction=fr)
    np.testing.assert_array_equal(out["wrenches"][7], data.full.f[7])  # finger_left's own row
    np.testing.assert_allclose(out["friction"], data.tau_friction)


def _leaders_only(config):
    """``config`` with no friction on the follower (finger_right): the compiled step's case."""
    joints = dict(config.get("joints", {}))
    joints["finger_right"] = {"model": "none"}
    return dict(config, joints=joints)


@pytest.mark.parametrize("law", ["none", "friction"])
def test_compiled_mimic_step_agrees_with_the_python_statement(gripper, law):
    """No follower with friction: the simulator steps the coordinates in one compiled call
    (kernels/fd.py _coupled_mass: the full tree at G q + o, then Gᵀ M G, Gᵀ b and the leaders'
    loads), and agrees with the Python statement of the scheme over a run with stick/slip and
    the fingers driven into their stops."""
    fr = None if law == "none" else rd.friction_from_config(_leaders_only(GRIPPER_FRICTION),
                                                            gripper.full)
    data = gripper.create_data()
    q0 = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.7, 0.1, 0.02])

    def controller(t, q, v):
        push = 3.0 * np.sin(9 * t + np.arange(gripper.nv)) * (np.sin(3 * t) > -0.2)
        push[7] = 15.0 * np.sign(np.sin(6 * t))  # the fingers slam into either stop
        return rd.gravity_torques(gripper, data, q) + push

    runs, sims = [], []
    for compiled in (True, False):
        sim = rd.Simulator(gripper, fr, dt=1e-3, compiled=compiled)
        sim.reset(q0)
        runs.append(sim.run(0.6, controller))
        sims.append(sim)
    assert sims[0]._packed is not None and sims[1]._packed is None  # compiled, and Python
    fast, slow = runs
    for key in ("q", "v", "tau_friction", "tau_limit"):
        np.testing.assert_allclose(fast[key], slow[key], atol=1e-10, rtol=1e-10, err_msg=key)
    finger = fast["q"][:, 7]
    assert finger.min() == 0.0 and finger.max() == 0.04  # on both stops, exactly
    if fr is not None:
        stuck = fast["v"][:, :7] == 0.0
        assert stuck.any() and (~stuck).any()
    W = sims[0].joint_wrenches  # every full joint's, the follower's too
    assert W.shape == (9, 6) and np.isfinite(W).all()
    for name in ("motor_work", "friction_dissipation", "limit_dissipation"):
        assert getattr(sims[0].audit, name) == pytest.approx(getattr(sims[1].audit, name),
                                                             rel=1e-10, abs=1e-12)
    assert abs(sims[0].audit.relative_residual) < 1e-3


def test_mimic_step_stays_in_python_where_the_kernel_cannot_take_it(gripper):
    """A follower with friction of its own (its share enters its leader's coordinate), or a
    follower in another branch than its leader's (M couples the branches: no tree pattern),
    steps through the Python statement."""
    from robot_dynamics.friction.coupled import python_step_reason

    fr = rd.friction_from_config(GRIPPER_FRICTION, gripper.full)
    assert rd.Simulator(gripper, fr)._packed is None
    assert "follower(s) ['finger_right'] have friction of their own" in \
        python_step_reason(gripper, fr)
    leaders = rd.friction_from_config(_leaders_only(GRIPPER_FRICTION), gripper.full)
    assert rd.Simulator(gripper, leaders)._packed is not None
    assert python_step_reason(gripper, leaders) == python_step_reason(gripper, None) == ""
    cross = _three_link('').replace(
        '<joint name="j3" type="revolute"><parent link="l2"/>',
        '<joint name="j3" type="revolute"><parent link="base"/>')
    cross = cross.replace("</robot>", '<link name="l4"><inertial><mass value="0.5"/><inertia '
                          'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'
                          '</inertial></link><joint name="j4" type="revolute"><parent '
                          'link="l3"/><child link="l4"/><axis xyz="0 1 0"/><limit lower="-2" '
                          'upper="2" effort="50" velocity="2"/><mimic joint="j2"/></joint>'
                          "</robot>")
    model = rd.load_urdf(cross, mimic=True)  # j4 (under j3) follows j2 (under j1)
    assert model.nv == 3 and model._cp is None
    assert "another branch" in python_step_reason(model, None)
    sim = rd.Simulator(model)
    assert sim._packed is None
    sim.step(np.zeros(3))
    assert np.isfinite(sim.q).all()


def test_forward_dynamics_compiled_solve_agrees_with_the_reference(gripper):
    """No follower with friction: forward_dynamics takes the compiled stick/slip solve on the
    leaders' loads. A follower with a law of zero friction (active, so the reference path)
    is the same physics: the two agree, sliding, stuck and breaking away."""
    leaders = rd.friction_from_config(_leaders_only(GRIPPER_FRICTION), gripper.full)
    zero = dict(_leaders_only(GRIPPER_FRICTION))
    zero["joints"] = dict(zero["joints"], finger_right={"model": "classic", "coulomb": 0.0})
    reference = rd.friction_from_config(zero, gripper.full)
    from robot_dynamics.friction.coupled import coupled_friction

    assert coupled_friction(leaders, gripper).step_pack is not None
    assert coupled_friction(reference, gripper).step_pack is None
    data = gripper.create_data()
    seen = set()
    for seed in range(12):
        q, v, _ = random_state(gripper, seed=seed)
        v[np.random.default_rng(seed).random(gripper.nv) < 0.5] = 0.0  # some at rest
        tau = rd.bias_forces(gripper, data, q, v) + np.random.default_rng(seed).normal(
            0.0, 2.0, gripper.nv)
        out = []
        for fr in (leaders, reference):
            a = rd.forward_dynamics(gripper, data, q, v, tau, friction=fr)
            out.append((a, data.tau_friction.copy(), data.fd_report,
                        rd.joint_wrenches(gripper, data)))
        (a1, f1, r1, w1), (a2, f2, r2, w2) = out
        np.testing.assert_allclose(a1, a2, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(f1, f2, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(w1, w2, rtol=1e-10, atol=1e-9)
        assert r1.stuck == r2.stuck and r1.breaking_away == r2.breaking_away
        seen.update(("stuck" if r1.stuck else "", "breaking" if r1.breaking_away else ""))
    assert {"stuck", "breaking"} <= seen


def test_compiled_mimic_step_with_rotors_on_coordinates_and_on_the_full_tree():
    """Armature per coordinate (``model.armature``, the packed coordinates' slots) and on the
    full tree's joints (``model.full.armature``): the compiled step equals the Python one."""
    model = rd.load_urdf(bundled(GRIPPER), mimic=True)
    model.armature = np.linspace(0.01, 0.08, model.nv)
    model.full.armature = np.linspace(0.0, 0.02, model.full.nv)
    fr = rd.friction_from_config(_leaders_only({"default": {"model": "classic", "coulomb": 0.5,
                                                            "viscous": 0.1}}), model.full)
    data = model.create_data()
    sims = [rd.Simulator(model, fr, compiled=c) for c in (True, False)]
    q0 = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.7, 0.1, 0.02])
    for sim in sims:
        sim.reset(q0)
    for k in range(200):
        tau = rd.gravity_torques(model, data, sims[0].q) + 2.0 * np.sin(0.05 * k + np.arange(8))
        for sim in sims:
            sim.step(tau)
    assert sims[0]._packed is not None
    np.testing.assert_allclose(sims[0].q, sims[1].q, atol=1e-10, rtol=0)
    np.testing.assert_allclose(sims[0].v, sims[1].v, atol=1e-10, rtol=0)
    assert np.abs(sims[0].q - q0).max() > 1e-3  # it moved


def test_mimic_api_on_a_robot_without_followers():
    """``load_urdf(..., mimic=True)`` of a robot with no movable follower is a plain Model (as
    Pinocchio's); code written for mimic models still runs on it: ``full`` is the model itself,
    ``expand`` / ``expand_velocity`` / ``reduce_effort`` the identity, with the usual checks."""
    model = rd.load_urdf(erd_urdf(UR5), mimic=True)
    assert model.coupling is None and model.full is model and not model.followers
    assert model.full_joint_names == model.joint_names
    q = np.linspace(-1.0, 1.0, model.nv)
    out = model.expand(q)
    np.testing.assert_array_equal(out, q)
    out[0] = 5.0  # a copy, not a view of the caller's array
    assert q[0] == -1.0
    np.testing.assert_array_equal(model.expand_velocity(q), q)
    np.testing.assert_array_equal(model.reduce_effort(q), q)
    with pytest.raises(rd.InputError, match="q in expand"):
        model.expand(q[:2])


def test_batch_inverse_dynamics_of_a_mimic_model_equals_the_single_calls(gripper):
    """rnea_batch / inverse_dynamics_batch / joint_wrenches_batch take a mimic model: sample by
    sample they equal rnea / inverse_dynamics (friction of every full joint from its own wrench)."""
    from robot_dynamics.algorithm.batch import (inverse_dynamics_batch, joint_wrenches_batch,
                                                rnea_batch)
    friction = rd.friction_from_config({"default": {
        "model": "load_dependent", "coulomb": 0.2, "viscous": 0.05, "k1": 0.01, "k2": 0.004}},
        gripper)
    states = [random_state(gripper, seed) for seed in range(5)]
    Q, V, A = (np.array([s[k] for s in states]) for k in range(3))
    data = gripper.create_data()
    tau, tauf = inverse_dynamics_batch(gripper, Q, V, A, friction, return_friction=True)
    plain = rnea_batch(gripper, Q, V, A)
    wrenches = joint_wrenches_batch(gripper, Q, V, A)
    assert wrenches.shape == (5, len(gripper.full_joint_names), 6)
    for k, (q, v, a) in enumerate(states):
        np.testing.assert_allclose(plain[k], rd.rnea(gripper, data, q, v, a), atol=1e-10)
        np.testing.assert_allclose(wrenches[k], data.f, atol=1e-10)
        np.testing.assert_allclose(tau[k], rd.inverse_dynamics(gripper, data, q, v, a, friction),
                                   atol=1e-9)
        np.testing.assert_allclose(tauf[k], data.tau_friction, atol=1e-9)
    assert np.abs(tauf).max() > 0.1  # the friction is there


def test_aggregate_refuses_a_mimic_model_in_one_line(gripper):
    from robot_dynamics.algorithm.aggregated import aggregate

    z = np.zeros(gripper.nv)
    with pytest.raises(rd.ModelError, match=r"mimic joints.*model\.full") as err:
        aggregate(gripper, gripper.create_data(), z, z)
    assert "\n" not in str(err.value)
    full = gripper.full  # the way the message names works
    agg = aggregate(full, full.create_data(), gripper.expand(z), gripper.expand_velocity(z))
    assert agg.pl.shape[1] == len(gripper.full_joint_names)
