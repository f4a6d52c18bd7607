"""The algorithms on a (Model, Data) pair: kinematics, Newton–Euler (rnea), the mass matrix
(crba), the wrench directors, inverse and forward dynamics with friction, the friction solve,
batch and aggregated forms, energy (seed 004 §2). Each file holds one algorithm."""

# the coupling layer registers the algorithms' versions for mimic models (see coupled.py)
from robot_dynamics.algorithm import coupled as _coupled  # noqa: E402,F401
