"""External efforts (issue 32, core): ``fext`` in rnea, inverse and forward dynamics (compiled,
articulated and general stick/slip solves), the batch calls, mimic models, the helpers.

Convention (Pinocchio's): row i of ``fext`` is the wrench [force; torque] applied on body i,
in body i's frame, torque about its origin. Pinocchio's ``rnea``/``aba`` with the same ``fext``
are the reference; a closed-form one-link case pins down what the friction laws read.
"""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm import batch
from robot_dynamics.errors import InputError
from robot_dynamics.friction import friction_from_config
from robot_dynamics.reference import dynamics as ref_dynamics
from robot_dynamics.reference import forward_dynamics as ref_fd
from conftest import PANDA, REPO, UR5, PinMap, erd_urdf, random_state

BUNDLED = sorted(glob.glob(os.path.join(REPO, "urdf", "*.urdf")))
LOAD = {"default": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.01,
                    "k2": 0.005, "k3": 0.002}}


def _path(name):
    return name if os.path.isabs(name) else erd_urdf(name)


def _fext(n, seed, scale=20.0):
    return np.random.default_rng(1000 + seed).normal(scale=scale, size=(n, 6))


def _pin_fext(pm, F):
    pin = pm.pin
    out = pin.StdVec_Force()
    for _ in range(pm.pmodel.njoints):
        out.append(pin.Force.Zero())
    for i, jid in enumerate(pm.jids):
        out[jid] = pin.Force(np.asarray(F[i], dtype=float))
    return out


@pytest.mark.parametrize("name", BUNDLED + [PANDA, UR5], ids=os.path.basename)
def test_rnea_id_fd_with_fext_match_pinocchio(name):
    """rnea (τ and every joint wrench), inverse and forward dynamics with the same fext as
    Pinocchio's rnea/aba, to 1e-9 (relative to the largest entry)."""
    path = _path(name)
    model = rd.load_urdf(path)
    data = model.create_data()
    pm = PinMap(model, path)
    pin = pm.pin
    for seed in range(3):
        q, v, a = random_state(model, seed)
        F = _fext(model.nv, seed)
        pf = _pin_fext(pm, F)
        tau = rd.rnea(model, data, q, v, a, F)
        ptau = pin.rnea(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(a), pf)
        scale = max(1.0, np.abs(ptau).max())
        np.testing.assert_allclose(tau, pm.ours(ptau), rtol=0, atol=1e-9 * scale)
        Wp = pm.wrenches()
        np.testing.assert_allclose(data.f, Wp, rtol=0, atol=1e-9 * max(1.0, np.abs(Wp).max()))
        assert np.abs(tau - rd.rnea(model, data, q, v, a)).max() > 1e-3  # fext matters
        # without friction and URDF damping (panda's 0.003–0.3: Pinocchio has none) ID is rnea
        np.testing.assert_array_equal(rd.inverse_dynamics(model, data, q, v, a, fext=F,
                                                          damping=False), tau)
        np.testing.assert_allclose(rd.inverse_dynamics(model, data, q, v, a, fext=F),
                                   tau + model.damping * v, rtol=0, atol=1e-12 * scale)
        qdd = rd.forward_dynamics(model, data, q, v, tau, fext=F, damping=False)  # rnea's inverse
        np.testing.assert_allclose(qdd, a, rtol=0, atol=1e-9 * max(1.0, np.abs(a).max()))
        tau2 = np.random.default_rng(seed).uniform(-5, 5, model.nv)
        pqdd = pin.aba(pm.pmodel, pm.pdata, pm.q(q), pm.v(v), pm.v(tau2), pf)
        qdd = rd.forward_dynamics(model, data, q, v, tau2, fext=F, damping=False)  # as pin.aba
        np.testing.assert_allclose(qdd, pm.ours(pqdd), rtol=0,
                                   atol=1e-9 * max(1.0, np.abs(pqdd).max()))


@pytest.mark.parametrize("name", [PANDA, os.path.join(REPO, "urdf", "arm7.urdf")],
                         ids=os.path.basename)
