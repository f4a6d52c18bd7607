#!/usr/bin/env bash
# The test command of the README: the whole suite, real ROS 2 nodes included (or the files and
# tests named: bash scripts/test.sh test/test_interfaces.py; other arguments go to pytest).
# First builds (or reuses from the cache) the test-only control_msgs that the FollowJointTrajectory
# tests need (scripts/build_test_interfaces.sh). Without cmake or a compiler those tests skip and
# say why; under CI (CI=true) a failed build fails the run, since CI must run them.
set -euo pipefail
cd "$(dirname "$0")/.."
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

errlog="$(mktemp)"
trap 'rm -f "$errlog"' EXIT
start=$(date +%s)
if prefix="$(bash scripts/build_test_interfaces.sh 2> >(tee "$errlog" >&2))"; then
  echo "test.sh: test interfaces ready in $(( $(date +%s) - start )) s: $prefix"
  # shellcheck disable=SC1091
  source "$prefix/env.sh"
else
  rc=$?
  sleep 0.2  # let tee finish writing
  reason="$(tail -n 1 "$errlog")"
  if [ "${CI:-}" = "true" ]; then
    echo "test.sh: CI needs the test interfaces, and their build failed (exit $rc): $reason" >&2
    exit "$rc"
  fi
  export ROBOT_DYNAMICS_INTERFACES_SKIP="control_msgs not built: $reason"
  echo "test.sh: $ROBOT_DYNAMICS_INTERFACES_SKIP; the FollowJointTrajectory tests will skip" >&2
fi

# `bash scripts/test.sh test/test_x.py -k name` runs that file; without a path, the whole suite.
paths=(test)
for arg in "$@"; do
  if [ -e "${arg%%::*}" ]; then paths=(); break; fi
done
exec python3 -m pytest -q -ra "${paths[@]}" "$@"
