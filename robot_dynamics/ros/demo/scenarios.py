"""Scenarios of ``robot-dynamics sim`` (``--scenario``): what happens to the plant during the
demo, who is told, and the numbers that compare the runs.

``payload``: the plant (the simulator node) picks up a payload at the start of the second move;
the demo runs three times in lockstep: without a payload (the reference), with the controller
not told, and with the controller (and dynamics_model) told at the same simulated instant. The
payload is set through the nodes' parameters ``payload.link``, ``payload.mass``,
``payload.com`` (one SetParametersAtomically call per node, as ``ros2 param set`` would), not
by reaching into the nodes' models.

``press``: a tool pressing on a surface and sliding along it (issue 32's last demo). The plant
(the simulator node's Simulator) gets a flat surface at the tool: a compiled
:class:`~robot_dynamics.simulation.contact.PlaneContact` (a spring–damper that only pushes, with
its own Coulomb friction), :data:`PRESS_APPROACH` from the contact point at the start pose,
horizontal: ``overhead`` (above the tool, pressed up against: a fixture; the default) or
``table`` (below it, pressed down on). The controller follows the press reference
(:mod:`robot_dynamics.control.press`): onto the surface, into it to the depth at which it pushes
back with each force of :data:`PRESS_FORCES` in turn, sliding :data:`PRESS_SLIDE` along it and
back at each. One run, in lockstep. Reported per level, over the middle 60 % of its two slides
(the joints moving, so their friction is the law's): the contact's normal force (the
PlaneContact's own F_n at each published state), and per joint the plant's friction effort
(mean |τf|) and its share of the motor effort (RMS τf / RMS τ). The load-dependent laws (seed
004 eq. 2.5.6, docs/method.md §2.5) and the gear meshes read the joint reactions and efforts
that carry the pushing force (docs/method.md §1b). Pressed up against a surface, its reaction
adds to the arm's weight and the friction grows with the force; pressed down on a table, the
table's push carries part of the arm's weight: the friction of the joints that carry it
(arm7's shoulder and elbow, joint_a2 and joint_a4) falls first, to half at ~30 N, and grows
again beyond (README, "Scenarios"). The surface is
placed in the plant by the demo (the simulator node has no contact of its own on ROS); the
controller is not told of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: the choices of --scenario
SCENARIOS = ("none", "payload", "press")
#: the runs of the payload scenario, in order: (label, nodes told of the payload)
PAYLOAD_RUNS = (("no payload", ()),
                ("not told", ("simulator",)),
                ("told", ("simulator", "id_controller", "dynamics_model")))


@dataclass
class ParameterEvent:
    """At simulated time ``t`` (the first published state at or after it, before the command
    computed from that state), set ``parameters`` (name → value) on each node of ``nodes``
    ('simulator', 'id_controller', 'dynamics_model') in one SetParametersAtomically call."""
    t: float
    parameters: dict
    nodes: tuple = field(default_factory=tuple)


def payload_parameters(link, mass, com) -> dict:
    """The node parameters that describe a point-mass payload of ``mass`` kg at ``com``."""
    return {"payload.link": link, "payload.mass": float(mass),
            "payload.com": [float(x) for x in com]}


def payload_link(model, link=None) -> str:
    """``link`` checked against the model (UsageError naming it), default the last link."""
    from robot_dynamics.multibody.model import unknown_link
    from robot_dynamics.ros.demo.config import UsageError

    if link is None or link == "":
        return model.link_names[-1]
    if link not in model.frames:
        raise UsageError(f"--payload-link: {unknown_link(model, link)}")
    return link


def _groups(units):
    """Position unit → joint indices of that unit, in first-seen order ('rad', 'm')."""
    out = {}
    for i, u in enumerate(units):
        out.setdefault(u.position, []).append(i)
    return out


def _rms(x) -> float:
    return float(np.sqrt(np.mean(np.square(x)))) if x.size else float("nan")


def run_numbers(summary, t_from) -> dict:
    """Tracking error (max and RMS) and the friction share of the motor effort (friction effort
    RMS / motor effort RMS, the plant's friction) from ``t_from`` on, per joint type (position
    unit → value; the effort units follow the joint type)."""
    data, units = summary["data"], summary["units"]
    window = data["t"] >= t_from - 1e-9
    err = (summary["reference"] - data["q"])[window]
    tau, fr = data["tau"][window], data["tau_friction"][window]
    out = {"max_error": {}, "rms_error": {}, "friction_share": {}}
    for unit, idx in _groups(units).items():
        out["max_error"][unit] = float(np.abs(err[:, idx]).max()) if len(err) else float("nan")
        out["rms_error"][unit] = _rms(err[:, idx])
        total = _rms(tau[:, idx])
        out["friction_share"][unit] = _rms(fr[:, idx]) / total if total > 0 else float("nan")
    return out


def report_payload(runs, pick, log=print):
    """The comparison table of the payload scenario's runs (label → summary with
    ``scenario_numbers``); ``pick``: (t, link, mass, com)."""
    t, link, mass, com = pick
    log(f"scenario payload: the plant picks up {mass:g} kg on {link!r} (com "
        f"{[float(x) for x in com]} m) at t = {t:.3f} s (start of the second move); numbers "
        f"from then on")
    width = max(len(label) for label in runs)
    for label, s in runs.items():
        n = s["scenario_numbers"]
        text = "; ".join(
            f"max {n['max_error'][u]:.2e} {u}, RMS {n['rms_error'][u]:.2e} {u}, friction share "
            f"{100 * n['friction_share'][u]:.1f} %" for u in n["max_error"])
        verdict = "valid" if s["valid"] else "INVALID"
        log(f"  {label:<{width}}  tracking error {text} ({verdict})")


#: the press scenario's force levels [N], its surfaces (name → the normal's direction against
#: gravity: +1 the surface below the tool, −1 above it), the surface (PlaneContact's parameters:
#: k [N/m], c [N·s/m], μ, ε [m/s]), the contact point's distance to it at the start pose [m] and
#: the slide along it [m]. The contact's time scales against the 1 ms step (contact.py):
#: sqrt(m/k) ≈ 12 ms and m/c ≈ 15 ms for the ~3 kg the tool moves along the normal,
#: m ε / (μ F_n) ≈ 4 ms at 50 N
PRESS_FORCES = (0.0, 10.0, 25.0, 50.0)
PRESS_SURFACES = {"overhead": -1.0, "table": 1.0}
PRESS_TABLE = {"stiffness": 2e4, "damping": 200.0, "friction": 0.3, "slip_velocity": 0.02}
PRESS_APPROACH = 0.03
PRESS_SLIDE = 0.1
#: the part of each slide the numbers are taken over (fractions of it): its middle, where the
#: joints move (minimum-jerk: above 40 % of the peak speed)
PRESS_WINDOW = (0.2, 0.8)
#: the most joint motion per metre of slide [rad/m] a start pose may need (beyond it the pose is
#: near a singularity: 0.1 m of slide would swing joints by radians)
PRESS_RATE = 20.0


def press_link(model, link=None) -> str:
    """``link`` checked against the model (UsageError naming it); default the robot's
    ``tool0`` when it has one, else the link fixed to its last body farthest from that body's
    origin (a tool frame; its last link itself when none is)."""
    from robot_dynamics.multibody.model import unknown_link
    from robot_dynamics.ros.demo.config import UsageError

    if link is None or link == "":
        if "tool0" in model.frames:
            return "tool0"
        last = model.nv - 1  # the link fixed to the last body farthest from its origin
        return max((name for name, (body, _) in model.frames.items() if body == last),
                   key=lambda name: float(np.linalg.norm(model.frames[name][1][:3, 3])))
    if link not in model.frames:
        raise UsageError(f"--press-link: {unknown_link(model, link)}")
    return link


def press_table(model, link, q_start, surface="overhead", table=None):
    """The press scenario's surface, a PlaneContact on ``model`` at ``link``'s origin:
    horizontal, :data:`PRESS_APPROACH` above (``surface`` 'overhead', normal along gravity)
    or below (``'table'``, normal against gravity) the point at ``q_start``. ``table``:
    PlaneContact's parameters (default :data:`PRESS_TABLE`)."""
    from robot_dynamics.algorithm.kinematics import forward_kinematics, frame_placement
    from robot_dynamics.simulation.contact import PlaneContact

    data = model.create_data()
    forward_kinematics(model, data, np.asarray(q_start, dtype=float))
    x0 = frame_placement(model, data, link)[:3, 3]
    g = np.asarray(model.gravity, dtype=float)
    up = -g / np.linalg.norm(g) if np.any(g) else np.array([0.0, 0.0, 1.0])
    normal = PRESS_SURFACES[surface] * up
    return PlaneContact(model, link, plane_point=x0 - PRESS_APPROACH * normal, normal=normal,
                        **(PRESS_TABLE if table is None else table))


