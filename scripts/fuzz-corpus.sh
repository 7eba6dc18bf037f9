#!/usr/bin/env bash
# scripts/fuzz-corpus.sh — seed corpora of the libFuzzer harnesses (docs/testing.md), made from
# the tree, under fuzz-out/corpus/<harness>/ (ignored by git; nothing large is committed):
#   parse     every .tdsl file of test/, examples/ and stdlib/
#   npy       every .npy file of test/ (and of build/test when the suites have run), plus one
#             small file per dtype, C and Fortran order, versions 1.0/2.0/3.0 (NumPy)
#   schedule  a few short byte strings (its input is a stream of choices)
# Usage: scripts/fuzz-corpus.sh [OUT_DIR]   (default fuzz-out/corpus; re-run to refresh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/fuzz-out/corpus}"
mkdir -p "$out/parse" "$out/npy" "$out/schedule"
cd "$root"
# Flat names: the path with '/' as '__'.
find test examples stdlib -type f -name '*.tdsl' -size -64k | while read -r f; do
  cp "$f" "$out/parse/${f//\//__}"
done
# (sed, not head: head would stop find with SIGPIPE, which pipefail turns into a failure)
{ find test -type f -name '*.npy' -size -64k; [ -d build/test ] && find build/test -type f -name '*.npy' -size -64k | sed -n 1,200p; } |
  while read -r f; do cp "$f" "$out/npy/${f//\//__}"; done
/usr/bin/python3 - "$out/npy" <<'PY'
import sys, numpy as np, io
out = sys.argv[1]
for dt in ["?", "i1", "<i2", "<i4", "<i8", "u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"]:
    for shape in [(), (3,), (2, 3)]:
        a = (np.arange(int(np.prod(shape)) if shape else 1) % 3).astype(dt).reshape(shape)
        name = dt.replace("<", "le").replace("?", "b1") + "_" + "x".join(map(str, shape))
        np.save(f"{out}/gen_{name}.npy", a)
        if len(shape) == 2:
            np.save(f"{out}/gen_{name}_fortran.npy", np.asfortranarray(a))
for version in [(1, 0), (2, 0), (3, 0)]:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ones((2, 2), "<f4"), version=version)
    open(f"{out}/gen_version_{version[0]}.npy", "wb").write(buf.getvalue())
open(f"{out}/gen_bigendian.npy", "wb").write(
    (lambda b: (np.lib.format.write_array(b, np.ones(3, ">f4")), b.getvalue())[1])(io.BytesIO()))
PY
/usr/bin/python3 - "$out/schedule" <<'PY'
import sys, random
random.seed(13)
for i in range(1, 9):
    open(f"{sys.argv[1]}/seed{i}", "wb").write(bytes(random.randrange(256) for _ in range(8 * i)))
PY
echo "fuzz-corpus: $(ls "$out/parse" | wc -l) parse, $(ls "$out/npy" | wc -l) npy, $(ls "$out/schedule" | wc -l) schedule seeds in $out"
