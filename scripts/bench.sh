#!/usr/bin/env bash
# scripts/bench.sh — build the matmul benchmark (bench/, target `bench`) and run it: oneDNN,
# OpenBLAS (SkylakeX kernels with AVX-512, Haswell without) and TDSL's kernels, N = 256 … 2048,
# 1 and 2 threads, in one process; the table at the end has the ratios. Arguments go to
# bench_matmul, e.g.
#   scripts/bench.sh --sizes=1024 --threads=1 --benchmark_min_time=1
# See docs/benchmarks.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TDSL_BUILD_DIR:-$root/build}"
[ -f "$build/build.ninja" ] || bash "$root/scripts/setup.sh" --no-build
[ -f "$build/build.ninja" ] || cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j2 --target bench
# SkylakeX's kernels need AVX-512; on an AVX2-only CPU they stop with an illegal instruction.
if grep -q avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; else export OPENBLAS_CORETYPE=Haswell; fi
exec "$build/bin/bench_matmul" "$@"