def press_slide(model, contact, q_start) -> np.ndarray:
    """The slide: :data:`PRESS_SLIDE` along the surface, at 37° from the line from the base
    to the start point (out and sideways: the arm's joints all move), within what the contact
    point can move along at ``q_start`` (a planar arm: along its plane's trace on the
    surface). InputError when it cannot move along the surface at all."""
    from robot_dynamics.control.press import point_jacobian
    from robot_dynamics.errors import InputError

    n = contact.normal
    x = contact.plane_point - (contact.plane_point @ n) * n  # from the base's foot, on the table
    radial = x / np.linalg.norm(x) if np.linalg.norm(x) > 1e-9 else np.array([1.0, 0.0, 0.0])
    way = 0.6 * np.cross(n, radial) + 0.8 * radial
    J = point_jacobian(model, model.create_data(), q_start, contact)
    Jp = np.linalg.pinv(J, rcond=1e-9)
    reach = J @ Jp  # projector on the point's velocities
    tangent = np.eye(3) - np.outer(n, n)
    for _ in range(50):  # alternating projections: into both subspaces
        way = tangent @ (reach @ way)
    if np.linalg.norm(way) < 1e-6:
        raise InputError(f"press: the point on {contact.link!r} cannot move along the surface "
                         "from the start pose")
    way = way / np.linalg.norm(way)
    rate = np.linalg.norm(Jp @ way)  # joint motion per metre
    if rate > PRESS_RATE:
        raise InputError(f"press: the point on {contact.link!r} moves along the surface only "
                         f"through a near-singular pose ({rate:.3g} rad per metre of slide)")
    return PRESS_SLIDE * way


