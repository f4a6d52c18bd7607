"""Gear-mesh friction (issue 16): closed forms of a load lifted and lowered through a gear,
self-locking, the hold band at rest, compiled against reference, the energy audit's loss split."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.reference.forward_dynamics import forward_dynamics as forward_dynamics_reference
from robot_dynamics.friction import (CompositeFriction, FrictionModel, GearMeshFriction,
    friction_from_config)
from robot_dynamics.errors import ModelError
from conftest import REPO

P2R = os.path.join(REPO, "urdf", "planar_2r.urdf")
EF, EB = 0.75, 0.55  # a back-drivable gear: η_f, η_b


@pytest.fixture(scope="module")
def model():
    return rd.load_urdf(P2R)


def gear(ef=EF, eb=EB):
    return {"model": "gear_mesh", "efficiency_forward": ef, "efficiency_backward": eb}


def reference_copy(fr, model):
    """The same laws on the Python (reference) path."""
    ref = FrictionModel(fr.joint_names, fr.laws, model)
    ref._packed = None
    return ref


def test_law_closed_form():
    law = GearMeshFriction(0.8, -0.25)
    e = np.array([0.0, 1.0, 0.0])
    w = np.array([3.0, 0.0, 1.0, 0.2, 10.0, -0.4])  # n∥ = 10
    assert law.magnitude(w, e, False, 0.0, 1.0) == pytest.approx(10.0 * (1 / 0.8 - 1))
    assert law.magnitude(w, e, False, 0.0, -1.0) == pytest.approx(10.0 * 1.25)
    assert law.magnitude(w, e, False, 0.0, 0.0, -1.0) == pytest.approx(12.5)  # at rest: direction
    assert law.magnitude(w, e, False, 0.0, 0.0, 0.0) == pytest.approx(2.5)  # unknown: the smaller
    assert law.self_locking and not GearMeshFriction(0.8, 0.1).self_locking
    assert law.magnitude(w, e, True, 0.0, 1.0) == pytest.approx(0.0)  # prismatic: f∥ = 0
    sym = GearMeshFriction(mesh=0.3)
    assert sym.efficiency_forward == pytest.approx(1 / 1.3)
    assert sym.efficiency_backward == pytest.approx(0.7)
    again = friction_from_config({"default": law.to_config()},
                                 rd.load_urdf(P2R)).laws[0]
    assert (again.c_forward, again.c_backward) == pytest.approx((law.c_forward, law.c_backward))


@pytest.mark.parametrize("entry, words", [
    (gear(1.2, 0.5), ["joint 'elbow'", "efficiency_forward", "(0, 1]"]),
    (gear(0.8, 1.5), ["joint 'elbow'", "efficiency_backward", "<= 1"]),
    ({"model": "gear_mesh", "mesh": 0.1, "efficiency_forward": 0.9}, ["'mesh'", "not both"]),
    ({"model": "gear_mesh", "efficiency_forward": "fast"}, ["efficiency_forward", "number"]),
    ({"model": "composite", "parts": {"g": gear(), "x": {"model": "composite", "parts": {}}}},
     ["parts.x", "composite"]),
    ({"model": "composite", "parts": []}, ["joint 'elbow'", "'parts'"]),
])
def test_config_errors_name_joint_and_field(model, entry, words):
    with pytest.raises(ModelError) as exc:
        friction_from_config({"joints": {"elbow": entry}}, model)
    msg = str(exc.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg


def closed_form(n_par, v, a, ef, eb):
    """τ_motor of a gear: n∥/η_f when the motor drives the load (n∥·d > 0), η_b·n∥ when the load
    drives the motor; d = sign q̇, or sign q̈ at rest."""
    d = np.where(v != 0, np.sign(v), np.sign(a))
    return np.where(n_par * d > 0, n_par / ef, np.where(n_par * d < 0, eb * n_par, n_par))


@pytest.mark.parametrize("compiled", [True, False])
def test_lift_and_lower_closed_form_and_round_trip(model, compiled):
    """A load lifted (motor drives) and lowered (load drives) through the gear: ID equals the
    closed form in both directions, FD from that torque gives the acceleration back."""
    fr = friction_from_config({"default": gear()}, model)
    assert fr._packed is not None
    if not compiled:
        fr = reference_copy(fr, model)
    data = model.create_data()
    fd = rd.forward_dynamics if compiled else forward_dynamics_reference
    rng = np.random.default_rng(3)
    regimes = set()
    for k in range(40):
        q = rng.uniform(-2.5, 2.5, 2)
        v = rng.choice([-1.0, 1.0], 2) * rng.uniform(0.1, 2.0, 2)
        if k % 5 == 0:
            v[k % 2] = 0.0  # at rest: the regime follows q̈
        a = rng.uniform(-6.0, 6.0, 2)
        n_par = rd.rnea(model, data, q, v, a)
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        want = closed_form(n_par, v, a, EF, EB)
        np.testing.assert_allclose(tau, want, rtol=1e-12, atol=1e-12)
        d = np.where(v != 0, np.sign(v), np.sign(a))
        regimes.update(("lift" if s > 0 else "lower") for s in n_par * d)
        qdd = fd(model, data, q, v, tau, fr)
        np.testing.assert_allclose(qdd, a, rtol=0, atol=1e-9 * (1 + np.abs(a).max()))
    assert regimes == {"lift", "lower"}


def test_prismatic_joint_transmits_its_axial_force():
    """A screw-driven prismatic joint: the gear-mesh law reads f∥ (the force passed on)."""
    rrp = rd.load_urdf(os.path.join(REPO, "urdf", "rrp.urdf"))
    fr = friction_from_config({"default": gear()}, rrp)
    data = rrp.create_data()
    rng = np.random.default_rng(5)
    for _ in range(10):
        q = rng.uniform(-1, 1, rrp.nv)
        q[rrp.kinds == 1] = 0.2
        v = rng.choice([-1.0, 1.0], rrp.nv) * rng.uniform(0.1, 1.0, rrp.nv)
        a = rng.uniform(-3, 3, rrp.nv)
        axial = rd.rnea(rrp, data, q, v, a)  # n·e or f·e per joint
        tau = rd.inverse_dynamics(rrp, data, q, v, a, friction=fr)
        np.testing.assert_allclose(tau, closed_form(axial, v, a, EF, EB), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(rd.forward_dynamics(rrp, data, q, v, tau, fr), a, atol=1e-9)


@pytest.mark.parametrize("compiled", [True, False])
def test_composite_bearing_gear_motor_round_trip(model, compiled):
    """Bearing-load friction + gear mesh + reflected motor friction on one joint: the magnitude
    is the sum of the parts and ID/FD stay inverse of each other."""
    cfg = {"default": {"model": "composite", "parts": {
        "bearing": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.02,
                    "k2": 0.005, "k3": 0.005},
        "gear_mesh": gear(0.8, 0.6),
        "motor": {"model": "classic", "coulomb": 0.5, "viscous": 0.2}}}}
    fr = friction_from_config(cfg, model)
    assert fr._packed is not None and fr.has_parts
    if not compiled:
        fr = reference_copy(fr, model)
    data = model.create_data()
    fd = rd.forward_dynamics if compiled else forward_dynamics_reference
    rng = np.random.default_rng(4)
    for k in range(20):
        q = rng.uniform(-2.5, 2.5, 2)
        v = rng.uniform(-2.0, 2.0, 2)
        a = rng.uniform(-6.0, 6.0, 2)
        n_par = rd.rnea(model, data, q, v, a)
        W = data.f.copy()
        tau = rd.inverse_dynamics(model, data, q, v, a, friction=fr)
        parts = fr.parts(model, W, q, v, np.sign(v))
        assert set(parts) == {"bearing", "gear_mesh", "motor"}
        gear_part = np.where(n_par * v > 0, (1 / 0.8 - 1), 1 - 0.6) * np.abs(n_par)
        np.testing.assert_allclose(parts["gear_mesh"], gear_part, rtol=1e-12)
        np.testing.assert_allclose(parts["motor"], 0.5 + 0.2 * np.abs(v), rtol=1e-12)
        np.testing.assert_allclose(tau, n_par + sum(parts.values()) * np.sign(v), rtol=1e-12,
                                   atol=1e-12)
        qdd = fd(model, data, q, v, tau, fr)
        np.testing.assert_allclose(qdd, a, rtol=0, atol=1e-9 * (1 + np.abs(a).max()))


def test_kernel_parts_match_law_objects(model):
    cfg = {"joints": {
        "shoulder": {"model": "composite", "parts": {
            "bearing": {"model": "bearing", "mu": 0.01, "pin_radius": 0.02, "friction_arm": 0.03,
                        "bending_arm": 0.05, "stribeck": {"static": 0.02, "velocity": 0.1}},
            "gear_mesh": gear(0.7, -0.1)}},
        "elbow": {"model": "composite", "parts": {
            "gear_mesh": {"model": "gear_mesh", "mesh": 0.15},
            "motor": {"model": "classic", "coulomb": 0.2, "viscous": 0.1,
                      "coulomb_positive": 0.3, "coulomb_negative": 0.1}}}}}
    fr = friction_from_config(cfg, model)
    ref = reference_copy(fr, model)
    data = model.create_data()
    rng = np.random.default_rng(7)
    for seed in range(8):
        q, v, a = rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 2), rng.uniform(-5, 5, 2)
        v[seed % 2] = 0.0
        rd.rnea(model, data, q, v, a)
        dirs = np.sign(rng.normal(size=2))
        got, want = fr.parts(model, data.f, q, v, dirs), ref.parts(model, data.f, q, v, dirs)
        assert set(got) == set(want) == {"bearing", "gear_mesh", "motor"}
        for name in got:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(sum(got.values()), fr.magnitudes(model, data.f, q, v, dirs),
                                   rtol=1e-12)
        for i, law in enumerate(fr.laws):
            assert isinstance(law, CompositeFriction)
            assert law.magnitude(data.f[i], model.axes[i], False, q[i], v[i], dirs[i]) == \
                pytest.approx(ref.magnitudes(model, data.f, q, v, dirs)[i], rel=1e-12)


# --- self-locking, the hold band, in the Simulator ---------------------------------------------

def simulate(model, cfg, q0, tau, seconds, compiled=True):
    fr = friction_from_config(cfg, model)
    sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
    sim.reset(q0)
    for _ in range(int(round(seconds / 1e-3))):
        sim.step(tau)
    return sim


LOCKED = {"default": gear(0.6, -0.2)}


@pytest.mark.parametrize("q0", [[0.0, 0.0], [0.7, -1.2], [-1.4, 2.0], [2.5, 0.3]])
def test_self_locking_holds_at_any_angle(model, q0):
    """η_b ≤ 0: zero motor torque holds the arm for 5 s, exactly (no creep)."""
    sim = simulate(model, LOCKED, q0, np.zeros(2), 5.0)
    assert np.array_equal(sim.q, np.asarray(q0, float)) and not sim.v.any()
    assert sim.report.stuck == ["shoulder", "elbow"]
    ref = simulate(model, {"default": gear(0.6, 0.0)}, q0, np.zeros(2), 0.3, compiled=False)
    assert np.array_equal(ref.q, np.asarray(q0, float))  # η_b = 0 is the limit: holds too


def test_back_drivable_gear_falls(model):
    q0 = [0.7, -1.2]
    sim = simulate(model, {"default": gear(0.6, 0.05)}, q0, np.zeros(2), 0.3)
    assert np.abs(sim.q - q0).min() > 1e-2


def test_hold_band_thresholds(model):
    """At rest a gear holds any motor effort in η_b·g ≤ τ ≤ g/η_f (g the holding effort n∥,
    mirrored for g < 0); just outside either end the joint moves, the right way."""
    data = model.create_data()
    q0 = np.array([0.7, -1.2])
    g = rd.gravity_torques(model, data, q0)
    for ef, eb in ((0.75, 0.4), (0.6, -0.3)):
        cfg = {"joints": {"shoulder": gear(ef, eb), "elbow": gear(0.6, -0.2)}}
        s, delta = np.sign(g[0]), 1e-6 * abs(g[0])
        # (end of the band, the side outside it, the direction the joint then moves)
        for end, out in ((eb * g[0], -s), (g[0] / ef, s)):
            for outside in (False, True):
                t = end + (delta if outside else -delta) * out
                sim = simulate(model, cfg, q0, np.array([t, 0.0]), 0.05)
                dq = sim.q[0] - q0[0]
                if outside:
                    assert dq * out > 0, (ef, eb, end, dq)
                else:
                    assert dq == 0.0, (ef, eb, end, dq)
                assert sim.q[1] == q0[1]  # the self-locking elbow holds with no torque


def test_self_locking_moves_when_driven(model):
    """Driving beyond g/η_f lifts a self-locking joint; driving it in the lowering direction by
    more than |η_b g| lowers it. Compiled and reference steps agree."""
    data = model.create_data()
    q0 = np.array([0.7, 0.0])
    g = rd.gravity_torques(model, data, q0)
    for tau, sign in ((np.array([1.2 * g[0] / 0.6, g[1]]), np.sign(g[0])),
                      (np.array([-0.3 * g[0], g[1]]), -np.sign(g[0]))):
        fast = simulate(model, LOCKED, q0, tau, 0.1)
        ref = simulate(model, LOCKED, q0, tau, 0.1, compiled=False)
        assert (fast.q[0] - q0[0]) * sign > 1e-4
        np.testing.assert_allclose(fast.q, ref.q, atol=1e-9)


# --- energy ------------------------------------------------------------------------------------

def test_friction_never_injects_energy_and_audit_closes():
    """All friction kinds (classic + Stribeck, load_dependent, bearing, gear mesh, motor side)
    and rotor inertia for 10 s of driven motion: friction opposes every joint's end-of-step velocity, the parts'
    shares sum to the friction dissipation, and the audit closes to 1e-6 relative at 0.5 ms
    steps (its residual is the integrator's O(h²), the same without friction)."""
    cfg = {"joints": {
        "shoulder": {"model": "composite", "parts": {
            "bearing": {"model": "load_dependent", "coulomb": 0.3, "viscous": 0.05, "k1": 0.02,
                        "k2": 0.005, "k3": 0.005},
            "gear_mesh": gear(0.8, 0.5),
            "motor": {"model": "classic", "coulomb": 0.2, "viscous": 0.1,
                      "stribeck": {"static": 0.3, "velocity": 0.05}}}},
        "elbow": {"model": "composite", "parts": {
            "bearing": {"model": "bearing", "mu": 0.01, "pin_radius": 0.02,
                        "friction_arm": 0.02, "bending_arm": 0.04},
            "gear_mesh": gear(0.7, 0.3)}}}}
    model = rd.load_urdf(P2R)
    model.armature = [0.05, 0.02]  # rotors too (their kinetic energy is in the audit)
    fr = friction_from_config(cfg, model)
    dt = 5e-4  # the audit's residual is the integrator's O(h²): 1.9e-6 relative at 1 ms
    sim = rd.Simulator(model, fr, dt=dt)
    sim.reset([0.3, -0.5])
    data = model.create_data()
    last = back = 0.0
    for k in range(20000):  # gravity compensation + PD on a reference within the stops
        t = k * dt
        ref = np.array([0.3 + 1.2 * np.sin(2.1 * t), -0.5 + 1.5 * np.sin(3.3 * t + 1.0)])
        tau = (rd.gravity_torques(model, data, sim.q) + 40.0 * (ref - sim.q) - 4.0 * sim.v
               + np.array([0.0, 3.0 * np.sign(np.sin(0.7 * t))]))
        sim.step(tau)
        # friction opposes the end-of-step velocity of every joint (a joint that stops in the
        # step holds at q̇⁺ = 0): it only takes energy
        assert (sim.tau_friction * sim.v <= 0).all()
        d = sim._audit.friction_dissipation
        back += max(last - d, 0.0)  # the audit's midpoint pairing, q̇_mid = (q̇ + q̇⁺)/2
        last = d
    audit = sim.audit
    parts = audit.friction_parts
    assert set(parts) == {"bearing", "gear_mesh", "motor"}
    assert all(p > 0 for p in parts.values())
    assert sum(parts.values()) == pytest.approx(audit.friction_dissipation, rel=1e-9)
    print(f"\n10 s, all friction kinds: {audit}; {sim.limit_steps} steps on a stop; "
          f"negative midpoint-paired friction increments (joints stopping within a step) "
          f"{back:.3e} J in total")
    assert back < 1e-6 * audit.friction_dissipation
    assert abs(audit.relative_residual) < 1e-6  # issue 16 (measured 4.6e-7)


@pytest.mark.parametrize("compiled", [True, False])
def test_self_locking_gear_jams_when_braked_while_back_driven(compiled):
    """A pendulum lowering through a self-locking gear with the motor braking (τ against the
    motion) has no sliding motion (back-driven needs τ = η_b n∥ of the motion's sign, motoring
    needs n∥ = η_f τ along the motion): the time step jams it (q̇⁺ = 0, held by the gear), where
    a back-drivable gear keeps moving."""
    model = rd.load_urdf("""<robot name="pendulum"><link name="base"/>
    <link name="rod"><inertial><origin xyz="0.4 0 0"/><mass value="2.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
    <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
    <axis xyz="0 1 0"/></joint></robot>""")
    data = model.create_data()
    q0 = np.array([0.7])
    lowering = -np.sign(rd.gravity_torques(model, data, q0)[0])  # the way gravity moves it
    for eb, jams in ((-0.2, True), (0.0, True), (0.5, False)):
        fr = friction_from_config({"default": gear(0.8, eb)}, model)
        sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
        sim.reset(q0, [0.5 * lowering])
        sim.step([-1.0 * lowering])  # braking
        q1 = sim.q.copy()
        for _ in range(20):
            sim.step([-1.0 * lowering])
        if jams:
            assert sim.v[0] == 0.0 and np.array_equal(sim.q, q1)
            assert sim.report.stuck == ["hinge"]
        else:
            assert sim.v[0] * lowering > 0


def test_loss_split_kernel_matches_reference(model):
    """The energy audit's per-step loss split: compiled kernel and law objects agree, and the
    shares sum to the joints' dissipation (or to the audit's total when given)."""
    from robot_dynamics.algorithm.energy import split_friction_dissipation

    cfg = {"joints": {"shoulder": {"model": "composite", "parts": {
        "bearing": {"model": "load_dependent", "coulomb": 0.3, "k1": 0.02, "k2": 0.005},
        "gear_mesh": gear(0.8, 0.5), "motor": {"model": "classic", "coulomb": 0.2}}},
        "elbow": gear(0.7, 0.3)}}
    fr = friction_from_config(cfg, model)
    ref = reference_copy(fr, model)
    data = model.create_data()
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v, a = rng.uniform(-2, 2, 2), rng.uniform(-1, 1, 2), rng.uniform(-5, 5, 2)
        rd.rnea(model, data, q, v, a)
        W = data.f.copy()
        tauf = -np.sign(v) * rng.uniform(0.1, 2.0, 2)
        v_mid = v + rng.uniform(-0.1, 0.1, 2)
        for total in (None, 0.123):
            got = split_friction_dissipation(fr, model, W, q, v, tauf, v_mid, 1e-3, {}, total)
            want = split_friction_dissipation(ref, model, W, q, v, tauf, v_mid, 1e-3, {}, total)
            assert set(got) == {"bearing", "gear_mesh", "motor"}
            for k in got:
                assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-18)
            expect = -1e-3 * tauf @ v_mid if total is None else total
            assert sum(got.values()) == pytest.approx(expect, rel=1e-12)