def test_fext_none_and_zeros_give_identical_numbers(name):
    model = rd.load_urdf(_path(name))
    friction = friction_from_config(LOAD, model)
    zeros = np.zeros((model.nv, 6))
    d1, d2 = model.create_data(), model.create_data()
    for seed in range(3):
        q, v, a = random_state(model, seed)
        v[seed] = 0.0  # a joint at rest: the stick/slip rules run
        np.testing.assert_array_equal(rd.rnea(model, d1, q, v, a), rd.rnea(model, d2, q, v, a, zeros))
        np.testing.assert_array_equal(d1.f, d2.f)
        for fr in (None, friction):
            np.testing.assert_array_equal(rd.inverse_dynamics(model, d1, q, v, a, fr),
                                          rd.inverse_dynamics(model, d2, q, v, a, fr, fext=zeros))
            tau = rd.inverse_dynamics(model, d1, q, v, a, fr) * 0.9
            np.testing.assert_array_equal(rd.forward_dynamics(model, d1, q, v, tau, fr),
                                          rd.forward_dynamics(model, d2, q, v, tau, fr, fext=zeros))
            np.testing.assert_array_equal(d1.tau_friction, d2.tau_friction)
            np.testing.assert_array_equal(
                ref_fd.forward_dynamics(model, d1, q, v, tau, fr),
                ref_fd.forward_dynamics(model, d2, q, v, tau, fr, fext=zeros))
    Q = np.array([random_state(model, s)[0] for s in range(4)])
    V, A = np.cos(Q), np.sin(Q)
    Z = np.zeros((4, model.nv, 6))
    np.testing.assert_array_equal(batch.inverse_dynamics_batch(model, Q, V, A, friction),
                                  batch.inverse_dynamics_batch(model, Q, V, A, friction,
                                                                           FEXT=Z))


def test_friction_paths_read_the_loaded_wrenches():
    """Inverse dynamics with friction: compiled laws and the Python path agree with fext; forward
    dynamics (compiled: articulated or general solve) inverts it; the reference solve agrees.
    (Panda's URDF damping is 0.003–0.3: the round trip takes it out of the efforts with
    forward_dynamics' default, issue 33, and inverts damping=False with damping=False.)"""
    model = rd.load_urdf(erd_urdf(PANDA))
    friction = friction_from_config(LOAD, model)
    data = model.create_data()
    for seed in range(3):
        q, v, a = random_state(model, seed)
        F = _fext(model.nv, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction, fext=F, damping=False)
        tauf = data.tau_friction.copy()
        rd.rnea(model, data, q, v, a, F)
        d = np.sign(v)
        mag = friction.magnitudes(model, data.f, q, v, d)
        np.testing.assert_allclose(tauf, -mag * d, atol=1e-10)
        assert np.abs(tau - rd.inverse_dynamics(model, data, q, v, a, friction,
                                                damping=False)).max() > 1e-3
        smoothed = rd.inverse_dynamics(model, data, q, v, a, friction, smoothing_velocity=1e-9,
                                       fext=F, damping=False)  # the Python path (laws as objects)
        np.testing.assert_allclose(smoothed, tau, atol=1e-9)
        qdd = rd.forward_dynamics(model, data, q, v, tau, friction, fext=F, damping=False)
        np.testing.assert_allclose(qdd, a, atol=1e-7)
        qdd_ref = ref_fd.forward_dynamics(model, model.create_data(), q, v, tau, friction, fext=F,
                                          damping=False)
        np.testing.assert_allclose(qdd_ref, a, atol=1e-7)
        damped = rd.inverse_dynamics(model, data, q, v, a, friction, fext=F)  # + d∘q̇
        np.testing.assert_allclose(rd.forward_dynamics(model, data, q, v, damped, friction,
                                                       fext=F), a, atol=1e-7)
        np.testing.assert_allclose(ref_fd.forward_dynamics(model, model.create_data(), q, v,
                                                           damped, friction, fext=F),
                                   a, atol=1e-7)


# -- closed form: one link turning about a vertical axis ------------------------------------
M_LINK, R_COM, IZZ = 2.0, 0.4, 0.05
C0, VISC, K1, K2, K3 = 0.2, 0.03, 0.02, 0.01, 0.005

ONE_LINK = f"""<robot name="turntable">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="{R_COM} 0 0"/><mass value="{M_LINK}"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="{IZZ}"/></inertial>
  </link>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-10" upper="10" effort="100" velocity="10"/></joint>
</robot>
"""


@pytest.fixture()
def turntable(tmp_path):
    path = tmp_path / "turntable.urdf"
    path.write_text(ONE_LINK)
    model = rd.load_urdf(str(path))
    law = {"default": {"model": "load_dependent", "coulomb": C0, "viscous": VISC, "k1": K1,
                       "k2": K2, "k3": K3}}
    return model, friction_from_config(law, model)


