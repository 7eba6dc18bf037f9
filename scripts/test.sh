#!/usr/bin/env bash
# scripts/test.sh — set up (packages, build) and run every test: lit suites and unit tests,
# all through ctest, whose closing line reports the totals.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
build="${TDSL_BUILD_DIR:-$root/build}"
# Everything is built, tests included (setup.sh builds the default target).
cd "$build"
ctest --output-on-failure -j2 "$@"
