#!/usr/bin/env bash
# scripts/demo.sh — set up (packages, build), then run the compiler on the bundled example.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
build="${TDSL_BUILD_DIR:-$root/build}"
echo "== tdslc examples/mm_relu.tdsl --emit=ast"
"$build/bin/tdslc" "$root/examples/mm_relu.tdsl" --emit=ast
