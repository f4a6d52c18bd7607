"""Many independent rollouts at once, on every core (issue 35).

A rollout is one :meth:`Simulator.run <robot_dynamics.simulation.simulator.Simulator.run>` with a
compiled controller from an initial state: :class:`RolloutSpec` holds what varies from one to
the next (initial state, controller and its references and gains, friction scale, payload),
:class:`Plant` what they share (robot, nominal friction, step, simulator options).
:func:`run_rollouts` runs a list of specs and returns, in the specs' order, each one's
trajectory (the arrays of ``Simulator.run``) and summary (tracking error, saturation, energy
audit) — serially in this process (``workers=1``), spread over threads of this process or
worker processes (``concurrent.futures``), or on any executor with ``submit`` (a Dask
``distributed.Client``: :mod:`robot_dynamics.simulation.sweep`).

Determinism: each rollout is computed alone from its spec (:func:`run_chunk` runs them one after
the other): the worker's :class:`Simulator` given the friction model built from the scaled
configuration (``Simulator._renew``: what a new one would be) and reset to the spec's state, on
the worker's Model with the spec's payload set (``Model.set_payload`` computes a body's inertias
from the built ones, so replacing a payload, removing it and setting another give the same
bits), under the spec's controller (its packed array written once per worker and chunk of
rollouts, then rewritten in the gains or, open loop, the efforts: :func:`_packed_controller`),
its rows written into the worker's buffer. Nothing else carries over between rollouts — the
compiled step's state is in the Simulator's ``sp``, which ``reset`` zeroes — so the answer of
each is the same bits whatever the number of workers, the chunking or the order they ran in
(``test/test_rollouts.py`` holds this against a hand-written loop of ``Simulator.run`` on fresh
models and simulators, the batch in several orders).

With ``workers=n`` and rollouts that step inside the compiled rollout (``sim_run_entry``
releases the GIL), n threads of this process run them, each on a Model of its own (kept for
the next call), each taking the next rollout not taken yet: no process to start, nothing to
pickle (:func:`_run_threads`). Otherwise (mimic joints, composite laws: their steps run in
Python) and with a ``start_method``, processes: workers build the Model once each
(:func:`_context`, cached per plant and thread), whether they are forked, spawned or Dask's,
and this process is one of the n: it builds the plant, forks n − 1 workers (they inherit the
plant and the specs: a task is an index range) and takes rollouts from the back of the list
while they take them from the front, tasks of :data:`FORK_PIECE` rollouts, so the sides finish
within a few rollouts of each other (a worker has its task and one queued when they meet); the
executor's threads here keep the workers fed while this process computes in the compiled
rollout. Spawned workers and Dask's get chunks carrying the plant's description (URDF text,
friction mapping) and the specs.
"""
from __future__ import annotations

import itertools
import math
import numbers
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from robot_dynamics.errors import InputError

#: summary fields of a rollout (:func:`summarize`), in the CSV's order
SUMMARY_FIELDS = ("rms_error", "max_error", "saturation", "motor_work", "motor_gross",
                  "friction_dissipation", "energy_residual")
CONTROLLERS = ("computed_torque", "pd")  # the closed-loop ones (what a sweep varies the gains of)
#: and open loop: the efforts given (``RolloutSpec.tau``), as ``mujoco.rollout``'s controls
OPEN_LOOP = "open_loop"
_SCALED = {"load_dependent": ("coulomb", "viscous", "k1", "k2", "k3"),
           "classic": ("coulomb", "viscous", "coulomb_positive", "coulomb_negative"),
           "none": ()}


