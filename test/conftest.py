"""Shared test helpers: example-robot-data URDFs, the map to Pinocchio's q, and the test-only
control_msgs built by scripts/build_test_interfaces.sh (test-only)."""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import site
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --- test-only control_msgs (scripts/build_test_interfaces.sh) ---------------------------------
INTERFACES = os.path.join(
    os.environ.get("ROBOT_DYNAMICS_CACHE", os.path.expanduser("~/.cache/robot_dynamics")),
    "interfaces")


def control_msgs_variant() -> str:
    """The control_msgs variant that matches this interpreter's rclpy, as
    scripts/build_test_interfaces.sh chooses it: 'jazzy' (FollowJointTrajectory feedback without
    `index`) for rclpy < 9, else 'kilted'; ROBOT_DYNAMICS_CONTROL_MSGS overrides."""
    from importlib import metadata

    variant = os.environ.get("ROBOT_DYNAMICS_CONTROL_MSGS", "")
    if variant:
        return variant
    for dist in ("ros-rclpy", "rclpy"):
        try:
            return "jazzy" if int(metadata.version(dist).split(".")[0]) < 9 else "kilted"
        except (metadata.PackageNotFoundError, ValueError):
            continue
    return "jazzy" if os.environ.get("ROS_DISTRO") in ("humble", "iron", "jazzy") else "kilted"


# the last build for this interpreter's variant (not "current": the other lane's may be newer)
INTERFACES_CURRENT = os.path.join(INTERFACES, "current-" + control_msgs_variant())


def _prepend_env(name: str, value: str) -> None:
    parts = [p for p in os.environ.get(name, "").split(os.pathsep) if p]
    if value not in parts:
        os.environ[name] = os.pathsep.join([value] + parts)


def _use_test_interfaces() -> None:
    """Put the built control_msgs on the path when the shell did not source its env.sh.

    scripts/test.sh sources ``<prefix>/env.sh``; a bare ``pytest`` gets the same from here: the
    prefix's site-packages on sys.path, PYTHONPATH / LD_LIBRARY_PATH / AMENT_PREFIX_PATH for the
    node subprocesses, and its libraries preloaded in this process (the rmw loads the type
    support by library name, and this process's loader read LD_LIBRARY_PATH when it started).
    """
    if importlib.util.find_spec("control_msgs") is not None:  # env.sh sourced, or a ROS install
        return
    current = INTERFACES_CURRENT
    if not os.path.exists(current):  # a cache from before the variants
        current = os.path.join(INTERFACES, "current")
    prefix = os.path.realpath(current)
    sites = glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages"))
    libs = sorted(glob.glob(os.path.join(prefix, "lib", "lib*.so")))
    if not sites or not libs:
        return
    try:
        for lib in libs:  # RUNPATH finds the siblings
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
    except OSError:  # a broken cache: the action tests then skip with the import error
        return
    sys.path.insert(0, sites[0])
    _prepend_env("PYTHONPATH", sites[0])
    _prepend_env("LD_LIBRARY_PATH", os.path.join(prefix, "lib"))
    os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)  # the wheels' own prefix, as env.sh
    _prepend_env("AMENT_PREFIX_PATH", prefix)


_use_test_interfaces()


def control_msgs_missing_reason() -> str:
    """Why control_msgs cannot be imported, or '' when it can."""
    try:
        from control_msgs.action import FollowJointTrajectory  # noqa: F401
    except ImportError as exc:
        why = os.environ.get("ROBOT_DYNAMICS_INTERFACES_SKIP") or (
            f"control_msgs not importable ({exc}); build it with scripts/build_test_interfaces.sh")
        return why
    return ""


@pytest.fixture(scope="session")
def follow_joint_trajectory():
    """control_msgs.action.FollowJointTrajectory from the test-only build; skips with the reason
    when it is not built (no compiler), and fails instead under CI (CI=true), which must run
    them."""
    why = control_msgs_missing_reason()
    if why:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the action tests: {why}")
        pytest.skip(why)
    from control_msgs.action import FollowJointTrajectory

    return FollowJointTrajectory


