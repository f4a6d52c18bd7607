"""Issue 33: one statement of what a joint effort contains.

The motor effort of a joint is ``fn∥ (+ fext) + armature∘q̈ − τf + d∘q̇``: the URDF
``<dynamics damping>`` d is a passive effort of the plant, as ``Simulator(damping=True)`` applies
it, and ``inverse_dynamics`` (single, batch, compiled and Python paths, mimic models) includes it
by default (``damping=False``: left out, the numbers of before to the bit). ``forward_dynamics``
takes the same effort (``damping=True``: its joints feel −d∘q̇ at the given q̇), so it inverts
inverse dynamics on every path (compiled, Python laws, fext, mimic; the readable twin). The test
robot is arm7 with ``damping="1.0"`` on every joint (the bundled URDF's text, edited).
"""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.batch import inverse_dynamics_batch
from robot_dynamics.reference import dynamics as ref_dynamics
from robot_dynamics.reference import forward_dynamics as ref_fd
from conftest import bundled, damped_urdf

LAW = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.08, "k1": 0.005,
                   "k2": 0.002, "k3": 0.001}}


@pytest.fixture(scope="module")
def damped(tmp_path_factory):
    model = rd.load_urdf(damped_urdf(tmp_path_factory.mktemp("damped")))
    assert np.all(np.asarray(model.damping) == 1.0)
    return model


def _friction(model, law):
    return None if law is None else rd.friction_from_config(law, model)


def _sliding_state(model, seed):
    """A state in the middle of the joint ranges, every joint sliding (|q̇| ≥ 0.3 rad/s), and an
    acceleration to ask for."""
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(model.lower_limits), np.asarray(model.upper_limits)
    q = rng.uniform(0.5 * lo, 0.5 * hi)
    v = rng.choice([-1.0, 1.0], model.nv) * rng.uniform(0.3, 1.0, model.nv)
    a = rng.normal(scale=2.0, size=model.nv)
    return q, v, a


def _one_step_acceleration(model, friction, q, v, tau, h):
    """q̈ the Simulator (damping=True, its default) gives over one step of length h from (q, q̇)."""
    sim = rd.Simulator(model, friction, dt=h, saturate=False)
    sim.reset(q, v)
    sim.step(tau)
    return (sim.v - v) / h


@pytest.mark.parametrize("law", [None, LAW], ids=["no friction", "load-dependent friction"])
def test_simulator_fed_with_inverse_dynamics_reproduces_the_requested_acceleration(damped, law):
    """(a) The simulator's step is implicit in velocity — M(q½) q̈ + b(q½, q̇_mid) + d∘(q̇ + h q̈)
    = τ + τf(q̇ + h q̈) — so ID(q, q̇, q̈_req), stated at the step's start, gives back q̈_req up to
    O(h): the error must fall by ~10× per 10× shorter step (first order; asserted ≤ 0.2×). The
    effort without d∘q̇ (damping=False, the library's ID before issue 33) misses by M⁻¹ d∘q̇ at
    every h (through the step's implicit damping: (M + h D)⁻¹ d∘q̇), which the test computes and
    checks too: the simulator does apply the damping."""
    model = damped
    friction = _friction(model, law)
    data = model.create_data()
    for seed in range(3):
        q, v, a_req = _sliding_state(model, seed)
        tau = rd.inverse_dynamics(model, data, q, v, a_req, friction)
        tau_old = rd.inverse_dynamics(model, data, q, v, a_req, friction, damping=False)
        err = {h: np.abs(_one_step_acceleration(model, friction, q, v, tau, h) - a_req).max()
               for h in (1e-4, 1e-5)}
        M, D = rd.mass_matrix(model, data, q), np.diag(model.damping)
        scale = np.abs(np.linalg.solve(M, model.damping * v)).max()  # the damping's share
        assert scale > 1.0, scale  # the test robot's damping matters
        assert err[1e-5] < 0.2 * err[1e-4], (seed, err)  # O(h): the definitions agree
        assert err[1e-5] < 1e-3 * scale, (seed, err, scale)
        # before: off by the damping the effort lacks, −(M + h D)⁻¹ d∘q̇ through the step's
        # implicit damping (h d/M reaches 1 % on the wrist at h = 1e-5), + O(h)
        old = _one_step_acceleration(model, friction, q, v, tau_old, 1e-5) - a_req
        missed = np.linalg.solve(M + 1e-5 * D, model.damping * v)
        # (with load-dependent friction the missed motion changes the reactions, hence the
        # friction, by up to ~0.5 % of it: 1e-2 of the damping's share)
        tol = 1e-4 * scale if law is None else 1e-2 * scale
        np.testing.assert_allclose(old, -missed, rtol=0, atol=2 * err[1e-5] + tol)


