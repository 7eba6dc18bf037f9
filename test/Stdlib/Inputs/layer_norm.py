# layer_norm over the last axis (biased variance, eps inside the square root, PyTorch's
# nn.LayerNorm) against NumPy (float64): rtol 1e-4, atol 1e-5 (it divides by a small standard
# deviation; 5e-5 for the offset rows, below). Rows with a large common offset check the
# two-pass variance; 3x77: a block of the schedule's 32 or 64 partial sums and a tail.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


# The schedule takes rows in groups of 4: 7 rows are a whole group and a partial one, 2 and 3 a
# partial group.
for tag, shape, offset in (("7x13", (7, 13), 0.0), ("3x32", (3, 32), 0.0),
                           ("offset", (2, 24), 100.0), ("3x77", (3, 77), 0.0)):
    x = uniform(shape, 1, -2.0, 2.0) + np.float32(offset)
    gamma, beta = uniform(shape[1:], 2, 0.5, 1.5), uniform(shape[1:], 3)
    # Rows near 100: the f32 sum of 24 such values (about 2400, ulp 2.4e-4) is off by up to a
    # few ulps whatever the order of its adds, i.e. the mean by about 3e-5, and so is every
    # centred value: y near 0 gets that as an absolute error. atol 5e-5 there, 1e-5 elsewhere.
    atol = 5e-5 if offset else 1e-5
    for eps in (1e-5, 0.5):
        check("layer_norm_%s_eps%g" % (tag, eps), "layer_norm",
              {"x": x, "gamma": gamma, "beta": beta, "eps": eps},
              {"y": layer_norm(x.astype(np.float64), gamma, beta, eps)}, 1e-4, atol)
finish()
