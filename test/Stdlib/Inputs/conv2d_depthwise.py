# conv2d_depthwise<P, KS> (stride 1, vectors along the rows), conv2d_depthwise_strided<S, P, KS>
# (strides above 1, vectors along the rows of a column-phased copy) and
# conv2d_depthwise_cb<S, P, KS> (vectors over blocks of 8 channels), what graph.pack-weights
# makes of a depthwise conv2d_ext, against NumPy (float64): rtol 1e-5, atol 1e-5. Every case
# runs cb and the row function its stride allows.
# conv2d_depthwise's tile (2 output rows x 8 columns): output widths that 8 does not divide (7,
# 9, 13, 5) and that it does (8, 16), odd output heights (the row tile's tail). conv2d_depthwise_cb's
# tile (7 columns x 8 channels): channel counts that 8 does not divide (3, 5, 6, 2, 4) and that it
# does (8, 16), widths that 7 does not divide. Strides 1, 2 and 3, padding 0, 1 and 2, 1 x 1,
# 3 x 3 and 5 x 5 windows, batch 2.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def depthwise(x, w, stride, pad):
    n, c, h, wd = x.shape
    ks = w.shape[2]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - ks) // stride + 1, (wd + 2 * pad - ks) // stride + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(ks):
        for j in range(ks):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            y += patch * w[None, :, 0, i, j, None, None].astype(np.float64)
    return y


for tag, xs, s, p, ks in (("c5_7x7_s1p1", (1, 5, 7, 7), 1, 1, 3),
                          ("c3_9x13_s1p1", (1, 3, 9, 13), 1, 1, 3),
                          ("c4_6x16_s1p1", (1, 4, 6, 16), 1, 1, 3),
                          ("c3_11x14_s2p1", (1, 3, 11, 14), 2, 1, 3),
                          ("c2_13x19_s2p1", (2, 2, 13, 19), 2, 1, 3),
                          ("c3_10x10_s2p0", (1, 3, 10, 10), 2, 0, 3),
                          ("c3_9x11_5x5_s1p2", (1, 3, 9, 11), 1, 2, 5),
                          ("c6_5x5_1x1_s1p0", (1, 6, 5, 5), 1, 0, 1),
                          ("c8_17x17_s1p1", (1, 8, 17, 17), 1, 1, 3),
                          ("c4_9x9_5x5_s2p2", (1, 4, 9, 9), 2, 2, 5),
                          ("c5_8x8_s2p1", (1, 5, 8, 8), 2, 1, 3),
                          ("c16_15x15_s1p1", (1, 16, 15, 15), 1, 1, 3),
                          ("c13_14x16_s3p1", (1, 13, 14, 16), 3, 1, 3)):
    x, w = uniform(xs, 1), uniform((xs[1], 1, ks, ks), 2)
    want = depthwise(x, w, s, p)
    if s == 1:
        check("conv2d_depthwise_" + tag, "conv2d_depthwise", {"x": x, "wt": w}, {"y": want}, 1e-5,
              1e-5, {"P": p, "KS": ks})
    else:
        check("conv2d_depthwise_strided_" + tag, "conv2d_depthwise_strided", {"x": x, "wt": w},
              {"y": want}, 1e-5, 1e-5, {"S": s, "P": p, "KS": ks})
    check("conv2d_depthwise_cb_" + tag, "conv2d_depthwise_cb", {"x": x, "wt": w}, {"y": want},
          1e-5, 1e-5, {"S": s, "P": p, "KS": ks})
finish()
