"""The numbers of a demo run, its verdict (``valid`` and the one-line ``reasons``) and the
report printed at the end."""
from __future__ import annotations

import math

import numpy as np

from robot_dynamics.multibody.units import common_unit, joint_units

#: why a tracking error is larger outside lockstep (the verdict's tolerance is stated for it)
_MODE_HINTS = {
    "realtime": " (realtime: each command acts a loop's latency late, a few ms on a loaded "
                "machine; the tolerance's default is stated for lockstep)",
    "fast": " (fast: the simulator does not wait for commands, each acts several steps late; "
            "the tolerance's default is stated for lockstep)",
}


def _most(model, flags) -> str:
    """" (most on <joint>)" for the joint flagged in most rows, or "" when none is."""
    if flags.size == 0 or not flags.any():
        return ""
    return f" (most on {model.joint_names[int(np.argmax(flags.sum(axis=0)))]})"


def _stiff_damping(model, data, i) -> str:
    """Why joint i's URDF damping may not be compensated: the simulator applies it implicitly
    over a step h, the controller's d∘q̇ cancels it only while h·d/M_ii ≪ 1 (the commanded
    acceleration is scaled by M/(M + h d)); "" when that holds."""
    from robot_dynamics.algorithm.crba import mass_matrix

    d = float(model.damping[i])
    if not d > 0 or len(data["t"]) < 2:
        return ""
    h = float(np.median(np.diff(data["t"])))
    m = float(mass_matrix(model, model.create_data(), data["q"][0])[i, i])
    ratio = h * d / m
    if not ratio > 0.1:
        return ""
    need = 10.0 * d / m  # the rate [Hz] at which h·d/M = 0.1
    unit = 10.0 ** (np.floor(np.log10(need)) - 1)  # rounded up to two digits
    need = float(np.ceil(need / unit) * unit)
    return (f" (its URDF damping {d:g} over its inertia {m:.2g} is too stiff to compensate: "
            f"h·d/M = {ratio:.2g} at the {h * 1e3:g} ms step; lower it or raise the rate to "
            f"{need:g} Hz or more: sim --rate, the simulator's parameter rate)")


#: realtime runs: steps dropped (simulated time falling behind the wall clock, a few ms at a
#: time, with no overrun) beyond this fraction of the steps taken make the run invalid
LATE = 0.05


def summarize(model, data, qd, audit, stats, *, mode, wall, tolerance, tolerance_prismatic,
              modes=None):
    """Numbers of a run and its verdict: ``valid`` and the one-line ``reasons``. ``mode``: the
    simulator's mode at the end; ``modes``: every mode it ran, in order (None: ``mode`` only).
    ``tracking_reason``: the tracking-error reason among them (None: within tolerance), for a
    scenario that judges tracking otherwise (the press)."""
    from robot_dynamics.multibody import joints as jt

    units = joint_units(model)
    prismatic = np.array([jt.is_prismatic(jt.kind_of(t)) for t in model.joint_types], bool)
    err = np.abs(qd - data["q"])
    t_sim = float(data["t"][-1]) if len(data["t"]) else 0.0
    max_err = err.max(axis=0) if len(err) else np.zeros(model.nv)
    tol = np.where(prismatic, tolerance_prismatic, tolerance)
    reasons = []
    tracking = None  # the tracking reason, which a scenario may judge otherwise (press)
    if not (np.all(np.isfinite(data["q"])) and np.all(np.isfinite(data["tau"]))):
        reasons.append("non-finite state or effort recorded")
    over = np.flatnonzero(max_err > tol)
    if len(over):
        i = over[np.argmax(max_err[over] / tol[over])]
        tracking = (f"tracking error {max_err[i]:.3g} {units[i].position} on "
                    f"{model.joint_names[i]} above the tolerance {tol[i]:g} "
                    f"{units[i].position}" + _stiff_damping(model, data, i)
                    + _MODE_HINTS.get(mode, ""))
        reasons.append(tracking)
    # counts from the simulator node's own counters; the recorded data says which joint
    limits = np.asarray(model.effort_limits, float)
    if int(stats.get("saturated_steps", 0)):
        saturated = np.abs(data["tau"]) >= limits * (1 - 1e-9)
        reasons.append(f"effort saturated at the effort limit in {int(stats['saturated_steps'])} "
                       f"steps{_most(model, saturated)}")
    if int(stats.get("limit_steps", 0)):
        lo, hi = np.asarray(model.lower_limits, float), np.asarray(model.upper_limits, float)
        at_limit = (data["q"] <= lo + 1e-9) | (data["q"] >= hi - 1e-9)
        reasons.append(f"a joint at its position limit in {int(stats['limit_steps'])} "
                       f"steps{_most(model, at_limit)}")
    if int(stats.get("errors", 0)):
        reasons.append(f"{int(stats['errors'])} simulation step error(s)")
    modes = list(modes or [mode])
    if len(modes) > 1:
        reasons.append(f"the simulator's mode changed during the run ({' -> '.join(modes)}): "
                       "a set_parameters call from outside the demo")
    if mode == "realtime":
        if int(stats.get("overruns", 0)):
            reasons.append(f"{int(stats['overruns'])} overrun(s): the simulation fell behind "
                           "the wall clock")
        elif int(stats.get("dropped_steps", 0)) > LATE * int(stats.get("steps", 0)):
            # slower than real time by small ticks (each catches up at most 5 ms of steps)
            reasons.append(f"{int(stats['dropped_steps'])} steps dropped against "
                           f"{int(stats['steps'])} taken: the simulation ran slower than the "
                           "wall clock")
        if int(stats.get("stale_command_steps", 0)):
            reasons.append(f"{int(stats['stale_command_steps'])} steps without a fresh command")
    return {
        "samples": len(data["t"]), "sim_time": t_sim, "wall_time": wall,
        "real_time_factor": t_sim / wall if wall > 0 else math.inf, "mode": mode,
        "modes": modes,
        "final_error": float(err[-1].max()) if len(err) else math.nan,
        "max_error": float(max_err.max()), "max_error_per_joint": max_err,
        "friction_dissipation": float(audit.friction_dissipation),
        "motor_work": float(audit.motor_work), "energy_residual": float(audit.relative_residual),
        "audit": audit, "stats": stats, "data": data, "reference": qd, "units": units,
        "joint_names": list(model.joint_names),
        "valid": not reasons, "reasons": reasons, "tracking_reason": tracking,
        "tolerance": tolerance,
        "tolerance_prismatic": tolerance_prismatic,
    }


