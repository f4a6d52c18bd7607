#!/usr/bin/env bash
# The test command of the README: the whole suite, real ROS 2 nodes included.
set -euo pipefail
cd "$(dirname "$0")/.."
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
exec python3 -m pytest -q -ra test "$@"
