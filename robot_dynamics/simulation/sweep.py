"""Robustness studies: many rollouts of one tracking task over friction scale, payload mass,
initial-state perturbation and controller gains (issue 35; ``robot-dynamics sweep``).

The task: from ``q_start`` (default: the zero pose, clipped to the joint limits) the arm tracks
a rest-to-rest minimum-jerk move by ``move`` on every joint (clipped to 90 % of the limits) in
``move_time`` seconds, then holds the goal until ``duration``; the controller is
computed torque (compensating the *nominal* friction: the friction scale is a model error the
controller does not know) or PD with gravity compensation, with nominal gains (the robot's
``config/<robot>_controller.yaml`` when bundled, else Kp = 400, Kd = 40) scaled by the
``gain_scale`` g as Kp·g², Kd·g (the same damping ratio, natural frequency × g).

Factors (:data:`FACTORS`), each a list of levels:

* ``friction_scale``: the plant's friction coefficients × s (0: none);
* ``payload_mass`` [kg] on ``payload_link`` (default the last body's link) at
  ``payload_com``; 0: none. The controller's rigid-body model is the plant's (as a robot told
  its load, Franka ``SetLoad``);
* ``perturbation`` σ [rad or m]: the initial state is ``q_start + σ u`` (clipped to the limits),
  at rest, u a standard normal vector;
* ``gain_scale`` g.

Designs: a full grid of the levels, each cell ``repeats`` times; or ``samples`` random
rollouts, each factor drawn uniformly in [lo, hi] of its levels (one level: held). Rollout i
draws from ``numpy.random.default_rng([seed, i])``: first the random factors in the order
above, then u — so each rollout's state and results are fixed by (seed, i) alone, whatever the
number of workers.

Per rollout (:func:`robot_dynamics.simulation.rollouts.summarize`): tracking error RMS and max,
the fraction of steps with a saturated joint, the energy audit. :class:`SweepResult` gives the
distribution per factor level (median, 5th and 95th percentiles, ``numpy.percentile``'s linear
rule; random designs: ``bins`` equal bins per factor), a CSV of every rollout and a plot.

Runs on the local cores (:func:`~robot_dynamics.simulation.rollouts.run_rollouts`) or, with
``scheduler``, on a Dask cluster (``"local"``: a ``LocalCluster`` of ``workers`` processes;
else a scheduler address): ``pip install 'robot_dynamics[cluster]'``.
"""
from __future__ import annotations

import csv
import math
import numbers
from dataclasses import dataclass

import numpy as np

from robot_dynamics.errors import InputError
from robot_dynamics.multibody.model import com_refusal, mass_refusal
from robot_dynamics.simulation.rollouts import (SUMMARY_FIELDS, Plant, RolloutSpec,
                                                run_rollouts, workers_refusal)

FACTORS = ("friction_scale", "payload_mass", "perturbation", "gain_scale")
#: the largest initial-state perturbation σ [rad or m]: a turn, the bound of ``move`` too
MAX_PERTURBATION = math.tau
#: the fewest steps of the move (``move_time`` / ``dt``), as ``sim``'s --move-time: a shorter
#: move falls between the states (--move-time 1e-5 at --dt 1e-3 ran as a step response)
MIN_MOVE_STEPS = 10
#: the most table bins per factor (random designs): a row each in the table, a box each in the
#: plot's 4-inch panel; measured on arm7, 10 samples: --bins 1000 took 12 s (the plot), 1e5
#: printed 1e5 rows (8 s, 680 MB) or, with --plot, ran past 300 s at 7.1 GB
MAX_BINS = 100
#: what the table shows per level: (summary field, heading, format)
TABLE_METRICS = (("rms_error", "rms err", "{:.3g}"), ("max_error", "max err", "{:.3g}"),
                 ("saturation", "saturated", "{:.3f}"), ("motor_gross", "motor energy J",
                                                         "{:.4g}"))
PERCENTILES = (50.0, 5.0, 95.0)


