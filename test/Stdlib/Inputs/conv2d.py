# conv2d<S, P> (NCHW, weights [K, C, R, Q], zero padding) against NumPy (float64):
# rtol 1e-5, atol 1e-5. Cases: stride 1 without padding, stride 2 with padding 1 on odd
# sizes, a 7 x 13 image (the vectorized split of 8 leaves a guarded tail), a 1 x 1 kernel
# and a non-square kernel with stride 3; then shapes for the register tile of the schedule
# (7 columns x 8 output channels): channel and column tails, a strided 1 x 1, batch 2.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


for tag, xs, ws, s, p in (("s1p0", (2, 3, 6, 6), (4, 3, 3, 3), 1, 0),
                          ("s2p1", (2, 3, 7, 9), (4, 3, 3, 3), 2, 1),
                          ("7x13_s1p1", (1, 2, 7, 13), (3, 2, 3, 3), 1, 1),
                          ("1x1", (2, 5, 4, 5), (3, 5, 1, 1), 1, 0),
                          ("2x3_s3p2", (1, 2, 8, 10), (2, 2, 2, 3), 3, 2),
                          # Register tiles (7 columns x 8 channels): a full tile with tails in
                          # both (19 channels, width 9), a strided 1 x 1 and a 14-wide image.
                          ("k19_w9_s1p1", (1, 5, 6, 9), (19, 5, 3, 3), 1, 1),
                          ("k16_1x1_s2", (1, 8, 14, 14), (16, 8, 1, 1), 2, 0),
                          ("k24_14x14_s1p1", (2, 6, 14, 14), (24, 6, 3, 3), 1, 1)):
    x, w = uniform(xs, 1), uniform(ws, 2)
    check("conv2d_" + tag, "conv2d", {"x": x, "wt": w}, {"y": conv2d(x, w, s, p)}, 1e-5, 1e-5,
          {"S": s, "P": p})
finish()
