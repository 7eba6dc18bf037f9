import os, sys
sys.path.insert(0, os.path.dirname(__file__))
from cpptest import *

x, w = uniform((2, 3, 6, 5), 1), uniform((4, 3, 3, 3), 2)
check("conv2d", {"X": x, "Wt": w}, {"Y": np.zeros((2, 4, 6, 5), np.float32)}, {"Y": (1e-5, 1e-6)})

check("softmax", {"X": uniform((3, 17), 3, lo=-5, hi=5)}, {"SM": np.zeros((3, 17), np.float32)},
      {"SM": (1e-5, 1e-6)})

n = 12
r = rng(4)
a = np.array([-7, 7, -7, 7, -2147483648, -2147483648, 0, 5, -1, 1, 9, -9], np.int32)
d = np.array([2, -2, -2, 2, -1, 2, 3, 0, 3, -3, 1, 4], np.int32)
l = np.array([-7, 7, -8, 8, -9223372036854775808, 9223372036854775807, 0, 1, -1, 2, -2, 3], np.int64)
p = r.integers(-128, 127, n, endpoint=True).astype(np.int8)
u = r.integers(0, 255, n, endpoint=True).astype(np.uint8)
g = np.array([-1.5, 1.5, 0.2, -0.2, 2.5, -2.5, 1.0, -1.0, 0.7, 3.0, -3.0, 0.0], np.float32)
outs = {k: np.zeros(n, t) for k, t in [("Q", np.int32), ("R", np.int32), ("Q64", np.int64), ("R64", np.int64),
                                         ("F", np.float32), ("W8", np.int8), ("WU", np.uint8), ("CI", np.int32),
                                         ("RD", np.float32)]}
check("intops", {"A": a, "D": d, "L": l, "P": p, "U": u, "G": g}, outs)

ha = uniform((40,), 5, lo=-4, hi=4).astype(np.float16)
hb = uniform((40,), 6, lo=-4, hi=4).view(np.uint32)
hb = (hb >> 16).astype(np.uint16)  # bf16 bit patterns
check("halfs", {"A": ha, "B": hb}, {"H": np.zeros(40, np.float16), "BH": np.zeros(40, np.uint16),
                                    "HS": np.zeros(40, np.float16)}, bf16=("B", "BH"))

check("split_where", {"A": uniform((10,), 7)}, {"SB": np.zeros(10, np.float32), "SS": np.zeros((), np.float32)},
      {"SS": (1e-6, 1e-6)})

check("par", {"A": rng(8).integers(-10**12, 10**12, 40).astype(np.int64)}, {"PO": np.zeros(40, np.int64)},
      env=dict(os.environ, OMP_NUM_THREADS="4"))

# Once more under AddressSanitizer and UndefinedBehaviorSanitizer: wrap-around, floor division
# of INT_MIN by -1 and saturating casts must not be undefined behaviour.
check("intops", {"A": a, "D": d, "L": l, "P": p, "U": u, "G": g}, outs, tag="_san",
      cxxflags=["-fsanitize=address,undefined", "-fno-sanitize-recover=all"])