PENDULUM = """<robot name="pendulum"><link name="base"/>
<link name="rod"><inertial><origin xyz="0.4 0 0"/><mass value="2.0"/>
<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
<joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
<axis xyz="0 1 0"/></joint></robot>"""  # link inertia about the hinge 0.35 kg·m²


@pytest.mark.parametrize("compiled", [True, False])
def test_self_locking_lowered_with_rotor_inertia(compiled):
    """With a rotor inertia above |η_b|·M_link the back-driven branch of a self-locking gear is
    well-posed: ID is τ = armature·q̈ + η_b·n∥ (lowering) or armature·q̈ + n∥/η_f (lifting) and
    FD gives q̈ back; driven down and released, the load brakes to a stop and locks, the audit
    closing. With less rotor inertia the released load jams at once (no sliding motion)."""
    model = rd.load_urdf(PENDULUM)
    data = model.create_data()
    ef, eb = 0.8, -0.2
    fr = friction_from_config({"default": gear(ef, eb)}, model)
    if not compiled:
        fr = reference_copy(fr, model)
    fd = rd.forward_dynamics if compiled else forward_dynamics_reference
    q = np.array([0.7])
    g = rd.gravity_torques(model, data, q)[0]
    model.armature = [0.5]  # > |η_b|·0.35
    for v in (1.0, -1.0):
        for a in (2.0, -2.0):
            tau = rd.inverse_dynamics(model, data, q, [v], [a], friction=fr)
            n_par = data.f[0, 3:] @ model.axes[0]
            gear_part = n_par / ef if n_par * v > 0 else eb * n_par
            assert tau[0] == pytest.approx(0.5 * a + gear_part, rel=1e-12)
            assert fd(model, data, q, [v], tau, fr)[0] == pytest.approx(a, abs=1e-9)
    if not compiled:
        return  # the reference step is held to the compiled one in the test above
    lowering = -np.sign(g)
    for armature, steps_to_stop in ((0.5, None), (0.02, 1)):
        model.armature = [armature]
        sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
        sim.reset(q)
        for _ in range(300):
            sim.step([1.5 * eb * g])  # beyond the band's end η_b·g: lowers it
        assert sim.v[0] * lowering > 0.1
        stopped = None
        for k in range(700):
            sim.step([0.0])
            if stopped is None and sim.v[0] == 0.0:
                stopped = k + 1
        assert sim.v[0] == 0.0 and sim.report.stuck == ["hinge"]
        if steps_to_stop is not None:
            assert stopped == steps_to_stop  # jammed in the first step
        else:
            assert stopped > 10  # braked over many steps
        assert abs(sim.audit.relative_residual) < 1e-5