def _levels(name, values, random):
    """A factor's levels as floats ≥ 0 (finite), or InputError naming the factor."""
    if isinstance(values, numbers.Real):
        values = [values]
    try:
        values = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected numbers, got {values!r}") from None
    if not values:
        raise InputError(f"{name}: no level given")
    for v in values:
        if not math.isfinite(v) or v < 0:
            raise InputError(f"{name}: levels must be finite numbers ≥ 0, got {v:g}")
    if name == "gain_scale" and min(values) <= 0:
        raise InputError(f"{name}: levels must be > 0 (0 is no controller), got {min(values):g}")
    if name == "payload_mass":  # 1e300 kg overflowed inverse_dynamics in the first rollout
        why = mass_refusal(max(values))
        if why is not None:
            raise InputError(f"{name}: {why}")
    if name == "perturbation" and max(values) > MAX_PERTURBATION:
        # (1e300 ran: every joint started at a limit, or 1e300 rad away on a continuous one)
        raise InputError(f"{name}: σ = {max(values):g} (rad or m); at most "
                         f"{MAX_PERTURBATION:.5g} (a turn): a larger one only puts the start at "
                         "the joint limits (or turns away on a joint without limits)")
    if random:
        if len(values) > 2:
            raise InputError(f"{name}: a random design takes a range lo:hi (or one value), got "
                             f"{len(values)} levels")
        if len(values) == 2 and values[0] > values[1]:
            raise InputError(f"{name}: range {values[0]:g}:{values[1]:g} has lo > hi")
    elif len(set(values)) != len(values):
        raise InputError(f"{name}: repeated level in {values}")
    return values


def nominal_gains(robot, nv):
    """(Kp, Kd) (nv,) from the bundled ``config/<robot>_controller.yaml``, else 400 and 40."""
    from robot_dynamics.errors import ModelError
    from robot_dynamics.parsers.resources import bundled_robot, config_path

    stem = bundled_robot(robot)  # a user's ~/arm7.urdf does not get the bundled arm's gains
    try:
        import yaml

        if stem is None:
            raise OSError
        with open(config_path(stem + "_controller"), encoding="utf-8") as f:
            params = yaml.safe_load(f)["id_controller"]["ros__parameters"]
        kp, kd = np.array(params["kp"], float), np.array(params["kd"], float)
        if kp.shape == kd.shape == (nv,):
            return kp, kd
    except (ModelError, OSError, KeyError, TypeError):
        pass
    return np.full(nv, 400.0), np.full(nv, 40.0)


@dataclass
class Study:
    """The rollouts of a study: ``plant``, ``specs`` and each one's factor values (``design``:
    (rollouts, 4) in :data:`FACTORS` order), ``random`` (the design kind) and the ranges."""
    plant: Plant
    specs: list
    design: np.ndarray
    random: bool
    levels: dict
    bins: int = 3


#: the most steps of one rollout: the study samples the reference at every step (in Python, ~8 µs
#: a step) and holds it, with each worker's buffer of rows, for the whole rollout; measured peak
#: resident memory of `robot-dynamics sweep --workers 1` on arm7: 1.2 GB at 1e6 steps, 2.1 GB
#: at 2e6 (29 s of wall), so ~0.9 kB a step. 1e12 s at 1 kHz would exhaust memory silently.
MAX_STEPS = 2_000_000


#: the most rollouts of a study: each keeps its spec (~1 kB, measured: make_study of 1e5 random
#: samples on arm7 grew the resident memory by 100 MB in 3.7 s) and, once run, its summary in
#: memory; --samples 1e9 failed with numpy's MemoryError traceback allocating the design
MAX_ROLLOUTS = 1_000_000


def rollouts_refusal(levels: dict, samples, repeats):
    """The one line (``samples: ...``, ``repeats: ...`` or a factor's name first) refusing a
    study of more than :data:`MAX_ROLLOUTS` rollouts, else None. ``levels``: factor → levels."""
    limit = (f"at most {MAX_ROLLOUTS:.0e}: each rollout keeps its spec (~1 kB) and its summary "
             "in memory")
    if samples is not None:
        return None if samples <= MAX_ROLLOUTS else f"samples: {samples} rollouts; {limit}"
    counts = {name: len(values) for name, values in levels.items()}
    total = math.prod(counts.values()) * repeats
    if total <= MAX_ROLLOUTS:
        return None
    widest = max(counts, key=counts.get)
    head = "repeats" if repeats >= counts[widest] else widest
    grid = " × ".join(str(c) for c in counts.values())
    return (f"{head}: the grid's {grid} levels × {repeats} repeats make {total:.4g} rollouts; "
            f"{limit}")


def steps_refusal(duration: float, dt: float):
    """The one line (``duration: ...``) refusing a rollout of more than :data:`MAX_STEPS`
    steps of ``dt``, else None."""
    steps = duration / dt
    if steps <= MAX_STEPS:
        return None
    return (f"duration: {duration:g} s is {steps:.4g} steps of {dt:g} s a rollout; at most "
            f"{MAX_STEPS:.0e} ({MAX_STEPS * dt:g} s at that step): the reference is sampled "
            "and held at every step, ~0.9 kB a step (2e6 steps: ~2 GB of memory)")


