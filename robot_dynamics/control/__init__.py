"""Control on top of the algorithms: trajectories, their execution (tolerances, goals), friction
compensation and the controller laws (PD, computed torque) shared by the nodes and the rollouts."""
