"""Long serial chains with load-dependent friction (issue 35, "a cliff at 48 joints").

Past 48 free joints in a row the solve leaves Newton for the seed's iteration (refactoring
Newton's matrix costs n³ there); on these chains that iteration diverges, and the solve then
tried 12 n + 21 stick/slip assignments: 4 of 5 random steps of a 60-joint chain failed after
about a minute each. The iteration now goes over to Newton from its current iterate when it
stops contracting (kernel and twin), and a solve that cannot finish stops at a work cap with a
message that says so. bench/bench_cliff.py measures the same chains (no timing asserted here).
"""
from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm.friction_solve import WORK, solve_with_friction
from robot_dynamics.friction.config import friction_from_config
from conftest import chain_urdf

LOAD_DEPENDENT = {"default": {"model": "load_dependent", "coulomb": 0.5, "viscous": 0.0,
                              "k1": 0.01, "k2": 0.002, "k3": 0.001}}


def chain(n, law=LOAD_DEPENDENT):
    """A serial chain of ``n`` revolute joints, 1 kg / 0.1 m links, axes cycling x, y, z (the
    chain of bench/bench_cliff.py)."""
    model = rd.build_model(rd.parse_urdf(chain_urdf(n)))
    return model, friction_from_config(law, model)


def states(n, count, seed=0):
    """The bench's states: q and q̇ uniform in [−1, 1]."""
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)) for _ in range(count)]


def solve_inputs(model, q, v, tau):
    data = model.create_data()
    bias = rd.bias_forces(model, data, q, v)
    W0 = data.f.copy()
    M = rd.mass_matrix(model, data, q)
    return M, bias, W0, rd.wrench_directors(model, data)


def test_steps_of_a_60_joint_chain_converge():
    """The issue's case: zero effort, random q, q̇, one Simulator.step from each of the states
    where 4 of 5 failed (bench/bench_cliff.py, seed 0) — and a few steps on from each, so the
    warm passes (extrapolated q̈, previous active set) are exercised too."""
    model, fr = chain(60)
    sim = rd.Simulator(model, fr, dt=1e-3)
    for q, v in states(60, 5):
        sim.reset(q, v)
        for _ in range(3):
            sim.step(np.zeros(model.nv))  # raised SimulationError on 4 of the 5 states
        assert np.isfinite(sim.q).all() and np.isfinite(sim.v).all()
        assert not np.allclose(sim.v, v)  # it moved: gravity and friction acted


@pytest.mark.parametrize("h", [1e-3, 0.0])
def test_twin_agrees_with_kernel_on_a_60_joint_chain(h):
    """The compiled solve and its readable twin take the same path (the seed's iteration,
    then Newton from where it stopped contracting) to the same answer, within a step (h > 0)
    and at an instant (forward dynamics)."""
    model, fr = chain(60)
    for q, v in states(60, 2, seed=1):
        tau = np.zeros(model.nv)
        M, bias, W0, D = solve_inputs(model, q, v, tau)
        (a1, f1, r1), (a2, f2, r2) = [solve_with_friction(model, fr, q, v, tau, M, bias, W0, D,
                                                          h=h, reference=ref)
                                      for ref in (True, False)]
        assert r1.converged, r1.message
        assert r2.converged, r2.message
        np.testing.assert_allclose(a2, a1, rtol=0, atol=1e-8 * (1 + np.abs(a1).max()))
        np.testing.assert_allclose(f2, f1, rtol=0, atol=1e-8 * (1 + np.abs(f1).max()))
        assert r1.stuck == r2.stuck and r1.method == r2.method
        # no difference-Jacobian fallback: within a step the seed's iteration diverged here and
        # every assignment ended in it (method "newton") before the handover
        assert r1.method == "fixed_point", r1.method
        # the motion satisfies the equations: M a + b = τ + τf
        np.testing.assert_allclose(M @ a2 + bias, tau + f2, rtol=0,
                                   atol=1e-8 * (1 + np.abs(bias).max()))


