# Matrix products and transpose2d against NumPy (float64), f32 sums: rtol 1e-5, atol 1e-5.
# Shapes that are not multiples of the schedules' tiles (4 x 16, 8 x 8) exercise the guards.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *

for m, k, n in ((7, 13, 19), (8, 32, 16), (1, 5, 1)):
    a, b = uniform((m, k), 1), uniform((k, n), 2)
    check("matmul_%dx%dx%d" % (m, k, n), "matmul", {"a": a, "b": b},
          {"c": a.astype(np.float64) @ b}, 1e-5, 1e-5)

# matmul_rows (graph.pack-weights' product for a short sum): a row tail of the 8-row tile and
# a column tail (7 x 12 x 37), and full tiles (16 x 16 x 64).
for m, k, n in ((7, 12, 37), (16, 16, 64)):
    a, b = uniform((m, k), 15), uniform((k, n), 16)
    check("matmul_rows_%dx%dx%d" % (m, k, n), "matmul_rows", {"a": a, "b": b},
          {"c": a.astype(np.float64) @ b}, 1e-5, 1e-5)

a, b = uniform((3, 7, 13), 3), uniform((3, 13, 18), 4)
check("batch_matmul_3x7x13x18", "batch_matmul", {"a": a, "b": b},
      {"c": np.matmul(a.astype(np.float64), b)}, 1e-5, 1e-5)

# 1x40x37: one row (three of the schedule's 4-row tile are guarded off), a column tail.
for bsz, k, n in ((7, 13, 19), (4, 64, 32), (1, 40, 37)):
    x, w, b = uniform((bsz, k), 5), uniform((n, k), 6), uniform((n,), 7)
    check("linear_%dx%dx%d" % (bsz, k, n), "linear", {"x": x, "w": w, "b": b},
          {"y": x.astype(np.float64) @ w.T + b}, 1e-5, 1e-5)

# linear_gemv (graph.pack-weights' kernel for one or two rows): column blocks of 4 and
# simd_lanes-wide partial sums over k, with tails on both (37 columns, 45 = 2 * 16 + 13 and
# 5 * 8 + 5 deep), and rows that the row loop of the generic kernel still covers (3).
for bsz, k, n in ((1, 45, 37), (2, 64, 32), (3, 5, 6)):
    x, w, b = uniform((bsz, k), 9), uniform((n, k), 10), uniform((n,), 11)
    check("linear_gemv_%dx%dx%d" % (bsz, k, n), "linear_gemv", {"x": x, "w": w, "b": b},
          {"y": x.astype(np.float64) @ w.T + b}, 1e-5, 1e-5)

# linear_pad (graph.pack-weights' kernel where 32 does not divide N): N rounded up to 32 inside,
# the copy to y guarded; N below one tile (10), one column past a tile (33), one column (1), and
# row counts with and without a tail of the 8-row tile (9, 16).
for bsz, k, n in ((9, 13, 10), (16, 40, 33), (3, 7, 1)):
    x, w, b = uniform((bsz, k), 12), uniform((n, k), 13), uniform((n,), 14)
    check("linear_pad_%dx%dx%d" % (bsz, k, n), "linear_pad", {"x": x, "w": w, "b": b},
          {"y": x.astype(np.float64) @ w.T + b}, 1e-5, 1e-5)

for m, n in ((7, 13), (16, 8)):
    x = uniform((m, n), 8)
    check("transpose2d_%dx%d" % (m, n), "transpose2d", {"x": x}, {"y": x.T.copy()}, 0.0, 0.0)
finish()
