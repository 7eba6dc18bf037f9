"""bounds_check.tdsl: builds with --bounds-check, runs in and out of bounds (see the .tdsl)."""
import re
import subprocess

import numpy as np

import cpptest
from cpptest import TMP, check, build, uniform

A = uniform((3, 6), seed=1)
check("window", {"A": A, "W": uniform((3, 6), seed=2)}, {"B": np.zeros((3, 6), np.float32)},
      tdslc_flags=["--bounds-check"], interp_flags=[])


def run_fails(func, inputs, outputs, tag):
    exe = build(func, inputs, outputs, ["--bounds-check"], tag=tag)
    paths = []
    for name, value in list(inputs.items()) + list(outputs.items()):
        path = "%s/%s%s_%s.npy" % (TMP, func, tag, name)
        np.save(path, value)
        paths.append(path if name in inputs else "out:%s:%s.res.npy" % (path, path))
    result = subprocess.run([exe] + paths, capture_output=True, text=True)
    print(result.stderr.strip().replace("harness: ", ""))


# W has 4 columns where B has 6: W[r, 4] is out of bounds (in a parallel loop).
run_fails("window", {"A": A, "W": uniform((3, 4), seed=3)}, {"B": np.zeros((3, 6), np.float32)}, "_oob")
# I[1] = 9 indexes A (6 elements).
I = np.array([0, 9, 2], np.int64)
run_fails("gather", {"A": uniform((6,), seed=4), "I": I}, {"G": np.zeros(3, np.float32)}, "_oob")
check("gather", {"A": uniform((6,), seed=4), "I": np.array([5, 0, 3], np.int64)},
      {"G": np.zeros(3, np.float32)}, tdslc_flags=["--bounds-check"], interp_flags=[])
# Without --bounds-check only the checks every route has: the window's at the entry (its shapes),
# the gather's data-dependent index (the generated code's tdsl_report calls, per function).
def checks(func):
    code = subprocess.run([cpptest.TDSLC, cpptest.SOURCE, "--emit=cpp", "--func", func],
                          capture_output=True, text=True).stdout
    n = len(re.findall(r"tdsl_report\(\s*&", code))
    return "%s %d check%s" % (func, n, "" if n == 1 else "s")
print("unchecked: " + checks("window") + ", " + checks("gather"))
