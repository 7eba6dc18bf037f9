#!/usr/bin/env bash
# scripts/check-format.sh — every tracked C/C++ file is clang-format-19 clean (.clang-format: LLVM
# style, 100 columns) and opens with the one banner style (scripts/banners.py). ctest runs it
# as `format`; `scripts/check-format.sh --fix` rewrites the files instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' '*.cu')
if [ "${1:-}" = "--fix" ]; then
  python3 scripts/banners.py "${files[@]}"
  clang-format-19 -i "${files[@]}"
  exit 0
fi
status=0
python3 scripts/banners.py --check "${files[@]}" || status=1
clang-format-19 --dry-run --Werror "${files[@]}" || status=1
if [ $status -ne 0 ]; then
  echo "check-format: run scripts/check-format.sh --fix" >&2
fi
exit $status