def press_start(model, link, positions, surface="overhead"):
    """The press scenario's start pose, surface and slide: the first of ``positions`` (the
    demo trajectory's samples, its start first) from which ``link`` can slide along the
    surface (:func:`press_slide`) — a planar arm starts outstretched, a pose from which its tool
    can only move up and down. InputError (the start pose's reason) when none can."""
    from robot_dynamics.errors import InputError

    first = None
    for q in positions:
        table = press_table(model, link, q, surface)
        try:
            return q, table, press_slide(model, table, q)
        except InputError as exc:
            first = exc if first is None else first
    raise InputError(f"{first} (nor from the demo trajectory's {len(positions) - 1} other "
                     "poses)")


def press_numbers(summary, levels, t0=0.0) -> list:
    """Per level (:class:`~robot_dynamics.control.press.PressLevel`, times relative to ``t0``),
    over :data:`PRESS_WINDOW` of its slides: ``force`` asked, ``normal_force`` (mean, min, max of
    the recorded F_n), and per joint ``friction`` (mean |τf|), ``friction_share`` (RMS τf / RMS
    τ) and ``speed`` (mean |q̇|)."""
    data = summary["data"]
    t = data["t"]
    out = []
    for level in levels:
        w = np.zeros(len(t), dtype=bool)
        for a, b in level.slides:
            lo, hi = PRESS_WINDOW
            w |= (t >= t0 + a + lo * (b - a) - 1e-9) & (t <= t0 + a + hi * (b - a) + 1e-9)
        if not w.any():  # a run cut short before the level's slides
            nan = np.full(data["tau"].shape[1], np.nan)
            out.append({"force": level.force, "depth": level.depth, "samples": 0,
                        "normal_force": np.nan, "normal_force_min": np.nan,
                        "normal_force_max": np.nan, "friction": nan, "friction_share": nan,
                        "speed": nan, "window": w})
            continue
        fn, tf, tau = data["normal_force"][w], data["tau_friction"][w], data["tau"][w]
        rms_tau = np.sqrt(np.mean(tau ** 2, axis=0))
        out.append({
            "force": level.force, "depth": level.depth, "samples": int(w.sum()),
            "normal_force": float(fn.mean()), "normal_force_min": float(fn.min()),
            "normal_force_max": float(fn.max()), "friction": np.abs(tf).mean(axis=0),
            "friction_share": np.sqrt(np.mean(tf ** 2, axis=0)) / np.where(rms_tau > 0, rms_tau,
                                                                             np.nan),
            "speed": np.abs(data["v"][w]).mean(axis=0), "window": w,
        })
    return out


def press_reasons(numbers) -> list:
    """The press run's own verdict: the tool on the surface through every level's slides that
    asks for a force (F_n > 0 at every sample of the window)."""
    return [f"press level {n['force']:g} N: the tool left the surface during the slides (F_n "
            f"down to {n['normal_force_min']:.3g} N)" for n in numbers
            if n["force"] > 0 and not n["normal_force_min"] > 0]


def report_press(numbers, joint_names, units, link, surface, table, log=print):
    """The press scenario's table: per level the normal force and per joint the friction
    effort (mean |τf|, its unit) and its share of the motor effort."""
    where = "up against a surface above it" if surface == "overhead" else "down on a table"
    log(f"scenario press: {link!r} pressing {where} (k {table['stiffness']:g} N/m, c "
        f"{table['damping']:g} N·s/m, μ {table['friction']:g}), sliding {PRESS_SLIDE:g} m "
        f"at each force; numbers over the middle {100 * (PRESS_WINDOW[1] - PRESS_WINDOW[0]):.0f}"
        f" % of the slides")
    rows = [[f"{n['force']:g} N", f"{n['normal_force']:.2f} N"]
            + [f"{x:.3f} {u.effort} ({100 * sh:.0f} %)"
               for x, sh, u in zip(n["friction"], n["friction_share"], units)]
            for n in numbers]
    head = ["asked", "normal force"] + list(joint_names)
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    log("  friction effort |τf| per joint (its share of the motor effort):")
    for r in [head] + rows:
        log("  " + "  ".join(cell.rjust(w) for cell, w in zip(r, widths)))
