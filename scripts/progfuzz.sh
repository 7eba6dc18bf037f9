#!/usr/bin/env bash
# scripts/progfuzz.sh — builds tdsl-progfuzz (the random program generator, docs/testing.md)
# in build/ if needed and runs it: random well-typed functions with random schedules, each run
# through the interpreter, the LLVM JIT, the LLVM object route and the C++ route.
# Usage: scripts/progfuzz.sh [--seed S] [--count N] [--jobs J] [--batch B] [--seconds T]
#                            [--repro-dir DIR] [--routes interp,jit,obj,cpp]
# Defaults: --count 1000, --jobs 2, --repro-dir fuzz-out/progfuzz. Reproducers of findings go
# to the repro dir; `build/bin/tdsl-progfuzz --replay FILE` re-runs one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TDSL_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  "$root/scripts/setup.sh" --no-build
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2 --target tdsl-progfuzz >/dev/null
args=("$@")
has() { for a in "${args[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }
has --count || args+=(--count 1000)
has --jobs || args+=(--jobs 2)
has --repro-dir || args+=(--repro-dir "$root/fuzz-out/progfuzz")
# The optimizer's "loop not vectorized" remarks (issue 13) are noise here.
exec nice -n 19 "$build/bin/tdsl-progfuzz" "${args[@]}" 2> >(grep -v 'loop not vectorized' >&2)
