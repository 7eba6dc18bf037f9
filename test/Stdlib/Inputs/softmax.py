# softmax and log_softmax over the last axis against NumPy (float64): rtol 1e-5, atol 1e-6.
# Rows with values near ±1e4 and ±80 check stability: a version without the max subtraction
# overflows exp to inf (NaN results); the row max is subtracted first, so they stay exact.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


large = uniform((4, 13), 2, -3.0, 3.0)
large[0] += 1.0e4
large[1] -= 1.0e4
large[2] *= 30.0
large[3, 5] = 88.0
# The schedules take rows in groups of 4: 7 rows are a whole group and a partial one, 2 and 3 a
# partial group, 4 (large) one whole group.
for tag, x in (("7x13", uniform((7, 13), 1, -5.0, 5.0)), ("3x32", uniform((3, 32), 3)),
               ("large", large), ("2x45", uniform((2, 45), 4))):
    x64 = x.astype(np.float64)
    check("softmax_" + tag, "softmax", {"x": x}, {"y": softmax(x64)}, 1e-5, 1e-6)
    check("log_softmax_" + tag, "log_softmax", {"x": x}, {"y": log_softmax(x64)}, 1e-5, 1e-5)
finish()
