#!/usr/bin/env bash
# Builds a scratch workspace in which a REAL `ros2 launch robot_dynamics <file>.launch.py` runs
# with the PyPI ROS 2 wheels (no ROS install): what bench/bench_launch_signals.py needs.
#
#   scripts/build_launch_workspace.sh WS
#   source WS/env.sh && ros2 launch robot_dynamics sim.launch.py rviz:=false
#
# WS is a scratch directory OUTSIDE the clone (e.g. /tmp/launch_ws). Nothing of it is committed.
# PYTHON names the interpreter with the ROS 2 wheels (default python3: Kilted here); for Jazzy,
# PYTHON=~/.cache/robot_dynamics/venv-jazzy/bin/python and a WS of its own.
#
# Sources (the jazzy branches; pure Python except composition_interfaces):
#   WS/src/launch          github.com/ros2/launch          (launch, launch_xml, launch_yaml)
#   WS/src/launch_ros      github.com/ros2/launch_ros      (launch_ros, ros2launch)
#   WS/src/ros2cli         github.com/ros2/ros2cli         (ros2cli, ros2pkg)
#   WS/src/rcl_interfaces  github.com/ros2/rcl_interfaces  (composition_interfaces: launch_ros
#                                                            imports its services)
# A missing one is cloned (`git clone --depth 1 -b jazzy`); put checkouts there yourself (e.g.
# `git --git-dir=<bare clone> archive jazzy | tar -x -C WS/src/launch`) where this machine
# reaches no git host. Never `pip install launch`: that PyPI name is an unrelated project.
#
# What it makes:
#   WS/pylib     the seven Python packages above (pip install --no-deps --target) and those of
#                their PyPI dependencies the interpreter lacks (osrf-pycommon, lark, psutil,
#                pyyaml, packaging), put on PYTHONPATH: the interpreter is used as it is (in a
#                venv made from it the wheels' ros_wheels_bootstrapper, which looks for the ROS
#                libraries under sys.prefix, finds none: rclpy cannot load librcl_action.so)
#   WS/bin/ros2  ros2cli's entry point for that interpreter
#   WS/install   composition_interfaces, built with the rosidl wheels + cmake + g++ (same
#                CMake fix-up as scripts/build_test_interfaces.sh), and an ament-index entry
#                for robot_dynamics: share/robot_dynamics/{package.xml,launch/,config/,urdf/}
#                symlinked file by file to THIS checkout (ros2launch's os.walk does not enter a
#                symlinked folder), lib/robot_dynamics/<node> executables (where launch_ros
#                looks) that import robot_dynamics from THIS checkout, as pip's console scripts
#                do. A `pip install -e` makes neither (no data_files, scripts in bin/).
#   WS/env.sh    PATH, PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH for the above (and the
#                test-only control_msgs when ROBOT_DYNAMICS_CONTROL_MSGS_PREFIX names a prefix
#                of scripts/build_test_interfaces.sh: then id_controller serves its action and
#                spins two executor threads, as with a full ROS install).
# Re-running it is cheap: built parts are kept (delete WS to start over).
set -euo pipefail

WS="${1:?usage: $0 WORKSPACE_DIR (outside the clone, e.g. /tmp/launch_ws)}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$WS/src"
WS="$(cd "$WS" && pwd)"
case "$WS/" in "$ROOT/"*) echo "build_launch_workspace: $WS is inside the clone" >&2; exit 2 ;; esac
PYTHON="${PYTHON:-python3}"

for repo in launch launch_ros ros2cli rcl_interfaces; do
  if [ ! -d "$WS/src/$repo" ]; then
    echo "build_launch_workspace: cloning ros2/$repo (jazzy)" >&2
    git clone -q --depth 1 -b jazzy "https://github.com/ros2/$repo" "$WS/src/$repo"
  fi
done

VPY="$("$PYTHON" -c 'import sys; print(sys.executable)')"
PYLIB="$WS/pylib"
if ! PYTHONPATH="$PYLIB" "$VPY" -c "import ros2launch, launch_ros, launch_xml, launch_yaml, ros2pkg" \
    2>/dev/null; then
  rm -rf "$PYLIB"
  deps=()
  for pair in osrf_pycommon:osrf-pycommon lark:lark psutil:psutil yaml:pyyaml packaging:packaging; do
    "$VPY" -c "import ${pair%%:*}" 2>/dev/null || deps+=("${pair#*:}")
  done
  "$VPY" -m pip install -q --no-deps --target "$PYLIB" ${deps[@]+"${deps[@]}"} \
    "$WS/src/launch/launch" "$WS/src/launch/launch_xml" "$WS/src/launch/launch_yaml" \
    "$WS/src/launch_ros/launch_ros" "$WS/src/launch_ros/ros2launch" \
    "$WS/src/ros2cli/ros2cli" "$WS/src/ros2cli/ros2pkg"
