import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from harness import *

a, b = integers((200,), -50, 50, 1), integers((200,), -7, 7, 2)
b[:3] = 0
out = run("divmod", {"A": a, "B": b}, ["Q", "R"])
safe = np.where(b == 0, 1, b)
compare("Q", out["Q"], np.where(b == 0, 0, a // safe).astype(np.int32))
compare("R", out["R"], np.where(b == 0, a, a % safe).astype(np.int32))

a = integers((100,), -20, 20, 3, np.int64)
a[0] = np.iinfo(np.int64).min
out = run("divmod64", {"A": a}, ["Q64", "R64"])
compare("Q64", out["Q64"], a // -3)
compare("R64", out["R64"], a % -3)

a, b = uniform((100,), 4, lo=-10, hi=10), uniform((100,), 5, lo=-3, hi=3)
out = run("fmod", {"A": a, "B": b}, ["F"])
compare("F", out["F"], a - np.floor(a / b) * b)

a, b = integers((64,), -128, 127, 6, np.int8), integers((64,), 0, 255, 7, np.uint8)
out = run("wrap", {"A": a, "B": b}, ["C", "D"])
compare("C", out["C"], a * a + np.int8(100))
compare("D", out["D"], b - np.uint8(200))

a = uniform((100,), 8, lo=-300, hi=300)
a[:4] = [2.9, -2.9, 0.5, -0.5]
out = run("casts", {"A": a}, ["I", "U"])
compare("I", out["I"], np.trunc(a).astype(np.int32))
compare("U", out["U"], np.clip(np.trunc(a), 0, 255).astype(np.uint8))
