"""The public API at its edges (issue 12): a Data or friction model of another robot, inputs in
any layout, finite inputs so large that the dynamics overflow."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.algorithm import aggregated, batch
from robot_dynamics.errors import InputError, MismatchError
from robot_dynamics.algorithm.forward_dynamics import forward_dynamics_reference
from robot_dynamics.friction import friction_from_config
from conftest import PANDA, REPO, UR5, bundled, erd_urdf

ARM7_FRICTION = os.path.join(REPO, "config", "arm7_friction.yaml")

# ---------------------------------------------------------------------------------------------
# 1. Model, Data and friction belong together. Run in a child process: before the guard,
#    forward_dynamics segfaulted and mass_matrix corrupted the heap — a crash must show up as a
#    failed test, not kill pytest.

_MISMATCH_SCRIPT = r"""
import json, sys
import numpy as np
import robot_dynamics as rd
from robot_dynamics.algorithm import aggregated, batch
from robot_dynamics.algorithm.crba import mass_matrix_reference
from robot_dynamics.algorithm.directors import wrench_directors_reference
from robot_dynamics.algorithm.forward_dynamics import forward_dynamics_reference
from robot_dynamics.friction import friction_from_config
from robot_dynamics.algorithm.rnea import rnea_reference

paths = json.loads(sys.argv[1])
models = {name: rd.load_urdf(path) for name, path in paths["urdf"].items()}


def data_calls(model, data):
    n = model.nv
    q, v, a = np.full(n, 0.3), np.full(n, -0.2), np.full(n, 0.5)
    return {
        "rnea": lambda: rd.rnea(model, data, q, v, a),
        "rnea_reference": lambda: rnea_reference(model, data, q, v, a),
        "joint_wrenches": lambda: rd.joint_wrenches(model, data),
        "mass_matrix": lambda: rd.mass_matrix(model, data, q),
        "mass_matrix_reference": lambda: mass_matrix_reference(model, data, q),
        "bias_forces": lambda: rd.bias_forces(model, data, q, v),
        "gravity_torques": lambda: rd.gravity_torques(model, data, q),
        "coriolis_torques": lambda: rd.coriolis_torques(model, data, q, v),
        "forward_dynamics": lambda: rd.forward_dynamics(model, data, q, v, a),
        "forward_dynamics_reference": lambda: forward_dynamics_reference(model, data, q, v, a),
        "inverse_dynamics": lambda: rd.inverse_dynamics(model, data, q, v, a),
        "wrench_directors": lambda: rd.wrench_directors(model, data),
        "wrench_directors(q)": lambda: rd.wrench_directors(model, data, q),
        "wrench_directors_reference": lambda: wrench_directors_reference(model, data),
        "forward_kinematics": lambda: rd.forward_kinematics(model, data, q),
        "frame_placement": lambda: rd.frame_placement(model, data, model.link_names[-1]),
        "aggregate": lambda: aggregated.aggregate(model, data, q, v),
        "velocity_basis": lambda: aggregated.velocity_basis(model, data),
        "efforts_to_joints": lambda: aggregated.efforts_to_joints(model, data, np.zeros(6 * n)),
        "joints_to_efforts": lambda: aggregated.joints_to_efforts(model, data, np.zeros(6 * n)),
    }


def friction_calls(model, friction):
    n = model.nv
    q, v, a = np.full(n, 0.3), np.full(n, -0.2), np.full(n, 0.5)
    data = model.create_data()
    Q = np.tile(q, (4, 1))
    return {
        "forward_dynamics": lambda: rd.forward_dynamics(model, data, q, v, a, friction),
        "forward_dynamics_reference": lambda: forward_dynamics_reference(
            model, data, q, v, a, friction),
        "inverse_dynamics": lambda: rd.inverse_dynamics(model, data, q, v, a, friction),
        "inverse_dynamics_batch": lambda: batch.inverse_dynamics_batch(model, Q, Q, Q, friction),
        "Simulator": lambda: rd.Simulator(model, friction),
        "FrictionModel.magnitudes": lambda: friction.magnitudes(model, data.f, q, v),
        "FrictionModel.bounds": lambda: friction.bounds(model, data.f, q, np.ones(n)),
    }


