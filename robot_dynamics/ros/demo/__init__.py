"""``robot-dynamics sim``: the pip-mode composition (what ``sim.launch.py`` starts) in one
process, with a demo that judges itself.

It runs simulator + id_controller + dynamics_model (real rclpy nodes talking over DDS, one
executor), sends a demo trajectory to the controller, reports tracking error, friction
dissipation and the energy audit (units per joint type), optionally plots, and exits non-zero
with a one-line reason when the run is not valid (tracking error above the tolerance, effort
saturation, a joint-limit hit, a stalled or overrun simulation). robot_state_publisher and
rviz2 are not on PyPI, so they are not started here; in a ROS 2 install use
``ros2 launch robot_dynamics sim.launch.py`` for the full composition.

Determinism (lockstep): the trajectory is stamped to start at simulated time 0 and the
simulation does not step until the controller has it, so two runs command the same efforts
and record the same states. The states are recorded as the simulator publishes them (in
process, through the node's ``state_observers``), so none is lost to a slow subscriber.

One module per concern:

* :mod:`.scenario` — the demo: poses, timing, the trajectory and its message;
* :mod:`.scenarios` — ``--scenario``: what happens to the plant during the demo (a payload
  picked up, the controller told or not) and the numbers comparing the runs;
* :mod:`.config` — what the user names (friction, actuators, controller gains, plot path),
  checked before anything loads;
* :mod:`.session` — what a run of nodes in this process needs (also ``robot-dynamics record``):
  signals, spinning, progress, the recording of published states, a private namespace;
* :mod:`.run` — the composition and its executor loop (:class:`~.run.DemoOptions`,
  :func:`~.run.run_demo`);
* :mod:`.verdict` — the numbers of a run, its verdict and the printed report;
* :mod:`.plot` — the figure;
* :mod:`.arguments` — the command line (parser and ``main``).
"""
