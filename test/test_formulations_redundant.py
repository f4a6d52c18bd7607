"""Seed 000's RRP example reproduced term by term; Gibbs–Appell, Lagrange and Kane equations
agree with the core's Newton–Euler."""
import numpy as np
import pytest
import sympy as sp

import robot_dynamics as rd
from robot_dynamics.formulations.redundant import RRP_SYMBOLS, from_model, rrp_seed
from conftest import bundled

th1, th2, d3, h, l1, l2, l3, l1g, l2g, l3g = RRP_SYMBOLS
s1, c1, s2, c2 = sp.sin(th1), sp.cos(th1), sp.sin(th2), sp.cos(th2)
L = l2 - l3 + l3g + d3


@pytest.fixture(scope="module")
def rrp():
    return rrp_seed()


def _same(a, b):
    assert a.shape == b.shape
    diff = sp.simplify(a - b)
    assert diff == sp.zeros(*a.shape), diff


def test_phi_as_printed_in_seed_000(rrp):
    x1, y1, z1, x2, y2, z2, x3, y3, z3 = rrp.q_circ
    seed_phi = sp.Matrix([x1, y1, z1 - h - l1g, x2 + c2 * s1 * l2g, y2 - c1 * c2 * l2g,
                          z2 - h - l1 - s2 * l2g, x3 + c2 * s1 * L, y3 - c1 * c2 * L,
                          z3 - h - l1 - s2 * L])
    _same(rrp.phi, seed_phi)


def test_psi_upsilon_lambda_as_printed_in_seed_000(rrp):
    _same(rrp.Psi, sp.eye(3))
    seed_upsilon = sp.Matrix([  # seed 000 prints a 4th, all-zero column: a typo (q# has 3 rows)
        [0, 0, 0], [0, 0, 0], [s2, 0, 0], [c2, 0, 0], [0, 1, 0], [s2, 0, 0], [c2, 0, 0],
        [0, 0, 0], [0, 0, 0], [0, 0, 0], [-l2g * c2, 0, 0], [0, 0, 0], [0, l2g, 0],
        [-L * c2, 0, 0], [0, L, 0]])
    _same(rrp.Upsilon, seed_upsilon)
    w = {n: sp.Symbol(n) for n in ("omega_x1 omega_y1 omega_z1 omega_x2 omega_y2 omega_z2 "
                                    "omega_x3 omega_y3 omega_z3 v_x1 v_y1 v_z1 v_x2 v_y2 v_z2 "
                                    "v_x3 v_z3").split()}
    # rows 8–10 as seed 000 prints them (v_x1, v_y1, v_z1); seed 001's v_z1 ×3 is a typo
    seed_lambda = sp.Matrix([
        w["omega_x1"], w["omega_y1"], w["omega_y2"] - s2 * w["omega_z1"],
        w["omega_z2"] - c2 * w["omega_z1"], w["omega_x3"] - w["omega_x2"],
        w["omega_y3"] - s2 * w["omega_z1"], w["omega_z3"] - c2 * w["omega_z1"],
        w["v_x1"], w["v_y1"], w["v_z1"], w["v_x2"] + l2g * c2 * w["omega_z1"], w["v_y2"],
        w["v_z2"] - l2g * w["omega_x2"], w["v_x3"] + L * c2 * w["omega_z1"],
        w["v_z3"] - L * w["omega_x2"]])
    _same(rrp.Lambda, seed_lambda)


@pytest.mark.parametrize("robot", ["rrp.urdf", "planar_2r.urdf"])
def test_gibbs_appell_lagrange_kane_equal_newton_euler(robot):
    model = rd.load_urdf(bundled(robot))
    data = model.create_data()
    system = from_model(model)
    Pi, tau_ga = system.gibbs_appell_equations()
    # check Π along p# too: τ = Ψᵀ Π (Ψ ≠ 1 for the 2R: ω of the forearm is q̇1 + q̇2)
    tau_from_pi = system.Psi.T * Pi
    funcs = [system.numeric(e) for e in (tau_ga, tau_from_pi, system.lagrange_equations(),
                                         system.kane_equations())]
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, a = rng.uniform(-1, 1, (3, model.nv))
        tau = rd.rnea(model, data, q, v, a)
        for f in funcs:
            np.testing.assert_allclose(np.asarray(f(q, v, a), float).ravel(), tau, atol=1e-9)


