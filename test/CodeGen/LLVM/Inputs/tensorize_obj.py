# The object route of tensorize_register_tile.tdsl: mm512 (tensorized with intrin.avx512_8x32)
# built as the LLVM backend's object and as the emitted C++ under g++, each compared with the
# interpreter (CodeGen/CPP/Inputs/cpptest.py, TDSL_CPPTEST_VIA=both).
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "CPP", "Inputs"))
from cpptest import *

a, b = uniform((256, 256), 1), uniform((256, 64), 2)
check("mm512", {"A": a, "B": b}, {"C": np.zeros((256, 64), np.float32)}, {"C": (1e-5, 1e-5)})
