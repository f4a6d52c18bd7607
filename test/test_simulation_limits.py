"""The simulator at the edges (issue 12): effort saturation, joint limits as hard stops, and
never a silent wrong state — whatever the command."""
import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.friction import friction_from_config
from conftest import bundled


@pytest.fixture(scope="module")
def arm7():
    model = rd.load_urdf(bundled("arm7.urdf"))
    return model, friction_from_config(bundled("../config/arm7_friction.yaml"), model)


def test_efforts_saturate_at_the_urdf_limits(arm7):
    model, fr = arm7
    sim = rd.Simulator(model, fr, dt=1e-3)
    q0 = np.linspace(-0.5, 0.5, model.nv)
    sim.reset(q0)
    cmd = np.array([1e3, -1e3, 10.0, -500.0, 0.0, 40.0, -1e300])
    sim.step(cmd)
    lim = model.effort_limits
    np.testing.assert_array_equal(sim.tau_applied, np.clip(cmd, -lim, lim))
    np.testing.assert_array_equal(sim.saturated, np.abs(cmd) >= lim)
    assert sim.saturated_steps == 1
    sim.step(np.zeros(model.nv))
    assert sim.saturated_steps == 1 and not sim.saturated.any()
    # the saturated command moves the arm exactly as the limit itself does
    ref = rd.Simulator(model, fr, dt=1e-3)
    ref.reset(q0)
    ref.step(np.clip(cmd, -lim, lim))
    ref.step(np.zeros(model.nv))
    np.testing.assert_array_equal(ref.q, sim.q)
    # saturate=False applies the command as given
    raw = rd.Simulator(model, fr, dt=1e-3, saturate=False)
    raw.reset(q0)
    raw.step(cmd * [1, 1, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(raw.tau_applied, cmd * [1, 1, 1, 1, 1, 1, 0])
    assert raw.saturated_steps == 0
