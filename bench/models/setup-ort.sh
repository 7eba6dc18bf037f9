#!/usr/bin/env bash
# bench/models/setup-ort.sh — installs ONNX Runtime's CPU build for the benchmark's peer:
# npm's onnxruntime-node (pinned below), which ships libonnxruntime.so and its Node.js binding,
# into BUILD/bench-ort (default build/bench-ort). The package's install step, which fetches
# the CUDA provider from NuGet, is skipped (ONNXRUNTIME_NODE_INSTALL=skip): the CPU library is
# in the npm package itself. Idempotent. Not part of the test run.
# Usage: bench/models/setup-ort.sh [BUILD]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
version=1.30.0
prefix="$build/bench-ort"
package="$prefix/node_modules/onnxruntime-node/package.json"
if [ -f "$package" ] && grep -q "\"version\": \"$version\"" "$package"; then
  exit 0
fi
command -v npm > /dev/null || { echo "setup-ort: npm is missing (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name": "tdsl-bench-ort", "private": true}' > "$prefix/package.json"
ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$prefix" --no-audit --no-fund \
  "onnxruntime-node@$version" > "$prefix/npm.log" 2>&1 ||
  { cat "$prefix/npm.log" >&2; exit 1; }
echo "setup-ort: onnxruntime-node $version in $prefix"
