#!/usr/bin/env bash
# scripts/sanitize.sh — the compiler built by clang-19 with ASan + UBSan (LSan on) in build-fuzz/
# (CMake preset `asan`, CMakePresets.json: the same instrumented build as the libFuzzer harnesses
# of scripts/fuzz.sh, so one build serves both), then every test run under it through ctest: each lit suite
# and the GoogleTest cases (not `format`, which runs no compiler code, nor the benchmark smoke).
# Sanitizer reports go to files (log_path), so that a report from a test that expects a non-zero
# exit (`not tdslc …`) is not lost: the run fails when any report was written, and prints them.
# Usage: scripts/sanitize.sh [ctest arguments, e.g. -R lit.Schedule]
# docs/testing.md has the figures (how long it takes).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/setup.sh" --no-build
start=$(date +%s)
# libFuzzer and the sanitizer runtimes of clang-19 (the preset builds the harnesses too).
if ! dpkg-query -W -f='${Status}\n' libclang-rt-19-dev 2>/dev/null | grep -q 'ok installed'; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends libclang-rt-19-dev
fi
[ -f build-fuzz/build.ninja ] || cmake --preset asan
nice cmake --build --preset asan
built=$(date +%s)

logs="$root/build-fuzz/sanitizer-logs"
rm -rf "$logs" && mkdir -p "$logs"
supp="$root/scripts/sanitizers"
# halt_on_error: the first report stops the process (exit status 1 is what a compile error
# gives too, hence the log files). detect_leaks: LSan, at exit of every process.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:log_path=$logs/asan:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan:suppressions=$supp/ubsan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
status=0
(cd build-fuzz && nice ctest --output-on-failure -j2 -E '^(format|bench\.smoke)$' "$@") || status=$?
end=$(date +%s)

reports=$(find "$logs" -type f | sort)
echo "sanitize: build $((built - start)) s, tests $((end - built)) s"
if [ -n "$reports" ]; then
  echo "sanitize: $(echo "$reports" | wc -l) sanitizer report(s):"
  for f in $reports; do
    echo "=== $f"
    cat "$f"
  done
  exit 1
fi
echo "sanitize: no sanitizer report"
exit $status
