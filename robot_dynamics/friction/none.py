"""No friction: the friction map that is identically zero (seed 004 §2.5)."""
from robot_dynamics.friction.base import FrictionLaw


class NoFriction(FrictionLaw):
    name = "none"

    def magnitude(self, wrench, axis, prismatic, q, qd, direction=0.0) -> float:
        return 0.0

    def to_config(self) -> dict:
        return {"model": "none"}