def erd_urdf(relpath: str) -> str:
    """Path of a URDF shipped by the example-robot-data wheel, e.g. 'panda_description/urdf/panda.urdf'."""
    for base in site.getsitepackages() + [site.getusersitepackages()]:
        path = os.path.join(base, "cmeel.prefix/share/example-robot-data/robots", relpath)
        if os.path.isfile(path):
            return path
    pytest.skip(f"example-robot-data not installed ({relpath})")


PANDA = "panda_description/urdf/panda.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"


def bundled(name: str) -> str:
    return os.path.join(REPO, "urdf", name)


def damped_urdf(directory, name="arm7.urdf", damping=1.0) -> str:
    """A bundled robot with ``<dynamics damping="…">`` on every joint (issue 33's test robot): its
    URDF text with each ``damping="0.0"`` replaced, written to ``directory``; returns the path."""
    text = open(bundled(name), encoding="utf-8").read()
    assert 'damping="0.0"' in text and 'damping="' not in text.replace('damping="0.0"', "")
    path = os.path.join(str(directory), name.replace(".urdf", "_damped.urdf"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace('damping="0.0"', f'damping="{damping}"'))
    return path


class PinMap:
    """Maps our one-angle-per-joint vectors to a Pinocchio model built from the same URDF."""

    def __init__(self, model, urdf_path):
        pin = pytest.importorskip("pinocchio")
        self.pin = pin
        self.pmodel = pin.buildModelFromUrdf(urdf_path)
        self.pdata = self.pmodel.createData()
        self.jids = [self.pmodel.getJointId(n) for n in model.joint_names]
        self.idx_v = np.array([self.pmodel.joints[j].idx_v for j in self.jids])
        assert self.pmodel.nv == model.nv

    def q(self, q):
        out = np.zeros(self.pmodel.nq)
        for qi, jid in zip(q, self.jids):
            j = self.pmodel.joints[jid]
            if j.nq == 2:  # continuous: (cos, sin)
                out[j.idx_q], out[j.idx_q + 1] = np.cos(qi), np.sin(qi)
            else:
                out[j.idx_q] = qi
        return out

    def v(self, v):
        out = np.zeros(self.pmodel.nv)
        out[self.idx_v] = v
        return out

    def ours(self, vec):
        """A Pinocchio nv-vector in our joint order."""
        return np.asarray(vec)[self.idx_v]

    def ours_matrix(self, M):
        return np.asarray(M)[np.ix_(self.idx_v, self.idx_v)]

    def wrenches(self):
        """Pinocchio's data.f (after rnea) in our order, (nv, 6) [f; n] in the joint frame."""
        return np.array([self.pdata.f[j].vector for j in self.jids])


def random_state(model, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    q = rng.uniform(lo, hi)
    v = scale * rng.uniform(-1.5, 1.5, model.nv)
    a = scale * rng.uniform(-3.0, 3.0, model.nv)
    return q, v, a


def fd_states(model, fr, kind, count, seed, coulomb=0.5):
    """``count`` (q, v, τ) of a forward-dynamics state class (bench/bench_mujoco.py's FD classes
    and test_articulated.py): *sliding* (every joint moving), *stuck* (q̇ = 0 on half the joints,
    efforts strictly within their stiction bound, the law's level at rest being at least
    ``coulomb``), *mixed* (q̇ = 0 on half, random efforts: some stick, some break away)."""
    import inspect

    import robot_dynamics as rd

    # forward dynamics' inverse (as Pinocchio's aba: no URDF damping; issue 33's
    # inverse_dynamics adds d∘q̇ by default — versions the benches compare with have no keyword)
    no_damping = ({"damping": False}
                  if "damping" in inspect.signature(rd.inverse_dynamics).parameters else {})
    rng = np.random.default_rng(seed)
    data = model.create_data()
    lo = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.pi)
    hi = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.pi)
    out = []
    for _ in range(count):
        q = rng.uniform(lo, hi)
        v = rng.uniform(-1.5, 1.5, model.nv) * rng.choice([-1, 1], model.nv)
        v = np.where(np.abs(v) < 0.05, 0.05, v)
        a = rng.uniform(-3, 3, model.nv)
        rest = np.zeros(model.nv, bool)
        if kind != "sliding":
            rest[rng.permutation(model.nv)[:model.nv // 2]] = True
            v[rest] = 0.0
        if kind == "stuck":
            a[rest] = 0.0
        tau = rd.inverse_dynamics(model, data, q, v, a, fr, **no_damping)
        if kind == "stuck":
            tau[rest] += rng.uniform(-0.8, 0.8, rest.sum()) * coulomb
        if kind == "mixed":
            tau[rest] += rng.uniform(-3, 3, rest.sum()) * coulomb
        out.append((q, v, tau))
    return out


# --- tiers (pytest.ini): `pytest -m unit`, `-m twins`, `-m "not ros"`, `-m e2e` -------------------
#: files whose tests compare compiled kernels with their readable twins
TWIN_FILES = {"test_twins.py", "test_kernels.py", "test_articulated.py", "test_friction_gradient.py",
              "test_fast_paths.py"}
#: files whose tests run a command or a composition end to end
E2E_FILES = {"test_cli.py", "test_cli_sim.py", "test_demo_hold.py", "test_record_sim_bag.py",
             "test_readme.py", "test_nodes_closed_loop.py", "test_launch_files.py",
             "test_formulations_cli.py", "test_identification.py"}
#: a test touches ROS when its own source, or its module's imports, name one of these
ROS_WORDS = ("rclpy", "ros_helpers", "NodeProcess", "robot_dynamics.ros", "follow_joint_trajectory",
             "control_msgs", "launch_ros")


def _mentions_ros(text: str) -> bool:
    return any(word in text for word in ROS_WORDS)


def _module_imports_ros(module) -> bool:
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))
    imports = [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return _mentions_ros("\n".join(imports))


def pytest_collection_modifyitems(config, items):
    import inspect

    module_ros = {}
    for item in items:
        name = os.path.basename(str(item.fspath))
        tier = "twins" if name in TWIN_FILES else "e2e" if name in E2E_FILES else "unit"
        item.add_marker(getattr(pytest.mark, tier))
        module = item.module
        if module not in module_ros:
            module_ros[module] = _module_imports_ros(module)
        try:
            own = inspect.getsource(item.function)
        except (OSError, TypeError):
            own = ""
        fixtures = " ".join(getattr(item, "fixturenames", ()))
        if module_ros[module] or _mentions_ros(own) or _mentions_ros(fixtures):
            item.add_marker(pytest.mark.ros)


def chain_urdf(n: int) -> str:
    """A serial chain of ``n`` revolute joints, 1 kg / 0.1 m links, axes cycling x, y, z (the
    long chains of the benches and of test_long_chains)."""
    links = '<link name="l0"/>'
    joints = ""
    for i in range(1, n + 1):
        links += (f'<link name="l{i}"><inertial><origin xyz="0 0 0.05"/><mass value="1"/>'
                  '<inertia ixx="0.01" iyy="0.01" izz="0.005" ixy="0" ixz="0" iyz="0"/>'
                  '</inertial></link>')
        axis = ["1 0 0", "0 1 0", "0 0 1"][i % 3]
        joints += (f'<joint name="j{i}" type="revolute"><parent link="l{i-1}"/><child link="l{i}"/>'
                   f'<origin xyz="0 0 0.1"/><axis xyz="{axis}"/>'
                   '<limit effort="100" velocity="2" lower="-3" upper="3"/></joint>')
    return f'<robot name="chain{n}">{links}{joints}</robot>'
