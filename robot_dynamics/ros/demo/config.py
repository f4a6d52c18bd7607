"""What a user names for a run (friction and actuator configs, controller gains, the plot's
path), checked before any model loads: a mistake is one line (:class:`UsageError`, exit 2),
not an error after the kernels compiled. Also the summary's names of these choices."""
from __future__ import annotations

import os


class UsageError(ValueError):
    """A user mistake found before the run (one line, exit 2)."""


def bundled_config(robot: str, suffix: str):
    """Path of the bundled robot's ``config/<robot><suffix>.yaml``; None when there is none or
    ``robot`` is not a bundled robot (:func:`~robot_dynamics.parsers.resources.bundled_robot`)."""
    from robot_dynamics.errors import ModelError
    from robot_dynamics.parsers.resources import bundled_robot, config_path

    stem = bundled_robot(robot)
    if stem is None:
        return None
    try:
        return config_path(stem + suffix)
    except ModelError:
        return None


def default_actuators(robot: str) -> str:
    """The robot's bundled ``<robot>_actuators`` config, or '' when it has none."""
    path = bundled_config(robot, "_actuators")
    return "" if path is None else os.path.splitext(os.path.basename(path))[0]


def check_config_names(plant_friction, model_friction, actuators):
    """Resolve the friction and actuator configs the user named (bundled name or path; '' and
    'none' need nothing) without loading them: a mistyped name or a missing file raises
    ModelError (one line) before the model loads, i.e. before the kernels compile. Their
    contents are checked against the model later, where they load."""
    from robot_dynamics.parsers.resources import config_path

    for spec, family in ((plant_friction, "friction"), (model_friction, "friction"),
                         (actuators, "actuators")):
        spec = (spec or "").strip()
        if spec and spec.lower() != "none":
            config_path(spec, family)


def controller_parameters(robot: str, path=None) -> dict:
    """The id_controller parameters of ``config/<robot>_controller.yaml`` (or ``path``, a file
    or a bundled name such as ``arm7_controller``), as ``ros2 run ... --params-file`` reads
    them; {} when the robot has none (or is not a bundled one)."""
    import yaml

    if path is None:
        path = bundled_config(robot, "_controller")
        if path is None:
            return {}
    elif not os.path.exists(path) and os.sep not in path and not path.endswith(".yaml"):
        from robot_dynamics.errors import ModelError
        from robot_dynamics.parsers.resources import config_path  # a bundled name ('arm7_controller')

        try:
            path = config_path(path, "controller")
        except ModelError as exc:
            raise UsageError(str(exc)) from None
    from robot_dynamics.ros.params import ID_CONTROLLER, find

    try:
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh) or {}
    except FileNotFoundError:
        raise UsageError(f"controller config {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"controller config {path}: is a directory, not a YAML file") from None
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"controller config {path}: {' '.join(str(exc).split())}") from None
    section = next((doc[k]["ros__parameters"] for k in ("id_controller", "/id_controller", "/**")
                    if isinstance(doc.get(k), dict) and "ros__parameters" in doc[k]), None)
    if not isinstance(section, dict):
        raise UsageError(f"controller config {path}: no 'id_controller: ros__parameters:' section")
    def flat(items, prefix=""):  # nested keys are dotted names, as ROS reads a params file
        for key, value in items:
            if isinstance(value, dict):
                yield from flat(value.items(), f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", value

    out = {}
    for key, value in flat(section.items()):
        row = find(ID_CONTROLLER, key)  # per-joint rows (constraints.<joint>.goal) too
        if row is None:
            raise UsageError(f"controller config {path}: id_controller has no parameter {key!r}")
        if row.type == "double_array" and isinstance(value, list):
            value = [float(x) for x in value]  # YAML 400 is an int; the parameter is double[]
        elif row.type == "double" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        out[key] = value
    return out


def check_output_path(path: str, what: str = "--plot"):
    """Fail now (UsageError) rather than after the run if the image ``path`` cannot be written
    (:func:`~robot_dynamics.errors.check_writable`)."""
    from robot_dynamics.errors import InputError, check_writable

    try:
        check_writable(path, what, image=True)
    except InputError as exc:
        text = str(exc).replace("give a file name", "give a file name such as demo.png")
        raise UsageError(text) from None


def friction_label(spec, law, robot):
    """The summary's name of a friction choice: the spec, the robot's bundled default, or
    'none' when the default was asked for and the robot has no bundled friction file."""
    if spec:
        return spec
    from robot_dynamics.parsers.resources import bundled_robot

    stem = bundled_robot(robot)
    if stem is not None and bundled_config(robot, "_friction") is not None:
        return f"{stem}_friction (default)"
    if law is not None:
        return "the URDF's <dynamics friction> (default)"
    if stem is None:
        return ("none (not a bundled robot, and its URDF declares no <dynamics friction>; "
                "set --friction)")
    return f"none (no bundled {stem}_friction)"


def law_names(friction) -> str:
    """The friction laws of a model, as the summary names them ('classic+viscous'; 'none')."""
    if friction is None:
        return "none"
    names = sorted({law.name for law in friction.laws})
    return "+".join(names)