@pytest.mark.parametrize("law", [None, LAW], ids=["no friction", "load-dependent friction"])
def test_damping_false_is_the_old_statement_to_the_bit(damped, law):
    """(c) damping=False: rnea (fn∥ + armature∘q̈) − τf, as before issue 33, bit for bit; the
    default adds d∘q̇ after it, also bit for bit (one addition per joint)."""
    model = damped
    friction = _friction(model, law)
    data, other = model.create_data(), model.create_data()
    for seed in range(5):
        q, v, a = _sliding_state(model, seed)
        off = rd.inverse_dynamics(model, data, q, v, a, friction, damping=False)
        tauf = data.tau_friction.copy()
        rigid = rd.rnea(model, other, q, v, a)
        if law is None:  # rnea itself
            assert off.tobytes() == rigid.tobytes() and not tauf.any()
        else:  # eq. 2.7.5 (with the rotors): fn∥ + armature∘q̈ − τf
            assert off.tobytes() == (rigid - tauf).tobytes()
        on = rd.inverse_dynamics(model, data, q, v, a, friction)
        assert np.array_equal(data.tau_friction, tauf)  # the friction does not change
        assert on.tobytes() == (off + model.damping * v).tobytes()
        # and the batch, on the same samples
        Q, V, A = (np.array([x, x]) for x in (q, v, a))
        for damping, want in ((False, off), (True, on)):
            got = inverse_dynamics_batch(model, Q, V, A, friction, damping=damping)
            assert got.tobytes() == np.array([want, want]).tobytes(), damping


def test_bundled_robots_without_damping_are_unchanged():
    """Robots whose URDF damping is 0 (all the bundled ones) get the same efforts either way."""
    model = rd.load_urdf(bundled("arm7.urdf"))
    friction = _friction(model, LAW)
    data = model.create_data()
    q, v, a = _sliding_state(model, 0)
    assert np.array_equal(rd.inverse_dynamics(model, data, q, v, a, friction),
                          rd.inverse_dynamics(model, data, q, v, a, friction, damping=False))


