#!/usr/bin/env bash
# scripts/demo.sh — set up (packages, build), then compile the bundled example and run it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
build="${TDSL_BUILD_DIR:-$root/build}"
echo "== tdslc examples/mm_relu.tdsl --emit=ir   (the schedule of spec §1 applied)"
"$build/bin/tdslc" "$root/examples/mm_relu.tdsl" --emit=ir
echo "== tdsl-run examples/mm_relu.tdsl --func mm_relu --interpret --check"
"$build/bin/tdsl-run" "$root/examples/mm_relu.tdsl" --func mm_relu --interpret --check
