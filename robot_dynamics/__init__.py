"""robot_dynamics — manipulator dynamics with reaction-dependent joint friction (seed 004).

The core (this package minus ``nodes`` and ``cli``) imports no ROS. See docs/ARCHITECTURE.md.
"""
from .crba import bias_forces, coriolis_torques, gravity_torques, mass_matrix
from .errors import InputError, ModelError
from .kinematics import forward_kinematics, frame_placement
from .model import Data, Model, build_model
from .rnea import joint_wrenches, rnea
from .urdf import load_urdf, parse_urdf

__version__ = "0.1.0"