@pytest.mark.parametrize("omega", [1.5, -2.0])
def test_turntable_motor_effort_is_the_law_on_the_hand_computed_reaction(turntable, omega):
    """Constant speed ω, a radial (outward) force P at the centre of mass. The joint carries
    f = (−m ω² r − P, 0, m g) (centripetal, the pull, the weight) and n = (0, −m g r, 0): the
    motor supplies sign(ω) (c + v|ω| + k1 m g r + k2 (m ω² r + P) + k3 m g), growing with P."""
    model, friction = turntable
    data = model.create_data()
    g = 9.81
    q, v, a = np.array([0.7]), np.array([omega]), np.array([0.0])
    efforts = []
    for P in (0.0, 5.0, 20.0, 80.0):
        F = rd.point_force(model, data, q, "arm", [P, 0, 0], point=[R_COM, 0, 0], local=True)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction, fext=F)
        np.testing.assert_allclose(data.f[0], [-M_LINK * omega**2 * R_COM - P, 0, M_LINK * g,
                                               0, -M_LINK * g * R_COM, 0], atol=1e-12)
        f_perp = M_LINK * omega**2 * R_COM + P
        expected = np.sign(omega) * (C0 + VISC * abs(omega) + K1 * M_LINK * g * R_COM
                                     + K2 * f_perp + K3 * M_LINK * g)
        np.testing.assert_allclose(tau, [expected], rtol=0, atol=1e-12)
        # the same force given in world coordinates, at the centre of mass's world position
        c, s = np.cos(q[0]), np.sin(q[0])
        Fw = rd.point_force(model, data, q, "arm", [P * c, P * s, 0], point=[R_COM * c, R_COM * s, 0])
        np.testing.assert_allclose(Fw, F, atol=1e-12)
        efforts.append(abs(tau[0]))
        # forward dynamics under that effort: the same constant speed
        np.testing.assert_allclose(rd.forward_dynamics(model, data, q, v, tau, friction, fext=F),
                                   [0.0], atol=1e-10)
    assert np.all(np.diff(efforts) > 0)  # friction grows with the force


@pytest.mark.parametrize("solver", ["compiled", "reference"])
def test_stiction_under_a_load_holds_inside_its_bound_and_breaks_beyond(turntable, solver):
    """At rest, with a radial pull P at the centre of mass, the breakaway bound is
    c + k1 m g r + k2 P + k3 m g: an effort of 0.98 bound holds the joint (q̈ = 0, friction
    −τ), 1.02 bound breaks it away in the effort's direction — both signs; an effort that
    breaks away without the load is held once the load raises the bound."""
    model, friction = turntable
    data = model.create_data()
    fd = rd.forward_dynamics if solver == "compiled" else ref_fd.forward_dynamics
    g = 9.81
    q, v = np.array([0.3]), np.array([0.0])
    for P in (0.0, 30.0, 100.0):
        F = rd.point_force(model, data, q, "arm", [P, 0, 0], point=[R_COM, 0, 0], local=True)
        bound = C0 + K1 * M_LINK * g * R_COM + K2 * P + K3 * M_LINK * g
        for sign in (1.0, -1.0):
            held = fd(model, data, q, v, np.array([0.98 * sign * bound]), friction, fext=F)
            assert abs(held[0]) < 1e-12
            np.testing.assert_allclose(data.tau_friction, [-0.98 * sign * bound], atol=1e-12)
            moving = fd(model, data, q, v, np.array([1.02 * sign * bound]), friction, fext=F)
            assert sign * moving[0] > 1e-3
    tau = np.array([1.5 * (C0 + K1 * M_LINK * g * R_COM + K3 * M_LINK * g)])
    assert fd(model, data, q, v, tau, friction)[0] > 0  # no load: breaks away
    F = rd.point_force(model, data, q, "arm", [100.0, 0, 0], point=[R_COM, 0, 0], local=True)
    assert abs(fd(model, data, q, v, tau, friction, fext=F)[0]) < 1e-12  # loaded: held