fi
mkdir -p "$WS/bin"
printf '#!%s\nimport sys\nfrom ros2cli.cli import main\nif __name__ == "__main__":\n    sys.exit(main())\n' \
  "$VPY" > "$WS/bin/ros2"
chmod +x "$WS/bin/ros2"

# the interpreter's paths: where the ROS wheels put share/, its include folders
mapfile -t PYINFO < <("$VPY" - <<'EOF'
import os, sys, sysconfig
import numpy
print(next((p for p in (sys.prefix, sys.base_prefix) if os.path.isfile(os.path.join(
    p, "share", "rosidl_default_generators", "cmake", "rosidl_default_generatorsConfig.cmake"))),
    sys.prefix))
print(f"{sys.version_info.major}.{sys.version_info.minor}")
print(sysconfig.get_paths()["include"])
print(numpy.get_include())
EOF
)
PY_PREFIX="${PYINFO[0]}"; PY_VER="${PYINFO[1]}"; PY_INC="${PYINFO[2]}"; NUMPY_INC="${PYINFO[3]}"
PREFIX="$WS/install"
SITE="$PREFIX/lib/python$PY_VER/site-packages"

if [ ! -d "$SITE/composition_interfaces" ]; then
  BUILD="$WS/build/composition_interfaces"
  mkdir -p "$BUILD"
  cp "$ROOT/scripts/cmake/fix_wheel_py_exports.cmake" "$BUILD/"
  GENERATOR="Unix Makefiles"; command -v ninja >/dev/null && GENERATOR="Ninja"
  echo "build_launch_workspace: building composition_interfaces (a few minutes on 2 cores)" >&2
  AMENT_PREFIX_PATH="$PY_PREFIX" cmake -S "$WS/src/rcl_interfaces/composition_interfaces" \
    -B "$BUILD" -G "$GENERATOR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib" -DCMAKE_PREFIX_PATH="$PY_PREFIX" \
    -DPython3_EXECUTABLE="$VPY" -DPYTHON_EXECUTABLE="$VPY" \
    -DRD_PYTHON_INCLUDE_DIR="$PY_INC" -DRD_NUMPY_INCLUDE_DIR="$NUMPY_INC" \
    -DCMAKE_PROJECT_INCLUDE="$BUILD/fix_wheel_py_exports.cmake" -DBUILD_TESTING=OFF \
    > "$BUILD/configure.log" 2>&1 || { tail -40 "$BUILD/configure.log" >&2; exit 1; }
  AMENT_PREFIX_PATH="$PY_PREFIX" cmake --build "$BUILD" --parallel "${BUILD_JOBS:-2}" \
    > "$BUILD/build.log" 2>&1 || { tail -40 "$BUILD/build.log" >&2; exit 1; }
  cmake --install "$BUILD" > "$BUILD/install.log" 2>&1 || { tail -20 "$BUILD/install.log" >&2; exit 1; }
fi

# robot_dynamics in the ament index, pointing at this checkout
mkdir -p "$PREFIX/share/ament_index/resource_index/packages" "$PREFIX/share/robot_dynamics" \
  "$PREFIX/lib/robot_dynamics"
: > "$PREFIX/share/ament_index/resource_index/packages/robot_dynamics"
ln -sfn "$ROOT/package.xml" "$PREFIX/share/robot_dynamics/package.xml"
for dir in launch config urdf; do
  rm -rf "${PREFIX:?}/share/robot_dynamics/$dir"
  mkdir -p "$PREFIX/share/robot_dynamics/$dir"
  for file in "$ROOT/$dir"/*; do ln -s "$file" "$PREFIX/share/robot_dynamics/$dir/"; done
done
for node in simulator id_controller dynamics_model; do  # as pip's console-script wrappers
  printf '#!%s\n# generated by scripts/build_launch_workspace.sh: robot_dynamics from %s\nimport sys\nsys.path.insert(0, "%s")\nfrom robot_dynamics.cli.main import %s_main\nif __name__ == "__main__":\n    sys.exit(%s_main())\n' \
    "$VPY" "$ROOT" "$ROOT" "$node" "$node" > "$PREFIX/lib/robot_dynamics/$node"
  chmod +x "$PREFIX/lib/robot_dynamics/$node"
done

CM="${ROBOT_DYNAMICS_CONTROL_MSGS_PREFIX:-}"
cat > "$WS/env.sh" <<EOF
# generated by scripts/build_launch_workspace.sh ($ROOT, $VPY)
export PATH="$WS/bin\${PATH:+:\$PATH}"
export PYTHONPATH="$PYLIB:$SITE${CM:+:$CM/lib/python$PY_VER/site-packages}\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_LIBRARY_PATH="$PREFIX/lib${CM:+:$CM/lib}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export AMENT_PREFIX_PATH="$PREFIX:${CM:+$CM:}$PYLIB:$PY_PREFIX"
export ROBOT_DYNAMICS_LAUNCH_WS="$WS"
EOF
echo "build_launch_workspace: ready; source $WS/env.sh" >&2
echo "$WS"
