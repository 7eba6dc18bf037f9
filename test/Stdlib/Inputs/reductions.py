# sum, mean and max over the last axis against NumPy (float64): sum and mean rtol 1e-5,
# atol 1e-5 (f32 sums of up to 33 terms); max exact (also on all-negative rows).
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *

for tag, x in (("7x13", uniform((7, 13), 1)), ("3x33", uniform((3, 33), 2, -9.0, -1.0)),
               ("1x1", uniform((1, 1), 3))):
    x64 = x.astype(np.float64)
    check("sum_" + tag, "sum", {"x": x}, {"y": x64.sum(axis=-1)}, 1e-5, 1e-5)
    check("mean_" + tag, "mean", {"x": x}, {"y": x64.mean(axis=-1)}, 1e-5, 1e-5)
    check("max_" + tag, "max", {"x": x}, {"y": x64.max(axis=-1)}, 0.0, 0.0)
finish()
