"""The simulator's step 2 by articulated recursions (kernels/articulated_step.py) against the
dense step (kernels/fd.py ``_step`` on M and the directors, the general solve: the
specification), on generated chains with the load-dependent and the classic law, joints at
rest (they stick or break away) and on their stops; the thresholds (kernels/fd.py
SP_ARTICULATED, ARTICULATED_LOADED_MIN): small models with the classic law keep the dense step,
bit for bit, laws that read their reactions take the recursions from 3 joints; and the readable
statement of the step's recursions (robot_dynamics.reference.articulated) against the kernel."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.friction_solve import LOWER, STUCK, UPPER
from robot_dynamics.kernels.articulated_step import ARTICULATED_LOADED_MIN, ARTICULATED_MIN
from robot_dynamics.kernels.fd import SP_ARTICULATED, SP_GUESS, SP_HISTORY
from conftest import PANDA, chain_urdf, erd_urdf

LAWS = {
    "load_dependent": {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.05,
                                   "k1": 0.01, "k2": 0.002, "k3": 0.001}},
    "classic": {"default": {"model": "classic", "coulomb": 0.8, "viscous": 0.1}},
}


def _chain(n, law):
    """bench_cliff's chain with URDF damping on every joint (the step's implicit term)."""
    urdf = chain_urdf(n).replace('<limit effort=', '<dynamics damping="0.02"/><limit effort=')
    model = rd.build_model(rd.parse_urdf(urdf))
    return model, rd.friction_from_config(LAWS[law], model)


def _pair(model, fr):
    """(articulated, dense) simulators of one model: the threshold 0 and inf."""
    art, dense = rd.Simulator(model, fr, dt=1e-3), rd.Simulator(model, fr, dt=1e-3)
    art._tail[SP_ARTICULATED] = 0.0
    dense._tail[SP_ARTICULATED] = np.inf
    return art, dense


def _sync(src, dst):
    """dst takes src's state and step history (the extrapolated q̈ and the last joint states)."""
    dst.q, dst.v = src.q.copy(), src.v.copy()
    dst._tail[SP_GUESS:] = src._tail[SP_GUESS:]
    dst._tail[SP_HISTORY] = src._tail[SP_HISTORY]


def _step_both(art, dense, tau, fext=None):
    """One step of each from the same state and history (:func:`_sync`); their joint states
    (stick/slip/stop assignments) must be the same."""
    _sync(art, dense)
    art.step(tau, fext=fext)
    dense.step(tau, fext=fext)
    np.testing.assert_array_equal(art._codes, dense._codes)


def _start(model, rng):
    """q within the stops, some joints on a stop (moving into it or at rest), some at rest."""
    n = model.nv
    q = rng.uniform(-2.5, 2.5, n)
    v = rng.uniform(-1.0, 1.0, n)
    v[rng.random(n) < 0.35] = 0.0
    on = rng.random(n) < 0.15
    side = rng.choice([-1.0, 1.0], n)
    q[on] = np.where(side[on] < 0, model.lower_limits[on], model.upper_limits[on])
    v[on] = np.where(rng.random(on.sum()) < 0.5, 0.0, side[on] * rng.uniform(0.1, 1.0, on.sum()))
    return q, v


def _check_rules(sim, model, impulse):
    """The step's stick/slip/stop rules at the answer: stuck joints do not move, a joint on a
    stop lies on it and its stop only pushes (``impulse``: a stop's impulse acted at the
    step's start, whose P/h the reactions include: not judged), sliding friction opposes the
    motion."""
    state = sim._codes.astype(int) // 4  # 4·state + sign + 1 (kernels/fd.py)
    tol = 1e-8
    stuck = state == STUCK
    assert np.all(sim.v[stuck] == 0.0)
    lo, hi = state == LOWER, state == UPPER
    np.testing.assert_array_equal(sim.q[lo], model.lower_limits[lo])
    np.testing.assert_array_equal(sim.q[hi], model.upper_limits[hi])
    if not impulse:
        assert np.all(sim.tau_limit[lo] >= -tol) and np.all(sim.tau_limit[hi] <= tol)
    free = state == 0
    assert np.all(sim.tau_friction[free] * sim.v[free] <= tol)
    assert np.all((sim.q >= model.lower_limits) & (sim.q <= model.upper_limits))
    return stuck.sum(), (lo | hi).sum(), free.sum()


