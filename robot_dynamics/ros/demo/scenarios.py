"""Scenarios of ``robot-dynamics sim`` (``--scenario``): what happens to the plant during the
demo, who is told, and the numbers that compare the runs.

``payload``: the plant (the simulator node) picks up a payload at the start of the second move;
the demo runs three times in lockstep: without a payload (the reference), with the controller
not told, and with the controller (and dynamics_model) told at the same simulated instant. The
payload is set through the nodes' parameters ``payload.link``, ``payload.mass``,
``payload.com`` (one SetParametersAtomically call per node, as ``ros2 param set`` would), not
by reaching into the nodes' models.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: the choices of --scenario
SCENARIOS = ("none", "payload")
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
