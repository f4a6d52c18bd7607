#!/usr/bin/env bash
# The test command of the README: the whole suite, real ROS 2 nodes included.
#   bash scripts/test.sh                      the whole suite (the test folder)
#   bash scripts/test.sh -k fd -x             options only: the whole suite with them
#   bash scripts/test.sh test/test_x.py[::t]  just those files / node ids (test not added)
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

# Do the arguments name what to run (an existing file or folder, or a node id file::test)? An
# option's value (-k test, --ignore test/x.py) is not a target.
targets=()
expect_value=0
for arg in "$@"; do
  if [ "$expect_value" = 1 ]; then expect_value=0; continue; fi
  case "$arg" in
    -k|-m|-p|-o|-c|-W|-n|-r|--deselect|--ignore|--ignore-glob|--rootdir|--confcutdir|--basetemp|\
    --durations|--maxfail|--tb|--junitxml|--junit-xml|--log-level|--timeout|--import-mode|\
    --override-ini|--capture|--log-cli-level|--cov|--cov-report)
      expect_value=1 ;;
    -*) ;;
    *) if [ -e "${arg%%::*}" ]; then targets+=("$arg"); fi ;;
  esac
done
if [ "${#targets[@]}" -gt 0 ]; then
  exec python3 -m pytest -q -ra "$@"
fi
exec python3 -m pytest -q -ra test "$@"