# -- helpers ---------------------------------------------------------------------------------
def test_point_force_world_equals_local_and_contributions_add():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    rng = np.random.default_rng(3)
    q, v, a = random_state(model, 5)
    for link in ("panda_link4", "panda_hand", "panda_link7"):
        f_l, t_l, c_l = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        local = rd.point_force(model, data, q, link, f_l, point=c_l, torque=t_l, local=True)
        rd.forward_kinematics(model, data, q)  # (local=True needs no kinematics)
        T = rd.frame_placement(model, data, link)
        R, p = T[:3, :3], T[:3, 3]
        world = rd.point_force(model, data, q, link, R @ f_l, point=R @ c_l + p, torque=R @ t_l)
        np.testing.assert_allclose(world, local, atol=1e-12)
        assert np.abs(local).max() > 0
    # two contributions add up, and equal the sum of the separate arrays
    F1 = rd.point_force(model, data, q, "panda_link3", [1.0, 2.0, 3.0])
    F2 = rd.point_force(model, data, q, "panda_hand", [0.0, 0.0, -30.0], point=[0.5, 0.0, 0.3])
    both = rd.point_force(model, data, q, "panda_link3", [1.0, 2.0, 3.0])
    rd.point_force(model, data, q, "panda_hand", [0.0, 0.0, -30.0], point=[0.5, 0.0, 0.3],
                   fext=both)
    np.testing.assert_allclose(both, F1 + F2, atol=1e-12)
    # a weight at a point: the joint efforts are those of that force through the Jacobian
    # (virtual power): Δτ = −J(point)ᵀ f, checked by finite differences of the point's position
    tau0 = rd.rnea(model, data, q, v, a)
    point = np.array([0.4, 0.1, 0.6])
    force = np.array([0.0, 0.0, -25.0])
    F = rd.point_force(model, data, q, "panda_link6", force, point=point)
    rd.forward_kinematics(model, data, q)
    T6 = rd.frame_placement(model, data, "panda_link6")
    c_local = T6[:3, :3].T @ (point - T6[:3, 3])
    J = np.zeros((3, model.nv))
    for k in range(model.nv):
        dq = np.zeros(model.nv)
        dq[k] = 1e-6
        pos = []
        for s in (1, -1):
            rd.forward_kinematics(model, data, q + s * dq)
            Tk = rd.frame_placement(model, data, "panda_link6")
            pos.append(Tk[:3, :3] @ c_local + Tk[:3, 3])
        J[:, k] = (pos[0] - pos[1]) / 2e-6
    np.testing.assert_allclose(rd.rnea(model, data, q, v, a, F) - tau0, -J.T @ force, atol=1e-6)


def test_sensor_wrench_equals_the_equivalent_point_force():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q = random_state(model, 2)[0]
    w = np.array([3.0, -4.0, 12.0, 0.5, -0.2, 0.1])
    S = rd.sensor_wrench(model, "panda_hand", w)
    P = rd.point_force(model, data, q, "panda_hand", w[:3], torque=w[3:], local=True)
    np.testing.assert_allclose(S, P, atol=1e-12)
    # a pure force read by the sensor = that force at the sensor origin, in world coordinates
    rd.forward_kinematics(model, data, q)
    T = rd.frame_placement(model, data, "panda_hand")
    Fw = rd.point_force(model, data, q, "panda_hand", T[:3, :3] @ w[:3], point=T[:3, 3],
                        torque=T[:3, :3] @ w[3:])
    np.testing.assert_allclose(S, Fw, atol=1e-12)
    body = model.frames["panda_hand"][0]
    assert np.abs(S[body]).max() > 0 and np.abs(np.delete(S, body, axis=0)).max() == 0


def test_a_link_fixed_to_the_base_adds_nothing():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q = random_state(model, 1)[0]
    base = model.base_link
    assert np.abs(rd.point_force(model, data, q, base, [1.0, 2.0, 3.0])).max() == 0.0


