# The numerics of vector_types.tdsl: each function built by g++ for SSE2 only, for AVX2 and
# for the host, and by Clang (tdslc --emit=obj --via=cpp), against the interpreter.
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

x, y = uniform((64,), 1), uniform((64,), 2, lo=0.5, hi=2.0)
j = rng(5).integers(-1000, 1000, size=64).astype(np.int32)
a, b = uniform((32, 32), 3), uniform((32, 32), 4)
builds = [("sse2", ["-mno-avx"], False), ("avx2", ["-mavx2", "-mfma"], False),
          ("native", ["-march=native"], False), ("clang", [], True)]
for tag, flags, obj in builds:
    check("ops", {"X": x, "Y": y, "J": j},
          {"Z": np.zeros(64, np.float32), "I": np.zeros(64, np.int32), "W": np.zeros(64, np.float32),
           "D": np.zeros(64, np.float64), "N": np.zeros(64, np.float32)},
          {"Z": (1e-5, 1e-6), "D": (1e-12, 1e-12), "N": (0, 0)}, cxxflags=flags, tag=tag, obj=obj)
for tag, flags, obj in builds:
    check("tile", {"A": a, "B": b}, {"C": np.zeros((32, 32), np.float32)}, {"C": (1e-5, 1e-5)},
          cxxflags=flags, tag=tag, obj=obj)
