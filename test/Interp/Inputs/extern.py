import os, sys
lib = sys.argv.pop()
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((17,), 1)
out = run("g", {"x": x, "s": 2.5}, ["y"], ["--load", lib])
compare("y", out["y"], x * np.float32(2.5))
# An extern on its own: its library defines it, only the interpreter runs it directly.
out = run("scale", {"x": x, "s": -1.5}, ["y"], ["--load", lib], mode="interpret")
if compare("y", out["y"], x * np.float32(-1.5)):
    print("MATCH y direct")
x = uniform((4, 6), 2, np.float64)
out = run("h", {"x": x}, ["s", "n"], ["--load", lib])
compare("s", out["s"], 5 + x.sum(axis=1), 1e-15, 1e-15)
compare("n", out["n"], np.array([24], dtype=np.int64))
