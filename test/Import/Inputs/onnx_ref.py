"""A NumPy reference evaluator of ONNX graphs (float64), for the operators the importer's
test models use; independent of the importer (it follows the ONNX operator specification)."""
import math

import numpy as np
from onnx import helper, numpy_helper


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _pads2(a, x, k, s, d):
    auto = a.get("auto_pad", b"NOTSET").decode()
    if auto in ("NOTSET", "VALID"):
        p = list(a.get("pads", [0, 0, 0, 0])) if auto == "NOTSET" else [0, 0, 0, 0]
        return p
    pads = [0, 0, 0, 0]
    for i in range(2):
        n = x.shape[2 + i]
        out = -(-n // s[i])
        total = max(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - n)
        small, big = total // 2, total - total // 2
        pads[i], pads[i + 2] = (small, big) if auto == "SAME_UPPER" else (big, small)
    return pads


def _windows(x, k, s, d, pads, fill, out_hw):
    """[N, C, KH*KW, OH, OW] windows of x padded with `fill` (enough at the end for out_hw)."""
    n, c, h, w = x.shape
    oh, ow = out_hw
    need_h = (oh - 1) * s[0] + (k[0] - 1) * d[0] + 1
    need_w = (ow - 1) * s[1] + (k[1] - 1) * d[1] + 1
    pb = max(pads[2], need_h - h - pads[0])
    pr = max(pads[3], need_w - w - pads[1])
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pb), (pads[1], pr)), constant_values=fill)
    wins = []
    for r in range(k[0]):
        for q in range(k[1]):
            wins.append(xp[:, :, r * d[0]:r * d[0] + s[0] * (oh - 1) + 1:s[0],
                           q * d[1]:q * d[1] + s[1] * (ow - 1) + 1:s[1]])
    return np.stack(wins, axis=2)


