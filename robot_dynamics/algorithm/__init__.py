"""The algorithms on a (Model, Data) pair: kinematics, Newton–Euler (rnea), the mass matrix
(crba), the wrench directors, inverse and forward dynamics with friction, the friction solve,
batch and aggregated forms, energy (seed 004 §2). Each file holds one algorithm."""

# the coupling layer registers the algorithms' versions for mimic models (see coupled.py):
# imported for that effect alone (import_module: no name that pyflakes would call unused)
import importlib as _importlib

_importlib.import_module("robot_dynamics.algorithm.coupled")