@pytest.mark.parametrize("n, law, steps", [(30, "load_dependent", 300), (30, "classic", 300),
                                           (100, "load_dependent", 120)])
def test_articulated_step_matches_the_dense_step(n, law, steps):
    model, fr = _chain(n, law)
    art, dense = _pair(model, fr)
    rng = np.random.default_rng(n)
    counts = np.zeros(3, int)
    recursions = 0
    for episode in range(steps // 30):
        q, v = _start(model, rng)
        art.reset(q, v)
        dense.reset(q, v)
        tau = rng.uniform(-3, 3, n) * (rng.random(n) < 0.7)
        for k in range(30):
            _sync(art, dense)
            x = art.q + 0.5 * art.dt * art.v
            impulse = bool(((x < model.lower_limits) | (x > model.upper_limits)).any())
            art.step(tau)
            dense.step(tau)
            ra, rd_ = art.report, dense.report
            assert ra.converged and rd_.converged
            recursions += ra.method == "newton"  # the articulated solve's mark (info[1] 2)
            np.testing.assert_array_equal(art._codes, dense._codes)  # same joint states
            scale = 1.0 + np.abs(dense.v).max()
            np.testing.assert_allclose(art.q, dense.q, rtol=1e-9, atol=1e-9 * scale)
            np.testing.assert_allclose(art.v, dense.v, rtol=1e-9, atol=1e-9 * scale)
            eff = 1.0 + np.abs(tau).max() + np.abs(dense.tau_friction).max()
            np.testing.assert_allclose(art.tau_friction, dense.tau_friction, atol=1e-8 * eff)
            np.testing.assert_allclose(art.tau_limit, dense.tau_limit, atol=1e-7 * eff)
            Wa, Wd = art.joint_wrenches, dense.joint_wrenches
            np.testing.assert_allclose(Wa, Wd, atol=1e-8 * (1.0 + np.abs(Wd).max()))
            counts += _check_rules(art, model, impulse)
    # the run held joints stuck, on stops and sliding, and the recursions answered most steps
    # (a stop's impulse takes the dense step)
    assert counts.min() > 0, counts
    assert recursions >= 0.6 * steps, recursions


def test_external_wrenches_on_the_articulated_step():
    n = 30
    model, fr = _chain(n, "load_dependent")
    art, dense = _pair(model, fr)
    rng = np.random.default_rng(3)
    q, v = _start(model, rng)
    art.reset(q, v)
    dense.reset(q, v)
    tau = rng.uniform(-2, 2, n)
    for k in range(60):
        fext = rng.uniform(-3, 3, (n, 6)) * (rng.random((n, 1)) < 0.3)
        _step_both(art, dense, tau, fext)
        scale = 1.0 + np.abs(dense.v).max()
        np.testing.assert_allclose(art.v, dense.v, rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(art.q, dense.q, rtol=1e-9, atol=1e-9 * scale)
    assert art.report.method == "newton"


def _threshold_run(model, law, lead="dense", steps=40):
    """(default, forced articulated, forced dense) simulators of ``model`` with ``law`` stepped
    from one random state under one random effort; before each step the articulated one takes
    the dense one's state (``lead`` "dense"), or both take the default one's ("default");
    yields after each step."""
    fr = rd.friction_from_config(LAWS[law], model)
    default = rd.Simulator(model, fr, dt=1e-3)
    art, dense = _pair(model, fr)
    rng = np.random.default_rng(1)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -1.0)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, 1.0)
    q = 0.5 * (lo + hi) + 0.3 * (hi - lo) * rng.uniform(-1, 1, model.nv)
    v = rng.uniform(-0.5, 0.5, model.nv)
    for sim in (default, art, dense):
        sim.reset(q, v)
    tau = rng.uniform(-2, 2, model.nv)
    for k in range(steps):
        if lead == "dense":
            _sync(dense, art)
        else:
            _sync(default, art)
            _sync(default, dense)
        for sim in (default, art, dense):
            sim.step(tau)
        yield default, art, dense


