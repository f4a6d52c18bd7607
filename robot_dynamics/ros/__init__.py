"""ROS 2 nodes and the demo composition: thin layers over the ROS-free core (message → numpy →
core → message). The only package, with cli, that imports rclpy."""


def import_rclpy_hint(exc) -> str:
    """What to do when importing rclpy failed with ``exc`` (this module imports no rclpy).
    A shared library not found: the ROS 2 wheels are installed, but their loader set-up looks
    under this Python's prefix only (a venv made with ``--system-site-packages`` over wheels
    installed outside it): the folders holding their libraries, for LD_LIBRARY_PATH. Else:
    install the wheels, or source a ROS 2 setup."""
    import glob
    import os
    import sys

    if ".so" not in str(exc):
        return ("install the ROS 2 wheels (pip install 'robot_dynamics[ros]') or source a "
                "ROS 2 setup")
    folders = [os.path.join(prefix, "lib") for prefix in dict.fromkeys((sys.prefix,
                                                                       sys.base_prefix))
               if glob.glob(os.path.join(prefix, "lib", "librcl*.so*"))]
    for site in sys.path:
        folders += sorted(glob.glob(os.path.join(site, "ros_*.libs")))
    folders = list(dict.fromkeys(folders))
    if not folders:
        return ("the ROS 2 libraries are installed but not found: add their folder to "
                "LD_LIBRARY_PATH, or source a ROS 2 setup")
    return ("the ROS 2 wheels' libraries are installed but not on the loader's path (a venv "
            "made with --system-site-packages?): export LD_LIBRARY_PATH="
            + ":".join(folders) + ":$LD_LIBRARY_PATH, or source a ROS 2 setup")
