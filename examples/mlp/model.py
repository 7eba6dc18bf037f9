"""Deterministic weights, an input batch and the NumPy reference of examples/mlp.

  /usr/bin/python3 model.py write DIR [BATCH]   # DIR/{x,w0,b0,w1,b1}.npy and DIR/ref.npy
  /usr/bin/python3 model.py compare DIR GOT.npy # MATCH o (rtol 1e-4, atol 1e-5) or MISMATCH
"""
import sys

import numpy as np


def params(batch):
    rng = np.random.default_rng(2024)
    f = lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)
    return {"x": rng.uniform(0, 1, (batch, 784)).astype(np.float32),
            "w0": f(128, 784, scale=784 ** -0.5), "b0": f(128, scale=0.1),
            "w1": f(10, 128, scale=128 ** -0.5), "b1": f(10, scale=0.1)}


def reference(p):
    h = np.maximum(p["x"].astype(np.float64) @ p["w0"].T + p["b0"], 0)
    return (h @ p["w1"].T + p["b1"]).astype(np.float32)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        folder, batch = sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 4
        p = params(batch)
        for name, value in p.items():
            np.save("%s/%s.npy" % (folder, name), value)
        np.save(folder + "/ref.npy", reference(p))
    else:
        got, want = np.load(sys.argv[3]), np.load(sys.argv[2] + "/ref.npy")
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print("%s o: max abs diff %g" % ("MATCH" if ok else "MISMATCH",
                                          np.abs(got.astype(np.float64) - want).max()))
        sys.exit(0 if ok else 1)
