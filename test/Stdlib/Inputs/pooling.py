# max_pool2d<K, S, P> and avg_pool2d<K, S, P> (NCHW) against NumPy (float64). Max pooling
# pads with -inf (the padding is never chosen) and is exact; average pooling counts the zero
# padding in the divisor (PyTorch's count_include_pad=True): rtol 1e-6, atol 1e-6.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def windows(x, k, s, p, fill):
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    return np.stack([xp[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s]
                     for i in range(k) for j in range(k)])


for tag, shape, k, s, p in (("k2s2p0", (2, 3, 8, 8), 2, 2, 0),
                            ("k3s1p1", (1, 2, 7, 13), 3, 1, 1),
                            ("k3s2p1", (2, 2, 9, 7), 3, 2, 1),
                            ("k2s2p1_neg", (1, 2, 5, 6), 2, 2, 1),
                            # 19 output columns: a vector with the left padding, a whole
                            # 8-lane vector of stride-2 loads (lower.vectorize's strided
                            # ramps), a 3-lane tail with the right padding
                            ("k3s2p1_wide", (1, 3, 9, 37), 3, 2, 1)):
    lo, hi = (-3.0, -1.0) if tag.endswith("neg") else (-1.0, 1.0)
    x = uniform(shape, 1, lo, hi)
    consts = {"K": k, "S": s, "P": p}
    check("max_pool2d_" + tag, "max_pool2d", {"x": x},
          {"y": windows(x, k, s, p, -np.inf).max(axis=0)}, 0.0, 0.0, consts)
    check("avg_pool2d_" + tag, "avg_pool2d", {"x": x},
          {"y": windows(x, k, s, p, 0.0).sum(axis=0) / (k * k)}, 1e-6, 1e-6, consts)
# global_avg_pool2d: the mean of each H x W plane, 16 partial sums (rtol 1e-6, atol 1e-6): 49
# elements (three whole vectors and one lane), 20 (a vector and 4 lanes), 5 (under one vector).
for tag, shape in (("7x7", (2, 3, 7, 7)), ("4x5", (1, 4, 4, 5)), ("1x5", (1, 2, 1, 5))):
    x = uniform(shape, 2, -1.0, 1.0)
    check("global_avg_pool2d_" + tag, "global_avg_pool2d", {"x": x},
          {"y": x.astype(np.float64).mean(axis=(2, 3), keepdims=True)}, 1e-6, 1e-6)
finish()
