# deep_expressions.test: the functions of deep_gen.py built by g++ from the emitted C++ and by
# tdslc --emit=obj --via=cpp, then run by tdsl-run --check (LLVM JIT, and --via=cpp), each
# against the interpreter.
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

x300, x250, x7 = uniform((7, 300), 1), uniform((7, 250), 2), uniform((7,), 3)
xi = rng(4).integers(-1000, 1000, size=(7, 300)).astype(np.int32)
cases = [("sum300", {"x": x300}, np.float32), ("isum300", {"x": xi, "a": 123457}, np.int32),
         ("mixed250", {"x": x250}, np.float32), ("max250", {"x": x250}, np.float32),
         ("inline150", {"x": x7}, np.float32)]
for func, inputs, dtype in cases:
    for obj in (False, True):
        # Contraction may differ from the interpreter's separate rounding: a small tolerance.
        check(func, inputs, {"y": np.zeros((7,), dtype)}, {"y": (1e-5, 1e-5)}, obj=obj,
              tag=".obj" if obj else "")
for func, _, _ in cases:
    for via in ("llvm", "cpp"):
        result = run_or_die([TDSL_RUN, SOURCE, "--func", func, "--check", "--via=" + via])
        print(result.stdout.splitlines()[0])