def test_refuses_large_or_branched_robots():
    with pytest.raises(rd.ModelError, match="7 joints: symbolic derivation is limited to 4"):
        from_model(rd.load_urdf(bundled("arm7.urdf")))


def test_seed_rrp_equations_equal_sympy_mechanics_kane(rrp):
    """Independent cross-check with symbolic parameters: SymPy's own KanesMethod, built from the
    seed's description of the RRP (frames, CoMs, body-frame inertias), gives the same equations
    as our Gibbs–Appell, Lagrange and Kane at random parameter values and states."""
    import sympy.physics.mechanics as me

    q1, q2, q3 = me.dynamicsymbols("q1 q2 q3")
    u1, u2, u3 = me.dynamicsymbols("u1 u2 u3")
    m, g = sp.symbols("m1 m2 m3"), sp.Symbol("g")
    I = [sp.symbols(f"I{i}x I{i}y I{i}z") for i in (1, 2, 3)]
    N = me.ReferenceFrame("N")
    B1 = N.orientnew("B1", "Axis", (q1, N.z))
    B2 = B1.orientnew("B2", "Axis", (q2, B1.x))
    B1.set_ang_vel(N, u1 * N.z)
    B2.set_ang_vel(B1, u2 * B1.x)
    O = me.Point("O")
    O.set_vel(N, 0)
    O1 = O.locatenew("O1", h * N.z)
    O2 = O1.locatenew("O2", l1 * B1.z)
    G1 = O1.locatenew("G1", l1g * B1.z)
    G2 = O2.locatenew("G2", l2g * B2.y)
    G3 = O2.locatenew("G3", (l2 + q3 - l3 + l3g) * B2.y)
    for P in (O1, O2, G1, G2, G3):
        P.set_vel(N, P.pos_from(O).dt(N).subs({q1.diff(): u1, q2.diff(): u2, q3.diff(): u3}))
    bodies = [me.RigidBody(f"b{i}", G, F, m[i], (me.inertia(F, *I[i]), G))
              for i, (G, F) in enumerate([(G1, B1), (G2, B2), (G3, B2)])]
    loads = [(G, -m[i] * g * N.z) for i, G in enumerate((G1, G2, G3))]
    kane = me.KanesMethod(N, [q1, q2, q3], [u1, u2, u3],
                          kd_eqs=[q1.diff() - u1, q2.diff() - u2, q3.diff() - u3])
    fr, frstar = kane.kanes_equations(bodies, loads)
    ud = [u.diff() for u in (u1, u2, u3)]
    # with no actuators Fr + Fr* = 0; the actuator efforts that produce a motion are −(Fr + Fr*)
    state = dict(zip(ud, rrp.qdd)) | dict(zip((u1, u2, u3), rrp.qd)) | dict(zip((q1, q2, q3), rrp.q))
    reference = (-(fr + frstar)).subs(state)
    params = [h, l1, l2, l3, l1g, l2g, l3g, *m, *[s for row in I for s in row], g]
    ours = [rrp.gibbs_appell_equations()[1], rrp.lagrange_equations(), rrp.kane_equations()]
    args = [rrp.q, rrp.qd, rrp.qdd, params]
    f_ref = sp.lambdify(args, reference)
    f_ours = [sp.lambdify(args, e) for e in ours]
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, v, a = rng.uniform(-1, 1, (3, 3))
        p = rng.uniform(0.2, 2.0, len(params))
        expected = np.asarray(f_ref(q, v, a, p), float).ravel()
        assert np.abs(expected).max() > 0.1
        for f in f_ours:
            np.testing.assert_allclose(np.asarray(f(q, v, a, p), float).ravel(), expected,
                                       rtol=1e-10, atol=1e-10)
