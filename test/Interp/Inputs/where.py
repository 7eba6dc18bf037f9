import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a = uniform((10,), 1)
out = run("split_where", {"A": a}, ["B", "S"])
compare("B", out["B"], a * np.float32(2))
compare("S", out["S"], np.array(100 + a.astype(np.float64).sum(), dtype=np.float32), 1e-6, 1e-6)