def attempt(label, call, names):
    print(label, flush=True)  # the last line printed names the call if the process crashes
    try:
        call()
    except ValueError as exc:
        msg = str(exc)
        ok = type(exc).__name__ == "MismatchError" and all(repr(x) in msg for x in names)
        return {"label": label, "ok": ok, "message": msg}
    return {"label": label, "ok": False, "message": "no error"}


results = []
for own, other in (("panda", "ur5"), ("ur5", "panda")):
    data = models[own].create_data()
    for name, call in data_calls(models[other], data).items():
        results.append(attempt(f"{own} Data, {other} model: {name}", call, [own, other]))
friction = friction_from_config(paths["friction"], models["arm7"])
for name, call in friction_calls(models["planar_2r"], friction).items():
    results.append(attempt(f"arm7 friction, planar_2r model: {name}", call,
                           ["arm7", "planar_2r"]))
print("RESULTS " + json.dumps(results), flush=True)
"""


def test_foreign_data_or_friction_raises_naming_both_robots():
    paths = {"urdf": {"panda": erd_urdf(PANDA), "ur5": erd_urdf(UR5),
                      "arm7": bundled("arm7.urdf"), "planar_2r": bundled("planar_2r.urdf")},
             "friction": ARM7_FRICTION}
    proc = subprocess.run([sys.executable, "-c", _MISMATCH_SCRIPT, json.dumps(paths)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"child process died (code {proc.returncode}) after: "
        f"{proc.stdout.strip().splitlines()[-1:]}\n{proc.stderr[-2000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULTS "))
    results = json.loads(line[len("RESULTS "):])
    assert len(results) == 2 * 20 + 7
    failed = [r for r in results if not r["ok"]]
    assert not failed, failed
    msgs = {r["label"]: r["message"] for r in results}
    assert ("Data was created for robot 'panda' (nv=9), used with model 'ur5' (nv=6): create "
            "one with model.create_data()") in msgs["panda Data, ur5 model: forward_dynamics"]
    assert "friction model was made for robot 'arm7' (nv=7)" in msgs[
        "arm7 friction, planar_2r model: forward_dynamics"]


def test_data_of_the_same_robot_loaded_twice_is_accepted():
    first, second = rd.load_urdf(bundled("arm7.urdf")), rd.load_urdf(bundled("arm7.urdf"))
    data, own = first.create_data(), second.create_data()
    q, v, a = np.full(7, 0.3), np.full(7, -0.2), np.full(7, 0.5)
    assert np.array_equal(rd.rnea(second, data, q, v, a), rd.rnea(second, own, q, v, a))
    fr = friction_from_config(ARM7_FRICTION, first)
    assert np.array_equal(rd.forward_dynamics(second, data, q, v, a, fr),
                          rd.forward_dynamics(second, own, q, v, a, fr))
    assert data.model is second


def test_hand_built_friction_model_binds_to_its_joints():
    arm7, planar = rd.load_urdf(bundled("arm7.urdf")), rd.load_urdf(bundled("planar_2r.urdf"))
    laws = friction_from_config(ARM7_FRICTION, arm7).laws
    fr = rd.FrictionModel(arm7.joint_names, laws)  # no model given
    data = arm7.create_data()
    rd.inverse_dynamics(arm7, data, np.zeros(7), np.ones(7), np.zeros(7), fr)
    with pytest.raises(MismatchError, match=r"joints \['joint_a1'.*'planar_2r' \(nv=2\)"):
        rd.inverse_dynamics(planar, planar.create_data(), np.zeros(2), np.ones(2), np.zeros(2),
                            rd.FrictionModel(arm7.joint_names, laws))
    with pytest.raises(MismatchError,
                       match=r"joints \['shoulder'\] \(nv=1\), used with model 'planar_2r'"):
        rd.FrictionModel(planar.joint_names[:1], laws[:1], planar)


# ---------------------------------------------------------------------------------------------
# 2. Inputs in any layout: converted once, then the compiled path; results bit-identical to
#    float64 C arrays, and no new numba specialisation.

def _dispatchers():
    """Every numba dispatcher of the package: each one's compiled specialisations."""
    names = [m for m in sys.modules if m.startswith("robot_dynamics")]
    found = {id(obj): obj for m in names for obj in vars(sys.modules[m]).values()
             if type(obj).__name__ == "CPUDispatcher"}
    return [found[k] for k in sorted(found)]


