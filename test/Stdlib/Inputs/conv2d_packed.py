# conv2d_pack_weight<KV> and conv2d_packed<S, P, K, KV, WT> (the packed convolution
# graph.pack-weights makes of nn.conv2d on a constant weight) against NumPy (float64): rtol 1e-5,
# atol 1e-5. The packed weight is checked against its NumPy packing (zeros past K), then each
# convolution case runs on the NumPy-packed weight (KV = 8 or 32, what graph.pack-weights uses;
# one case with KV = 16: two channel tiles per block). Cases for the register tile (WT = 7 or 14
# columns x 8 or 32 channels): K not a multiple of 8 (19, 3, 20, 40), widths not a multiple of
# WT (9, 13, 10, 12, 5, 20) and multiples (7, 14, 28), stride 2, padding 0, 1 and 3, 1 x 1 and
# 7 x 7 kernels, batch 2.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from routes import *


def pack(w, KV=8):
    k, c, r, q = w.shape
    kb = (k + KV - 1) // KV
    wz = np.zeros((kb * KV, c, r, q), dtype=w.dtype)
    wz[:k] = w
    # [KB * KV, C, R, Q] -> [KB, KV, C, R, Q] -> [KB, R, Q, C, KV]
    return np.ascontiguousarray(wz.reshape(kb, KV, c, r, q).transpose(0, 3, 4, 2, 1))


w = uniform((19, 3, 2, 3), 3)
check("pack_k19", "conv2d_pack_weight", {"wt": w}, {"wp": pack(w).astype(np.float64)}, 0, 0,
      {"KV": 8})

# The C++ route compiles each case's instance with g++ (its constants differ), the costliest
# step of the test: it runs on a representative set (each kernel size, stride, padding, channel
# block and column tile, tails of both tiles); the other routes run every case.
ALL = [r.name for r in ROUTES]
CPP_CASES = {"k19_w9_s1p1", "k20_s2p1", "k24_1x1_s2", "k20_7x7_s2p3", "k40_kv16_12x12",
             "wt14_k33_kv32_s2_w56", "wt14_k19_kv8_w20"}

# The last cases have the 14-column tile (graph.pack-weights' choice with AVX-512 where 14
# divides the output width): exact widths (14, 28 at stride 2) and tails (20 = 14 + 6, 9 < 14),
# on 32- and 8-channel blocks.
for tag, xs, ws, s, p, kv, wt in (
        ("k19_w9_s1p1", (1, 5, 6, 9), (19, 5, 3, 3), 1, 1, 8, 7),
        ("k3_7x13_s1p0", (1, 2, 7, 13), (3, 2, 3, 3), 1, 0, 8, 7),
        ("k20_s2p1", (2, 3, 7, 9), (20, 3, 3, 3), 2, 1, 8, 7),
        ("k16_1x1_w7", (1, 8, 5, 7), (16, 8, 1, 1), 1, 0, 8, 7),
        ("k24_1x1_s2", (1, 8, 14, 14), (24, 8, 1, 1), 2, 0, 8, 7),
        ("k20_7x7_s2p3", (1, 3, 13, 10), (20, 3, 7, 7), 2, 3, 8, 7),
        ("k8_14x14_s1p1", (1, 9, 14, 14), (8, 9, 3, 3), 1, 1, 8, 7),
        ("k40_kv16_12x12", (1, 17, 12, 12), (40, 17, 3, 3), 1, 1, 16, 7),
        ("wt14_k40_kv32_w14", (1, 6, 5, 14), (40, 6, 3, 3), 1, 1, 32, 14),
        ("wt14_k19_kv8_w20", (1, 5, 4, 20), (19, 5, 3, 3), 1, 1, 8, 14),
        ("wt14_k33_kv32_s2_w56", (1, 3, 6, 56), (33, 3, 3, 3), 2, 1, 32, 14),
        ("wt14_k8_kv32_w9", (2, 4, 3, 9), (8, 4, 3, 3), 1, 1, 32, 14)):
    x, w = uniform(xs, 1), uniform(ws, 2)
    check("conv2d_packed_" + tag, "conv2d_packed", {"x": x, "wp": pack(w, kv)},
          {"y": conv2d(x, w, s, p)}, 1e-5, 1e-5, {"S": s, "P": p, "K": ws[0], "KV": kv, "WT": wt},
          routes=None if tag in CPP_CASES else [r for r in ALL if r != "cpp"])
finish()