@dataclass(frozen=True)
class Plant:
    """What every rollout of a batch shares. ``robot``: bundled name or URDF/xacro path (a
    ``.urdf`` file is read here and shipped as text, so remote workers need no copy of it);
    ``friction``: the nominal friction — None, a mapping, a YAML path or a bundled config's
    name (``"arm7_friction"``), read here into a mapping; ``dt`` the step [s]; ``saturate`` and
    ``limits`` as :class:`Simulator`'s."""
    robot: str
    friction: object = None
    dt: float = 1e-3
    saturate: bool = True
    limits: bool = True
    urdf: str = field(default="", repr=False)  # filled by __post_init__

    def __post_init__(self):
        from robot_dynamics.parsers.config_files import load_mapping
        from robot_dynamics.parsers.resources import robot_path

        path = robot_path(self.robot)  # ModelError naming the bundled robots
        text = path
        if not path.endswith(".xacro"):
            with open(path, encoding="utf-8") as f:
                text = f.read()
        object.__setattr__(self, "urdf", text)
        if self.friction is not None:
            mapping, _ = load_mapping(self.friction, "friction")
            object.__setattr__(self, "friction", _plain(mapping))
        if not (isinstance(self.dt, numbers.Real) and math.isfinite(self.dt) and self.dt > 0):
            raise InputError(f"dt must be a positive number of seconds, got {self.dt!r}")

    def key(self):
        """Identifies the plant in a worker's cache."""
        return (self.urdf, repr(self.friction), float(self.dt), self.saturate, self.limits)


def _plain(x):
    """A mapping from YAML as plain, comparable, picklable Python (dicts, lists, floats)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


@dataclass
class RolloutSpec:
    """One rollout. ``q0``, ``v0`` (None: at rest) the initial state; ``controller``
    ``"computed_torque"`` (:class:`~robot_dynamics.ComputedTorque`, compensating the plant's
    *nominal* friction), ``"pd"`` (:class:`~robot_dynamics.PD` with gravity compensation) or
    ``"open_loop"`` (the motor efforts ``tau`` (steps, nv) or (nv,), row k at step k, the last
    row held: controls as ``mujoco.rollout`` takes them; ``q_ref`` may then be None — no
    tracking error); ``kp``, ``kd`` gains (scalars or (nv,)); ``q_ref``, ``v_ref``, ``a_ref``
    the references, row k at step k (the last row held; ``steps + 1`` rows: row k + 1 is what
    the state after step k is compared with); ``friction_scale`` multiplies the plant's friction
    coefficients (≥ 0; the controller keeps the nominal ones); ``payload_mass`` [kg] (0: none)
    on ``payload_link`` (None: the last body's link) at ``payload_com`` (link frame)."""
    q0: np.ndarray
    q_ref: np.ndarray
    steps: int
    kp: object = 400.0
    kd: object = 40.0
    v0: np.ndarray | None = None
    v_ref: np.ndarray | None = None
    a_ref: np.ndarray | None = None
    controller: str = "computed_torque"
    friction_scale: float = 1.0
    payload_mass: float = 0.0
    payload_link: str | None = None
    payload_com: tuple = (0.0, 0.0, 0.0)
    tau: np.ndarray | None = None

    def check(self):
        """One-line InputError naming the field that is wrong."""
        if self.controller not in CONTROLLERS + (OPEN_LOOP,):
            raise InputError(f"controller must be one of {CONTROLLERS + (OPEN_LOOP,)}, got "
                             f"{self.controller!r}")
        if (self.controller == OPEN_LOOP) != (self.tau is not None):
            raise InputError("tau (the efforts) goes with controller 'open_loop', and only with "
                             f"it (controller {self.controller!r}, tau "
                             f"{'given' if self.tau is not None else 'not given'})")
        if self.tau is not None:
            try:
                tau = np.asarray(self.tau, dtype=float)
            except (TypeError, ValueError):
                raise InputError("tau: expected numbers, (steps, nv) or (nv,)") from None
            if tau.ndim not in (1, 2) or tau.size == 0:
                raise InputError(f"tau: expected (steps, nv) or (nv,), got shape {tau.shape}")
            bad = () if math.isfinite(tau.sum()) else np.argwhere(~np.isfinite(np.atleast_2d(tau)))
            if len(bad):
                raise InputError(f"tau: not finite at row {bad[0][0]}, joint index {bad[0][1]}")
        if self.q_ref is None and self.controller != OPEN_LOOP:
            raise InputError(f"q_ref: controller {self.controller!r} needs a reference")
        for name in ("friction_scale", "payload_mass"):
            x = getattr(self, name)
            if (isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x)
                    or x < 0):
                raise InputError(f"{name} must be a finite number ≥ 0, got {x!r}")
        if isinstance(self.steps, bool) or not isinstance(self.steps, numbers.Integral) \
                or self.steps < 0:
            raise InputError(f"steps must be a whole number ≥ 0, got {self.steps!r}")


