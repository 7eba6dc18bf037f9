import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x = uniform((5, 33), 1, lo=-4, hi=4)
out = run("softmax", {"X": x}, ["Y"])
e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
if compare("Y", out["Y"], (e / e.sum(axis=1, keepdims=True)).astype(np.float32), 1e-5, 1e-6):
    print("MATCH softmax")

x, g, b = uniform((4, 20), 2, lo=-3, hi=3), uniform((20,), 3), uniform((20,), 4)
eps = 0.5
out = run("layernorm", {"X": x, "gamma": g, "beta": b, "eps": eps}, ["Y"])
x64 = x.astype(np.float64)
mu, var = x64.mean(axis=1, keepdims=True), x64.var(axis=1, keepdims=True)
want = ((x64 - mu) / np.sqrt(var + eps) * g + b).astype(np.float32)
if compare("Y", out["Y"], want, 1e-4, 1e-5):
    print("MATCH layernorm")
