# The element-wise operators added for tools/tdsl-import against NumPy (float64) on 7 x 13 (a
# guarded vector tail): erf, exp, log, sqrt, neg, abs, reciprocal, hard_swish, hard_sigmoid,
# leaky_relu, clip, sub, div, pow and the scalar forms. Tolerances: exact where f32 arithmetic is
# exact; rtol 1e-5, atol 1e-6 for libm functions (erf, exp, log, sqrt, pow).
import math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *

erf = np.vectorize(math.erf)
shape = (7, 13)
x = uniform(shape, 1, -4.0, 4.0)
y = uniform(shape, 2, -4.0, 4.0)
pos = uniform(shape, 3, 0.1, 3.0)
x64, y64, p64 = (v.astype(np.float64) for v in (x, y, pos))
f32 = lambda v: np.float32(v).astype(np.float64)  # a scalar argument as the f32 it becomes
check("erf", "erf", {"x": x}, {"y": erf(x64)}, 1e-5, 1e-6)
check("exp", "exp", {"x": x}, {"y": np.exp(x64)}, 1e-5, 1e-6)
check("log", "log", {"x": pos}, {"y": np.log(p64)}, 1e-5, 1e-6)
check("sqrt", "sqrt", {"x": pos}, {"y": np.sqrt(p64)}, 1e-6, 1e-6)
check("neg", "neg", {"x": x}, {"y": -x64}, 0.0, 0.0)
check("abs", "abs", {"x": x}, {"y": np.abs(x64)}, 0.0, 0.0)
check("reciprocal", "reciprocal", {"x": pos}, {"y": 1 / p64}, 1e-6, 0.0)
check("hard_swish", "hard_swish", {"x": x}, {"y": x64 * np.clip(x64 / 6 + 0.5, 0, 1)}, 1e-6, 1e-6)
check("hard_sigmoid", "hard_sigmoid", {"x": x, "alpha": 0.2, "beta": 0.5},
      {"y": np.clip(f32(0.2) * x64 + 0.5, 0, 1)}, 1e-6, 1e-6)
check("leaky_relu", "leaky_relu", {"x": x, "alpha": 0.1},
      {"y": np.where(x64 >= 0, x64, f32(0.1) * x64)}, 1e-6, 0.0)
check("clip", "clip", {"x": x, "lo": -1.5, "hi": 2.0}, {"y": np.clip(x64, -1.5, 2.0)}, 0.0, 0.0)
check("sub", "sub", {"a": x, "b": y}, {"c": x - y}, 0.0, 0.0)
check("div", "div", {"a": x, "b": pos}, {"c": x / pos}, 0.0, 0.0)
check("pow", "pow", {"a": pos, "b": y}, {"c": np.power(p64, y64)}, 1e-5, 1e-6)
check("add_scalar", "add_scalar", {"x": x, "s": 0.75}, {"y": x + np.float32(0.75)}, 0.0, 0.0)
check("mul_scalar", "mul_scalar", {"x": x, "s": -1.25}, {"y": x * np.float32(-1.25)}, 0.0, 0.0)
check("rsub_scalar", "rsub_scalar", {"x": x, "s": 1.0}, {"y": np.float32(1.0) - x}, 0.0, 0.0)
check("div_scalar", "div_scalar", {"x": x, "s": 3.0}, {"y": x / np.float32(3.0)}, 0.0, 0.0)
check("rdiv_scalar", "rdiv_scalar", {"x": pos, "s": 2.0}, {"y": np.float32(2.0) / pos}, 0.0, 0.0)
check("pow_scalar", "pow_scalar", {"x": x, "s": 2.0}, {"y": x64 ** 2}, 1e-6, 1e-6)
finish()
