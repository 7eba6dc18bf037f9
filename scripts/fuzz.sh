#!/usr/bin/env bash
# scripts/fuzz.sh — runs one libFuzzer harness (docs/testing.md) for a given time.
#   parse     tdsl-fuzz-parse: any text through parse, checks, IR and schedules; print round trip
#   schedule  tdsl-fuzz-schedule: fuzzer-chosen schedule primitives on small functions; results
#             compared with the unscheduled function in the interpreter
#   npy       tdsl-fuzz-npy: any bytes as a .npy file
# Builds build-fuzz/ (preset `asan`: clang-19, -DTDSL_FUZZ=ON: coverage + ASan + UBSan) when needed, makes the
# seed corpus (scripts/fuzz-corpus.sh) when missing, then fuzzes under `nice -n 19`. New inputs
# go to fuzz-out/work/<harness>/, crashes, time-outs and OOMs to fuzz-out/artifacts/<harness>/.
# The time-out per input is 120 s of wall time: a seed that imports the standard library costs
# about 1 CPU s instrumented, which under nice -n 19 on a loaded machine passed 20 s.
# Usage: scripts/fuzz.sh HARNESS SECONDS [libFuzzer options]
# FUZZ_KEEP_GOING=1 fuzzes in fork mode and goes on after a finding (for long campaigns);
# FUZZ_JOBS=N (with it) runs N fuzzing processes side by side (default 1).
# Prints the executions, exec/s and findings at the end; exit status 1 when there are findings.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh parse|schedule|npy SECONDS [libFuzzer options]" >&2
  exit 2
fi
harness="$1" seconds="$2"
shift 2
case "$harness" in parse | schedule | npy) ;; *)
  echo "fuzz: unknown harness '$harness'; expected parse, schedule or npy" >&2
  exit 2
  ;;
esac
# libFuzzer and the sanitizer runtimes of clang-19.
if ! dpkg-query -W -f='${Status}\n' libclang-rt-19-dev 2>/dev/null | grep -q 'ok installed'; then
  "$root/scripts/setup.sh" --no-build
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends libclang-rt-19-dev
fi
# The CMake preset `asan` (build-fuzz/, shared with scripts/sanitize.sh), or a folder of your own.
build="${TDSL_FUZZ_BUILD_DIR:-$root/build-fuzz}"
if [ ! -f "$build/build.ninja" ]; then
  if [ -z "${TDSL_FUZZ_BUILD_DIR:-}" ]; then
    (cd "$root" && cmake --preset asan)
  else
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DTDSL_FUZZ=ON
  fi
fi
nice cmake --build "$build" -j2 --target "tdsl-fuzz-$harness" >/dev/null
out="$root/fuzz-out"
[ -d "$out/corpus/$harness" ] || "$root/scripts/fuzz-corpus.sh" "$out/corpus"
mkdir -p "$out/work/$harness" "$out/artifacts/$harness"
log="$out/$harness.log"
opts=(-max_total_time="$seconds" -timeout=120 -rss_limit_mb=2560 -print_final_stats=1
  -artifact_prefix="$out/artifacts/$harness/")
[ "$harness" = parse ] && opts+=(-dict="$root/test/fuzzers/tdsl.dict" -max_len=4096)
[ "$harness" = npy ] && opts+=(-max_len=1024)
[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && opts+=(-fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
# malloc_context_size=2: allocation stacks of two frames in a report (the default 30 costs about
# a fifth of the harnesses' time in the stack depot).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:malloc_context_size=2}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
start=$(date +%s)
nice -n 19 "$build/bin/tdsl-fuzz-$harness" "${opts[@]}" "$@" "$out/work/$harness" \
  "$out/corpus/$harness" >"$log" 2>&1 || status=$?
# The time it ran (less than SECONDS when interrupted, e.g. by Ctrl-C or a finding).
elapsed=$(($(date +%s) - start))
# The figures: the last status line (#N ... exec/s: R) or the final stats.
# In fork mode (FUZZ_KEEP_GOING=1) the final stats are the parent's, which runs nothing itself: the
# larger of the two counts.
execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
lines=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
[ "${lines:-0}" -le "${execs:-0}" ] || execs=$lines
rate=$(grep -o 'exec/s:\? [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
# slow-unit-* files are inputs over -report_slow_units (10 s), kept for a look, not findings.
findings=$(find "$out/artifacts/$harness" -type f ! -name 'slow-unit-*' | wc -l)
echo "fuzz: $harness: ${execs:-?} executions in ${elapsed} s (${rate:-?} exec/s), $findings finding(s) in $out/artifacts/$harness (log: $log, exit $status)"
[ "$findings" -eq 0 ] && [ "$status" -eq 0 ]
