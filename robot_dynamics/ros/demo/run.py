"""The composition of ``robot-dynamics sim``: simulator + id_controller + dynamics_model in
one executor of a context of their own, the demo trajectory delivered before the simulator
starts (lockstep: deterministic), the executor loop to the end of the demo, then the verdict,
the report and the plot."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from robot_dynamics.errors import InputError
from robot_dynamics.ros.demo.config import (UsageError, bundled_config, check_config_names,
    check_output_path, controller_parameters, default_actuators, friction_label, law_names)
from robot_dynamics.ros.demo.plot import (plot_title, save_plot, save_press_plot,
    save_scenario_plot)
from robot_dynamics.ros.demo.scenario import (START, demo_timing, demo_trajectory,
    loop_closure_note, trajectory_msg)
from robot_dynamics.ros.demo.scenarios import (PAYLOAD_RUNS, PRESS_FORCES, PRESS_SURFACES,
    PRESS_TABLE, SCENARIOS, ParameterEvent, payload_link, payload_parameters, press_link,
    press_numbers, press_reasons, press_start, press_table, report_payload, report_press,
    run_numbers)
from robot_dynamics.ros.demo.session import (Progress, Signals, private_namespace,
    private_remaps, record_modes, record_normal_force, record_published_states)
from robot_dynamics.ros.demo.verdict import report, summarize


@dataclass
class DemoOptions:
    """What ``robot-dynamics sim`` is asked for (its options, same names and defaults).

    ``friction`` sets the plant's and the controller model's friction unless
    ``plant_friction`` / ``model_friction`` say otherwise. ``move_time`` / ``settle``: None,
    the robot's (:mod:`.scenario`). ``actuators``: the actuator config of plant and controller
    (bundled name or path; 'none'; None: the robot's bundled ``<robot>_actuators`` when there
    is one). ``validate``: the URDF physics check, ``strict`` or ``warn``. ``rate``: the
    simulator's integration rate [Hz] (its step 1/rate). ``global_topics``: the nodes under
    '/', as sim.launch.py (default: a namespace of this run alone, :func:`.private_namespace`).
    """
    robot: str = "arm7"
    friction: str = ""
    mode: str = "lockstep"
    move_time: float | None = None
    settle: float | None = None
    friction_compensation: bool = True
    plot: str | None = None
    plant_friction: str | None = None
    model_friction: str | None = None
    controller_config: str | None = None
    tolerance: float = 0.01
    tolerance_prismatic: float = 0.001
    global_topics: bool = False
    validate: str = "strict"
    actuators: str | None = None
    rate: float = 1000.0
    #: :mod:`.scenarios`: 'none' (the plain demo), 'payload' (three runs: no payload, the
    #: plant picking one up at the start of the second move with the controller not told,
    #: and told) or 'press' (the tool pressing on a table with each of ``press_forces`` [N]
    #: and sliding along it; ``move_time``: seconds of each slide, default 1)
    scenario: str = "none"
    payload_mass: float = 3.0
    payload_link: str | None = None  # None: the robot's last link
    payload_com: tuple = (0.0, 0.0, 0.0)
    press_forces: tuple = PRESS_FORCES
    press_link: str | None = None  # None: tool0, else the link farthest out (press_link)
    press_surface: str = "overhead"  # or 'table' (scenarios.PRESS_SURFACES)


def run_demo(options=None, log=print, *, progress=None, signals=None):
    """Run the composition as ``options`` (:class:`DemoOptions`; None: the defaults) say;
    return a summary dict (also printed via ``log``).

    The summary holds the recorded arrays (``data``: t, q, v, tau, tau_friction;
    ``reference``: q_d at each t), the simulator node's ``stats``, the verdict (``valid``,
    ``reasons``), the mode(s) the simulator ran (``mode``, ``modes``) and the nodes'
    ``namespace``. ``progress``: a :class:`.Progress` (None: one on stderr); ``signals``: the
    :class:`.Signals` the caller installed (None: no signal handling of its own).
    """
    o = DemoOptions() if options is None else options
    from robot_dynamics.parsers.resources import bundled_robot, robot_path

    path = robot_path(o.robot)  # a mistyped robot: one line, before the kernels compile
    plant_spec = o.friction if o.plant_friction is None else o.plant_friction
    model_spec = plant_spec if o.model_friction is None else o.model_friction
    actuators = default_actuators(o.robot) if o.actuators is None else o.actuators
    # every file or bundled name a user gives, and the plot's path: one line now, not after
    # load_urdf compiles the kernels (minutes on a cold numba cache)
    check_config_names(plant_spec, model_spec, actuators)
    gains = controller_parameters(o.robot, o.controller_config)
    if o.plot:
        check_output_path(o.plot)
    import_rclpy()
    from robot_dynamics.parsers.urdf import load_urdf
    from robot_dynamics.ros.common import load_actuators, load_friction

    move_time, settle = demo_timing(o.robot, o.move_time, o.settle)
    # everything a user can get wrong is checked here, before any node starts
    model = load_urdf(path, validate=o.validate, mimic=True)  # as the nodes load it
    plant_law = load_friction(plant_spec, bundled_robot(o.robot), model)
    model_law = load_friction(model_spec, bundled_robot(o.robot), model)
    _, plant_law = load_actuators(actuators, model, plant_law)
    _, model_law = load_actuators(actuators, model, model_law)
    note = loop_closure_note(o.robot)
    if note:
        log(note)
    traj = demo_trajectory(model, o.robot, move_time)
    t_end = traj.duration + settle

    run_args = (o, model, traj, gains, actuators, model_spec, plant_spec, t_end, progress,
                signals)
    # a file names the robot by the URDF's own name, then the file: "panda (…/panda.urdf)"
    labels = dict(robot=o.robot if model.name == o.robot else f"{model.name} ({o.robot})",
                  plant_friction=friction_label(plant_spec, plant_law, o.robot),
                  model_friction=friction_label(model_spec, model_law, o.robot),
                  actuators=actuators or "none",
                  friction_compensation=bool(o.friction_compensation),
                  damping=bool(np.any(model.damping)), plant_friction_law=law_names(plant_law),
                  model_friction_law=law_names(model_law))
    if o.scenario == "payload":
        return _payload_scenario(run_args, labels, log)
    if o.scenario == "press":
        return _press_scenario(run_args, labels, log)
    if o.scenario != "none":
        raise UsageError(f"scenario: expected one of {', '.join(SCENARIOS)}, got {o.scenario!r}")
    summary = _run_once(*run_args)
    summary.update(labels)
    report(summary, log)
    if o.plot:
        save_plot(o.plot, model, summary["data"], summary["reference"],
                  title=plot_title(summary))
        log(f"plot saved to {os.path.abspath(o.plot)}")
    return summary


def _payload_scenario(run_args, labels, log):
    """The payload scenario (:mod:`.scenarios`): its three runs, each reported, then their
    comparison; the summary of the told run with ``runs`` (label → summary) and ``pick``.
    Valid when the reference and the told runs are (not telling the controller is expected to
    track worse: its verdict is reported, not judged)."""
    o, model, traj = run_args[0], run_args[1], run_args[2]
    link = payload_link(model, o.payload_link)
    t_pick = START + (traj.times[1] if len(traj.times) > 2 else 0.5 * traj.duration)
    params = payload_parameters(link, o.payload_mass, o.payload_com)
    runs = {}
    for label, nodes in PAYLOAD_RUNS:
        log(f"== scenario payload, run {label!r} ==")
        events = [ParameterEvent(t_pick, params, nodes)] if nodes else []
        s = _run_once(*run_args, events=events)
        s.update(labels, scenario="payload", run=label)
        s["scenario_numbers"] = run_numbers(s, t_pick)
        report(s, log)
        runs[label] = s
    pick = (t_pick, link, o.payload_mass, o.payload_com)
    report_payload(runs, pick, log)
    if o.plot:
        save_scenario_plot(o.plot, model, runs, t_pick, title=plot_title(runs["told"])
                           + f"; payload {o.payload_mass:g} kg on {link} at {t_pick:.2f} s")
        log(f"plot saved to {os.path.abspath(o.plot)}")
    told, ref = runs["told"], runs["no payload"]
    reasons = [f"run {label!r}: {r}" for label, s in (("no payload", ref), ("told", told))
               for r in s["reasons"]]
    return {**told, "runs": runs, "pick": pick, "valid": not reasons, "reasons": reasons}


def _press_scenario(run_args, labels, log):
    """The press scenario (:mod:`.scenarios`): one run along the press reference with the
    surface in the plant; the summary with ``press`` (the numbers per level), ``levels`` and
    ``table`` (the PlaneContact). Valid when the run is (tracking error aside: the reference is
    inside the surface by design) and the tool stayed on the surface through every pressing
    level's slides."""
    from robot_dynamics.control.press import press_reference
    from robot_dynamics.ros.params import ID_CONTROLLER, row

    o, model, traj, gains = run_args[0], run_args[1], run_args[2], run_args[3]
    if model.coupling is not None:
        raise UsageError(f"scenario press: {model.name} has mimic joints; the press reference "
                         "needs independent joints (a robot without <mimic>)")
    if o.press_surface not in PRESS_SURFACES:
        raise UsageError(f"press surface: expected one of {', '.join(PRESS_SURFACES)}, got "
                         f"{o.press_surface!r}")
    link = press_link(model, o.press_link)
    q_start, table, slide = press_start(model, link, traj.positions, o.press_surface)
    from robot_dynamics.ros.common import per_joint

    try:
        kp = per_joint("kp", gains.get("kp", row(ID_CONTROLLER, "kp").default), model.nv,
                       nonnegative=True)
    except ValueError as exc:
        raise UsageError(f"controller gains: {exc}") from None
    if np.any(kp <= 0):  # the press offset is K_p⁻¹ M⁻¹ Jᵀ n F
        raise UsageError(f"scenario press: kp must be > 0 on every joint (the reference's "
                         f"offset divides by it), got {kp.tolist()}")
    move_time = o.move_time or 1.0
    settle = 0.5 if o.settle is None else o.settle
    try:
        press_traj, levels = press_reference(model, table, q_start, o.press_forces, kp,
                                             slide=slide, move_time=move_time)
    except InputError as exc:  # a force out of reach: "forces: ..." is the option's
        head, sep, rest = str(exc).partition(": ")
        if head != "forces":
            raise
        raise UsageError(f"--press-forces: {rest}") from None
    t_end = press_traj.duration + settle

    def plant_table(sim_model):  # on the simulator node's own model
        return press_table(sim_model, link, q_start, o.press_surface)

    args = (o, model, press_traj) + tuple(run_args[3:7]) + (t_end,) + tuple(run_args[8:])
    log(f"== scenario press: {link!r} onto a surface ({o.press_surface}) at "
        f"{np.round(table.plane_point, 3).tolist()} m, normal {table.normal.round(3).tolist()}, "
        f"forces {', '.join(f'{f:g}' for f in o.press_forces)} N ==")
    s = _run_once(*args, external=plant_table)
    s.update(labels, scenario="press")
    tracking = s["tracking_reason"]  # not judged here: the surface holds the tool back
    s["reasons"] = [r for r in s["reasons"] if r is not tracking]
    numbers = press_numbers(s, levels, START)
    s["reasons"] += press_reasons(numbers)
    s["valid"] = not s["reasons"]
    report(s, log)
    if tracking:
        log("  (tracking error not judged: the press reference is inside the surface by design, "
            "the surface holds the tool back)")
    report_press(numbers, s["joint_names"], s["units"], link, o.press_surface, PRESS_TABLE, log)
    if o.plot:
        save_press_plot(o.plot, model, s, numbers,
                        title=plot_title(s) + f"; {link} pressing on a surface "
                        f"({o.press_surface})")
        log(f"plot saved to {os.path.abspath(o.plot)}")
    return {**s, "press": numbers, "levels": levels, "table": table, "link": link}


