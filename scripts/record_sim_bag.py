#!/usr/bin/env python3
"""Record a friction-identification run from the simulator node into a ROS 2 bag: the source
tree's way to run ``robot-dynamics record`` (robot_dynamics/identification/record.py), e.g.

    python3 scripts/record_sim_bag.py --robot arm7 --duration 20 --out run_bag
"""
import sys

from robot_dynamics.ros.record import main

if __name__ == "__main__":
    sys.exit(main())