def test_every_path_states_the_same_effort(damped, tmp_path):
    """Compiled, Python-law (callable), smoothing and external-effort paths, the readable twin,
    the batch and a mimic model: all add d∘q̇ (and leave it out with damping=False)."""
    model = damped
    friction = _friction(model, LAW)
    data = model.create_data()
    q, v, a = _sliding_state(model, 1)
    dv = model.damping * v
    fext = np.random.default_rng(0).normal(scale=5.0, size=(model.nv, 6))
    for kwargs in ({}, {"fext": fext}):
        on = rd.inverse_dynamics(model, data, q, v, a, friction, **kwargs)
        off = rd.inverse_dynamics(model, data, q, v, a, friction, damping=False, **kwargs)
        np.testing.assert_allclose(on - off, dv, rtol=0, atol=1e-12)
        twin = ref_dynamics.inverse_dynamics(model, model.create_data(), q, v, a, friction, **kwargs)
        np.testing.assert_allclose(on, twin, rtol=0, atol=1e-10 * np.abs(on).max())
        # lists take the converting path
        listed = rd.inverse_dynamics(model, data, list(q), list(v), list(a), friction, **kwargs)
        assert np.array_equal(listed, on)
    # smoothing runs the laws in Python
    smooth = rd.inverse_dynamics(model, data, q, v, a, friction, smoothing_velocity=1e-9)
    smooth_off = rd.inverse_dynamics(model, data, q, v, a, friction, smoothing_velocity=1e-9,
                                     damping=False)
    np.testing.assert_allclose(smooth - smooth_off, dv, rtol=0, atol=1e-12)
    # a Python law (callable: never compiled), single and batch
    py = rd.friction_from_config({"default": {
        "model": "callable", "function": lambda normal, other, q, qd: 0.3 + 0.01 * abs(qd)}},
        model)
    assert py._packed is None
    Q, V, A = (np.array([x]) for x in (q, v, a))
    for damping in (True, False):
        single = rd.inverse_dynamics(model, data, q, v, a, py, damping=damping)
        batch = inverse_dynamics_batch(model, Q, V, A, py, damping=damping)[0]
        assert np.array_equal(batch, single), damping
    np.testing.assert_allclose(rd.inverse_dynamics(model, data, q, v, a, py)
                               - rd.inverse_dynamics(model, data, q, v, a, py, damping=False),
                               dv, rtol=0, atol=1e-12)
    batch = inverse_dynamics_batch(model, Q, V, A, friction)
    assert np.array_equal(batch[0], rd.inverse_dynamics(model, data, q, v, a, friction))
    with pytest.raises(rd.InputError, match="damping must be True"):
        rd.inverse_dynamics(model, data, q, v, a, friction, damping="yes")


def test_mimic_model_adds_the_coordinates_damping(tmp_path):
    """Mimic joints: Gᵀ(d_full∘G q̇) = model.damping∘q̇, what the Simulator applies to the
    coordinates."""
    path = damped_urdf(tmp_path, "arm7_gripper_mimic.urdf", 0.5)
    model = rd.load_urdf(path, mimic=True)
    assert model.coupling is not None and np.asarray(model.damping).all()
    friction = _friction(model, LAW)
    data = model.create_data()
    rng = np.random.default_rng(2)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -1.0)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, 1.0)
    q = rng.uniform(0.6 * lo + 0.4 * hi, 0.4 * lo + 0.6 * hi)
    v, a = rng.uniform(0.2, 0.5, model.nv), rng.normal(size=model.nv)
    on = rd.inverse_dynamics(model, data, q, v, a, friction)
    off = rd.inverse_dynamics(model, data, q, v, a, friction, damping=False)
    np.testing.assert_allclose(on - off, model.damping * v, rtol=0, atol=1e-12)
    twin = ref_dynamics.inverse_dynamics(model, model.create_data(), q, v, a, friction)
    np.testing.assert_allclose(on, twin, rtol=0, atol=1e-10 * np.abs(on).max())
    Q, V, A = (np.array([x]) for x in (q, v, a))
    np.testing.assert_allclose(inverse_dynamics_batch(model, Q, V, A, friction)[0], on,
                               rtol=0, atol=1e-12 * np.abs(on).max())