def test_the_work_cap_bounds_a_solve_and_its_message_says_so(monkeypatch):
    """Friction far beyond what the inertia can follow (load coefficients 0.5 on an 8-joint
    chain, within a step): each assignment's motion fails (the seed's iteration, then the Newton
    fallback: 2 max_iter iterations) and a joint sticks. Kernel and twin stay within the work cap
    WORK (n + 2) max_iter (plus the assignment under way); with the cap at 0 the twin gives up
    after its first assignment and says so, and a compiled solve that reached the cap (info[0]
    −2) is reported the same way — the FrictionSolveError's one-line message names the cap."""
    import robot_dynamics.algorithm.friction_solve as fs
    from robot_dynamics.kernels import friction_solve as kernel

    assert fs.WORK == kernel.WORK and fs.STALL == kernel.STALL

    wild = {"default": {"model": "load_dependent", "coulomb": 0.5, "k1": 0.5, "k2": 0.5,
                        "k3": 0.5}}
    n, max_iter = 8, 20
    model, fr = chain(n, wild)
    q, v = states(n, 1, seed=3)[0]
    tau = np.zeros(model.nv)
    M, bias, W0, D = solve_inputs(model, q, v, tau)
    for ref in (True, False):
        _, _, report = solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=1e-3,
                                           max_iter=max_iter, reference=ref)
        assert report.iterations <= WORK * (n + 2) * max_iter + 2 * max_iter + 1
        assert report.converged or "cap of one solve" in report.message, report.message
    monkeypatch.setattr(fs, "WORK", 0)
    _, _, report = solve_with_friction(model, fr, q, v, tau, M, bias, W0, D, h=1e-3,
                                       max_iter=max_iter, reference=True)
    assert not report.converged
    assert report.iterations == 2 * max_iter  # one assignment: iteration and fallback
    with pytest.raises(rd.FrictionSolveError, match=r"gave up after 40 iterations over 2 "
                       r"stick/slip assignments \(the cap of one solve: 0 \(n \+ 2\) max_iter "
                       r"iterations, n = 8, max_iter = 20\): no consistent motion"):
        raise rd.FrictionSolveError(report)
    assert "\n" not in report.message
    info = np.array([-2, 2, 417, 9, 0, 0, 0, 0])
    compiled = fs.compiled_report(model, info, np.inf, np.zeros(n, dtype=np.int64),
                                  np.zeros(n, dtype=np.int64))
    assert compiled.converged is False
    assert compiled.message.startswith("friction solve gave up after 417 iterations over 10 "
                                       "stick/slip assignments (the cap of one solve: 2 (n + 2)"
                                       " max_iter iterations, n = 8): "), compiled.message
    info[0] = -1
    assert "12 n + 21" in fs.compiled_report(model, info, np.inf, np.zeros(n, dtype=np.int64),
                                             np.zeros(n, dtype=np.int64)).message


def test_steps_of_a_100_joint_chain_from_random_states_converge():
    """No failed step on a 100-joint chain: 20 random states (q, q̇ uniform in [−1, 1], seed 7,
    other states than the 60-joint test's), zero effort, two steps from each — the first from
    rest of the history (a predictor pass), the second from the extrapolated q̈. The seed's
    iteration stops contracting on this chain and Newton takes over, keeping its matrix while
    it contracts (refactoring costs n³). No timing is asserted: bench/bench_cliff.py measures
    the time per step at 10 to 200 joints."""
    n = 100
    model, fr = chain(n)
    sim = rd.Simulator(model, fr, dt=1e-3)
    for q, v in states(n, 20, seed=7):
        sim.reset(q, v)
        for _ in range(2):
            sim.step(np.zeros(model.nv))  # a failed step raises SimulationError
            assert sim.report.converged, sim.report.message
        assert np.isfinite(sim.q).all() and np.isfinite(sim.v).all()


def test_twin_converges_with_the_kernel_on_a_100_joint_chain():
    """The readable twin's Newton matrix (by differences) is accurate enough for a 100-joint
    chain: with a relative step of 1e-6 the load terms' curvature left errors of 5 % in it at
    the iterates the solve reaches, M_FF's condition (1.7e6) made Newton diverge and the twin
    failed all of these states (difference-Jacobian fallback, thousands of iterations) where
    the kernel converges in about 20 iterations; at 1e-8 both reach the same motion."""
    model, fr = chain(100)
    for q, v in states(100, 3):
        tau = np.zeros(model.nv)
        M, bias, W0, D = solve_inputs(model, q, v, tau)
        (a1, f1, r1), (a2, f2, r2) = [solve_with_friction(model, fr, q, v, tau, M, bias, W0, D,
                                                          h=1e-3, reference=ref)
                                      for ref in (True, False)]
        assert r1.converged, r1.message
        assert r2.converged, r2.message
        assert r1.method == r2.method == "fixed_point" and r1.stuck == r2.stuck
        np.testing.assert_allclose(a1, a2, rtol=0, atol=1e-8 * (1 + np.abs(a2).max()))
        np.testing.assert_allclose(f1, f2, rtol=0, atol=1e-8 * (1 + np.abs(f2).max()))
