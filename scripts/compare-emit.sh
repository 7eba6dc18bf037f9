#!/usr/bin/env bash
# scripts/compare-emit.sh — what the compiler prints for the whole corpus, to compare two builds.
#
#   scripts/compare-emit.sh snapshot OUTDIR [BUILD]   write every output of BUILD's tdslc to OUTDIR
#   scripts/compare-emit.sh diff OLD NEW              compare two snapshots; exit 1 if any differs
#
# The corpus is every .tdsl of test/, examples/, bench/ and stdlib/. Each file is compiled with
# --emit=cpp, header, llvm (-O2 and -O0), lowered and ir for the CPU target, and with
# --emit=cuda for the cuda target when it has a `for cuda` schedule; stdout, stderr and the exit
# status of each run are kept, so refactorings can be shown to change nothing (issue 12).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"
case "$mode" in
snapshot)
  out="${2:?usage: compare-emit.sh snapshot OUTDIR [BUILD]}"
  build="$(cd "${3:-$root/build}" && pwd)"
  tdslc="$build/bin/tdslc"
  mkdir -p "$out"
  cd "$root"
  n=0
  while IFS= read -r f; do
    key="${f//\//__}"
    emits=(cpp header llvm llvm-O0 lowered ir)
    grep -q 'for cuda' "$f" && emits+=(cuda)
    for e in "${emits[@]}"; do
      args=(--mcpu=x86-64-v3)
      case "$e" in
      llvm-O0) args+=(--emit=llvm -O0) ;;
      cuda) args+=(--emit=cuda --target=cuda) ;;
      *) args+=(--emit="$e") ;;
      esac
      # Files that need -I of their folder's Inputs get it; nothing else is guessed.
      (cd "$(dirname "$f")" && timeout 60 "$tdslc" "$(basename "$f")" "${args[@]}" -I Inputs \
        >"$out/$key.$e.out" 2>"$out/$key.$e.err"; echo "rc=$?" >>"$out/$key.$e.err")
      n=$((n + 1))
    done
  done < <(git ls-files 'test/*.tdsl' 'examples/*.tdsl' 'bench/*.tdsl' 'stdlib/*.tdsl' | sort)
  echo "compare-emit: $n outputs written to $out"
  ;;
diff)
  old="${2:?usage: compare-emit.sh diff OLD NEW}"
  new="${3:?usage: compare-emit.sh diff OLD NEW}"
  total=$(ls "$old" | wc -l)
  changed=$(diff -rq "$old" "$new" | wc -l)
  diff -rq "$old" "$new" | head -50
  echo "compare-emit: $((total - changed)) of $total files identical, $changed differ"
  [ "$changed" -eq 0 ]
  ;;
*)
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
