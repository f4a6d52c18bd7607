"""The demo's figure: per joint, tracking, tracking error and the motor effort split."""
from __future__ import annotations

import os

import numpy as np

from robot_dynamics.multibody.units import joint_units


def plot_title(summary) -> str:
    act = summary.get("actuators", "none")
    act = os.path.splitext(os.path.basename(act))[0] if act not in ("", "none") else "none"
    return (f"{summary['robot']} — plant friction {summary['plant_friction_law']}, controller "
            f"model {summary['model_friction_law']}, compensation "
            f"{'on' if summary['friction_compensation'] else 'off'}, actuators {act} "
            f"({summary['mode']})")


def save_plot(path, model, data, qd, title=""):
    """Per joint: tracking (reference and simulated), tracking error, and motor effort split
    into inertial / gravity / friction parts. Units per joint type; joint named on each panel;
    legends above the data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from robot_dynamics.algorithm.crba import gravity_torques

    units = joint_units(model)
    mdata = model.create_data()
    g = np.array([gravity_torques(model, mdata, q) for q in data["q"]])
    friction_part = -data["tau_friction"]  # what the motor spends against friction
    inertial = data["tau"] - g - friction_part  # = M q̈ + C q̇ by the equations of motion
    n, t = model.nv, data["t"]
    fig, axes = plt.subplots(n, 3, figsize=(15, 1.9 * n + 1.2), sharex=True, squeeze=False)
    for i in range(n):
        u, name = units[i], model.joint_names[i]
        ax = axes[i, 0]
        ax.plot(t, qd[:, i], "k--", lw=1, label="reference q_d")
        ax.plot(t, data["q"][:, i], lw=1.2, label="simulated q")
        ax.set_ylabel(f"q [{u.position}]", fontsize=8)
        ax = axes[i, 1]
        ax.plot(t, qd[:, i] - data["q"][:, i], "C3", lw=1, label="q_d − q")
        ax.set_ylabel(f"error [{u.position}]", fontsize=8)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
        ax = axes[i, 2]
        ax.plot(t, data["tau"][:, i], "k", lw=1, label="motor")
        ax.plot(t, inertial[:, i], lw=1, label="inertial (M q̈ + C q̇)")
        ax.plot(t, g[:, i], lw=1, label="gravity")
        ax.plot(t, friction_part[:, i], lw=1, label="friction")
        ax.set_ylabel(f"effort [{u.effort}]", fontsize=8)
        for ax in axes[i]:
            ax.set_title(name, fontsize=8, loc="right", pad=2)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    for col, heading in enumerate(("joint tracking", "tracking error", "motor effort split")):
        # legends above the first row, outside the data
        _heading(axes[0, col], heading)
        axes[-1, col].set_xlabel("t [s]")
    _save(fig, path, title)


def save_scenario_plot(path, model, runs, t_event, title=""):
    """The payload scenario's runs side by side (``runs``: label → summary, with 'not told'
    and 'told'; 'no payload', when there, drawn grey in the error panels as the reference).
    Per joint: the tracking error of each run, then the motor effort and its friction part of
    each run, panels of a kind sharing their y axis; a dotted line at ``t_event`` (the pick-up)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = joint_units(model)
    pair = [label for label in ("not told", "told") if label in runs]
    ref = runs.get("no payload")
    n = model.nv
    fig, axes = plt.subplots(n, 2 * len(pair), figsize=(16, 1.9 * n + 1.4), sharex=True,
                             squeeze=False)
    for i in range(n):
        u, name = units[i], model.joint_names[i]
        for k, label in enumerate(pair):
            s = runs[label]
            data, qd = s["data"], s["reference"]
            ax = axes[i, k]
            if ref is not None:
                ax.plot(ref["data"]["t"], ref["reference"][:, i] - ref["data"]["q"][:, i],
                        color="0.6", lw=0.8, label="no payload")
            ax.plot(data["t"], qd[:, i] - data["q"][:, i], "C3", lw=1, label="q_d − q")
            ax.set_ylabel(f"error [{u.position}]", fontsize=8)
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
            ax = axes[i, len(pair) + k]
            ax.plot(data["t"], data["tau"][:, i], "k", lw=1, label="motor")
            ax.plot(data["t"], -data["tau_friction"][:, i], "C2", lw=1, label="friction")
            ax.set_ylabel(f"effort [{u.effort}]", fontsize=8)
        for col in range(2 * len(pair)):  # each kind of panel on one y scale per joint
            if col % len(pair):
                axes[i, col].sharey(axes[i, col - col % len(pair)])
        for ax in axes[i]:
            ax.axvline(t_event, color="k", ls=":", lw=0.8)
            ax.set_title(name, fontsize=8, loc="right", pad=2)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
    for k, label in enumerate(pair):
        for col, heading in ((k, f"tracking error, controller {label}"),
                             (len(pair) + k, f"motor effort, controller {label}")):
            _heading(axes[0, col], heading)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    _save(fig, path, title)


