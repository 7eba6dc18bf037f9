import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

# Exact: no fused multiply-add in compiled code (spec §11; the interpreter ignores the option).
EXACT = ["--ffp-contract=off"]
x = uniform((50,), 1)
out = run("affine", {"X": x, "s": 0.25, "k": -3, "neg": "true", "d": 0.5}, ["Y"], EXACT)
compare("Y", out["Y"], -(x * np.float32(0.25) + np.float32(-3) + np.float32(0.5)))
out = run("affine", {"X": x, "s": np.array(1.5, dtype=np.float32), "k": 7, "neg": 0,
                     "d": np.array(2.0)}, ["Y"], EXACT)
if compare("Y", out["Y"], x * np.float32(1.5) + np.float32(7) + np.float32(2)):
    print("MATCH Y from-npy")
