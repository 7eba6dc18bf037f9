# The losses and optimiser updates of spec §13 against NumPy (float64): cross_entropy rtol 1e-5,
# atol 1e-6; mse_loss rtol 1e-5, atol 1e-7; sgd, sgd_momentum and adam rtol 1e-5, atol 1e-6.
# The f32 hyper-parameters are rounded to f32 for the reference too: 1 - beta2 with beta2 =
# 0.999 differs by 1.3e-5 between the f64 and the f32 value of 0.999.
# cross_entropy's large rows (values near ±1e4, ±90 and 80 to 88) check stability: without the
# row max subtracted, exp overflows to inf; without (m - logit) taken before adding log(s),
# rows near 1e4 lose all but 3 digits. adam runs step 1 from zero moments and step 3 from
# random ones (the bias corrections 1 - beta^step then differ from 1 - beta); lr = 0.1 so
# that an update's error shows in p2. The reference is PyTorch's order of operations
# (lr / bc1 · m2 / (sqrt(v2) / sqrt(bc2) + eps)), not the function's.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def f32(x):
    return float(np.float32(x))


def cross_entropy(x, labels):
    m = x.max(axis=-1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]
    return np.array((lse - x[np.arange(x.shape[0]), labels]).mean())


def labels(b, c, seed):
    return rng(seed).integers(0, c, size=b).astype(np.int64)


large = uniform((6, 45), 20, -3.0, 3.0)
large[0] += 1.0e4
large[1] -= 1.0e4
large[2] *= 30.0
large[3] = uniform(45, 21, 78.0, 82.0)
large[4, 5] = 88.0
large[5] = uniform(45, 22, 79.0, 81.0)
large_labels = np.array([3, 0, 44, 17, 5, 9], dtype=np.int64)
# The schedule takes rows in groups of 4 and the row reductions in vectors of 16: 7 and 45 rows
# are whole groups and a partial one, 13 and 45 columns whole vectors and a partial one.
for tag, x, lab in (("7x13", uniform((7, 13), 1, -5.0, 5.0), labels(7, 13, 2)),
                    ("13x7", uniform((13, 7), 3), labels(13, 7, 4)),
                    ("45x1000", uniform((45, 1000), 5, -4.0, 4.0), labels(45, 1000, 6)),
                    ("1000x10", uniform((1000, 10), 7, -2.0, 2.0), labels(1000, 10, 8)),
                    ("large", large, large_labels)):
    check("cross_entropy_" + tag, "cross_entropy", {"logits": x, "labels": lab},
          {"l": cross_entropy(x.astype(np.float64), lab)}, 1e-5, 1e-6)

SIZES = (7, 13, 45, 1000)
for n in SIZES:
    a, b = uniform(n, 30 + n), uniform(n, 40 + n, -2.0, 2.0)
    d = a.astype(np.float64) - b
    check("mse_loss_%d" % n, "mse_loss", {"a": a, "b": b}, {"l": np.array((d * d).mean())},
          1e-5, 1e-7)

lr, mu = f32(0.1), f32(0.9)
for n in SIZES:
    p, g, v = uniform(n, 50 + n), uniform(n, 60 + n), uniform(n, 70 + n)
    p64, g64, v64 = p.astype(np.float64), g.astype(np.float64), v.astype(np.float64)
    check("sgd_%d" % n, "sgd", {"p": p, "g": g, "lr": lr}, {"p2": p64 - lr * g64}, 1e-5, 1e-6)
    v2 = mu * v64 + g64
    check("sgd_momentum_%d" % n, "sgd_momentum", {"p": p, "g": g, "v": v, "lr": lr, "mu": mu},
          {"p2": p64 - lr * v2, "v2": v2}, 1e-5, 1e-6)


def adam(p, g, m, v, step, lr, beta1, beta2, eps):
    m2 = beta1 * m + (1 - beta1) * g
    v2 = beta2 * v + (1 - beta2) * g * g
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    return p - lr / bc1 * m2 / (np.sqrt(v2) / np.sqrt(bc2) + eps), m2, v2


beta1, beta2, eps = f32(0.9), f32(0.999), f32(1e-8)
for n in SIZES:
    p, g = uniform(n, 80 + n), uniform(n, 90 + n)
    for step, m, v in ((1, np.zeros(n, np.float32), np.zeros(n, np.float32)),
                       (3, uniform(n, 100 + n, -0.1, 0.1), uniform(n, 110 + n, 0.0, 0.05))):
        p2, m2, v2 = adam(*(t.astype(np.float64) for t in (p, g, m, v)), step, lr, beta1,
                          beta2, eps)
        check("adam_%d_step%d" % (n, step), "adam",
              {"p": p, "g": g, "m": m, "v": v, "step": step, "lr": lr, "beta1": beta1,
               "beta2": beta2, "eps": eps}, {"p2": p2, "m2": m2, "v2": v2}, 1e-5, 1e-6)
# Gradients near 1e-7, where eps = 1e-8 is a tenth of sqrt(v̂): eps outside the square root.
p, g = uniform(45, 120), uniform(45, 121) * np.float32(1e-7)
zero = np.zeros(45, np.float32)
p2, m2, v2 = adam(*(t.astype(np.float64) for t in (p, g, zero, zero)), 1, lr, beta1, beta2, eps)
check("adam_45_tiny", "adam", {"p": p, "g": g, "m": zero, "v": zero, "step": 1, "lr": lr,
                               "beta1": beta1, "beta2": beta2, "eps": eps},
      {"p2": p2, "m2": m2, "v2": v2}, 1e-5, 1e-6)
finish()
