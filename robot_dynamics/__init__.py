"""robot_dynamics — manipulator dynamics with reaction-dependent joint friction (seed 004).

The core (this package minus ``nodes`` and ``cli``) imports no ROS. See docs/ARCHITECTURE.md.
"""
from .crba import bias_forces, coriolis_torques, gravity_torques, mass_matrix
from .directors import wrench_directors
from .errors import InputError, MismatchError, ModelError
from .forward_dynamics import forward_dynamics
from .friction import FrictionModel, friction_from_config, register_law
from .inverse_dynamics import inverse_dynamics
from .kinematics import forward_kinematics, frame_placement
from .model import Data, Model, build_model
from .rnea import joint_wrenches, rnea
from .simulation import SimulationError, Simulator
from .stiction import FrictionSolveError, FrictionSolveReport
from .urdf import load_urdf, parse_urdf

__version__ = "0.1.0"