# -- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad, words", [
    (np.zeros((6, 6)), ["fext", "({n}, 6)", "(6, 6)"]),
    (np.zeros(9), ["fext", "({n}, 6)"]),
    ("nan", ["fext", "row(s) [2]", "panda_link3"]),
    ("inf", ["fext", "row(s) [2]"]),
    ([[1, 2]], ["fext", "({n}, 6)"]),
])
def test_bad_fext_is_refused_in_one_line_naming_it(bad, words):
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    friction = friction_from_config(LOAD, model)
    q, v, a = random_state(model, 0)
    if isinstance(bad, str):
        value = np.zeros((model.nv, 6))
        value[2, 4] = np.nan if bad == "nan" else np.inf
        bad = value
    calls = [lambda: rd.rnea(model, data, q, v, a, bad),
             lambda: rd.inverse_dynamics(model, data, q, v, a, fext=bad),
             lambda: rd.inverse_dynamics(model, data, q, v, a, friction, fext=bad),
             lambda: rd.forward_dynamics(model, data, q, v, a, fext=bad),
             lambda: rd.forward_dynamics(model, data, q, v, a, friction, fext=bad),
             lambda: ref_dynamics.rnea(model, data, q, v, a, bad)]
    for call in calls:
        with pytest.raises(InputError) as err:
            call()
        msg = str(err.value)
        assert "\n" not in msg
        for w in words:
            assert w.format(n=model.nv) in msg, msg
    Q = np.array([q, q])
    with pytest.raises(InputError, match="FEXT"):
        batch.rnea_batch(model, Q, Q, Q, np.zeros((3, model.nv, 6)))
    with pytest.raises(InputError, match="FEXT"):
        batch.rnea_batch(model, Q, Q, Q, np.full((2, model.nv, 6), np.nan))


def test_helpers_refuse_unknown_links_and_bad_vectors():
    model = rd.load_urdf(erd_urdf(PANDA))
    data = model.create_data()
    q = np.zeros(model.nv)
    with pytest.raises(InputError, match="no link or frame 'gripper'"):
        rd.point_force(model, data, q, "gripper", [1, 0, 0])
    with pytest.raises(InputError, match="force"):
        rd.point_force(model, data, q, "panda_hand", [1, 0])
    with pytest.raises(InputError, match="point"):
        rd.point_force(model, data, q, "panda_hand", [1, 0, 0], point=[np.nan, 0, 0])
    with pytest.raises(InputError, match="wrench"):
        rd.sensor_wrench(model, "panda_hand", [1, 2, 3])
    with pytest.raises(InputError, match="fext"):
        rd.sensor_wrench(model, "panda_hand", np.zeros(6), fext=np.zeros((3, 6)))


# -- batch and mimic ----------------------------------------------------------------------------
def test_batch_with_fext_equals_the_single_calls():
    model = rd.load_urdf(erd_urdf(UR5))
    friction = friction_from_config(LOAD, model)
    data = model.create_data()
    states = [random_state(model, s) for s in range(5)]
    Q, V, A = (np.array([s[k] for s in states]) for k in range(3))
    FEXT = np.array([_fext(model.nv, s) for s in range(5)])
    tau = batch.rnea_batch(model, Q, V, A, FEXT)
    W = batch.joint_wrenches_batch(model, Q, V, A, FEXT)
    tid, tf = batch.inverse_dynamics_batch(model, Q, V, A, friction, FEXT=FEXT,
                                           return_friction=True)
    for k in range(5):
        np.testing.assert_allclose(tau[k], rd.rnea(model, data, Q[k], V[k], A[k], FEXT[k]),
                                   atol=1e-10)
        np.testing.assert_allclose(W[k], data.f, atol=1e-10)
        np.testing.assert_allclose(tid[k], rd.inverse_dynamics(model, data, Q[k], V[k], A[k],
                                                               friction, fext=FEXT[k]), atol=1e-10)
        np.testing.assert_allclose(tf[k], data.tau_friction, atol=1e-10)


def test_mimic_model_takes_fext_per_body_of_the_full_tree():
    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7_gripper_mimic.urdf"), mimic=True)
    full = model.full
    assert full.nv > model.nv
    data, fdata = model.create_data(), full.create_data()
    G = model.coupling
    friction = friction_from_config(LOAD, model)
    for seed in range(2):
        q, v, a = random_state(model, seed)
        F = _fext(full.nv, seed)
        qf, vf, af = model.expand(q), model.expand_velocity(v), model.expand_velocity(a)
        tau = rd.rnea(model, data, q, v, a, F)
        np.testing.assert_allclose(tau, G.T @ rd.rnea(full, fdata, qf, vf, af, F), atol=1e-10)
        np.testing.assert_allclose(ref_dynamics.rnea(model, model.create_data(), q, v, a, F), tau,
                                   atol=1e-10)
        np.testing.assert_allclose(rd.forward_dynamics(model, data, q, v, tau, fext=F), a,
                                   atol=1e-8)
        tau_f = rd.inverse_dynamics(model, data, q, v, a, friction, fext=F)
        assert np.abs(tau_f - rd.inverse_dynamics(model, data, q, v, a, friction)).max() > 1e-3
        np.testing.assert_allclose(rd.forward_dynamics(model, data, q, v, tau_f, friction, fext=F),
                                   a, atol=1e-7)
        Qb, Vb, Ab = q[None], v[None], a[None]
        np.testing.assert_allclose(batch.rnea_batch(model, Qb, Vb, Ab, F[None])[0], tau,
                                   atol=1e-10)
    with pytest.raises(InputError, match=f"fext.*\\({full.nv}, 6\\)"):
        rd.rnea(model, data, q, v, a, np.zeros((model.nv, 6)))


