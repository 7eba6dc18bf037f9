import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a, c0 = uniform((6, 11), 1), uniform((6,), 2, lo=10, hi=20)
out = run("accumulate", {"A": a, "C": c0}, ["C"])
compare("C", out["C"], (c0 + a.astype(np.float64).sum(axis=1)).astype(np.float32), 1e-5, 1e-5)
# Without initial contents the output starts zero-filled.
out = run("accumulate", {"A": a}, ["C"])
if compare("C", out["C"], a.astype(np.float64).sum(axis=1).astype(np.float32), 1e-5, 1e-5):
    print("MATCH zero-start")