def _run_once(o, model, traj, gains, actuators, model_spec, plant_spec, t_end, progress,
              signals, events=(), external=None):
    """One run of the composition: the summary of :func:`.summarize` (data, verdict, ...).
    ``events``: :class:`.ParameterEvent` to apply during the run (the controller then serves
    its states on the executor, so that an event lands between a state and the command computed
    from it). Not yet bit-for-bit deterministic with an event: the step after the pick-up
    applies the command the controller computed from the state before it, and in about one
    run in three the controller serves that state only after the event (told one state early:
    the runs differ from that step on, ~1e-5 rad); not resolved. ``external``: None, or
    ``external(model) → PlaneContact`` (the press scenario's table): one on the simulator
    node's model becomes its Simulator's ``external`` (the plant's environment), a second
    one gives ``data['normal_force']``, its F_n at each recorded state (what the plant applies
    over the step from it)."""
    rclpy = import_rclpy()
    # a context of our own (whatever the caller has), with our own SIGINT/SIGTERM handling
    # (stop, destroy the nodes, exit 130/143) and, unless global_topics, the composition's
    # nodes in a namespace of this run and its topics under it: another simulator, controller
    # or robot on the same ROS domain can neither command this simulation (its topics or its
    # nodes' parameter services) nor be commanded by it
    from rclpy.signals import SignalHandlerOptions

    context = rclpy.Context()
    namespace = None if o.global_topics else private_namespace()
    remaps = [] if o.global_topics else ["-r", f"__ns:={namespace}"] + private_remaps(namespace)
    rclpy.init(context=context, args=["--ros-args"] + remaps if remaps else None,
               signal_handler_options=SignalHandlerOptions.NO)
    run = _Composition(o, context, signals or Signals(), events, external)
    try:
        run.start(model, traj, gains, actuators, model_spec, plant_spec)
        wall, data, audit, stats = run.spin_until(t_end, progress)
    finally:
        run.close()
        if context.ok():
            rclpy.shutdown(context=context)

    qd = np.array([traj.sample(t - START)[0] for t in data["t"]])
    # the mode(s) the simulator ran in, as the node says, not as asked: a set_parameters call
    # from outside (a --global-topics run is reachable at /simulator) may have switched it
    summary = summarize(model, data, qd, audit, stats, mode=run.modes[-1], wall=wall,
                        tolerance=o.tolerance, tolerance_prismatic=o.tolerance_prismatic,
                        modes=run.modes)
    summary["namespace"] = namespace or "/"
    return summary


