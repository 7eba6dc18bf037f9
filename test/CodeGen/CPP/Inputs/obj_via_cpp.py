# obj_via_cpp.tdsl: objects from `tdslc --emit=obj --via=cpp` linked with the harness, against
# the interpreter; a plain function and a parallel one (4 OpenMP threads).
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

x, y0 = uniform((1000,), 1), uniform((1000,), 2)
check("saxpy", {"X": x, "Y0": y0, "a": 1.5}, {"Y": np.zeros((1000,), np.float32)},
      {"Y": (1e-6, 1e-6)}, obj=True)
a, b = uniform((64, 64), 3), uniform((64, 64), 4)
check("mm_relu", {"A": a, "B": b}, {"C": np.zeros((64, 64), np.float32)},
      {"C": (1e-5, 1e-5)}, env=dict(os.environ, OMP_NUM_THREADS="4"), obj=True)
