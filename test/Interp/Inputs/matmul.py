import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a, b = uniform((13, 24), 1), uniform((24, 7), 2)
out = run("matmul", {"A": a, "B": b}, ["C"])
compare("C", out["C"], (a.astype(np.float64) @ b).astype(np.float32), rtol=1e-5, atol=1e-5)

a, b = uniform((32, 32), 3), uniform((32, 32), 4)
out = run("mm_relu", {"A": a, "B": b}, ["C"])
want = np.maximum(a.astype(np.float64) @ b, 0).astype(np.float32)
if compare("C", out["C"], want, rtol=1e-5, atol=1e-5):
    print("MATCH relu")