def _layout(x, kind):
    """(x in layout ``kind``, the float64 C array holding the same numbers)."""
    x = np.asarray(x, dtype=np.float64)
    if kind == "list":
        return x.tolist(), x
    if kind == "tuple":
        return tuple(x.tolist()), x
    if kind == "read-only":
        y = x.copy()
        y.setflags(write=False)
        return y, x
    if kind == "strided":
        y = np.repeat(x, 2, axis=-1)[..., ::2]
        assert not y.flags.c_contiguous
        return y, x
    if kind == "float32":
        y = x.astype(np.float32)
        return y, y.astype(np.float64)
    if kind == "int":
        y = np.round(x * 4).astype(np.int64)
        return y, y.astype(np.float64)
    if kind == "fortran":  # 2-D only
        y = np.asfortranarray(x)
        assert x.ndim == 1 or not y.flags.c_contiguous
        return y, x
    raise ValueError(kind)


LAYOUTS = ["list", "tuple", "read-only", "strided", "float32", "int"]


def _entry_points(model, friction):
    """name → f(data, q, v, a) returning an array; every public entry point on vectors."""
    return {
        "rnea": lambda d, q, v, a: rd.rnea(model, d, q, v, a),
        "rnea+joint_wrenches": lambda d, q, v, a: (rd.rnea(model, d, q, v, a),
                                                   rd.joint_wrenches(model, d))[1],
        "mass_matrix": lambda d, q, v, a: rd.mass_matrix(model, d, q),
        "bias_forces": lambda d, q, v, a: rd.bias_forces(model, d, q, v),
        "gravity_torques": lambda d, q, v, a: rd.gravity_torques(model, d, q),
        "coriolis_torques": lambda d, q, v, a: rd.coriolis_torques(model, d, q, v),
        "wrench_directors": lambda d, q, v, a: rd.wrench_directors(model, d, q),
        "forward_kinematics": lambda d, q, v, a: (rd.forward_kinematics(model, d, q),
                                                  d.oMi.copy())[1],
        "forward_dynamics": lambda d, q, v, a: rd.forward_dynamics(model, d, q, v, a),
        "forward_dynamics+friction": lambda d, q, v, a: np.concatenate([
            rd.forward_dynamics(model, d, q, v, a, friction), d.tau_friction]),
        "inverse_dynamics": lambda d, q, v, a: rd.inverse_dynamics(model, d, q, v, a),
        "inverse_dynamics+friction": lambda d, q, v, a: np.concatenate([
            rd.inverse_dynamics(model, d, q, v, a, friction), d.tau_friction]),
        "aggregate": lambda d, q, v, a: aggregated.aggregate(model, d, q, v).pl,
        "FrictionModel.magnitudes": lambda d, q, v, a: (rd.rnea(model, d, q, v, a),
                                                        friction.magnitudes(model, d.f, q, v))[1],
    }


@pytest.fixture(scope="module")
def arm7():
    model = rd.load_urdf(bundled("arm7.urdf"))
    return model, friction_from_config(ARM7_FRICTION, model)


@pytest.mark.parametrize("kind", LAYOUTS)
def test_every_layout_gives_identical_results_without_recompiling(arm7, kind):
    model, friction = arm7
    rng = np.random.default_rng(3)
    state = [rng.integers(-12, 13, model.nv) / 8.0 for _ in range(3)]  # exact in float32
    state[1][2] = 0.0  # a joint at rest: stiction in forward dynamics
    calls = _entry_points(model, friction)
    odd, plain = zip(*(_layout(x, kind) for x in state))
    want = {name: call(model.create_data(), *plain) for name, call in calls.items()}
    before = [len(k.signatures) for k in _dispatchers()]
    for name, call in calls.items():
        got = call(model.create_data(), *odd)
        assert got.dtype == np.float64 and np.array_equal(got, want[name]), (name, kind)
    assert [len(k.signatures) for k in _dispatchers()] == before, "a kernel was recompiled"