def scaled_friction_config(config, scale: float, model):
    """The friction mapping with every law's coefficients × ``scale`` (its magnitude scaled
    exactly: load_dependent's coulomb, viscous, k1–k3; classic's levels, viscous and Stribeck
    static level). ``scale`` 0: no friction. Other laws: InputError naming the joint."""
    from robot_dynamics.friction import friction_from_config

    if config is None or scale == 0.0:
        return {"default": {"model": "none"}}
    return _scaled_joints(friction_from_config(config, model).to_config()["joints"], scale)


def _scaled_joints(joints, scale: float):
    """:func:`scaled_friction_config` of the per-joint laws ``joints`` (a FrictionModel's
    ``to_config()["joints"]``), scale > 0."""
    out = {}
    for joint, law in joints.items():
        kind = law.get("model")
        if kind not in _SCALED:
            raise InputError(f"friction scale: joint {joint!r} has a {kind!r} law; scaling "
                             f"supports {sorted(_SCALED)}")
        law = dict(law)
        for key in _SCALED[kind]:
            if key in law:
                law[key] = float(law[key]) * scale
        if kind == "classic" and law.get("stribeck") is not None:
            law["stribeck"] = dict(law["stribeck"], static=float(law["stribeck"]["static"])
                                   * scale)
        out[joint] = law
    return {"joints": out}


class _Context:
    """A worker's plant: the Model (built once) and friction models by scale."""

    def __init__(self, plant: Plant):
        from robot_dynamics.friction import friction_from_config
        from robot_dynamics.parsers.urdf import load_urdf

        self.plant = plant
        self.model = load_urdf(plant.urdf)
        self.nominal = (None if plant.friction is None
                        else friction_from_config(plant.friction, self.model))
        self._joints = None  # the nominal laws' mapping (to_config), read once
        self._friction = {}
        self.sim = None  # the Simulator its rollouts reuse (Simulator._renew), built once
        self.packed = {}  # this chunk's packed controllers (_packed_controller)
        self._rows = np.empty((0, 5, self.model.nv))  # the rows its rollouts write

    def rows_for(self, steps):
        """The buffer a rollout of ``steps`` steps writes its rows into (reused: grown only)."""
        if len(self._rows) < steps:
            self._rows = np.empty((int(steps), 5, self.model.nv))
        return self._rows

    def end(self):
        """A chunk of rollouts done (:func:`run_chunk`): forget the packed controllers (their
        references may change in place before the next batch) and the rows buffer (its memory)."""
        self.packed.clear()
        self._rows = np.empty((0, 5, self.model.nv))  # (not a view: it would keep the buffer)

    def friction(self, scale):
        """The plant's friction at ``scale`` (1: the nominal model itself; 0: None, no
        friction)."""
        from robot_dynamics.friction import friction_from_config

        if scale == 1.0 or self.nominal is None:
            return self.nominal
        if scale == 0.0:
            return None
        if scale not in self._friction:
            if len(self._friction) > 64:
                self._friction.clear()
            if self._joints is None:  # scaled_friction_config's, without rebuilding the model
                self._joints = self.nominal.to_config()["joints"]
            self._friction[scale] = friction_from_config(
                _scaled_joints(self._joints, scale), self.model)
        return self._friction[scale]


