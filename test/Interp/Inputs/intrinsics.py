import math, os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

x, y = uniform((64,), 1, lo=-3, hi=3), uniform((64,), 2, lo=-2, hi=2)
out = run("f32ops", {"X": x, "Y": y}, ["O"])["O"]
d, e = x.astype(np.float64), y.astype(np.float64)
p = (np.abs(x) + np.float32(0.5)).astype(np.float64)
erf = np.vectorize(math.erf)
want = [np.exp(d), np.exp2(d), np.log(p), np.log2(p), np.sqrt(p), 1 / np.sqrt(p), np.tanh(d),
        1 / (1 + np.exp(-d)), erf(d), np.abs(d), np.sin(d), np.cos(d), np.floor(d * 4),
        np.ceil(d * 4), np.trunc(d * 4), p ** e, d * e + 0.25, np.minimum(d, e) - np.maximum(d, e)]
for k, w in enumerate(want):
    if not compare("f32", out[k], w.astype(np.float32), 2e-6, 1e-7):
        print("  (row %d)" % k)

x = uniform((32,), 3, np.float64, lo=-5, hi=5)
out = run("f64ops", {"X": x}, ["O"])["O"]
for k, w in enumerate([np.exp(x), np.tanh(x), np.sqrt(np.abs(x)), x / 3.0]):
    compare("f64", out[k], w, 1e-14, 1e-300)

x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 0, -0.0],
             dtype=np.float32)
out = run("rounding", {"X": x}, ["R"])
want = np.array([1, 2, 3, -1, -2, -3, 0, -0.0, 4, -4, 0, -0.0], dtype=np.float32)
if compare("R", out["R"], want):
    print("MATCH round")

out = run("limits", {}, ["F", "I", "U", "D"])
ok = all([compare("F", out["F"], np.array([-3.4028235e38, 3.4028235e38], np.float32)),
          compare("I", out["I"], np.array([-128, 127], np.int8)),
          compare("U", out["U"], np.array([0, 65535], np.uint16)),
          compare("D", out["D"], np.array([-1.7976931348623157e308, 1.7976931348623157e308]))])
if ok:
    print("MATCH limits")

a = np.array([-128, -127, -1, 0, 1, 127], dtype=np.int8)
out = run("iabs", {"A": a}, ["B"])
if compare("B", out["B"], np.array([-128, 127, 1, 0, 1, 127], dtype=np.int8)):
    print("MATCH iabs")
