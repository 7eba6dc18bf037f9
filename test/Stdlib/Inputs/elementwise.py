# Element-wise operators against NumPy (float64) on 7 x 13 (the vectorized split of 16 leaves
# a guarded tail) and 3 x 32. Tolerances: relu, add, mul, bias_add exact; sigmoid, tanh, gelu
# (f32 exp/tanh/erf: libm, or glibc's vector math in vectorized loops) rtol 1e-5, atol 1e-6;
# the same three on 4 x 64 points from -10 to 10 (gelu's 1 + erf cancels below -5).
import math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *

erf = np.vectorize(math.erf)
for shape in ((7, 13), (3, 32)):
    tag = "%dx%d" % shape
    x, y = uniform(shape, 1, -4.0, 4.0), uniform(shape, 2, -4.0, 4.0)
    b = uniform(shape[1:], 3)
    x64 = x.astype(np.float64)
    check("relu_" + tag, "relu", {"x": x}, {"y": np.maximum(x64, 0)}, 0.0, 0.0)
    check("gelu_" + tag, "gelu", {"x": x}, {"y": 0.5 * x64 * (1 + erf(x64 / math.sqrt(2)))},
          1e-5, 1e-6)
    check("sigmoid_" + tag, "sigmoid", {"x": x}, {"y": 1 / (1 + np.exp(-x64))}, 1e-5, 1e-6)
    check("tanh_" + tag, "tanh", {"x": x}, {"y": np.tanh(x64)}, 1e-5, 1e-6)
    check("add_" + tag, "add", {"a": x, "b": y}, {"c": x + y}, 0.0, 0.0)
    check("mul_" + tag, "mul", {"a": x, "b": y}, {"c": x * y}, 0.0, 0.0)
    check("bias_add_" + tag, "bias_add", {"x": x, "b": b}, {"y": x + b}, 0.0, 0.0)
xw = np.linspace(-10.0, 10.0, 4 * 64).astype(np.float32).reshape(4, 64)
xw64 = xw.astype(np.float64)
check("gelu_wide", "gelu", {"x": xw}, {"y": 0.5 * xw64 * (1 + erf(xw64 / math.sqrt(2)))}, 1e-5, 1e-6)
check("sigmoid_wide", "sigmoid", {"x": xw}, {"y": 1 / (1 + np.exp(-xw64))}, 1e-5, 1e-6)
check("tanh_wide", "tanh", {"x": xw}, {"y": np.tanh(xw64)}, 1e-5, 1e-6)
finish()
