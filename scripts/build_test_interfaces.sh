#!/usr/bin/env bash
# Builds the test-only interface package test/interfaces/control_msgs (FollowJointTrajectory and
# the tolerance messages, wire-identical to upstream control_msgs) with the PyPI rosidl/ament_cmake
# wheels and the system's cmake and C/C++ compilers.
#
# Two variants of control_msgs' FollowJointTrajectory, as upstream has them:
#   kilted  test/interfaces/control_msgs as it is (feedback with `index`/`multi_dof_index`,
#           control_msgs >= 6.3: Kilted, Rolling)
#   jazzy   the same with test/interfaces/variants/jazzy/ laid over it (no `index` fields:
#           control_msgs' jazzy branch, for ROS 2 Jazzy and older)
# chosen by ROBOT_DYNAMICS_CONTROL_MSGS=kilted|jazzy, else by the rclpy this interpreter has
# (major version < 9: jazzy; distribution ros-rclpy or rclpy), else by ROS_DISTRO, else kilted.
#
# Output: an install prefix in a cache OUTSIDE the clone, keyed by a hash of the inputs,
#   ${ROBOT_DYNAMICS_CACHE:-$HOME/.cache/robot_dynamics}/interfaces/<hash>/install
# with <prefix>/env.sh (exports PYTHONPATH, LD_LIBRARY_PATH, AMENT_PREFIX_PATH), the variant's
# name in <prefix>/share/control_msgs/variant, and symlinks
#   <cache>/interfaces/current-<variant> -> <prefix>   (what test/conftest.py picks for a bare pytest)
#   <cache>/interfaces/current -> <prefix>             (the last one built or reused)
# A prefix that already exists (built before with the same inputs) is reused: no build.
# Progress goes to stderr; the install prefix alone is printed on stdout (for scripts/test.sh).
#
# Exit codes: 0 built or reused; 3 a build tool (cmake, a C or C++ compiler, make/ninja) or a
# generator wheel is missing (the reason is printed on the last line of stderr); anything else:
# the build failed.
#
# Known trap and its fix-up: the PyPI wheels' share/<pkg>/cmake/
# export_<pkg>__rosidl_generator_pyExport.cmake files name the wheel builder's Python and NumPy
# include directories (/opt/python/...), which do not exist here, and CMake refuses imported
# targets with missing include directories. site-packages is never edited: instead
# scripts/cmake/fix_wheel_py_exports.cmake (copied into the build directory, passed with
# CMAKE_PROJECT_INCLUDE) defers, to the end of configuration, a pass that resets
# INTERFACE_INCLUDE_DIRECTORIES of every imported *__rosidl_generator_py target to this
# interpreter's Python and NumPy include directories.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/test/interfaces/control_msgs"
VARIANTS="$ROOT/test/interfaces/variants"
CACHE_BASE="${ROBOT_DYNAMICS_CACHE:-$HOME/.cache/robot_dynamics}/interfaces"
PYTHON="${PYTHON:-python3}"

missing() { echo "build_test_interfaces: $*" >&2; exit 3; }

for tool in cmake c++ cc; do
  command -v "$tool" >/dev/null 2>&1 || missing "'$tool' not found (install Debian's cmake and g++)"
done
if command -v ninja >/dev/null 2>&1; then GENERATOR="Ninja"
elif command -v make >/dev/null 2>&1; then GENERATOR="Unix Makefiles"
else missing "neither ninja nor make found"; fi