_LOCAL = threading.local()  # .contexts: this thread's plants built (_context)


def _context(plant: Plant) -> _Context:
    """This thread's plant built (a cache of a few plants per thread): the Model whose payload a
    rollout sets, the Simulator, packed controllers and rows buffer its rollouts reuse are the
    thread's own, so that chunks run at once on threads of one process (an ``executor`` of
    threads, a Dask worker of several threads, two callers' threads) share none of them."""
    contexts = getattr(_LOCAL, "contexts", None)
    if contexts is None:
        contexts = _LOCAL.contexts = {}
    key = plant.key()
    ctx = contexts.get(key)
    if ctx is None:
        if len(contexts) > 4:
            contexts.clear()
        ctx = contexts[key] = _Context(plant)
    return ctx


def build_controller(spec: RolloutSpec, nominal_friction):
    """The compiled controller of a spec (:class:`PD` or :class:`ComputedTorque`; open loop:
    a PD without gains whose feed-forward is the efforts)."""
    from robot_dynamics.control.controllers import PD, ComputedTorque

    if spec.controller == OPEN_LOOP:
        return PD(0.0, 0.0, spec.q0, feedforward=spec.tau)
    if spec.controller == "pd":
        return PD(spec.kp, spec.kd, spec.q_ref, spec.v_ref, gravity_compensation=True)
    return ComputedTorque(spec.kp, spec.kd, spec.q_ref, spec.v_ref, spec.a_ref,
                          friction=nominal_friction)


def summarize(spec: RolloutSpec, out: dict, sim) -> dict:
    """Per-rollout numbers: tracking error RMS and max over steps and joints [rad or m] (the
    state after step k against reference row k + 1), the fraction of steps with a saturated
    joint, and the simulator's energy audit (motor work net and gross, friction dissipation,
    the audit's residual) [J]."""
    q = out["q"]
    n = len(q)
    if spec.q_ref is None:  # open loop without a reference: no tracking error (NaN)
        e = None
    elif n == 0:
        e = np.zeros((0,))
    else:
        Q = np.asarray(spec.q_ref, dtype=float)
        Q = Q[None, :] if Q.ndim == 1 else Q
        # rows 1 … n (the last held): a slice when there are enough (no index array, no copy)
        e = (q - (Q[1:n + 1] if len(Q) > n else
                  Q[np.minimum(np.arange(1, n + 1), len(Q) - 1)])).ravel()
    audit = sim.audit
    if e is None:
        rms = peak = math.nan
    else:
        rms = float(np.sqrt(np.mean(e * e))) if e.size else 0.0
        peak = float(np.max(np.abs(e))) if e.size else 0.0
    return {"rms_error": rms, "max_error": peak,
            "saturation": sim.saturated_steps / n if n else 0.0,
            "motor_work": float(audit.motor_work), "motor_gross": float(audit.motor_gross),
            "friction_dissipation": float(audit.friction_dissipation),
            "energy_residual": float(audit.residual), "status": "ok"}


def run_one(plant: Plant, spec: RolloutSpec, trajectory: bool = True):
    """One rollout alone (in whichever process): returns (trajectory dict or None, summary).
    A :class:`SimulationError` (a diverging rollout) is not raised: its summary has status
    ``"failed: <message>"`` and NaN numbers, its trajectory None."""
    spec.check()
    return run_chunk(plant, [spec], trajectory)[0]