@pytest.mark.parametrize("kind", LAYOUTS[:4] + ["float32", "int", "fortran"])
def test_batch_functions_take_any_layout(arm7, kind):
    model, friction = arm7
    rng = np.random.default_rng(4)
    Q, V, A = (rng.integers(-12, 13, (5, model.nv)) / 8.0 for _ in range(3))
    odd, plain = zip(*(_layout(X, kind) for X in (Q, V, A)))
    calls = {
        "rnea_batch": lambda *x: batch.rnea_batch(model, *x),
        "joint_wrenches_batch": lambda *x: batch.joint_wrenches_batch(model, *x),
        "inverse_dynamics_batch": lambda *x: batch.inverse_dynamics_batch(model, *x, friction),
    }
    want = {name: call(*plain) for name, call in calls.items()}
    before = [len(k.signatures) for k in _dispatchers()]
    for name, call in calls.items():
        assert np.array_equal(call(*odd), want[name]), (name, kind)
    assert [len(k.signatures) for k in _dispatchers()] == before, "a kernel was recompiled"


def test_malformed_inputs_still_name_the_argument(arm7):
    model, friction = arm7
    data = model.create_data()
    z = np.zeros(model.nv)
    with pytest.raises(InputError, match=r"^v in rnea: expected shape \(7,\), got \(6,\)"):
        rd.rnea(model, data, z, [0.0] * 6, z)
    with pytest.raises(InputError, match=r"^tau in forward_dynamics: non-finite value\(s\) at "
                                         r"index \[3\]"):
        rd.forward_dynamics(model, data, z, z, np.where(np.arange(7) == 3, np.nan, 0.0))
    with pytest.raises(InputError, match=r"^q in mass_matrix: expected shape \(7,\), got \(1, 7\)"):
        rd.mass_matrix(model, data, z[None, :])
    with pytest.raises(InputError, match="^a in inverse_dynamics: cannot be read"):
        rd.inverse_dynamics(model, data, z, z, ["x"] * 7, friction)
    # complex values: numpy would keep the real part with only a warning (a silent wrong answer)
    c = z + 0.5j
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        for name, call in (("q in rnea", lambda: rd.rnea(model, data, c, z, z)),
                           ("q in mass_matrix", lambda: rd.mass_matrix(model, data, list(c))),
                           ("tau in forward_dynamics",
                            lambda: rd.forward_dynamics(model, data, z, z, c, friction)),
                           ("q in Simulator.reset", lambda: rd.Simulator(model).reset(c)),
                           ("tau in Simulator.step", lambda: rd.Simulator(model).step(c))):
            with pytest.raises(InputError, match=rf"^{name}: complex values \(e\.g\. 0\.5j\)"):
                call()