# This interpreter's paths (its sys.prefix is where the ROS wheels put share/, include/, lib/;
# in a venv made with --system-site-packages they may be the base interpreter's).
mapfile -t PYINFO < <("$PYTHON" - <<'EOF'
import os, sys, sysconfig
print(sys.executable)
print(next((p for p in (sys.prefix, sys.base_prefix) if os.path.isfile(os.path.join(
    p, "share", "rosidl_default_generators", "cmake", "rosidl_default_generatorsConfig.cmake"))),
    sys.prefix))
print(f"{sys.version_info.major}.{sys.version_info.minor}")
print(sysconfig.get_paths()["include"])
try:
    import numpy
    print(numpy.get_include())
except ImportError:
    print("")
missing = []
for module in ("catkin_pkg", "em", "lark"):  # used by ament_cmake and the rosidl generators
    try:
        __import__(module)
    except ImportError:
        missing.append(module)
print(" ".join(missing))
# versions of the wheels whose files go into the build (part of the cache key)
from importlib import metadata
import re
wanted = re.compile(r"ros[-_](rosidl|ament|python[-_]cmake|builtin|std[-_]msgs|geometry|trajectory)")
print(" ".join(sorted(f"{(d.metadata['Name'] or '').lower()}=={d.version}"
                      for d in metadata.distributions()
                      if wanted.match((d.metadata["Name"] or "").lower()))))
# the control_msgs variant (see the top of this file)
variant = os.environ.get("ROBOT_DYNAMICS_CONTROL_MSGS", "")
if not variant:
    for dist in ("ros-rclpy", "rclpy"):
        try:
            major = int(metadata.version(dist).split(".")[0])
        except (metadata.PackageNotFoundError, ValueError):
            continue
        variant = "jazzy" if major < 9 else "kilted"
        break
if not variant:
    distro = os.environ.get("ROS_DISTRO", "")
    variant = "jazzy" if distro in ("humble", "iron", "jazzy") else "kilted"
print(variant)
EOF
)
PY_EXE="${PYINFO[0]}"; PY_PREFIX="${PYINFO[1]}"; PY_VER="${PYINFO[2]}"
PY_INC="${PYINFO[3]}"; NUMPY_INC="${PYINFO[4]}"; VARIANT="${PYINFO[7]}"
case "$VARIANT" in
  kilted) OVERLAY="" ;;
  jazzy) OVERLAY="$VARIANTS/jazzy" ;;
  *) echo "build_test_interfaces: unknown control_msgs variant '$VARIANT' (kilted or jazzy)" >&2; exit 2 ;;
esac
[ -n "$NUMPY_INC" ] || missing "numpy is not importable by $PY_EXE"
[ -z "${PYINFO[5]:-}" ] || missing "Python modules missing for $PY_EXE: ${PYINFO[5]} (pip install '.[test]'; on Jazzy '.[test-jazzy]')"
[ -f "$PY_INC/Python.h" ] || missing "Python headers not found ($PY_INC/Python.h)"
for pkg in rosidl_default_generators ament_cmake trajectory_msgs; do
  [ -f "$PY_PREFIX/share/$pkg/cmake/${pkg}Config.cmake" ] \
    || missing "$pkg not found under $PY_PREFIX/share (pip install '.[test]'; on Jazzy '.[test-jazzy]')"
done

# Cache key: the variant and its sources (the package, then the overlay), this script, the
# interpreter, the ROS wheel versions.
KEY="$(
  {
    echo "variant $VARIANT"
    (cd "$SRC" && find . -type f | LC_ALL=C sort | xargs sha256sum)
    if [ -n "$OVERLAY" ]; then (cd "$OVERLAY" && find . -type f | LC_ALL=C sort | xargs sha256sum); fi
    sha256sum < "${BASH_SOURCE[0]}"
    sha256sum < "$ROOT/scripts/cmake/fix_wheel_py_exports.cmake"
    echo "$PY_EXE $PY_VER"
    echo "${PYINFO[6]:-}"
  } | sha256sum | cut -c1-16
)"
DEST="$CACHE_BASE/$KEY"
PREFIX="$DEST/install"

if [ -f "$PREFIX/env.sh" ]; then
  echo "build_test_interfaces: reusing $PREFIX" >&2