def run_chunk(plant: Plant, specs, trajectory: bool = True, progress=None, ctx=None):
    """Rollouts one after the other in this process (a worker's task): [(trajectory, summary)].
    ``specs``: any iterable (a thread of :func:`_run_threads` gives one that takes the next
    rollout not taken yet), checked already (:func:`run_rollouts`, :func:`run_one`);
    ``progress(k)`` is called after the k-th. ``ctx``: the plant built (default: this
    thread's, :func:`_context`; a thread of :func:`_run_threads` has its own), whose Simulator,
    packed controllers and rows buffer its rollouts share (:func:`_rollout`; the last two
    dropped at the end: :meth:`_Context.end`).

    A payload stays on its link from one rollout to the next that carries the same one
    (setting a link's payload computes the body's inertias from the built ones: the same bits
    as after removing the last), and is removed at the end: the Model is left as built."""
    if ctx is None:
        ctx = _context(plant)
    model = ctx.model
    loaded = payload = None  # the link carrying a payload now, and its (mass, com)
    try:
        out = []
        for spec in specs:
            link = (spec.payload_link or model.link_names[-1]) if spec.payload_mass > 0 else None
            if loaded is not None and link != loaded:
                model.set_payload(loaded, None)
                loaded = payload = None
            key = _payload_key(spec)
            if link is not None and (key is None or key != payload):
                # set, or replaced (the same bits); the same bits as the last one's: kept
                model.set_payload(link, float(spec.payload_mass), spec.payload_com)
                loaded, payload = link, key
            out.append(_rollout(ctx, plant, spec, trajectory))
            if progress is not None:
                progress(len(out))
        return out
    finally:
        ctx.end()
        if loaded is not None:
            model.set_payload(loaded, None)


def _payload_key(spec):
    """The bits of a spec's payload mass and centre of mass (None: not numbers, set_payload
    names what is wrong)."""
    try:
        return float(spec.payload_mass).hex(), np.asarray(spec.payload_com, dtype=float).tobytes()
    except (TypeError, ValueError):
        return None


def _rollout(ctx, plant: Plant, spec: RolloutSpec, trajectory: bool):
    """One checked spec on ``ctx.model``, its payload already set: the worker's Simulator
    renewed with the spec's friction (or a new one: :meth:`Simulator._renew`), reset to the
    spec's state, run under its controller (packed once per chunk where only the gains or the
    state differ: :func:`_packed_controller`)."""
    from robot_dynamics.simulation.simulator import SimulationError, Simulator

    friction = ctx.friction(float(spec.friction_scale))
    sim = ctx.sim
    if sim is None or not sim._renew(friction):
        sim = Simulator(ctx.model, friction, plant.dt, saturate=plant.saturate,
                        limits=plant.limits)
        if sim._plain:
            ctx.sim = sim
    sim.reset(spec.q0, spec.v0)
    controller = (_packed_controller(ctx, spec) if sim._plain else None) \
        or build_controller(spec, ctx.nominal)
    try:
        rows, t = sim._run_rows(int(spec.steps), controller, buffer=ctx.rows_for(spec.steps))
    except SimulationError as exc:
        failed = dict.fromkeys(SUMMARY_FIELDS, math.nan)
        failed["status"] = "failed: " + " ".join(str(exc).split())[:200]
        return None, failed
    summary = summarize(spec, {"q": rows[:, 0]}, sim)
    if not trajectory:
        return None, summary
    return {"t": t, "q": rows[:, 0].copy(), "v": rows[:, 1].copy(), "tau": rows[:, 2].copy(),
            "tau_friction": rows[:, 3].copy(), "tau_limit": rows[:, 4].copy()}, summary