def test_threshold_keeps_small_models_on_the_dense_step():
    """Below ARTICULATED_MIN joints the default step with the classic law is the dense one to
    the bit; forcing the recursions there changes the last bits (so the comparison can tell the
    two apart)."""
    cases = [rd.load_urdf(erd_urdf(PANDA)), _chain(ARTICULATED_MIN - 1, "classic")[0]]
    for model in cases:
        assert model.nv < ARTICULATED_MIN
        differs = False
        for default, art, dense in _threshold_run(model, "classic"):
            np.testing.assert_array_equal(default.q, dense.q)
            np.testing.assert_array_equal(default.v, dense.v)
            np.testing.assert_allclose(art.v, dense.v, atol=1e-8)
            differs = differs or not np.array_equal(art.v, dense.v)
        assert differs  # the switch does route: the forced recursions round differently


def test_loaded_laws_take_the_recursions_on_small_arms():
    """A law that reads its reactions takes the articulated step from ARTICULATED_LOADED_MIN
    joints (panda: 9): the default step is the forced recursions' to the bit, and agrees with
    the forced dense step to the solve's tolerance; below that (2 joints) it is the dense one."""
    assert ARTICULATED_LOADED_MIN <= 9 < ARTICULATED_MIN
    model = rd.load_urdf(erd_urdf(PANDA))
    differs = False
    for default, art, dense in _threshold_run(model, "load_dependent", lead="default"):
        np.testing.assert_array_equal(default.q, art.q)
        np.testing.assert_array_equal(default.v, art.v)
        np.testing.assert_array_equal(default._codes, dense._codes)
        scale = 1.0 + np.abs(dense.v).max()
        np.testing.assert_allclose(default.v, dense.v, rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(default.q, dense.q, rtol=1e-9, atol=1e-9 * scale)
        differs = differs or not np.array_equal(default.v, dense.v)
    assert differs
    small = _chain(ARTICULATED_LOADED_MIN - 1, "load_dependent")[0]
    for default, _, dense in _threshold_run(small, "load_dependent", lead="default"):
        np.testing.assert_array_equal(default.q, dense.q)
        np.testing.assert_array_equal(default.v, dense.v)


@pytest.mark.parametrize("law", sorted(LAWS))
def test_step_recursions_match_their_statement(law):
    """The compiled step's answer (q̈ at q½, the products' velocity, its joint states) is the
    readable statement's for the same assignment (reference.articulated_step_motion)."""
    from robot_dynamics.kernels.fd import ACC, Q_HALF, V_EVAL
    from robot_dynamics.kernels.friction_solve import UHI, ULO
    from robot_dynamics.reference.articulated import articulated_step_motion
    n = 14
    model, fr = _chain(n, law)
    art, _ = _pair(model, fr)
    twin = model.create_data()
    rng = np.random.default_rng(11)
    h = art.dt
    kinds = set()
    for k in range(12):
        q = rng.uniform(-2.0, 2.0, n)
        v = rng.uniform(-1.0, 1.0, n) * (rng.random(n) < 0.6)
        on = rng.random(n) < 0.2  # on a stop, at rest: no impulse (vp = q̇)
        q[on], v[on] = np.where(rng.random(on.sum()) < 0.5, -3.0, 3.0), 0.0
        art.reset(q, v)
        art.step(rng.uniform(-3, 3, n))
        assert art.report.method == "newton"  # the recursions answered
        vecs = art.data._vecs
        codes = art._codes.astype(int)
        states = codes // 4
        directions = (codes - 1 - 4 * states).astype(float)
        u = np.where(states == LOWER, vecs[ULO], np.where(states == UPPER, vecs[UHI], 0.0))
        targets = (u - v) / h
        qdd, fn = articulated_step_motion(model, twin, vecs[Q_HALF], vecs[V_EVAL], v,
                                          art.tau_applied, fr, states, directions, targets, h,
                                          art.damping)
        np.testing.assert_allclose(qdd, vecs[ACC], atol=1e-7 * (1.0 + np.abs(qdd).max()))
        np.testing.assert_allclose(fn, art.joint_wrenches, atol=1e-7 * (1.0 + np.abs(fn).max()))
        kinds.update(states.tolist())
    assert kinds >= {0, STUCK}, kinds


@pytest.mark.parametrize("law, fallback", [
    ({"model": "gear_mesh", "mesh_forward": 0.1, "mesh_backward": 0.3}, False),
    ({"model": "bearing", "mu": 0.05, "pin_radius": 0.02, "friction_arm": 0.03,
      "bending_arm": 0.05, "preload": 0.2}, False),
    ({"model": "gear_mesh", "mesh_forward": 0.3, "mesh_backward": 1.2}, True)])
def test_other_laws_and_the_fallback(law, fallback):
    """Other load-reading laws step alike; a gear that can self-lock (Newton can reach a root
    against the assumed direction) falls back to the dense step, which then runs from the
    start of step 2 on consistent scratch: the same step to the bit."""
    n = 20
    model, _ = _chain(n, "classic")
    fr = rd.friction_from_config({"default": law}, model)
    art, dense = _pair(model, fr)
    rng = np.random.default_rng(2)
    for episode in range(4):
        q, v = _start(model, rng)
        art.reset(q, v)
        dense.reset(q, v)
        tau = rng.uniform(-3, 3, n)
        for k in range(30):
            _step_both(art, dense, tau)
            if fallback:
                np.testing.assert_array_equal(art.v, dense.v)
                np.testing.assert_array_equal(art.tau_friction, dense.tau_friction)
            else:
                assert art.report.method == "newton"
                scale = 1.0 + np.abs(dense.v).max()
                np.testing.assert_allclose(art.v, dense.v, rtol=1e-9, atol=1e-9 * scale)


def test_a_pivot_that_is_not_positive_falls_back_mid_solve():
    """A steep Stribeck drop at slow motion takes a sliding joint's pivot below zero
    (armature + h d + s k, k = ∂φ/∂u·h): the recursions return after writing their scratch
    (placements, poses, wrenches, joint states), and the dense step run from the start of
    step 2 then gives its own answer to the bit; elsewhere the two agree to tol."""
    n = 20
    model, _ = _chain(n, "classic")
    fr = rd.friction_from_config({"default": {"model": "classic", "coulomb": 1.5,
                                              "viscous": 0.1, "stribeck": {"static": 20.0,
                                                                           "velocity": 0.01}}},
                                 model)
    art, dense = _pair(model, fr)
    rng = np.random.default_rng(4)
    fallbacks = 0
    for episode in range(5):
        q, v = _start(model, rng)
        art.reset(q, 0.02 * v)
        dense.reset(q, 0.02 * v)
        tau = rng.uniform(-3, 3, n)
        for k in range(30):
            _step_both(art, dense, tau)
            if art.report.method != "newton":  # the dense step answered
                fallbacks += 1
                np.testing.assert_array_equal(art.q, dense.q)
                np.testing.assert_array_equal(art.v, dense.v)
                np.testing.assert_array_equal(art.tau_friction, dense.tau_friction)
            else:
                scale = 1.0 + np.abs(dense.v).max()
                np.testing.assert_allclose(art.v, dense.v, rtol=1e-9, atol=1e-9 * scale)
    assert fallbacks > 0