def test_simulator_and_controllers_refuse_what_they_cannot_use(arm7):
    """A newcomer's edges (session 13): each one line naming the argument, where numpy or
    Python raised their own errors, or nothing happened until later."""
    model, friction = arm7
    z = np.zeros(model.nv)
    for kw, what in ((dict(dt=1j), "dt must be a positive number of seconds, got 1j"),
                     (dict(dt="0.001"), "dt must be a positive number of seconds, got '0.001'"),
                     (dict(tol=0.0), "tol must be a positive number"),
                     (dict(max_iter=2.5), "max_iter must be a whole number ≥ 1"),
                     (dict(velocity_tolerance=-1.0), "velocity_tolerance must be a number ≥ 0")):
        with pytest.raises(InputError, match=f"^Simulator: {what}"):
            rd.Simulator(model, friction, **kw)
    sim = rd.Simulator(model, friction)
    for kw, what in ((dict(duration=float("nan")), "duration must be a finite number"),
                     (dict(duration=float("inf")), "duration must be a finite number"),
                     (dict(duration=1e300), r"1e\+303 steps would record .* GB, more than half"),
                     (dict(steps=2.5), "steps must be a whole number of steps, got 2.5")):
        with pytest.raises(InputError, match=f"^Simulator.run: {what}"):
            sim.run(**kw)
    assert len(sim.run(steps=3.0)["t"]) == 3  # a whole float is a number of steps
    # a velocity whose kinetic energy overflows: no step could be taken from it, refused at once
    with pytest.raises(InputError, match=r"^v in Simulator.reset: the kinetic energy leaves the "
                                         r"float64 range \(joint 'joint_a1' at 1e\+300\)"):
        sim.reset(z, np.full(model.nv, 1e300))
    assert np.array_equal(sim.v, np.zeros(model.nv)) and sim.steps == 3  # the state is kept
    # controller gains and references: checked when the controller is made
    for make, what in ((lambda: rd.PD(np.nan, 1.0, z), r"kp: not finite"),
                       (lambda: rd.ComputedTorque(1j, 40.0, z), r"kp: expected real numbers"),
                       (lambda: rd.PD(1.0, 1.0, np.full(model.nv, np.inf)), r"q_ref: not finite")):
        with pytest.raises(InputError, match=f"^{what}"):
            make()
    # references of a trajectory go row by row together: several rows each, as many; a single
    # row is a constant, a shorter trajectory holds its last row
    rows = np.zeros((5, model.nv)), np.zeros((7, model.nv))
    with pytest.raises(InputError, match=r"^references of a trajectory must have as many rows "
                                         r"\(steps\): q_ref has 5, v_ref has 7"):
        sim.run(steps=10, controller=rd.ComputedTorque(100.0, 20.0, *rows))
    assert len(sim.run(steps=10, controller=rd.PD(100.0, 20.0, rows[0], z))["t"]) == 10
    # Data and friction of the wrong kind: named, not an AttributeError
    with pytest.raises(MismatchError, match="^forward_dynamics: expected a Data from "
                                            "model.create_data\\(\\), got NoneType"):
        rd.forward_dynamics(model, None, z, z, z)
    with pytest.raises(MismatchError, match="^inverse_dynamics: friction must be a "
                                            "FrictionModel"):
        rd.inverse_dynamics(model, model.create_data(), z, z, z, "arm7_friction")


def test_model_settings_of_the_wrong_shape_or_type_are_refused(arm7):
    model, _ = arm7
    for bad in (np.zeros((1, model.nv)), [1j] * model.nv):
        with pytest.raises(rd.ModelError, match=f"^armature: expected {model.nv}"):
            model.armature = bad
    assert not model.armature.any()
    with pytest.raises(rd.ModelError, match="^mimic: expected True or False, got 'yes'"):
        rd.load_urdf(bundled("arm7_gripper_mimic.urdf"), mimic="yes")


def test_friction_and_actuators_by_name_as_on_the_command_line(arm7):
    model, friction = arm7
    from robot_dynamics.friction.actuators import actuators_from_config

    named = friction_from_config("arm7_friction", model)
    assert named.to_config() == friction.to_config()
    assert not friction_from_config("none", model).active.any()
    assert actuators_from_config("none", model).to_config() == \
        actuators_from_config({}, model).to_config()
    with pytest.raises(rd.ModelError, match="did you mean 'arm7_friction'"):
        friction_from_config("arm7_fricton", model)


# ---------------------------------------------------------------------------------------------
# 3. Huge but finite inputs: a finite result, or InputError("overflow: ...") naming the input.

def _outcome(call):
    """'finite', or the overflow message; anything else (NaN returned, another error) fails."""
    try:
        out = call()
    except InputError as exc:
        assert str(exc).startswith("overflow: "), str(exc)
        return str(exc)
    assert np.isfinite(out).all(), "non-finite result returned without an error"
    return "finite"