def _packed_controller(ctx, spec):
    """The spec's controller as a :class:`~robot_dynamics.control.controllers.Prepacked`
    (its NumPy law, if a step asks for it, the spec's ``build_controller``'s), the array packed
    once per chunk of rollouts (a worker's share of a batch: ``ctx.packed``) and rewritten in
    the slots that differ — closed loop: the gains, for specs sharing the reference arrays (the
    same objects: a sweep's); open loop: the held state q0 and the efforts — the same bits as
    ``build_controller(spec).pack(model)`` (``test/test_rollouts.py``). None when the spec
    takes the plain path (open-loop efforts or state not float arrays of the model's width:
    ``build_controller`` checks them and names what is wrong)."""
    from robot_dynamics.control.controllers import Prepacked, _early, _gains
    from robot_dynamics.kernels.rollout import _HEAD

    def build():
        return build_controller(spec, ctx.nominal)

    n = ctx.model.nv
    if spec.controller == OPEN_LOOP:
        tau, q0 = spec.tau, spec.q0
        if not (isinstance(tau, np.ndarray) and tau.dtype == np.float64 and tau.ndim in (1, 2)
                and tau.shape[-1] == n and isinstance(q0, np.ndarray) and q0.shape == (n,)
                and q0.dtype == np.float64):
            return None
        key = (OPEN_LOOP, tau.shape)
        held = ctx.packed.get(key)
        if held is None:
            held = ctx.packed[key] = build_controller(spec, ctx.nominal).pack(ctx.model)
        else:
            rows = 1 if tau.ndim == 1 else len(tau)
            base = _HEAD + 2 * n
            held[base:base + rows * n].reshape(rows, n)[:] = q0  # Q: q0 held on every row
            held[base + 2 * rows * n:base + 3 * rows * n] = tau.ravel()  # A: the efforts
        return Prepacked(held, build)
    refs = (spec.q_ref, spec.v_ref, spec.a_ref)
    key = (spec.controller, *map(id, refs))
    entry = ctx.packed.get(key)
    if entry is None or any(a is not b for a, b in zip(entry[0], refs)):
        ctl = build_controller(spec, ctx.nominal)
        entry = ctx.packed[key] = (refs, ctl.pack(ctx.model))  # (refs kept: their ids stay)
        return Prepacked(entry[1], build)
    held = entry[1]
    for name, gain, at in (("kp", spec.kp, _HEAD), ("kd", spec.kd, _HEAD + n)):
        if not _plain_gain(gain, n):  # build_controller's checks, in its order, and its array
            _early(name, gain, gain=True)
            gain = _gains(name, gain, n)
        held[at:at + n] = gain
    return Prepacked(held, build)


def _plain_gain(gain, n) -> bool:
    """Whether ``gain`` is a finite float ≥ 0 or n of them as a float64 array — what the
    controllers' checks pass unchanged (a scalar is written n times as it is)."""
    if type(gain) in (float, int):  # (a bool, a NumPy scalar: the controllers' checks)
        return math.isfinite(gain) and gain >= 0
    return (type(gain) is np.ndarray and gain.dtype == np.float64 and gain.shape == (n,)
            and math.isfinite(gain.sum()) and gain.min() >= 0)


FORK_PIECE = 2  # rollouts per task at most when the workers are forked (module docstring)
_TOKENS = itertools.count()  # keys of _BATCHES


def _warm(plant: Plant):
    """A worker's initializer: build the plant (and load the compiled kernels) once."""
    _context(plant)


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: local workers per core at most (:func:`workers_refusal`): beyond the cores they only share
#: them, each thread with a Model of its own. Measured, sweep of 1000 rollouts of 20 steps on
#: arm7, 2 cores: --workers 2 ran them in 0.6 s (291 MB), 1000 in 5.4 s (365 MB); 100000 would
#: start a thread (or a --cluster local process) per rollout
WORKERS_PER_CORE = 4


def workers_refusal(workers):
    """The one line (``workers: ...``) refusing more local workers than
    :data:`WORKERS_PER_CORE` × :func:`default_workers`, else None."""
    most = WORKERS_PER_CORE * default_workers()
    if workers <= most:
        return None
    return (f"workers: {workers} on {default_workers()} cores; at most {most} ({WORKERS_PER_CORE} "
            "a core: more only share the cores, each with a model of its own)")


def _chunks(n, parts):
    """Index ranges of ``n`` items in about ``parts`` contiguous pieces."""
    parts = max(1, min(n, parts))
    bounds = np.linspace(0, n, parts + 1).round().astype(int)
    return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


