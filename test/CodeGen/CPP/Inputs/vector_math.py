# The numerics of vector_math.test: f32ops and f64ops of ../LLVM/vector_math.tdsl built by g++
# for SSE2 only, for AVX2 and for the host, and by Clang (tdslc --emit=obj --via=cpp), against
# the interpreter (libm); N = 37 and 64 leave tails of the 16-lane and 8-lane loops.
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

builds = [("sse2", ["-mno-avx"], False), ("avx2", ["-mavx2", "-mfma"], False),
          ("native", ["-march=native"], False), ("clang", [], True)]
f32 = ["ex", "ex2", "lg", "lg2", "th", "sg", "ef", "sn", "cs", "pw", "sq"]
f64 = ["ex", "ef", "th", "pw"]
for n in (37, 64):
    for tag, flags, obj in builds:
        # libmvec's f32 functions are within 4 ulp of libm's.
        check("f32ops", {"x": uniform((n,), n, lo=-6.0, hi=6.0)},
              {o: np.zeros(n, np.float32) for o in f32}, {o: (2e-6, 1e-6) for o in f32},
              tdslc_flags=["-D", "N=%d" % n], cxxflags=flags, tag="%s%d" % (tag, n), obj=obj)
for tag, flags, obj in builds:
    check("f64ops", {"x": uniform((37,), 3, dtype=np.float64, lo=-6.0, hi=6.0)},
          {o: np.zeros(37, np.float64) for o in f64}, {o: (1e-14, 1e-15) for o in f64},
          tdslc_flags=["-D", "N=37"], cxxflags=flags, tag=tag + "d", obj=obj)
