import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

a, b = uniform((7, 13), 1), uniform((13, 5), 2)
check("matmul", {"A": a, "B": b, "alpha": 0.5}, {"C": np.zeros((7, 5), np.float32)},
      {"C": (1e-5, 1e-5)})
a, b = uniform((128, 128), 3), uniform((128, 128), 4)
check("mm_relu", {"A": a, "B": b}, {"MC": np.zeros((128, 128), np.float32)},
      {"MC": (1e-5, 1e-5)}, env=dict(os.environ, OMP_NUM_THREADS="4"))