def save_press_plot(path, model, summary, numbers, title=""):
    """The press scenario side by side: left, the contact's normal force, then each joint's
    friction effort (what the motor spends against it, −τf) over time, the slides the numbers
    are taken over shaded; right, per joint, the mean friction effort |τf| of each level over
    the normal force measured at it (``numbers``: :func:`.scenarios.press_numbers`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = joint_units(model)
    data, n = summary["data"], model.nv
    t = data["t"]
    fig, axes = plt.subplots(n + 1, 2, figsize=(13, 1.7 * (n + 1) + 1.2), squeeze=False,
                             gridspec_kw={"width_ratios": (3, 1)})
    forces = [x["normal_force"] for x in numbers]
    for row in range(n + 1):
        ax = axes[row, 0]
        if row == 0:
            ax.plot(t, data["normal_force"], "k", lw=1, label="normal force F_n")
            ax.set_ylabel("F_n [N]", fontsize=8)
        else:
            i = row - 1
            ax.plot(t, -data["tau_friction"][:, i], "C2", lw=0.8, label="friction effort −τf")
            ax.set_ylabel(f"[{units[i].effort}]", fontsize=8)
            ax.set_title(model.joint_names[i], fontsize=8, loc="right", pad=2)
        for x in numbers:  # the windows the numbers are taken over
            w = x["window"]
            if w.any():
                edges = np.flatnonzero(np.diff(np.concatenate(([0], w.astype(int), [0]))))
                for a, b in zip(edges[::2], edges[1::2] - 1):
                    ax.axvspan(t[a], t[b], color="C0", alpha=0.12, lw=0)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax = axes[row, 1]
        if row == 0:
            ax.bar(range(len(numbers)), forces, color="0.5")
            ax.set_xticks(range(len(numbers)), [f"{x['force']:g} N" for x in numbers],
                          fontsize=7)
            ax.set_ylabel("mean F_n [N]", fontsize=8)
            ax.set_title("asked → measured", fontsize=8, loc="right", pad=2)
        else:
            i = row - 1
            ax.plot(forces, [x["friction"][i] for x in numbers], "o-", color="C2", lw=1)
            ax.set_ylabel(f"|τf| [{units[i].effort}]", fontsize=8)
            ax.set_title(model.joint_names[i], fontsize=8, loc="right", pad=2)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    _heading(axes[0, 0], "contact normal force; per joint the friction effort (slides shaded)",
             above=1.1, ncol=1)
    axes[-1, 0].set_xlabel("t [s]")
    axes[-1, 1].set_xlabel("mean normal force over the slides [N]")
    _save(fig, path, title)


def _heading(ax, heading, above=1.15, ncol=2):
    """A column's legend above its first panel, outside the data, titled ``heading``."""
    ax.legend(fontsize=7, loc="lower left", bbox_to_anchor=(0.0, above), ncol=ncol,
              frameon=False, title=heading, title_fontproperties={"size": 9, "weight": "bold"},
              alignment="left")


def _save(fig, path, title):
    """Title, layout, write ``path``, release the figure (the callers imported matplotlib)."""
    import matplotlib.pyplot as plt

    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=90)
    plt.close(fig)
