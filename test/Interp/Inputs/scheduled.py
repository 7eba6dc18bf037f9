import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a, b = uniform((20, 12), 1), uniform((12, 18), 2)
out = run("mm", {"A": a, "B": b}, ["C"])
compare("C", out["C"], (1 + a.astype(np.float64) @ b).astype(np.float32), 1e-5, 1e-5)
a = uniform((7, 10), 3)
out = run("rowsum", {"A": a}, ["D"])
compare("D", out["D"], a.astype(np.float64).sum(axis=1).astype(np.float32), 1e-5, 1e-5)