def import_rclpy():
    """rclpy, or a one-line UsageError saying what to do (:func:`robot_dynamics.ros.import_rclpy_hint`)."""
    try:
        import rclpy
    except ImportError as exc:  # a venv without the ROS 2 wheels' libraries, no sourced ROS
        from robot_dynamics.ros import import_rclpy_hint

        raise UsageError(f"cannot start the nodes ({exc}); {import_rclpy_hint(exc)}") from None
    return rclpy


class _Composition:
    """The nodes of one run in one executor: :meth:`start`, :meth:`spin_until`, :meth:`close`
    (also after a failed start)."""

    def __init__(self, options, context, signals, events=(), external=None):
        self.options, self.context, self.signals = options, context, signals
        self.events = sorted(events, key=lambda e: e.t)
        self.external, self.normal_force = external, None
        self.nodes, self.executor, self.sim, self.modes = [], None, None, None

    def start(self, model, traj, gains, actuators, model_spec, plant_spec):
        """The controller and dynamics_model, the demo trajectory delivered to the controller,
        then the simulator (recorded from its first step)."""
        import rclpy
        from rclpy.exceptions import ParameterException
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from trajectory_msgs.msg import JointTrajectory as TrajMsg

        from robot_dynamics.ros.common import TRAJECTORY_QOS, parameter_error_text
        from robot_dynamics.ros.dynamics_model import DynamicsModelNode
        from robot_dynamics.ros.id_controller import IdController
        from robot_dynamics.ros.simulator import SimulatorNode

        o, context = self.options, self.context
        robot_params = [Parameter("robot", value=o.robot), Parameter("validate", value=o.validate),
                        Parameter("actuators", value=actuators)]
        ctrl_params = robot_params + [Parameter("friction_config", value=model_spec or "")]
        ctrl_params += [Parameter(k, value=v) for k, v in gains.items()
                        if k not in ("friction_compensation", "stale_timeout")]
        ctrl_params += [Parameter("friction_compensation", value=bool(o.friction_compensation)),
                        Parameter("stale_timeout", value=5.0)]
        if self.events:  # states served by the executor: an event lands before the command
            ctrl_params.append(Parameter("state_thread", value=False))
        try:
            ctrl = IdController(context=context, parameter_overrides=ctrl_params)
        except (ValueError, ParameterException) as exc:  # a gain the node refuses
            where = (o.controller_config or bundled_config(o.robot, "_controller")
                     or "id_controller")
            raise UsageError(f"controller config {where}: {parameter_error_text(exc)}") from None
        self.nodes.append(ctrl)
        dyn = DynamicsModelNode(context=context, parameter_overrides=robot_params + [
            Parameter("friction_config", value=model_spec or ""),
            Parameter("publish_rate", value=10.0)])
        self.nodes.append(dyn)
        driver = rclpy.create_node("demo_driver", context=context)
        self.nodes.append(driver)
        # the topic the controller subscribed to, whatever namespace and remapping made of it
        topic = next(sub.topic_name for sub in ctrl.subscriptions if sub.msg_type is TrajMsg)
        pub = driver.create_publisher(TrajMsg, topic, TRAJECTORY_QOS)
        self.executor = SingleThreadedExecutor(context=context)
        for n in self.nodes:
            self.executor.add_node(n)
        # the trajectory starts at simulated time 0 and reaches the controller before the
        # simulator exists: the run does not depend on discovery timing (determinism)
        self._deliver(pub, trajectory_msg(model, traj, start=START),
                      lambda: ctrl.trajectories_received > 0)
        sim = SimulatorNode(context=context, parameter_overrides=robot_params + [
            Parameter("friction_config", value=plant_spec or ""),
            Parameter("mode", value=o.mode),
            Parameter("rate", value=float(o.rate)),
            Parameter("initial_positions", value=traj.positions[0].tolist()),
            Parameter("audit_period", value=0.0),
            Parameter("lockstep_timeout", value=2.0),
            Parameter("publish_clock", value=False),  # nothing here runs on /clock
            # realtime: no falling before the controller's first command (issue 12)
            Parameter("wait_for_command", value=True)])
        self.nodes.insert(0, sim)
        self.sim = sim
        self.modes = record_modes(sim)
        self.recording = record_published_states(sim)
        if self.external is not None:
            sim.sim.external = self.external(sim.model)
            self.normal_force = record_normal_force(sim, self.external(sim.model))
        if self.events:
            self._schedule({"simulator": sim, "id_controller": ctrl, "dynamics_model": dyn})
        self.executor.add_node(sim)

    def _schedule(self, nodes):
        """Apply the :class:`.ParameterEvent` s as the simulator publishes the first state at
        or after each one's time: after the state is recorded, before the plant steps from it
        and (the controller serving its states on the executor) before the controller computes
        its command: plant and controller change at the same instant, on every run. Each node
        gets one SetParametersAtomically call (its parameter callbacks check and apply it, as
        for ``ros2 param set``); a refusal stops the run (RuntimeError with the reason)."""
        from rclpy.parameter import Parameter

        from robot_dynamics.ros.common import stamp_to_seconds

        pending, half = list(self.events), 0.5 / float(self.options.rate)

        def on_state(msg):
            t = stamp_to_seconds(msg.header.stamp)
            while pending and t >= pending[0].t - half:
                event = pending.pop(0)
                params = [Parameter(k, value=v) for k, v in event.parameters.items()]
                for name in event.nodes:
                    result = nodes[name].set_parameters_atomically(params)
                    if not result.successful:
                        raise RuntimeError(f"t={t:.3f} s: {name} refused "
                                           f"{sorted(event.parameters)}: {result.reason}")

        self.sim.state_observers.append(on_state)

    def spin_until(self, t_end, progress=None):
        """Spin until the simulator reached ``t_end``: (wall seconds, recorded arrays, energy
        audit, simulator stats); RuntimeError when it does not get there in time."""
        sim = self.sim
        progress = progress if progress is not None else Progress(t_end)
        wall0 = time.monotonic()
        while sim.sim.t < t_end - 0.5 * sim.sim.dt:  # t is a sum of dt: no extra step
            self.signals.spin_once(self.executor, 0.05)
            progress.update(sim.sim.t)
            if time.monotonic() - wall0 > 60.0 * t_end + 60.0:
                raise RuntimeError(f"demo did not finish (simulated {sim.sim.t:.3f} of "
                                   f"{t_end:.3f} s)")
        progress.close()
        wall = time.monotonic() - wall0
        data = self.recording.arrays()
        if self.normal_force is not None:
            data["normal_force"] = np.asarray(self.normal_force, dtype=float)
        return wall, data, sim.sim.audit, dict(sim.update_stats())

    def _deliver(self, pub, msg, received, timeout=30.0):
        """Publish ``msg`` once ``pub`` has matched its subscriber (the controller's trajectory
        subscription is volatile, as joint_trajectory_controller's: a message sent before
        matching is lost), then spin until ``received()`` says the controller took it."""
        wall0 = time.monotonic()
        while pub.get_subscription_count() == 0:
            self.signals.spin_once(self.executor, 0.02)
            if time.monotonic() - wall0 > timeout:
                raise RuntimeError(f"the controller did not subscribe to {pub.topic_name} in "
                                   f"{timeout:g} s")
        pub.publish(msg)
        while not received():
            self.signals.spin_once(self.executor, 0.02)
            if time.monotonic() - wall0 > timeout:
                raise RuntimeError(f"the controller did not receive the demo trajectory in "
                                   f"{timeout:g} s")

    def close(self):
        for n in self.nodes:
            if self.executor is not None:
                self.executor.remove_node(n)
            n.destroy_node()
        if self.executor is not None:
            self.executor.shutdown()