def test_articulated_recursions_with_fext_match_their_statement_and_the_general_solve():
    """Forward dynamics with load-dependent friction and fext: the compiled articulated solve
    (report.method "newton"), its NumPy statement and the general solve's Python statement agree,
    joints at rest included (they stick or break away under the loaded bound)."""
    from robot_dynamics.reference.articulated import articulated_motion

    model = rd.load_urdf(erd_urdf(PANDA))
    fr = friction_from_config(LOAD, model)
    fast, twin, ref = model.create_data(), model.create_data(), model.create_data()
    rng = np.random.default_rng(11)
    methods = set()
    for k in range(8):
        q, v, a = random_state(model, 20 + k)
        if k % 2:
            v[rng.random(model.nv) < 0.5] = 0.0
        F = _fext(model.nv, k)
        tau = rd.inverse_dynamics(model, fast, q, v, a, fr, fext=F)
        tau += rng.uniform(-2, 2, model.nv) * (v == 0)
        acc = rd.forward_dynamics(model, fast, q, v, tau, fr, fext=F)
        report = fast.fd_report
        assert report.converged
        methods.add(report.method)
        scale = 1.0 + np.abs(acc).max()
        np.testing.assert_allclose(acc, ref_fd.forward_dynamics(model, ref, q, v, tau, fr, fext=F),
                                   atol=1e-8 * scale)
        np.testing.assert_allclose(fast.tau_friction, ref.tau_friction,
                                   atol=1e-8 * (1 + np.abs(tau).max()))
        held = np.isin(model.joint_names, report.stuck)
        directions = np.where(v != 0, np.sign(v), np.sign(acc))
        # the recursions' statement on the efforts the joints feel, τ − d∘q̇ (issue 33)
        b, fn = articulated_motion(model, twin, q, v, tau - model.damping * v, fr, held,
                                   directions, fext=F)
        np.testing.assert_allclose(b, acc, atol=1e-8 * scale)
    assert "newton" in methods  # the articulated recursions answered


def test_simulator_step_kernel_has_an_fext_slot(turntable):
    """kernels.fd.sim_step_fext_entry (the slot the Simulator will use): zeros give the step
    without fext to the bit; a tangential force F at the centre of mass of the resting,
    frictionless turntable accelerates it at F r / (I_zz + m r²); a bad fext is refused."""
    from robot_dynamics.kernels.fd import ACC, V_NEW, sim_step_entry, sim_step_fext_entry

    model, _ = turntable
    sim = rd.Simulator(model, None, dt=1e-3, damping=False)
    sim.reset(np.array([0.2]))
    q, v, tau = np.array([0.2]), np.array([0.0]), np.array([0.0])

    def step(fext=None):
        sp = sim._sp.copy()
        if fext is None:
            status = sim_step_entry(sim._mb, sim._fr, sp, q, v, tau, sim._work)
        else:
            status = sim_step_fext_entry(sim._mb, sim._fr, sp, q, v, tau, fext, sim._work)
        vecs = sim.data._vecs  # the kernels' scratch rows (views of the work array)
        return status, vecs[ACC].copy(), vecs[V_NEW].copy()

    base = step()
    zero = step(np.zeros((1, 6)))
    assert base[0] == zero[0] == 0
    np.testing.assert_array_equal(base[1], zero[1])
    np.testing.assert_array_equal(base[2], zero[2])
    P = 7.0
    F = rd.point_force(model, model.create_data(), q, "arm", [0, P, 0], point=[R_COM, 0, 0],
                       local=True)
    status, acc, _ = step(F)
    assert status == 0
    np.testing.assert_allclose(acc, [P * R_COM / (IZZ + M_LINK * R_COM**2)], rtol=1e-10)
    assert step(np.full((1, 6), np.nan))[0] == 1
    assert step(np.zeros((2, 6)))[0] == 1
