import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

def conv2d(x, w, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y.astype(np.float32)

x, w = uniform((2, 3, 7, 6), 1), uniform((4, 3, 3, 3), 2)
for pad in (1, 0):
    out = run("conv2d", {"X": x, "Wt": w}, ["Y"], ["-D", "P=%d" % pad])
    if compare("Y", out["Y"], conv2d(x, w, pad), rtol=1e-5, atol=1e-5):
        print("MATCH Y pad=%d" % pad)
