"""The fast paths of issue 17 against their references: the compiled step (preconditioned and
warm-started friction iteration) against the Python statement of the scheme over a run rich in
stick/slip, the compiled multi-step rollout (Simulator.run with PD / ComputedTorque) against
repeated step(), and exact stiction (no creep) on the fast path."""
import os

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from robot_dynamics.kernels.fd import SP_ARTICULATED

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAWS = {
    "classic": {"default": {"model": "classic", "coulomb": 1.5, "viscous": 0.3,
                            "stribeck": {"static": 2.0, "velocity": 0.02}}},
    "load_dependent": {"default": {"model": "load_dependent", "coulomb": 1.0, "viscous": 0.2,
                                   "k1": 0.02, "k2": 0.004, "k3": 0.002}},
}


@pytest.fixture(scope="module")
def arm7():
    return rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))


def _push(model, data):
    """Gravity compensation plus pushes that start, reverse and stop the joints."""
    def controller(t, q, v):
        return (rd.gravity_torques(model, data, q)
                + 4.0 * np.sin(9 * t + np.arange(model.nv)) * (np.sin(3 * t) > -0.2))
    return controller


@pytest.mark.parametrize("law", sorted(LAWS))
def test_fast_step_agrees_with_reference_over_stick_slip_run(arm7, law):
    model = arm7
    fr = friction_from_config(LAWS[law], model)
    data = model.create_data()
    q0 = np.linspace(-0.4, 0.4, model.nv)
    runs, sims = [], []
    for compiled, dense in ((True, True), (False, False), (True, False)):
        sim = rd.Simulator(model, fr, dt=1e-3, compiled=compiled)
        if dense:  # the compiled dense step: the Python statement's twin
            sim._tail[SP_ARTICULATED] = np.inf
        sim.reset(q0)
        runs.append(sim.run(0.25, _push(model, data)))
        sims.append(sim)
    fast, slow, default = runs
    for key in ("q", "v", "tau_friction"):
        np.testing.assert_allclose(fast[key], slow[key], atol=1e-10, rtol=1e-10, err_msg=key)
        # the load-dependent law steps by the articulated recursions by default (kernels/fd.py
        # ARTICULATED_LOADED_MIN): the same answers to the solve's tolerance, tol (1 + max|q̈|)
        np.testing.assert_allclose(default[key], slow[key], atol=1e-8, rtol=1e-8, err_msg=key)
    # stick/slip rich: joints stuck exactly at some steps, sliding at others
    stuck = fast["v"] == 0.0
    assert stuck.any() and (~stuck).any()
    assert (np.diff(stuck.astype(int), axis=0) != 0).sum() >= 5  # sticks and breakaways
    for name in ("motor_work", "friction_dissipation", "damping_dissipation"):
        assert getattr(sims[0].audit, name) == pytest.approx(getattr(sims[1].audit, name),
                                                             rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("law", ["none"] + sorted(LAWS))
def test_compiled_rollout_equals_repeated_steps(arm7, law):
    """Simulator.run with a compiled PD controller: one compiled call for the whole rollout,
    the same states, efforts, counters and audit as step() called with the PD's NumPy law."""
    model = arm7
    fr = None if law == "none" else friction_from_config(LAWS[law], model)
    steps = 300
    t = 1e-3 * np.arange(steps)[:, None]
    q_ref = 0.3 * np.sin(2 * np.pi * (0.5 + 0.2 * np.arange(model.nv)) * t)
    v_ref = np.gradient(q_ref, 1e-3, axis=0)
    m = np.diag(rd.mass_matrix(model, model.create_data(), np.zeros(model.nv)))
    pd = rd.PD(400.0 * m, 40.0 * m, q_ref, v_ref, gravity_compensation=True)
    a = rd.Simulator(model, fr, dt=1e-3)
    b = rd.Simulator(model, fr, dt=1e-3)
    q0 = np.full(model.nv, 0.1)
    a.reset(q0)
    b.reset(q0)
    out = a.run(controller=pd, steps=steps)
    data = model.create_data()
    for k in range(steps):
        b.step(pd.torque(model, data, k, b.q, b.v))
        np.testing.assert_allclose(out["q"][k], b.q, atol=1e-12, rtol=0)
        np.testing.assert_allclose(out["v"][k], b.v, atol=1e-10, rtol=0)
        np.testing.assert_allclose(out["tau"][k], b.tau_applied, atol=1e-9, rtol=0)
        assert out["t"][k] == b.t
    np.testing.assert_array_equal(a.q, out["q"][-1])
    assert a.steps == b.steps == steps and a.t == b.t
    assert a.saturated_steps == b.saturated_steps and a.limit_steps == b.limit_steps
    assert a.audit.motor_work == pytest.approx(b.audit.motor_work, rel=1e-9, abs=1e-12)
    assert np.abs(out["q"][-1] - q_ref[-1]).max() < 0.15  # it follows the reference


@pytest.mark.parametrize("plant", ["plain", "rotors", "damping"])
def test_computed_torque_rollout_equals_its_numpy_law(arm7, plant):
    """The compiled law (kernels/rollout.controller_kernel) equals the readable one,
    control/computed_torque.computed_torque (ComputedTorque.torque): inverse dynamics at the
    commanded acceleration, rotors included
    (armature∘q̈: with the README's armature, leaving it out tracked 500× worse), plus the
    URDF's joint damping d∘q̇ that the Simulator applies (left out, an xarm7 with damping 10/5/2
    tracked 0.29 rad off)."""
    model = arm7
    if plant == "rotors":
        model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7.urdf"))
        model.armature = np.array([2.5, 2.5, 1.2, 1.2, 0.4, 0.2, 0.2])
    if plant == "damping":  # d/M up to 9 /s against the loop's 40 /s (h d/M ≤ 0.014: the
        # implicit damping of a 1 ms step barely lags the explicit compensation)
        damping = [2.0, 2.0, 0.5, 0.5, 0.05, 0.05, 0.005]
        with open(os.path.join(REPO, "urdf", "arm7.urdf"), encoding="utf-8") as fh:
            text = fh.read()
        for d in damping:
            text = text.replace('damping="0.0"', f'damping="{d}"', 1)
        model = rd.load_urdf(text)
        assert model.damping.tolist() == damping
    fr = friction_from_config(LAWS["load_dependent"], model)
    q_ref = np.linspace(-0.3, 0.3, model.nv)
    ct = rd.ComputedTorque(400.0, 40.0, q_ref, friction=fr)
    a, b = rd.Simulator(model, fr, dt=1e-3), rd.Simulator(model, fr, dt=1e-3)
    out = a.run(controller=ct, steps=200)
    data = model.create_data()
    for k in range(200):
        b.step(ct.torque(model, data, k, b.q, b.v))
    np.testing.assert_allclose(out["q"][-1], b.q, atol=1e-10)
    # with its own dynamics and friction compensated, the error decays as the critically damped
    # linear system ë + 40 ė + 400 e = 0 (ω = 20 rad/s) it is designed to be: 1 − e^{−ωt}(1 + ωt)
    wt = 20.0 * out["t"][-1]
    np.testing.assert_allclose(out["q"][-1], q_ref * (1 - np.exp(-wt) * (1 + wt)), rtol=0.01,
                               atol=1e-3)


def test_rollout_errors_name_the_step(arm7):
    model = arm7
    sim = rd.Simulator(model, None, dt=1e-3, saturate=False, limits=False)
    sim.reset(np.zeros(model.nv))
    pd = rd.PD(0.0, 0.0, np.zeros(model.nv), feedforward=np.full(model.nv, 1e300))
    with pytest.raises(rd.SimulationError, match=r"Simulator.step \d+ at t=") as err:
        sim.run(controller=pd, steps=50)
    assert err.value.step == sim.steps + 1 and np.all(np.isfinite(sim.q))
    with pytest.raises(rd.InputError, match="kp"):
        rd.PD(np.ones(3), 1.0, np.zeros(model.nv)).pack(model)
    with pytest.raises(rd.InputError, match=r"kd: gains must be ≥ 0 .*, got \[1.0, -2.0\]"):
        rd.PD(1.0, [1.0, -2.0], np.zeros(model.nv))  # when built, not at the first step
    with pytest.raises(rd.InputError, match="kp: gains must be ≥ 0"):
        rd.ComputedTorque(-1.0, 1.0, np.zeros(model.nv))
    with pytest.raises(rd.InputError, match="damping must be True .* or False, got 'no'"):
        rd.ComputedTorque(1.0, 1.0, np.zeros(model.nv), damping="no")


@pytest.mark.parametrize("law", sorted(LAWS))
def test_stiction_holds_exactly_on_the_fast_paths(arm7, law):
    """Friction above gravity at every joint: neither step() nor the compiled rollout drifts —
    not by 1e-15 (MuJoCo's regularised frictionloss creeps at rest)."""
    model = arm7
    data = model.create_data()
    q0 = np.linspace(-0.6, 0.6, model.nv)
    g = np.abs(rd.gravity_torques(model, data, q0))
    cfg = {"joints": {name: {"model": law, "coulomb": float(2.0 * gi + 0.5)}
                      for name, gi in zip(model.joint_names, g)}}
    fr = friction_from_config(cfg, model)
    sim = rd.Simulator(model, fr, dt=1e-3)
    sim.reset(q0)
    for _ in range(200):
        sim.step(np.zeros(model.nv))
    np.testing.assert_array_equal(sim.q, q0)
    assert np.all(sim.v == 0.0)
    out = sim.run(controller=rd.PD(0.0, 0.0, q0), steps=1800)
    np.testing.assert_array_equal(out["q"], np.tile(q0, (1800, 1)))
    assert np.all(out["v"] == 0.0) and sim.report.stuck == model.joint_names


def test_gripper_fingers_moving_stay_on_the_compiled_path():
    """arm7_gripper's fingers (2 N Coulomb, 3 N static over a 5 mm/s Stribeck drop) under
    computed torque: the compiled stick/slip solve answers every step (it used to report failure
    — no sliding motion exists when the Stribeck drop is steeper than the drive can follow within
    the step — on ~4 % of them, each then taken by the Python path at 0.1–0.3 s)."""
    from robot_dynamics.kernels.fd import sim_step_entry

    model = rd.load_urdf(os.path.join(REPO, "urdf", "arm7_gripper.urdf"))
    fr = friction_from_config(os.path.join(REPO, "config", "arm7_gripper_friction.yaml"), model)
    n, steps, w = model.nv, 1000, 2 * np.pi * 0.5
    t = 1e-3 * np.arange(steps)[:, None]
    amp = np.r_[np.full(n - 2, 0.3), 0.015, 0.015]
    mid = np.r_[np.zeros(n - 2), 0.02, 0.02]
    ct = rd.ComputedTorque(np.r_[np.full(n - 2, 400.0), 900.0, 900.0],
                           np.r_[np.full(n - 2, 40.0), 60.0, 60.0], mid + amp * np.sin(w * t),
                           amp * w * np.cos(w * t), -amp * w * w * np.sin(w * t), friction=fr)
    sim = rd.Simulator(model, fr, dt=1e-3)
    sim.reset(mid)
    data = model.create_data()
    stuck_fingers = 0
    for k in range(steps):
        tau = ct.torque(model, data, k, sim.q, sim.v)
        status = sim_step_entry(sim._mb, sim._fr, sim._sp.copy(), sim.q.copy(), sim.v.copy(), tau,
                                sim.data._work)
        assert status & 3 == 0, (k, sim.data._views["info"][:4])
        sim.step(tau)
        stuck_fingers += int((sim.v[-2:] == 0).any())
    assert stuck_fingers > 0  # stick-slip at the fingers happened
    assert np.abs(sim.q[-2:] - (mid + amp * np.sin(w * t[-1]))[-2:]).max() < 3e-3


def test_step_efforts_are_the_last_good_steps_whatever_uses_the_work_after(arm7):
    """The inline step leaves the applied efforts and τf in sp's published slots and the
    Simulator copies them when read (issue 35): the step's own numbers (the Data's work read
    right after it), unchanged by a later use of the Simulator's Data or by a step that fails
    (the last good step's stay), arrays of their own that a later step leaves alone."""
    model = arm7
    fr = friction_from_config(LAWS["load_dependent"], model)
    sim = rd.Simulator(model, fr, dt=1e-3, saturate=False, limits=False)
    sim.reset(np.linspace(-0.4, 0.4, model.nv))
    push = _push(model, model.create_data())
    for _ in range(40):
        sim.step(push(sim.t, sim.q, sim.v))
        assert sim._from_work  # the inline path: nothing copied yet
        work = sim.data.tau.copy(), sim.data.tau_friction.copy()
        # another computation on the Simulator's Data overwrites its work arrays
        rd.forward_dynamics(model, sim.data, sim.q, -sim.v, np.full(model.nv, 7.0), fr)
        assert not np.array_equal(sim.data.tau_friction, work[1])
        np.testing.assert_array_equal(sim.tau_applied, work[0])
        np.testing.assert_array_equal(sim.tau_friction, work[1])
    assert (sim.tau_friction != 0).all()
    kept = sim.tau_applied, sim.tau_friction
    values = kept[0].copy(), kept[1].copy()
    sim.step(push(sim.t, sim.q, sim.v))
    assert not np.array_equal(sim.tau_friction, values[1])
    for x, value in zip(kept, values):
        np.testing.assert_array_equal(x, value)
    good = sim.tau_applied.copy(), sim.tau_friction.copy(), sim.q.copy()
    with pytest.raises(rd.SimulationError, match=r"Simulator.step \d+ at t="):
        for _ in range(1000):
            good = sim.tau_applied.copy(), sim.tau_friction.copy(), sim.q.copy()
            sim.step(np.full(model.nv, 1e300))
    np.testing.assert_array_equal(sim.q, good[2])
    np.testing.assert_array_equal(sim.tau_applied, good[0])
    np.testing.assert_array_equal(sim.tau_friction, good[1])


def test_step_takes_any_vector_the_dispatcher_took_to_the_bit(arm7):
    """The inline step calls the compiled entry without numba's dispatcher (sim_step_raw) when
    q and q̇ are the arrays the last step or reset made and τ is a float64 vector; numba's
    unboxing would then read a strided τ, or an int64 or 2-D q, wrongly or overwrite memory.
    Every other input takes the dispatcher or the conversion: a strided τ, an int τ, a list, a
    user's strided or int64 q and q̇, give the bits of the float64 vectors; a 2-D τ or q is
    refused with its name; a q edited in place is read."""
    model = arm7
    n = model.nv
    fr = friction_from_config(LAWS["load_dependent"], model)
    push = _push(model, model.create_data())
    q0 = np.linspace(-0.4, 0.4, n)

    def run(prepare, steps=30):
        sim = rd.Simulator(model, fr, dt=1e-3)
        sim.reset(q0)
        for k in range(steps):
            tau = np.round(push(sim.t, sim.q, sim.v), 6)
            prepare(sim, k, tau)
        return sim.q.copy(), sim.v.copy(), sim.tau_friction.copy()

    def plain(sim, k, tau):
        sim.step(tau.copy())

    def strided(sim, k, tau):
        wide = np.zeros((n, 3))
        wide[:, 1] = tau
        sim.step(wide[:, 1])  # a column: stride 24 bytes

    def as_int(sim, k, tau):
        sim.step(np.trunc(tau).astype(np.int64) if k % 2 else np.trunc(tau).tolist())

    def user_state(sim, k, tau):
        if k % 3 == 0:  # the user's arrays: strided views and, where exact, int64
            qq = np.zeros((n, 2))
            qq[:, 0] = sim.q
            vv = np.zeros(2 * n)
            vv[::2] = sim.v
            sim.q, sim.v = qq[:, 0], vv[::2]
        sim.step(tau)

    reference = run(plain)
    for prepare in (strided, user_state):
        for a, b in zip(run(prepare), reference):
            np.testing.assert_array_equal(a, b)

    def ints(sim, k, tau):
        plain(sim, k, np.trunc(tau))

    for a, b in zip(run(as_int), run(ints)):
        np.testing.assert_array_equal(a, b)

    sim = rd.Simulator(model, fr, dt=1e-3)
    sim.reset(q0)
    sim.step(np.zeros(n))
    with pytest.raises(rd.InputError, match="tau"):
        sim.step(np.zeros((n, 1)))
    sim.q = np.zeros((n, 1)) + sim.q[:, None]
    with pytest.raises(rd.InputError, match=r"\bq\b"):
        sim.step(np.zeros(n))
    for name in ("q", "v"):  # the step's own arrays reshaped in place: refused, no crash
        sim.reset(q0)
        sim.step(np.zeros(n))
        getattr(sim, name).shape = (n, 1)
        with pytest.raises(rd.InputError, match=rf"\b{name}\b.*\({n},\)"):
            sim.step(np.zeros(n))
    sim.reset(q0)
    sim.step(np.zeros(n))
    sim.q[0] += 0.1  # in place: the same array, read by the next step
    moved = sim.q.copy()
    sim.v[:] = 0.0
    sim.step(np.zeros(n))
    other = rd.Simulator(model, fr, dt=1e-3)
    other.reset(q0)
    other.step(np.zeros(n))
    other.q = moved
    other.v = np.zeros(n)
    other.step(np.zeros(n))
    np.testing.assert_array_equal(sim.q, other.q)