def move_time_refusal(move_time: float, dt: float):
    """The one line (``move_time: ...``) refusing a move shorter than :data:`MIN_MOVE_STEPS`
    steps of ``dt`` or longer than the longest rollout (:data:`MAX_STEPS` steps: no rollout
    could finish it), else None. A move longer than the rollout's ``duration`` is taken: the
    rollouts track its beginning (``sweep`` warns)."""
    if move_time < MIN_MOVE_STEPS * dt:
        return (f"move_time: {move_time:g} s is shorter than {MIN_MOVE_STEPS} steps of {dt:g} s "
                f"({MIN_MOVE_STEPS * dt:g} s): the move would fall between the states (a step, "
                "not a minimum-jerk move)")
    if move_time > MAX_STEPS * dt:
        return (f"move_time: {move_time:g} s is longer than the longest rollout ({MAX_STEPS:.0e} "
                f"steps of {dt:g} s, {MAX_STEPS * dt:g} s): no rollout could finish the move")
    return None


def make_study(robot="arm7", *, friction="default", friction_scale=(1.0,), payload_mass=(0.0,),
               perturbation=(0.0,), gain_scale=(1.0,), samples=None, repeats=1, seed=0,
               controller="computed_torque", duration=1.5, move_time=1.0, move=0.4, dt=1e-3,
               q_start=None, payload_link=None, payload_com=(0.0, 0.0, 0.0), bins=3) -> Study:
    """The specs of a study (module docstring); bad input: one-line InputError/ModelError
    naming the option. ``friction="default"``: a bundled robot's ``<robot>_friction`` if
    there is one, else none (a user's URDF named like a bundled robot: none); None: none; or a mapping, YAML path or bundled config name."""
    from robot_dynamics.control.trajectory import minimum_jerk
    from robot_dynamics.multibody.model import unknown_link
    from robot_dynamics.parsers.resources import bundled_robot, config_path
    from robot_dynamics.errors import ModelError

    from robot_dynamics.simulation.rollouts import CONTROLLERS

    if controller not in CONTROLLERS:
        raise InputError(f"controller: expected one of {', '.join(CONTROLLERS)}, got "
                         f"{controller!r}")
    random = samples is not None
    if random and (isinstance(samples, bool) or not isinstance(samples, numbers.Integral)
                   or samples < 1):
        raise InputError(f"samples: expected a whole number ≥ 1, got {samples!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or repeats < 1:
        raise InputError(f"repeats: expected a whole number ≥ 1, got {repeats!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise InputError(f"seed: expected a whole number ≥ 0, got {seed!r}")
    for name, x, low in (("duration", duration, 0.0), ("move_time", move_time, 0.0),
                         ("dt", dt, 0.0)):
        if not isinstance(x, numbers.Real) or not math.isfinite(x) or x <= low:
            raise InputError(f"{name}: expected a positive number of seconds, got {x!r}")
    why = steps_refusal(duration, dt) or move_time_refusal(move_time, dt)
    if why is not None:  # before the robot loads
        raise InputError(why)
    # 0: no motion to track; a move is up, ≤ a turn (NaN: refused). The command's --move too.
    if not isinstance(move, numbers.Real) or not 0.0 < move <= math.tau:
        shown = f"{move:g}" if isinstance(move, numbers.Real) else repr(move)
        raise InputError(f"move: expected a number in (0, {math.tau:.5g}] (every joint moves "
                         f"by it, rad or m, up to 90 % of its range), got {shown}")
    if not isinstance(bins, numbers.Integral) or not 1 <= bins <= MAX_BINS:
        raise InputError(f"bins: expected a whole number from 1 to {MAX_BINS} (a table row and "
                         f"a box of the plot each), got {bins!r}")
    levels = {name: _levels(name, value, random) for name, value in
              zip(FACTORS, (friction_scale, payload_mass, perturbation, gain_scale))}
    why = rollouts_refusal(levels, samples, repeats)
    if why is not None:
        raise InputError(why)
    com = np.asarray(payload_com, dtype=float)
    if com.shape != (3,) or not np.isfinite(com).all():
        raise InputError(f"payload_com: expected 3 finite numbers, got {payload_com!r}")
    why = com_refusal(com)
    if why is not None:  # (1e300 m ran)
        raise InputError(f"payload_com: {why}")
    if friction == "default":  # the bundled robot's own; a user's URDF: none
        stem = bundled_robot(robot)
        try:
            friction = None if stem is None else config_path(stem + "_friction", "friction")
        except ModelError:
            friction = None
    plant = Plant(robot, friction, dt)
    from robot_dynamics.simulation.rollouts import _context

    model = _context(plant).model
    n = model.nv
    if payload_link is not None and payload_link not in model.frames:
        raise InputError(f"payload_link: {unknown_link(model, payload_link)}")
    lower = np.where(np.isfinite(model.lower_limits), model.lower_limits, -np.inf)
    upper = np.where(np.isfinite(model.upper_limits), model.upper_limits, np.inf)
    if q_start is None:
        q_start = np.clip(np.zeros(n), lower, upper)
    q_start = np.asarray(q_start, dtype=float)
    if q_start.shape != (n,) or not np.isfinite(q_start).all():
        raise InputError(f"q_start: expected {n} finite numbers, got {q_start.tolist()}")
    mid, half = 0.5 * (lower + upper), 0.45 * (upper - lower)
    goal = np.where(np.isfinite(half), np.clip(q_start + move, mid - half, mid + half),
                    q_start + move)
    steps = int(round(duration / dt))
    if steps < 1:
        raise InputError(f"duration: {duration:g} s is less than one step of {dt:g} s")
    traj = minimum_jerk(q_start, goal, float(move_time))
    samples_t = [k * dt for k in range(steps + 1)]
    Q, V, A = (np.array(x) for x in zip(*(traj.sample(t) for t in samples_t)))
    kp0, kd0 = nominal_gains(robot, n)
    top = max(levels["gain_scale"])
    with np.errstate(over="ignore"):
        kp_top = kp0 * top * top
    if not np.isfinite(kp_top).all():  # 1e300 said "kp: not finite, got [inf, ...]"
        raise InputError(f"gain_scale: {top:g} makes K_p = {float(kp0.max()):g}·g² overflow "
                         "(not finite)")
    if random:
        design = np.empty((samples, len(FACTORS)))
    else:
        grid = np.array(np.meshgrid(*(levels[f] for f in FACTORS), indexing="ij"))
        cells = list(grid.reshape(len(FACTORS), -1).T)
        design = np.repeat(np.array(cells), repeats, axis=0)
    specs = []
    for i in range(len(design)):
        rng = np.random.default_rng([seed, i])
        if random:
            for j, f in enumerate(FACTORS):
                lv = levels[f]
                design[i, j] = lv[0] if len(lv) == 1 else rng.uniform(lv[0], lv[1])
        fs, mass, sigma, g = design[i]
        u = rng.standard_normal(n)
        q0 = np.clip(q_start + sigma * u, lower, upper)
        specs.append(RolloutSpec(q0=q0, q_ref=Q, v_ref=V, a_ref=A, steps=steps,
                                 kp=kp0 * g * g, kd=kd0 * g, controller=controller,
                                 friction_scale=float(fs), payload_mass=float(mass),
                                 payload_link=payload_link, payload_com=tuple(com)))
    return Study(plant, specs, design, random, levels, int(bins))


class SweepResult:
    """A study's results: ``design`` (rollouts, 4), ``summaries`` (one dict per rollout, with
    ``status``), ``statistics()`` per factor level, ``table()``, ``write_csv(path)``,
    ``plot(path)``."""

    def __init__(self, study: Study, summaries):
        self.study, self.summaries = study, summaries
        self.design = study.design

    def metric(self, name) -> np.ndarray:
        return np.array([s[name] for s in self.summaries], dtype=float)

    @property
    def ok(self) -> np.ndarray:
        return np.array([s["status"] == "ok" for s in self.summaries], dtype=bool)

    def groups(self):
        """(factor, level label, boolean mask of the rollouts) for each level of each factor
        that varies; a study where none varies: one group ``("all", "", everything)``."""
        out = []
        for j, f in enumerate(FACTORS):
            x = self.design[:, j]
            if len(np.unique(x)) < 2:
                continue
            if not self.study.random:
                for level in self.study.levels[f]:
                    out.append((f, f"{level:g}", x == level))
            else:
                lo, hi = self.study.levels[f]
                edges = np.linspace(lo, hi, self.study.bins + 1)
                which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0,
                                self.study.bins - 1)
                for b in range(self.study.bins):
                    out.append((f, f"{edges[b]:.3g}–{edges[b + 1]:.3g}", which == b))
        if not out:
            out.append(("all", "", np.ones(len(self.design), dtype=bool)))
        return out

    def statistics(self):
        """One dict per group: factor, level, n (rollouts), failed, and per summary field
        ``<field>_median``, ``_p5``, ``_p95`` over the group's rollouts that completed (NaN when
        none did)."""
        ok = self.ok
        metrics = {name: self.metric(name) for name in SUMMARY_FIELDS}
        rows = []
        for factor, level, mask in self.groups():
            row = {"factor": factor, "level": level, "n": int(mask.sum()),
                   "failed": int((mask & ~ok).sum())}
            for name in SUMMARY_FIELDS:
                x = metrics[name][mask & ok]
                values = (np.percentile(x, PERCENTILES) if len(x)
                          else np.full(len(PERCENTILES), np.nan))
                for tag, value in zip(("median", "p5", "p95"), values):
                    row[f"{name}_{tag}"] = float(value)
            rows.append(row)
        return rows

    def table(self) -> str:
        """The distribution per factor level: median [p5, p95] of each metric."""
        stats = self.statistics()
        head = ["factor", "level", "n", "failed"] + [h for _, h, _ in TABLE_METRICS]
        body = []
        for row in stats:
            cells = [row["factor"], row["level"], str(row["n"]), str(row["failed"])]
            for name, _, fmt in TABLE_METRICS:
                m, lo, hi = (row[f"{name}_{t}"] for t in ("median", "p5", "p95"))
                cells.append("—" if math.isnan(m) else
                             f"{fmt.format(m)} [{fmt.format(lo)}, {fmt.format(hi)}]")
            body.append(cells)
        widths = [max(len(r[c]) for r in [head] + body) for c in range(len(head))]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
        units = ("errors in rad (m for prismatic joints), median [p5, p95] over the rollouts; "
                 "saturated: fraction of steps with a joint at its effort limit; motor "
                 "energy: Σ|motor work| per step")
        return "\n".join([line(head), line(["-" * w for w in widths])]
                         + [line(r) for r in body] + [units])

    def write_csv(self, path):
        """One row per rollout: index, the factors, every summary field, status."""
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["rollout", *FACTORS, *SUMMARY_FIELDS, "status"])
            for i, (x, s) in enumerate(zip(self.design, self.summaries)):
                w.writerow([i, *(repr(float(v)) for v in x),
                            *(repr(float(s[k])) for k in SUMMARY_FIELDS), s["status"]])

    def plot(self, path, metric="rms_error"):
        """Box plots of ``metric`` per level, one panel per factor that varies (matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        groups = self.groups()
        factors = list(dict.fromkeys(g[0] for g in groups))
        fig, axes = plt.subplots(1, len(factors), figsize=(4 * len(factors), 3.5), squeeze=False)
        values, ok = self.metric(metric), self.ok
        for ax, factor in zip(axes[0], factors):
            mine = [g for g in groups if g[0] == factor]
            ax.boxplot([values[m & ok] for _, _, m in mine], whis=(5, 95), showfliers=False)
            ax.set_xticks(range(1, len(mine) + 1), [g[1] for g in mine])
            ax.set_xlabel(factor)
            ax.set_ylabel(metric + (" [rad]" if metric.endswith("_error") else ""))
            ax.set_title("box: quartiles, whiskers: p5–p95", fontsize=8)
            ax.set_yscale("log") if (values[ok] > 0).all() and len(values[ok]) else None
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def dask_client(scheduler, workers, timeout=10):
    """(client, cluster or None) for ``scheduler`` ``"local"`` (a LocalCluster of ``workers``
    single-threaded processes) or a scheduler address (OSError when it does not answer within
    ``timeout`` seconds); InputError when distributed is missing or ``"local"`` asks more
    processes than :func:`~robot_dynamics.simulation.rollouts.workers_refusal` allows."""
    why = workers_refusal(workers) if scheduler == "local" else None  # a process each
    if why is not None:
        raise InputError(why)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("scheduler: Dask distributed is not installed (pip install "
                         "'robot_dynamics[cluster]' or pip install distributed)") from None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster
    return Client(scheduler, timeout=timeout), None


def sweep(robot="arm7", *, workers=None, scheduler=None, progress=None, **study) -> SweepResult:
    """Run a robustness study (module docstring; ``study``: :func:`make_study`'s options) on
    ``workers`` local workers (threads, or processes: :func:`run_rollouts`; None: every
    core), or on a Dask cluster (``scheduler``
    ``"local"`` or an address). The statistics do not depend on where it ran."""
    made = make_study(robot, **study)
    if scheduler is None:
        _, summaries = run_rollouts(made.plant, made.specs, workers=workers, trajectories=False,
                                    progress=progress)
    else:
        from robot_dynamics.simulation.rollouts import default_workers

        client, cluster = dask_client(scheduler, workers or default_workers())
        try:
            _, summaries = run_rollouts(made.plant, made.specs, executor=client,
                                        trajectories=False, progress=progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    return SweepResult(made, summaries)
