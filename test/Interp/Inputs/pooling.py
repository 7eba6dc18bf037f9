import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((3, 9, 8), 1)  # odd H: the last row is dropped
out = run("maxpool", {"X": x}, ["Y"])
want = x[:, :8, :8].reshape(3, 4, 2, 4, 2).max(axis=(2, 4))
if compare("Y", out["Y"], want):
    print("MATCH maxpool")

x = uniform((2, 5, 6), 2)
out = run("avgpool", {"X": x}, ["Y"])
xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1)))
want = sum(xp[:, i:i + 5, j:j + 6] for i in range(3) for j in range(3)) / 9.0
if compare("Y", out["Y"], want.astype(np.float32), 1e-6, 1e-6):
    print("MATCH avgpool")
