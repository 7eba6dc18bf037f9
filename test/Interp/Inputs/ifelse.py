import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((40,), 1)
out = run("piecewise", {"X": x}, ["Y", "Z"])
a = x * np.float32(2)
compare("Y", out["Y"], np.where(a > 1, a - np.float32(1), np.where(a < -1, -a, a * a)))
i = np.arange(40, dtype=np.int32)
compare("Z", out["Z"], np.where(i % 3 == 0, -i, (i % 3) * 10).astype(np.int32))
