import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a = uniform((300,), 1, lo=-100, hi=100).astype(np.float16)
b = bf16_bits(uniform((300,), 2, lo=-100, hi=100))
out = run("halfs", {"A": a, "B": b}, ["C", "D", "E", "F"])
a32, b32 = a.astype(np.float32), bf16_to_f32(b)
compare("C", out["C"], (a32 * b32 + np.float32(1)).astype(np.float16))
compare("D", out["D"], bf16_bits(a32 - b32 * np.float32(3)))
compare("E", out["E"], a32 + b32)
compare("F", out["F"], (a.astype(np.float64) / 3.0).astype(np.float16))
