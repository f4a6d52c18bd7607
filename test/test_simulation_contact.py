"""Compliant point–plane contact (issue 32): the compiled law (kernels/contact.py) against its
twin (reference/contact.py), and PlaneContact in the Simulator — a tool pressed on a table
settles at the closed-form force, the normal force never pulls, friction opposes the slip and is
bounded by μ F_n."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import InputError
from robot_dynamics.kernels.contact import plane_contact
from robot_dynamics.reference import contact as ref_contact
from robot_dynamics.simulation.contact import PlaneContact, total

G = 9.81
M_X, M_TOOL = 0.5, 2.0  # carriage and tool masses [kg]

# a carriage sliding along x carrying a tool sliding along z; the tip 0.1 m below the tool link
SLIDER = f"""<?xml version="1.0"?>
<robot name="slider">
  <link name="base_link"/>
  <link name="carriage"><inertial><mass value="{M_X}"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tool"><inertial><mass value="{M_TOOL}"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="tip"/>
  <joint name="x" type="prismatic"><parent link="base_link"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit effort="1000" velocity="10" lower="-10" upper="10"/></joint>
  <joint name="z" type="prismatic"><parent link="carriage"/><child link="tool"/>
    <origin xyz="0 0 0.3"/>
    <axis xyz="0 0 1"/><limit effort="1000" velocity="10" lower="-10" upper="10"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="tool"/><child link="tip"/>
    <origin xyz="0 0 -0.1"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def slider():
    return rd.load_urdf(SLIDER)


def _random_case(rng, nb=3):
    oMi = np.zeros((nb, 4, 4))
    for b in range(nb):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        oMi[b, :3, :3] = Q * np.sign(np.linalg.det(Q))
        oMi[b, :3, 3] = rng.normal(scale=0.05, size=3)
        oMi[b, 3, 3] = 1.0
    n = rng.normal(size=3)
    return (oMi, rng.normal(size=(nb, 6)), int(rng.integers(nb)), rng.normal(scale=0.05, size=3),
            rng.normal(scale=0.05, size=3), n / np.linalg.norm(n))


def test_kernel_and_twin_agree_and_the_law_holds():
    rng = np.random.default_rng(0)
    seen = {"pushing": 0, "separated": 0, "no pull": 0}
    for k in range(400):
        oMi, vel, body, point, o, n = _random_case(rng)
        k_, c_, mu, eps = 1e4, rng.choice([0.0, 50.0, 5e3]), rng.uniform(0, 1), 1e-3
        F1, F2 = np.zeros((3, 6)), np.zeros((3, 6))
        out1, out2 = np.zeros(3), np.zeros(3)
        fn1 = plane_contact(oMi, vel, body, point, o, n, k_, c_, mu, eps, F1, out1)
        fn2 = ref_contact.plane_contact(oMi, vel, body, point, o, n, k_, c_, mu, eps, F2, out2)
        np.testing.assert_allclose(F1, F2, atol=1e-10, rtol=1e-12)
        np.testing.assert_allclose(out1, out2, atol=1e-12, rtol=1e-12)
        assert fn1 == pytest.approx(fn2, abs=1e-10)
        R, p = oMi[body, :3, :3], oMi[body, :3, 3]
        x = R @ point + p
        xdot = R @ (vel[body, :3] + np.cross(vel[body, 3:], point))
        depth, rate = (o - x) @ n, -xdot @ n
        assert fn1 >= 0.0  # never pulls
        if depth <= 0:
            seen["separated"] += 1
            assert fn1 == 0.0 and not F1.any()
            continue
        if k_ * depth + c_ * rate <= 0:
            seen["no pull"] += 1
            assert fn1 == 0.0 and not F1.any()
            continue
        seen["pushing"] += 1
        assert fn1 == pytest.approx(k_ * depth + c_ * rate, rel=1e-12)
        f_world = R @ F1[body, :3]
        np.testing.assert_allclose(F1[body, 3:], np.cross(point, F1[body, :3]), atol=1e-12)
        assert f_world @ n == pytest.approx(fn1, rel=1e-9)
        f_t = f_world - (f_world @ n) * n
        slip = xdot - (xdot @ n) * n
        assert np.linalg.norm(f_t) <= mu * fn1 * (1 + 1e-12)  # bounded by μ F_n
        assert f_t @ slip <= 1e-12 * fn1  # opposes the slip
        if np.linalg.norm(slip) > 100 * eps:  # Coulomb once the slip is well beyond ε
            assert np.linalg.norm(f_t) == pytest.approx(mu * fn1, rel=1e-4)
            np.testing.assert_allclose(f_t, -mu * fn1 * slip / np.linalg.norm(slip),
                                       atol=1e-4 * mu * fn1 + 1e-12)
    assert min(seen.values()) > 20, seen