@pytest.mark.parametrize("urdf", ["arm7.urdf", "rrp.urdf"])
@pytest.mark.parametrize("arg", ["q", "v", "tau"])
@pytest.mark.parametrize("magnitude", [1e100, 1e154, 1e200, 1e300])
def test_huge_inputs_give_finite_results_or_name_the_overflow(urdf, arg, magnitude):
    model = rd.load_urdf(bundled(urdf))
    friction = friction_from_config(os.path.join(REPO, "config",
                                                 urdf.replace(".urdf", "_friction.yaml")), model)
    n = model.nv
    j = n - 1  # the last joint: rrp's is prismatic
    state = {"q": np.full(n, 0.2), "v": np.full(n, 0.1), "tau": np.full(n, 0.3)}
    state[arg][j] = magnitude
    q, v, t = state["q"], state["v"], state["tau"]
    data = model.create_data()
    third = "a" if arg == "tau" else arg  # τ is the acceleration argument of inverse dynamics
    calls = {
        "rnea": (lambda: rd.rnea(model, data, q, v, t), third),
        "mass_matrix": (lambda: rd.mass_matrix(model, data, q), arg if arg == "q" else None),
        "bias_forces": (lambda: rd.bias_forces(model, data, q, v), arg),
        "forward_dynamics": (lambda: rd.forward_dynamics(model, data, q, v, t), arg),
        "forward_dynamics+friction": (lambda: rd.forward_dynamics(model, data, q, v, t, friction),
                                      arg),
        "inverse_dynamics+friction": (lambda: rd.inverse_dynamics(model, data, q, v, t, friction),
                                      third),
        "coriolis_torques": (lambda: rd.coriolis_torques(model, data, q, v),
                             arg if arg != "tau" else None),
        "forward_dynamics_reference": (lambda: forward_dynamics_reference(
            model, data, q, v, t, friction, on_failure="report"), arg),
        "rnea_batch": (lambda: batch.rnea_batch(model, *(np.tile(x, (3, 1)) for x in (q, v, t))),
                       third.upper()),
        "inverse_dynamics_batch": (lambda: batch.inverse_dynamics_batch(
            model, *(np.tile(x, (3, 1)) for x in (q, v, t)), friction), third.upper()),
        "aggregate": (lambda: aggregated.aggregate(model, data, q, v).pl,
                      arg if arg != "tau" else None),
    }
    for name, (call, culprit) in calls.items():
        outcome = _outcome(call)
        if outcome != "finite":
            index = f"{culprit}[0, {j}]" if "batch" in name else f"{culprit}[{j}]"
            assert index in outcome, (name, outcome)
    # the Data is still usable after an overflow
    z = np.zeros(n)
    fresh = model.create_data()
    assert np.array_equal(rd.rnea(model, data, z, z, z), rd.rnea(model, fresh, z, z, z))


def test_overflow_names_the_culprit_among_moderate_inputs():
    model = rd.load_urdf(bundled("arm7.urdf"))
    data = model.create_data()
    q, v, a = np.full(7, 0.2), np.full(7, 3.0), np.full(7, 1.0)
    v[1] = 1e154
    with pytest.raises(InputError, match=r"^overflow: v\[1\] = 1e\+154 in rnea: "):
        rd.rnea(model, data, q, v, a)
    with pytest.raises(InputError, match=r"^overflow: v\[1\] = 1e\+154 in forward_dynamics: "):
        rd.forward_dynamics(model, data, q, v, a, friction_from_config(ARM7_FRICTION, model))
    V = np.tile(np.full(7, 3.0), (4, 1))
    V[2, 1] = 1e154
    with pytest.raises(InputError, match=r"^overflow: V\[2, 1\] = 1e\+154 in rnea_batch"):
        batch.rnea_batch(model, np.zeros((4, 7)), V, np.zeros((4, 7)))
    rrp = rd.load_urdf(bundled("rrp.urdf"))
    with pytest.raises(InputError, match=r"^overflow: q\[2\] = 1e\+300 in mass_matrix: "):
        rd.mass_matrix(rrp, rrp.create_data(), [0.1, 0.2, 1e300])
