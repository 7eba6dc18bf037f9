"""The command line shared by the examples' model.py scripts.

  /usr/bin/python3 model.py write DIR [BATCH]   # one DIR/NAME.npy per parameter and DIR/ref.npy
  /usr/bin/python3 model.py compare DIR GOT.npy # MATCH o (rtol 1e-4, atol 1e-5) or MISMATCH

Each model.py defines params(batch) (a dict of arrays, in the graph's parameter order; drawn
from generators(seed)) and reference(params) (the NumPy result), then calls
run(params, reference, default_batch).
"""
import sys

import numpy as np


def generators(seed):
    """A generator seeded with `seed`, and f(*shape, scale=1.0): float32 normal samples of that
    shape times scale, drawn from it."""
    rng = np.random.default_rng(seed)
    return rng, lambda *shape, scale=1.0: (rng.standard_normal(shape) * scale).astype(np.float32)


def run(params, reference, default_batch):
    if sys.argv[1] == "write":
        folder = sys.argv[2]
        batch = int(sys.argv[3]) if len(sys.argv) > 3 else default_batch
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
