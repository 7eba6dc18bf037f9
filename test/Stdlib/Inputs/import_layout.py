# The layout, convolution, pooling and per-axis operators added for tools/tdsl-import against
# NumPy (float64): broadcast4, expand4, matmul_nt, channel_bias_add, batch_norm, conv2d_ext
# (asymmetric padding, strides, dilations, groups, depthwise), max_pool2d_ext, avg_pool2d_ext
# (count_include_pad 0 and 1), embedding (a negative index), sum/mean/max_mid, slice_axis,
# concat2, concat3, concat4, pad_axis, swap_axes. Convolution and pooling references are the
# ONNX evaluator of test/Import/Inputs/onnx_ref.py. Data movement is exact; sums rtol 1e-5, atol 1e-5.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Import",
                                "Inputs"))
from routes import *
import onnx_ref

x = uniform((2, 1, 4, 1), 1)
like = uniform((2, 3, 4, 5), 2)
check("broadcast4", "broadcast4", {"x": x, "like": like},
      {"y": np.broadcast_to(x, like.shape)}, 0.0, 0.0)
x = uniform((1, 3, 1, 5), 3)
check("expand4", "expand4", {"x": x}, {"y": np.broadcast_to(x, (2, 3, 4, 5))}, 0.0, 0.0,
      {"N0": 2, "N1": 3, "N2": 4, "N3": 5})
a, b = uniform((7, 13), 4), uniform((5, 13), 5)
check("matmul_nt", "matmul_nt", {"a": a, "b": b},
      {"c": a.astype(np.float64) @ b.astype(np.float64).T}, 1e-5, 1e-5)
x, c = uniform((2, 3, 10), 6), uniform((3,), 7)
check("channel_bias_add", "channel_bias_add", {"x": x, "b": c}, {"y": x + c[None, :, None]},
      0.0, 0.0)
s, t, m, v = uniform((3,), 8), uniform((3,), 9), uniform((3,), 10), uniform((3,), 11, 0.5, 2.0)
x64 = x.astype(np.float64)
bn = ((x64 - m[None, :, None]) / np.sqrt(v[None, :, None] + np.float32(1e-3)) *
      s[None, :, None] + t[None, :, None])
check("batch_norm", "batch_norm",
      {"x": x, "scale": s, "bias": t, "mean": m, "var": v, "eps": 1e-3}, {"y": bn}, 1e-5, 1e-5)

for tag, xs, ws, sh, sw, pads, dh, dw, g in (
        ("asym", (2, 3, 9, 8), (4, 3, 3, 2), 2, 1, (1, 0, 2, 1), 1, 2, 1),
        ("depthwise", (1, 4, 7, 7), (4, 1, 3, 3), 1, 1, (1, 1, 1, 1), 2, 2, 4),
        ("grouped", (1, 4, 6, 5), (6, 2, 2, 3), 1, 2, (0, 1, 1, 0), 1, 1, 2),
        # The schedule's tiles: 7 rows (a tail of the 2-row tile), 10 and 9 columns (a tail of
        # the 8-column block), strides 2 and 3 (input columns in 2 and 3 phases), dilation 2.
        ("depthwise_s2", (1, 3, 13, 19), (3, 1, 3, 3), 2, 2, (1, 1, 1, 1), 1, 1, 3),
        ("grouped_s3", (2, 2, 9, 26), (4, 1, 3, 3), 1, 3, (0, 2, 1, 1), 1, 2, 2)):
    x, w = uniform(xs, 12), uniform(ws, 13)
    attrs = {"strides": [sh, sw], "pads": [pads[0], pads[1], pads[2], pads[3]],
             "dilations": [dh, dw], "group": g}
    want = onnx_ref.conv(x.astype(np.float64), w.astype(np.float64), None, attrs)
    check("conv2d_ext_" + tag, "conv2d_ext", {"x": x, "wt": w}, {"y": want}, 1e-5, 1e-5,
          {"SH": sh, "SW": sw, "PT": pads[0], "PL": pads[1], "PB": pads[2], "PR": pads[3],
           "DH": dh, "DW": dw, "G": g})

x = uniform((1, 2, 9, 8), 14)
attrs = {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2]}
check("max_pool2d_ext", "max_pool2d_ext", {"x": x},
      {"y": onnx_ref.pool(x.astype(np.float64), attrs, "max")}, 0.0, 0.0,
      {"KH": 3, "KW": 2, "SH": 2, "SW": 1, "PT": 1, "PL": 0, "PB": 2, "PR": 1, "DH": 1, "DW": 2})
for cip in (0, 1):
    attrs = {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 2, 1],
             "count_include_pad": cip}
    check("avg_pool2d_ext_cip%d" % cip, "avg_pool2d_ext", {"x": x},
          {"y": onnx_ref.pool(x.astype(np.float64), attrs, "avg")}, 1e-5, 1e-6,
          {"KH": 3, "KW": 2, "SH": 2, "SW": 1, "PT": 1, "PL": 0, "PB": 2, "PR": 1, "CIP": cip})

table = uniform((10, 6), 15)
idx = np.array([3, 0, 9, -1, 3], dtype=np.int64)
check("embedding", "embedding", {"table": table, "idx": idx}, {"y": table[idx]}, 0.0, 0.0)
x = uniform((2, 7, 5), 16)
x64 = x.astype(np.float64)
check("sum_mid", "sum_mid", {"x": x}, {"y": x64.sum(axis=1)}, 1e-5, 1e-5)
check("mean_mid", "mean_mid", {"x": x}, {"y": x64.mean(axis=1)}, 1e-5, 1e-5)
check("max_mid", "max_mid", {"x": x}, {"y": x64.max(axis=1)}, 0.0, 0.0)
check("slice_axis", "slice_axis", {"x": x}, {"y": x[:, 1:6:2]}, 0.0, 0.0,
      {"S": 1, "E": 6, "T": 2})
a, b = uniform((2, 3, 4), 17), uniform((2, 5, 4), 18)
check("concat2", "concat2", {"a": a, "b": b}, {"y": np.concatenate([a, b], axis=1)}, 0.0, 0.0)
c, d = uniform((2, 1, 4), 19), uniform((2, 2, 4), 20)
check("concat3", "concat3", {"a": a, "b": b, "c": c}, {"y": np.concatenate([a, b, c], axis=1)},
      0.0, 0.0)
check("concat4", "concat4", {"a": a, "b": b, "c": c, "d": d},
      {"y": np.concatenate([a, b, c, d], axis=1)}, 0.0, 0.0)
check("pad_axis", "pad_axis", {"x": a, "v": 0.5},
      {"y": np.pad(a, ((0, 0), (2, 1), (0, 0)), constant_values=0.5)}, 0.0, 0.0,
      {"BF": 2, "AF": 1})
x = uniform((2, 3, 4, 5), 19)
check("swap_axes", "swap_axes", {"x": x}, {"y": x.transpose(0, 2, 1, 3)}, 0.0, 0.0)
finish()
