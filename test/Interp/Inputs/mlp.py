import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x, w0, b0 = uniform((3, 64), 1), uniform((32, 64), 2), uniform((32,), 3)
w1, b1 = uniform((10, 32), 4), uniform((10,), 5)
out = run("mlp", {"x": x, "w0": w0, "b0": b0, "w1": w1, "b1": b1}, ["p", "r"])
r = np.maximum(x.astype(np.float64) @ w0.T + b0, 0)
o = r @ w1.T + b1
e = np.exp(o - o.max(axis=1, keepdims=True))
compare("p", out["p"], (e / e.sum(axis=1, keepdims=True)).astype(np.float32), 1e-5, 1e-6)
compare("r", out["r"], r.astype(np.float32), 1e-5, 1e-6)