def test_computed_torque_states_the_damping_through_inverse_dynamics(damped):
    """ComputedTorque (NumPy law and compiled rollout) and effort_demand take d∘q̇ from inverse
    dynamics alone: its rollout equals step() with the NumPy law, damping on and off."""
    model = damped
    friction = _friction(model, LAW)
    q, v, _ = _sliding_state(model, 4)
    rows = 40
    Q = q + 0.01 * np.outer(np.arange(rows), np.ones(model.nv))
    for damping in (True, False):
        ct = rd.ComputedTorque(np.full(model.nv, 400.0), np.full(model.nv, 40.0), Q,
                               friction=friction, damping=damping)
        data = model.create_data()
        law = ct.torque(model, data, 0, q, v)
        a_c = 0.0 + 40.0 * (0.0 - v) + 400.0 * (Q[0] - q)  # the law's order (computed_torque)
        want = rd.inverse_dynamics(model, data, q, v, a_c, friction, damping=damping)
        np.testing.assert_allclose(law, want, rtol=0, atol=1e-12 * np.abs(want).max())
        sim = rd.Simulator(model, friction)
        sim.reset(q, v)
        compiled = sim.run(controller=ct, steps=rows)
        sim2 = rd.Simulator(model, friction)
        sim2.reset(q, v)
        data2 = model.create_data()
        for k in range(rows):
            sim2.step(ct.torque(model, data2, k, sim2.q, sim2.v))
            np.testing.assert_allclose(compiled["tau"][k], sim2.tau_applied, rtol=0,
                                       atol=1e-9 * max(1.0, np.abs(sim2.tau_applied).max()))


def _fext(model, seed):
    return np.random.default_rng(100 + seed).normal(scale=5.0, size=(model.nv, 6))


@pytest.mark.parametrize("external", [False, True], ids=["", "fext"])
@pytest.mark.parametrize("law", [None, LAW], ids=["no friction", "load-dependent friction"])
def test_forward_dynamics_inverts_inverse_dynamics(damped, law, external):
    """forward_dynamics(inverse_dynamics(q, q̇, q̈)) = q̈ to 1e-9 on the damped robot, both with
    their defaults (the compiled call, the converting path, the readable twin) and both with
    damping=False; forward dynamics without the damping (before issue 33) missed by M⁻¹ d∘q̇
    (exactly so without friction; with friction the missed motion moves the friction too)."""
    model = damped
    friction = _friction(model, law)
    data = model.create_data()
    for seed in range(3):
        q, v, a = _sliding_state(model, seed)
        if seed == 2:  # half the joints at rest: the stick/slip solve (they break away)
            v[::2] = 0.0
        fext = _fext(model, seed) if external else None
        tau = rd.inverse_dynamics(model, data, q, v, a, friction, fext=fext)
        got = rd.forward_dynamics(model, data, q, v, tau, friction, fext=fext)
        assert np.abs(got - a).max() < 1e-9, (seed, np.abs(got - a).max())
        listed = rd.forward_dynamics(model, data, list(q), list(v), list(tau), friction,
                                     fext=fext)
        assert np.array_equal(listed, got)
        twin = ref_fd.forward_dynamics(model, model.create_data(), q, v, tau, friction, fext=fext)
        assert np.abs(twin - a).max() < 1e-9, (seed, np.abs(twin - a).max())
        off = rd.inverse_dynamics(model, data, q, v, a, friction, fext=fext, damping=False)
        back = rd.forward_dynamics(model, data, q, v, off, friction, fext=fext, damping=False)
        assert np.abs(back - a).max() < 1e-9, (seed, np.abs(back - a).max())
        # the old meaning: no damping in forward dynamics
        old = rd.forward_dynamics(model, data, q, v, tau, friction, fext=fext, damping=False)
        missed = np.linalg.solve(rd.mass_matrix(model, model.create_data(), q), model.damping * v)
        assert np.abs(old - a).max() > 1.0, np.abs(old - a).max()
        if law is None:
            np.testing.assert_allclose(old - a, missed, rtol=0, atol=1e-9 * np.abs(missed).max())


