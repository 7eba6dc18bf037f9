import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((7, 9), 1)
out = run("stats", {"X": x}, ["S", "M", "P"])
compare("S", out["S"], x.astype(np.float64).sum(axis=1).astype(np.float32), 1e-5, 1e-6)
compare("M", out["M"], x.max(axis=1))
compare("P", out["P"], (x > 0).sum(axis=1).astype(np.int32))