#: plants built for the threads of :func:`_run_threads` beyond this process's own (each thread
#: sets payloads on its own Model): plant key → the contexts not in use
_SPARE: dict = {}
_SPARE_LOCK = threading.Lock()


def _threads_help(plant: Plant) -> bool:
    """Whether threads can run the plant's rollouts side by side: their steps run inside the
    compiled rollout, which releases the GIL (no mimic coordinates, no composite laws: those
    step in Python, :meth:`Simulator.run`)."""
    ctx = _context(plant)
    return ctx.model.coupling is None and not getattr(ctx.nominal, "has_parts", False)


def _run_threads(plant: Plant, specs, workers, trajectories, progress):
    """The rollouts on ``workers`` threads, this one among them, each with a plant of its own,
    taking the next rollout not taken yet: [(trajectory, summary)] in the specs' order. The
    first exception a thread meets stops the others after their current rollout and is raised
    here; ``progress(done, total)`` is called under a lock."""
    total = len(specs)
    key = plant.key()
    with _SPARE_LOCK:
        spare = _SPARE.setdefault(key, [])
        if len(_SPARE) > 4:
            for other in [k for k in _SPARE if k != key]:
                del _SPARE[other]
        mine = [spare.pop() for _ in range(min(len(spare), workers - 1))]
    mine += [_Context(plant) for _ in range(workers - 1 - len(mine))]
    results = [None] * total
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "error": None}

    def work(ctx):
        taken = []  # the indices of the rollouts this thread took, in its order

        def take():  # the next rollout not taken yet, until none is left or one raised
            while True:
                with lock:
                    i = state["next"]
                    if i >= total or state["error"] is not None:
                        return
                    state["next"] = i + 1
                taken.append(i)
                yield specs[i]

        def done(_):
            with lock:
                state["done"] += 1
                if progress is not None:
                    progress(state["done"], total)

        try:  # one chunk of the rollouts it takes: its payload kept from one to the next
            for i, result in zip(taken, run_chunk(plant, take(), trajectories, progress=done,
                                                  ctx=ctx)):
                results[i] = result
        except BaseException as exc:  # noqa: BLE001 - raised by the caller below
            with lock:
                if state["error"] is None:
                    state["error"] = exc

    threads = [threading.Thread(target=work, args=(ctx,), daemon=True) for ctx in mine]
    for thread in threads:
        thread.start()
    try:
        work(None)  # this thread, on this process's plant
    finally:
        with lock:  # (a KeyboardInterrupt here: the others stop after their rollout)
            if state["error"] is None and state["next"] < total:
                state["error"] = KeyboardInterrupt()
        for thread in threads:
            thread.join()
        with _SPARE_LOCK:
            _SPARE.setdefault(key, []).extend(mine)
    if state["error"] is not None:
        raise state["error"]
    return results


#: batches a forked worker inherits (set before the pool forks): token → (plant, specs)
_BATCHES: dict = {}


def _run_inherited(token, start, stop, trajectory):
    """A forked worker's task: rollouts start … stop − 1 of the batch it inherited."""
    plant, specs = _BATCHES[token]
    return run_chunk(plant, specs[start:stop], trajectory)