def conv(x, w, b, a):
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    g = a.get("group", 1)
    k = w.shape[2:]
    pads = _pads2(a, x, k, s, d)
    n, c, h, wd = x.shape
    oh = (h + pads[0] + pads[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (wd + pads[1] + pads[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    win = _windows(x, k, s, d, pads, 0.0, (oh, ow))  # N, C, R*Q, OH, OW
    kout = w.shape[0]
    cg = c // g
    y = np.zeros((n, kout, oh, ow))
    for gi in range(g):
        ks = slice(gi * kout // g, (gi + 1) * kout // g)
        wg = w[ks].reshape(kout // g, cg, -1)
        y[:, ks] = np.einsum("ncjhw,kcj->nkhw", win[:, gi * cg:(gi + 1) * cg], wg)
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def pool(x, a, kind):
    k = a["kernel_shape"]
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    pads = _pads2(a, x, k, s, d)
    h, w = x.shape[2:]
    out = []
    for i, n in enumerate((h, w)):
        span = n + pads[i] + pads[i + 2] - d[i] * (k[i] - 1) - 1
        if a.get("ceil_mode", 0):
            o = -(-span // s[i]) + 1
            if (o - 1) * s[i] >= n + pads[i]:
                o -= 1
        else:
            o = span // s[i] + 1
        out.append(o)
    if kind == "max":
        return _windows(x, k, s, d, pads, -np.inf, out).max(axis=2)
    win = _windows(x, k, s, d, pads, 0.0, out).sum(axis=2)
    ones = np.ones((1, 1, h, w))
    if a.get("count_include_pad", 0):
        ones = np.pad(ones, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                      constant_values=1.0)
        cnt = _windows(ones, k, s, d, [0, 0, 0, 0], 0.0, out).sum(axis=2)
    else:
        cnt = _windows(ones, k, s, d, pads, 0.0, out).sum(axis=2)
    return win / cnt


def run(model, feeds):
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        a = _attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        f64 = lambda v: np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind == "f" else v
        x = [f64(v) if v is not None else None for v in x]
        if op == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]
            B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * A @ B
            if len(x) > 2 and x[2] is not None:
                y = y + a.get("beta", 1.0) * x[2]
        elif op == "MatMul":
            y = np.matmul(x[0], x[1])
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-x[0]))
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Erf":
            y = np.vectorize(math.erf)(x[0])
        elif op == "Sqrt":
            y = np.sqrt(x[0])
        elif op == "Exp":
            y = np.exp(x[0])
        elif op == "Log":
            y = np.log(x[0])
        elif op == "Abs":
            y = np.abs(x[0])
        elif op == "Neg":
            y = -x[0]
        elif op == "Reciprocal":
            y = 1 / x[0]
        elif op == "LeakyRelu":
            y = np.where(x[0] >= 0, x[0], a.get("alpha", 0.01) * x[0])
        elif op == "HardSigmoid":
            y = np.clip(a.get("alpha", 0.2) * x[0] + a.get("beta", 0.5), 0, 1)
        elif op == "HardSwish":
            y = x[0] * np.clip(x[0] / 6 + 0.5, 0, 1)
        elif op == "Clip":  # bounds as inputs (opset 11 on) or attributes (before)
            lo = x[1] if len(x) > 1 and x[1] is not None else a.get("min", -np.inf)
            hi = x[2] if len(x) > 2 and x[2] is not None else a.get("max", np.inf)
            y = np.minimum(np.maximum(x[0], lo), hi)
        elif op in ("Add", "Sub", "Mul", "Div", "Pow"):
            fn = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
                  "Pow": np.power}[op]
            y = fn(x[0], x[1])
            if x[0].dtype.kind == "i" and op == "Div":
                y = x[0] // x[1]
        elif op == "Conv" and x[0].ndim == 3:  # 1-D: a 2-D convolution of height 1
            a2 = dict(a)
            for key, pad in (("strides", 1), ("dilations", 1), ("kernel_shape", 1)):
                if key in a:
                    a2[key] = [pad] + list(a[key])
            if "pads" in a:
                a2["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
            y = conv(x[0][:, :, None], x[1][:, :, None], x[2] if len(x) > 2 else None,
                     a2)[:, :, 0]
        elif op == "Conv":
            y = conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op == "BatchNormalization":
            sh = (1, -1) + (1,) * (x[0].ndim - 2)
            y = ((x[0] - x[3].reshape(sh)) / np.sqrt(x[4].reshape(sh) + a.get("epsilon", 1e-5))
                 * x[1].reshape(sh) + x[2].reshape(sh))
        elif op == "MaxPool":
            y = pool(x[0], a, "max")
        elif op == "AveragePool":
            y = pool(x[0], a, "avg")
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "GlobalMaxPool":
            y = x[0].max(axis=(2, 3), keepdims=True)
        elif op == "Range":
            y = np.arange(x[0], x[1], x[2])
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Reshape":
            shape = [x[0].shape[i] if v == 0 else v for i, v in enumerate(x[1])]
            y = x[0].reshape(shape)
        elif op == "Shape":
            y = np.array(x[0].shape, dtype=np.int64)
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            axes = a["axes"] if opset < 13 else list(x[1])
            y = x[0]
            for ax in sorted(v % (y.ndim + len(axes)) for v in axes):
                y = np.expand_dims(y, ax)
        elif op == "Squeeze":
            axes = a.get("axes") if opset < 13 else (list(x[1]) if len(x) > 1 else None)
            y = np.squeeze(x[0], axis=tuple(axes) if axes else None)
        elif op == "Slice":
            sl = [slice(None)] * x[0].ndim
            axes = x[3] if len(x) > 3 and x[3] is not None else range(len(x[1]))
            steps = x[4] if len(x) > 4 and x[4] is not None else [1] * len(x[1])
            for st, en, ax, sp in zip(x[1], x[2], axes, steps):
                sl[ax] = slice(st, en, sp)
            y = x[0][tuple(sl)]
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Cast":
            y = x[0].astype(np.float64 if a["to"] == 1 else np.int64)
        elif op == "Transpose":
            y = np.transpose(x[0], a.get("perm"))
        elif op in ("Softmax", "LogSoftmax"):
            ax = a.get("axis", -1 if opset >= 13 else 1)
            if opset < 13:
                shp = x[0].shape
                v = x[0].reshape(int(np.prod(shp[:ax])), -1)
                ax2 = 1
            else:
                v, ax2 = x[0], ax
            e = np.exp(v - v.max(axis=ax2, keepdims=True))
            y = e / e.sum(axis=ax2, keepdims=True)
            if op == "LogSoftmax":
                y = np.log(y)
            if opset < 13:
                y = y.reshape(x[0].shape)
        elif op == "Pad":
            r = x[0].ndim
            p = list(x[1])
            v = float(x[2]) if len(x) > 2 and x[2] is not None else 0.0
            y = np.pad(x[0], [(p[i], p[i + r]) for i in range(r)], constant_values=v)
        elif op == "LayerNormalization":
            ax = a.get("axis", -1) % x[0].ndim
            axes = tuple(range(ax, x[0].ndim))
            m = x[0].mean(axis=axes, keepdims=True)
            var = ((x[0] - m) ** 2).mean(axis=axes, keepdims=True)
            y = (x[0] - m) / np.sqrt(var + a.get("epsilon", 1e-5)) * x[1]
            if len(x) > 2 and x[2] is not None:
                y = y + x[2]
        elif op in ("ReduceMean", "ReduceSum", "ReduceMax"):
            axes = a.get("axes") if not (op == "ReduceSum" and opset >= 13) else (
                list(x[1]) if len(x) > 1 else None)
            fn = {"ReduceMean": np.mean, "ReduceSum": np.sum, "ReduceMax": np.max}[op]
            y = fn(x[0], axis=tuple(axes) if axes else None, keepdims=bool(a.get("keepdims", 1)))
        elif op == "Split":
            ax = a.get("axis", 0)
            parts = a.get("split") if opset < 13 else (list(x[1]) if len(x) > 1 else None)
            if parts is None:
                parts = [x[0].shape[ax] // len(node.output)] * len(node.output)
            ys = np.split(x[0], np.cumsum(parts)[:-1], axis=ax)
            for name, v in zip(node.output, ys):
                env[name] = v
            continue
        elif op == "Expand":
            y = x[0] * np.ones(tuple(x[1]), dtype=x[0].dtype)
        elif op in ("Identity", "Dropout"):
            y = x[0]
        elif op == "ConstantOfShape":
            y = np.zeros(tuple(x[0]))
        elif op == "Constant":
            y = numpy_helper.to_array(a["value"])
        else:
            raise NotImplementedError(op)
        env[node.output[0]] = y
    return [env[o.name] for o in model.graph.output]