def test_forward_dynamics_damping_false_is_the_old_statement_to_the_bit(damped):
    """damping=False applies no damping: on the damped robot it gives, bit for bit, the numbers
    of the same robot without URDF damping (whose efforts the damping leaves alone either way),
    on the compiled, fext and Python-law paths; damping=True is forward dynamics at τ − d∘q̇,
    bit for bit (one subtraction per joint, in the kernel and in NumPy alike)."""
    plain = rd.load_urdf(bundled("arm7.urdf"))
    assert not np.asarray(plain.damping).any()
    py = {"default": {"model": "callable",
                      "function": lambda normal, other, q, qd: 0.3 + 0.01 * abs(qd)}}
    for law in (None, LAW, py):
        fr_d, fr_p = _friction(damped, law), _friction(plain, law)
        dd, dp = damped.create_data(), plain.create_data()
        for seed in range(3):
            q, v, a = _sliding_state(damped, seed)
            if seed == 2:
                v[::2] = 0.0
            tau = rd.rnea(plain, plain.create_data(), q, v, a)
            for fext in (None, _fext(damped, seed)):
                off = rd.forward_dynamics(damped, dd, q, v, tau, fr_d, fext=fext, damping=False)
                tf = dd.tau_friction.copy()
                for damping in (True, False):
                    ref = rd.forward_dynamics(plain, dp, q, v, tau, fr_p, fext=fext,
                                              damping=damping)
                    assert off.tobytes() == ref.tobytes(), (law, seed, damping)
                    assert tf.tobytes() == dp.tau_friction.tobytes()
                on = rd.forward_dynamics(damped, dd, q, v, tau, fr_d, fext=fext)
                shifted = rd.forward_dynamics(damped, dd, q, v, tau - damped.damping * v, fr_d,
                                              fext=fext, damping=False)
                assert on.tobytes() == shifted.tobytes(), (law, seed)
    with pytest.raises(rd.InputError, match="damping must be True"):
        rd.forward_dynamics(damped, damped.create_data(), q, v, tau, damping="yes")
    assert np.array_equal(rd.forward_dynamics(damped, dd, q, v, tau, damping=np.bool_(False)),
                          rd.forward_dynamics(damped, dd, q, v, tau, damping=False))


def test_forward_dynamics_inverts_inverse_dynamics_python_law_and_mimic(damped, tmp_path):
    """The paths outside the fused kernel: a Python law (forward_dynamics_steps) and a mimic
    model (coupled.forward_dynamics: the coordinates' model.damping∘q̇)."""
    model = damped
    py = rd.friction_from_config({"default": {
        "model": "callable", "function": lambda normal, other, q, qd: 0.3 + 0.01 * abs(qd)}},
        model)
    assert py._packed is None
    data = model.create_data()
    q, v, a = _sliding_state(model, 3)
    for fext in (None, _fext(model, 3)):
        tau = rd.inverse_dynamics(model, data, q, v, a, py, fext=fext)
        got = rd.forward_dynamics(model, data, q, v, tau, py, fext=fext)
        assert np.abs(got - a).max() < 1e-9, np.abs(got - a).max()
    mimic = rd.load_urdf(damped_urdf(tmp_path, "arm7_gripper_mimic.urdf", 0.5), mimic=True)
    rng = np.random.default_rng(2)
    lo = np.where(np.isfinite(mimic.lower_limits), mimic.lower_limits, -1.0)
    hi = np.where(np.isfinite(mimic.upper_limits), mimic.upper_limits, 1.0)
    q = rng.uniform(0.6 * lo + 0.4 * hi, 0.4 * lo + 0.6 * hi)
    v, a = rng.uniform(0.2, 0.5, mimic.nv), rng.normal(size=mimic.nv)
    md = mimic.create_data()
    for law in (None, LAW):
        fr = _friction(mimic, law)
        tau = rd.inverse_dynamics(mimic, md, q, v, a, fr)
        got = rd.forward_dynamics(mimic, md, q, v, tau, fr)
        assert np.abs(got - a).max() < 1e-9, (law, np.abs(got - a).max())
        off = rd.inverse_dynamics(mimic, md, q, v, a, fr, damping=False)
        back = rd.forward_dynamics(mimic, md, q, v, off, fr, damping=False)
        assert np.abs(back - a).max() < 1e-9, (law, np.abs(back - a).max())
        assert np.abs(rd.forward_dynamics(mimic, md, q, v, tau, fr, damping=False) - a).max() > 1e-3
