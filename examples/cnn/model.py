"""Deterministic weights, an input batch and the NumPy reference of examples/cnn.

  /usr/bin/python3 model.py write DIR [BATCH]   # DIR/{x,w1,w2,wl,bl}.npy and DIR/ref.npy
  /usr/bin/python3 model.py compare DIR GOT.npy # MATCH o (rtol 1e-4, atol 1e-5) or MISMATCH
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from model_cli import generators, run  # noqa: E402  (examples/model_cli.py)


def params(batch):
    rng, f = generators(2025)
    return {"x": rng.uniform(0, 1, (batch, 1, 28, 28)).astype(np.float32),
            "w1": f(8, 1, 3, 3, scale=9 ** -0.5), "w2": f(16, 8, 3, 3, scale=72 ** -0.5),
            "wl": f(10, 784, scale=784 ** -0.5), "bl": f(10, scale=0.1)}


def conv3x3_pad1(x, w):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def pool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def reference(p):
    a = pool2(np.maximum(conv3x3_pad1(p["x"].astype(np.float64), p["w1"]), 0))
    a = pool2(np.maximum(conv3x3_pad1(a, p["w2"]), 0))
    return (a.reshape(a.shape[0], -1) @ p["wl"].T + p["bl"]).astype(np.float32)


if __name__ == "__main__":
    run(params, reference, default_batch=2)
