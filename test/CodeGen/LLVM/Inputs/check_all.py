"""`check_all.py TDSL_RUN FILE.tdsl...`: runs `tdsl-run FILE --func F --check` (the scheduled
func compiled by the LLVM backend in the JIT, on seeded random inputs, against the
unscheduled func run by the reference interpreter) for every func F of every file, and prints
`OK file:F` or `FAIL file:F` with tdsl-run's output. Funcs that cannot run on random inputs
are listed in SKIP with the reason and reported as `SKIP file:F: reason`. Ends with
`checked N funcs, skipped M, failed K`; exits 1 if any failed. Files named *_errors.tdsl (error
tests) are passed over."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

# (file name, func) -> why it is not run. Empty today: every func of the files that
# jit-all.test passes runs on random inputs (a gather whose indices come from an input would
# be listed here).
SKIP = {
    # Symbolic shapes that random inputs cannot give: jit-run.tdsl runs `tail` on a 37-element
    # input (partitioned, vectorized main loop and scalar tail).
    ("passes.tdsl", "tail"): "symbolic shape (run by jit-run.tdsl with a given input)",
    ("passes.tdsl", "gather"): "reads out of bounds by design (the --bounds-check test)",
    ("decompose_reduction_empty.tdsl", "sym"): "symbolic shape (the test gives K = 0 and K = 3)",
}

# Funcs with symbolic shapes: the shapes of their inputs (random values, seed 0), given as
# .npy files so that the rest follows.
SHAPES = {
    ("split.tdsl", "g"): {"A": (29,)},  # N = 29: not a multiple of the split factor 8
    ("split.tdsl", "h"): {"A": (21,)},  # 32 padded columns: split by 8 exactly, by 32 with a where
    # Tails of rows (10 = 2 * 4 + 2) and columns (13 = 8 + 5) in the parallel loop's tail.
    ("partition-parallel-tail.tdsl", "f"): {"A": (10, 13)},
    ("reverse_compute_at_guard.tdsl", "sym"): {"A": (8, 5)},  # K = 5
    ("partition-select.tdsl", "pad3"): {"A": (13,)},  # N = 13: head, steady state and tail
    ("reverse_compute_at.tdsl", "byOne"): {"A": (7, 3)},  # a split by 1 of H = 7
    # Tails of 5 and 11 lanes: pieces of 4 and 1, and of 8, 2 and 1.
    ("vectorize-leading-lanes.tdsl", "scale"): {"A": (21,)},
    ("vectorize-leading-lanes.tdsl", "mm"): {"X": (3, 7), "W": (7, 27)},
    ("vectorize-leading-lanes.tdsl", "shift"): {"A": (13,)},
    ("flatten-divmod.tdsl", "symbolic"): {"A": (5, 7)},  # the fused index over M * N = 35
}

tool, files = sys.argv[1], sys.argv[2:]
tmp = tempfile.mkdtemp()
checked = skipped = failed = 0
for path in files:
    name = os.path.basename(path)
    if name.endswith("_errors.tdsl"):  # schedules that fail on purpose: nothing to run
        continue
    source = open(path).read()
    for func in re.findall(r"^func\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(", source, re.M):
        key = (name, func)
        if key in SKIP:
            print("SKIP %s:%s: %s" % (name, func, SKIP[key]))
            skipped += 1
            continue
        args = [tool, path, "--func", func, "--check"]
        for param, shape in SHAPES.get(key, {}).items():
            npy = os.path.join(tmp, "%s_%s_%s.npy" % (name, func, param))
            np.save(npy, np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32))
            args += ["--input", "%s=%s" % (param, npy)]
        result = subprocess.run(args, capture_output=True, text=True)
        checked += 1
        if result.returncode == 0 and "check: OK" in result.stdout:
            print("OK %s:%s" % (name, func))
        else:
            failed += 1
            print("FAIL %s:%s (status %d)\n%s" % (name, func, result.returncode, result.stdout + result.stderr))
print("checked %d funcs, skipped %d, failed %d" % (checked, skipped, failed))
sys.exit(1 if failed else 0)