@pytest.mark.parametrize("push", [0.0, 30.0])
@pytest.mark.parametrize("compiled", [True, False])
def test_tool_pressed_on_a_table_settles_at_the_closed_form_force(slider, push, compiled):
    """Tool weight plus a motor push P down: at rest k δ = m_tool g + P, the tip δ below the
    table; the normal force never pulls on the way; the energy audit closes with the contact's
    work as well as a run without it."""
    k, c = 2e4, 300.0  # critically damped-ish for the 2 kg tool (2 sqrt(k m) = 400)
    table = PlaneContact(slider, "tip", plane_point=(0, 0, 0.0), normal=(0, 0, 1), stiffness=k,
                         damping=c, friction=0.5)
    sim = rd.Simulator(slider, dt=5e-4, limits=False, compiled=compiled, external=table)
    sim.reset([0.0, -0.19])  # the tip 1 cm above the table: it falls on it
    tau = np.array([0.0, -push])
    forces = []
    for _ in range(3000):
        sim.step(tau)
        forces.append(table.normal_force)
    forces = np.array(forces)
    assert (forces >= 0).all() and forces[:10].max() == 0.0 and forces.max() > 0
    table(sim.t, sim.q, sim.v)
    expected = M_TOOL * G + push
    assert table.normal_force == pytest.approx(expected, rel=1e-6)
    assert table.depth == pytest.approx(expected / k, rel=1e-6)
    assert sim.q[1] == pytest.approx(-0.2 - expected / k, abs=1e-9)
    audit = sim.audit
    assert audit.external_work < 0  # the contact took the fall's energy
    assert abs(audit.relative_residual) < 2e-3, str(audit)


def test_friction_decelerates_a_sliding_tool_at_mu_g_and_never_reverses_it(slider):
    """The carriage slides at 0.5 m/s with the tool resting on the table: friction μ F_n
    decelerates the carriage + tool (M_X + M_TOOL) at μ (m_tool g + P) / (M_X + M_TOOL) until it
    stops; it never reverses the slide."""
    mu, push = 0.3, 10.0
    table = PlaneContact(slider, "tip", stiffness=5e4, damping=600.0, friction=mu,
                         slip_velocity=2e-3)
    sim = rd.Simulator(slider, dt=1e-4, limits=False)
    sim.reset([0.0, -0.2 - (M_TOOL * G + push) / 5e4], [0.5, 0.0])
    out = sim.run(0.3, lambda t, q, v: np.array([0.0, -push]), external=table)
    vx = out["v"][:, 0]
    decel = mu * (M_TOOL * G + push) / (M_X + M_TOOL)
    i, j = np.searchsorted(out["t"], [0.02, 0.10])
    assert (vx[i] - vx[j]) / (out["t"][j] - out["t"][i]) == pytest.approx(decel, rel=1e-3)
    assert vx.min() > -1e-3 and abs(vx[-1]) < 1e-3  # stopped, not reversed
    assert table.friction_force <= mu * table.normal_force


def test_contacts_add_up_and_bad_parameters_are_refused(slider):
    a = PlaneContact(slider, "tip", stiffness=1e4)
    b = PlaneContact(slider, "tool", point=(0, 0, -0.05), stiffness=2e4)
    q, v = np.array([0.0, -0.21]), np.zeros(2)
    both = (a + b)(0.0, q, v)
    np.testing.assert_allclose(both, a(0.0, q, v) + b(0.0, q, v), atol=1e-12)
    np.testing.assert_allclose(total(a, np.ones((2, 6)))(0.0, q, v), a(0.0, q, v) + 1.0)
    for kwargs, word in [({"stiffness": 0.0}, "stiffness"), ({"damping": -1.0}, "damping"),
                         ({"friction": float("nan")}, "friction"),
                         ({"normal": (0, 0, 0)}, "normal"), ({"point": (1, 2)}, "point")]:
        with pytest.raises(InputError, match=word):
            PlaneContact(slider, "tip", **kwargs)
    with pytest.raises(InputError, match="link"):
        PlaneContact(slider, "nope")