def _fixed(x: float) -> str:
    """``x`` to 4 decimals, with no sign on a value that rounds to zero ('-0.0000')."""
    text = f"{x:.4f}"
    return text[1:] if text == "-0.0000" else text


def _compensation(s) -> str:
    """Friction compensation in the summary; with no friction model, whether the controller
    still compensates the URDF's joint damping (it does, with compensation on)."""
    if not s["friction_compensation"]:
        return "off"
    if s.get("model_friction_law", "none") != "none":
        return "on"
    return "on (URDF damping only)" if s.get("damping") else "on (nothing to compensate)"


def format_energy_residual(audit, tiny=1e-6) -> str:
    """The audit's residual: relative to the run's largest energy flow, or in J when that flow
    is below ``tiny`` J (a relative number of a ~0 reference means nothing)."""
    scale = audit.scale
    if scale < tiny:
        return f"residual {audit.residual:+.3e} J (absolute: the energy flows are below {tiny:g} J)"
    return f"residual {audit.residual:+.3e} J ({audit.residual / scale:+.2e} relative)"


def report(summary, log=print):
    s, units = summary, summary["units"]
    pos = common_unit(units, "position")
    log(f"robot {s['robot']}: {s['samples']} states, {s['sim_time']:.2f} s simulated in "
        f"{s['wall_time']:.2f} s (x{s['real_time_factor']:.2f} real time, mode "
        f"{' -> '.join(s.get('modes') or [s['mode']])})")
    plant = f"{s['plant_friction']} ({s['plant_friction_law']})"
    model = f"{s['model_friction']} ({s['model_friction_law']})"
    log("friction: " + (f"plant and controller model {plant}" if plant == model else
                         f"plant {plant}, controller model {model}")
        + f", compensation {_compensation(s)}, actuators {s.get('actuators', 'none')}")
    err = s["max_error_per_joint"]
    final = (np.abs(s["reference"][-1] - s["data"]["q"][-1]) if len(s["data"]["q"])
             else np.full(len(err), np.nan))
    kinds = [u.position for u in units]

    def per_unit(values):  # the largest of each joint type's, in its own unit
        return ", ".join(f"{max(x for x, k in zip(values, kinds) if k == unit):.2e} {unit}"
                         for unit in pos.split(" | "))

    log(f"tracking error: final {per_unit(final)}; max {per_unit(err)}"
        f" (friction compensation {'on' if s['friction_compensation'] else 'off'})")
    log("  max per joint: " + ", ".join(f"{name} {e:.2e} {u.position}" for name, e, u in
                                        zip(s["joint_names"], err, units)))
    audit = s["audit"]
    parts = getattr(audit, "friction_parts", None)
    split = (" (" + ", ".join(f"{k} {_fixed(v)} J" for k, v in sorted(parts.items())) + ")"
             if parts else "")
    log(f"friction dissipation {_fixed(s['friction_dissipation'])} J{split}, motor work "
        f"{_fixed(s['motor_work'])} J")
    external = (f"external work {audit.external_work:+.6g} J, " if audit.external_work
                else "")  # a contact's or a pushed arm's: without it the line does not add up
    log(f"energy audit: ΔT {audit.kinetic:+.6g} J, ΔV {audit.potential:+.6g} J, motor work "
        f"{audit.motor_work:+.6g} J, {external}friction dissipation "
        f"{audit.friction_dissipation:.6g} J, "
        f"damping dissipation {audit.damping_dissipation:.6g} J, limit dissipation "
        f"{audit.limit_dissipation:.6g} J, {format_energy_residual(audit)}")
    if s["stats"]:
        log("simulator stats: " + ", ".join(f"{k} {v}" for k, v in sorted(s["stats"].items())))
    if s["valid"]:
        log("verdict: valid run (tolerance "
            f"{s['tolerance']:g} rad, {s['tolerance_prismatic']:g} m)")
    else:
        log("verdict: INVALID run: " + "; ".join(s["reasons"]))