def run_rollouts(plant: Plant, specs, *, workers=None, executor=None, trajectories=True,
                 chunks_per_worker=4, progress=None, start_method=None):
    """Run every spec; returns ``(trajectories, summaries)``, both lists in the specs' order
    (``trajectories`` None entries when ``trajectories=False`` or a rollout failed).

    ``workers``: 1 runs them here, one after the other; n > 1 on n threads of this process
    (each with a Model of its own, taking the next rollout not taken yet) when the rollouts
    step inside the compiled rollout, which releases the GIL (no mimic joints, no composite
    laws), else — or with a ``start_method`` — on n processes: this one and n − 1 worker
    processes (``concurrent.futures.ProcessPoolExecutor``, each builds the Model once), the
    workers taking the rollouts from the front, this process from the back, until they meet;
    None: every core (:func:`default_workers`). ``executor``: run the chunks on it
    instead — any object with ``submit(fn, *args)`` returning futures with ``result()``, e.g. a
    Dask ``distributed.Client``. ``start_method``: the worker processes' ("fork", "spawn",
    "forkserver"; default: the platform's); forked workers inherit the specs (the chunks
    carry index ranges, pieces of :data:`FORK_PIECE` rollouts at most), others receive them
    pickled, in about ``chunks_per_worker`` chunks per process. ``progress(done, total)`` is
    called as rollouts complete. The answer does not depend on any of these (module
    docstring)."""
    specs = list(specs)
    for i, spec in enumerate(specs):
        if not isinstance(spec, RolloutSpec):
            raise InputError(f"rollout {i}: expected a RolloutSpec, got {type(spec).__name__}")
        spec.check()
    total = len(specs)
    if workers is None:
        workers = default_workers()
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise InputError(f"workers must be a whole number ≥ 1, got {workers!r}")
    why = None if executor is not None else workers_refusal(workers)
    if why is not None:
        raise InputError(why)
    results = [None] * total
    done = 0
    if executor is None and (workers == 1 or total <= 1):
        results = run_chunk(plant, specs, trajectories, progress=(
            None if progress is None else lambda k: progress(k, total)))
        return [r[0] for r in results], [r[1] for r in results]
    if executor is None and start_method is None and _threads_help(plant):
        results = _run_threads(plant, specs, min(workers, total), trajectories, progress)
        return [r[0] for r in results], [r[1] for r in results]
    pool = token = None
    local = executor is None  # this process takes its share too
    if local:
        import concurrent.futures as cf
        import multiprocessing

        context = multiprocessing.get_context(start_method)
        forked = context.get_start_method() == "fork"
        _context(plant)  # built here once: forked workers inherit it (and this process runs)
        pieces = _chunks(total, max(workers * chunks_per_worker,
                                    -(-total // FORK_PIECE) if forked else 0))
        if forked:
            token = next(_TOKENS)
            _BATCHES[token] = (plant, specs)
        pool = executor = cf.ProcessPoolExecutor(workers - 1, mp_context=context,
                                                 initializer=_warm, initargs=(plant,))
    else:
        workers = _executor_workers(executor, workers)
        pieces = _chunks(total, workers * chunks_per_worker)
    try:
        dask = hasattr(executor, "scheduler_info")  # a distributed.Client
        futures = []
        for piece in pieces:
            if token is not None:
                args = (_run_inherited, token, piece.start, piece.stop, trajectories)
            else:
                args = (run_chunk, plant, specs[piece.start:piece.stop], trajectories)
            futures.append(executor.submit(*args, pure=False) if dask else executor.submit(*args))
        mine = {}
        if local:  # from the back, each piece no worker has taken yet
            for j in range(len(pieces) - 1, -1, -1):
                if not futures[j].cancel():
                    break
                piece = pieces[j]
                mine[j] = run_chunk(plant, specs[piece.start:piece.stop], trajectories)
                done += len(piece)
                if progress is not None:
                    progress(done, total)
        for j, (piece, future) in enumerate(zip(pieces, futures)):
            if j in mine:
                results[piece.start:piece.stop] = mine[j]
                continue
            results[piece.start:piece.stop] = future.result()
            done += len(piece)
            if progress is not None:
                progress(done, total)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        _BATCHES.pop(token, None)
    return [r[0] for r in results], [r[1] for r in results]


def _executor_workers(executor, fallback):
    """How many workers an executor has (a Dask client's scheduler tells; else the fallback)."""
    info = getattr(executor, "scheduler_info", None)
    if info is not None:
        try:
            return max(1, len(info().get("workers", {})))
        except Exception:  # noqa: BLE001 - a client not connected yet: any count will do
            return max(1, fallback)
    return max(1, getattr(executor, "_max_workers", fallback))
