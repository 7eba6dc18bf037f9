"""Deterministic weights, an input batch and the NumPy reference of examples/mlp.

  /usr/bin/python3 model.py write DIR [BATCH]   # DIR/{x,w0,b0,w1,b1}.npy and DIR/ref.npy
  /usr/bin/python3 model.py compare DIR GOT.npy # MATCH o (rtol 1e-4, atol 1e-5) or MISMATCH
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from model_cli import generators, run  # noqa: E402  (examples/model_cli.py)


def params(batch):
    rng, f = generators(2024)
    return {"x": rng.uniform(0, 1, (batch, 784)).astype(np.float32),
            "w0": f(128, 784, scale=784 ** -0.5), "b0": f(128, scale=0.1),
            "w1": f(10, 128, scale=128 ** -0.5), "b1": f(10, scale=0.1)}


def reference(p):
    h = np.maximum(p["x"].astype(np.float64) @ p["w0"].T + p["b0"], 0)
    return (h @ p["w1"].T + p["b1"]).astype(np.float32)


if __name__ == "__main__":
    run(params, reference, default_batch=4)