else
  mkdir -p "$CACHE_BASE"
  WORK="$(mktemp -d "$DEST.tmp.XXXXXX")"  # private to this run: concurrent builds do not collide
  trap 'rm -rf "$WORK"' EXIT
  BUILD="$WORK/build"
  STAGE="$WORK/install"
  mkdir -p "$BUILD"
  # the variant's sources: the package, with the overlay's files replacing its own
  cp -r "$SRC" "$WORK/src"
  if [ -n "$OVERLAY" ]; then cp -r "$OVERLAY/." "$WORK/src/"; fi
  # The fix-up described at the top of this file.
  cp "$ROOT/scripts/cmake/fix_wheel_py_exports.cmake" "$BUILD/"
  echo "build_test_interfaces: building $SRC ($VARIANT variant) into $PREFIX (about 2 minutes on 2 cores)" >&2
  start=$(date +%s)
  # The final prefix is $PREFIX (the RPATH points there); the tree is built and staged in $WORK
  # and moved into place only when complete, so an interrupted build is never reused.
  # The generators find the available type supports through the ament index of the wheels' prefix.
  AMENT_PREFIX_PATH="$PY_PREFIX" cmake -S "$WORK/src" -B "$BUILD" -G "$GENERATOR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_INSTALL_RPATH="$PREFIX/lib" \
    -DCMAKE_PREFIX_PATH="$PY_PREFIX" \
    -DPython3_EXECUTABLE="$PY_EXE" \
    -DPYTHON_EXECUTABLE="$PY_EXE" \
    -DRD_PYTHON_INCLUDE_DIR="$PY_INC" \
    -DRD_NUMPY_INCLUDE_DIR="$NUMPY_INC" \
    -DCMAKE_PROJECT_INCLUDE="$BUILD/fix_wheel_py_exports.cmake" \
    -DBUILD_TESTING=OFF > "$BUILD/configure.log" 2>&1 \
    || { tail -40 "$BUILD/configure.log" >&2; echo "build_test_interfaces: configure failed" >&2; exit 1; }
  AMENT_PREFIX_PATH="$PY_PREFIX" cmake --build "$BUILD" --parallel "${BUILD_JOBS:-2}" > "$BUILD/build.log" 2>&1 \
    || { tail -40 "$BUILD/build.log" >&2; echo "build_test_interfaces: build failed" >&2; exit 1; }
  DESTDIR="$WORK/destdir" cmake --install "$BUILD" > "$BUILD/install.log" 2>&1 \
    || { tail -20 "$BUILD/install.log" >&2; echo "build_test_interfaces: install failed" >&2; exit 1; }
  mv "$WORK/destdir$PREFIX" "$STAGE"
  echo "$VARIANT" > "$STAGE/share/control_msgs/variant"
  SITE="$PREFIX/lib/python$PY_VER/site-packages"
  cat > "$STAGE/env.sh" <<EOF
# Generated by scripts/build_test_interfaces.sh: puts the test-only control_msgs on the path.
export PYTHONPATH="$SITE\${PYTHONPATH:+:\$PYTHONPATH}"
export LD_LIBRARY_PATH="$PREFIX/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export AMENT_PREFIX_PATH="$PREFIX:\${AMENT_PREFIX_PATH:-$PY_PREFIX}"
EOF
  mkdir -p "$DEST/logs" && cp "$BUILD"/*.log "$DEST/logs/"
  if [ ! -f "$PREFIX/env.sh" ]; then  # else a concurrent run with the same inputs finished first
    rm -rf "$PREFIX"
    mv "$STAGE" "$PREFIX"
  fi
  echo "build_test_interfaces: built in $(( $(date +%s) - start )) s" >&2
fi

# Point "current-<variant>" and "current" at this prefix (atomically: a new link renamed over the
# old one; the temporary name is private to this run).
for link in "current-$VARIANT" current; do
  ln -sfn "$PREFIX" "$CACHE_BASE/$link.new.$$"
  mv -T "$CACHE_BASE/$link.new.$$" "$CACHE_BASE/$link"
done
echo "build_test_interfaces: $CACHE_BASE/current-$VARIANT -> $PREFIX ($VARIANT control_msgs)" >&2
echo "$PREFIX"
