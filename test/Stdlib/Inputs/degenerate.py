# Every function of the standard library on its degenerate instances: extent-1 dimensions
# (alone and beside a long one), one channel, 1 x 1 windows and kernels, strides above the
# window, outputs one element wide. A default schedule must never fail on a valid call
# (issue: avg_pool2d's schedule bound 7 loops where compute_at had made 5 on a 1 x 1 window).
#
# Called as `degenerate.py TDSL_RUN NN.tdsl TMPDIR`. Each case runs `tdsl-run --check` (the
# scheduled function, compiled, against the unscheduled one in the interpreter) on two routes:
# the LLVM JIT and the C++ emitter compiled by the Clang libraries (--via=cpp). Both apply the
# default schedule, so a schedule that fails or changes the result fails here; interpreting the
# scheduled function as well would add a third of the time and no failure the two cannot show.
# It prints `OK <case>: llvm cpp` or `FAIL <case> <route>: <message>`, then `CASES <n>`, and
# exits 1 when a case failed or a function of NN.tdsl has no case.
import concurrent.futures
import os
import re
import subprocess
import sys

import numpy as np

TDSL_RUN, SOURCE, TMP = sys.argv[1:4]
os.makedirs(TMP, exist_ok=True)
ROUTES = (("llvm", []), ("cpp", ["--via=cpp"]))


def f32(*shape, lo=-1.0, hi=1.0):
    return ("f32", shape, lo, hi)


def pos(*shape):
    return f32(*shape, lo=0.5, hi=2.0)


def idx(values):
    return ("i64", values)


CASES = []


def case(func, tag, inputs, **consts):
    CASES.append((func + "_" + tag, func, inputs, consts))


def shapes2(func, make):
    """An element-wise or row-wise function of [B, N] tensors: 1 x 1, 1 x 37, 37 x 1."""
    for b, n in ((1, 1), (1, 37), (37, 1)):
        case(func, "%dx%d" % (b, n), make(b, n))


for name in ("relu", "gelu", "sigmoid", "tanh", "erf", "exp", "neg", "abs", "hard_swish",
             "softmax", "log_softmax", "sum", "mean", "max", "min"):
    shapes2(name, lambda b, n: {"x": f32(b, n)})
for name in ("log", "sqrt", "reciprocal"):
    shapes2(name, lambda b, n: {"x": pos(b, n)})
for name in ("add", "mul", "sub", "div"):
    shapes2(name, lambda b, n: {"a": f32(b, n), "b": pos(b, n)})
shapes2("pow", lambda b, n: {"a": pos(b, n), "b": f32(b, n)})
for name in ("add_scalar", "mul_scalar", "rsub_scalar", "div_scalar", "rdiv_scalar",
             "pow_scalar"):
    shapes2(name, lambda b, n: {"x": pos(b, n), "s": 1.5})
shapes2("hard_sigmoid", lambda b, n: {"x": f32(b, n), "alpha": 0.2, "beta": 0.5})
shapes2("leaky_relu", lambda b, n: {"x": f32(b, n), "alpha": 0.1})
shapes2("clip", lambda b, n: {"x": f32(b, n), "lo": -0.5, "hi": 0.5})
shapes2("bias_add", lambda b, n: {"x": f32(b, n), "b": f32(n)})
shapes2("row_bias_add", lambda b, n: {"x": f32(b, n), "b": f32(b)})
shapes2("layer_norm", lambda b, n: {"x": f32(b, n), "gamma": f32(n), "beta": f32(n),
                                    "eps": 1e-5})
shapes2("transpose2d", lambda b, n: {"x": f32(b, n)})

# Products: every extent 1, and one extent 1 beside long ones.
for m, k, n in ((1, 1, 1), (1, 37, 1), (37, 1, 19), (1, 1, 40), (5, 33, 1)):
    tag = "%dx%dx%d" % (m, k, n)
    case("matmul", tag, {"a": f32(m, k), "b": f32(k, n)})
    case("matmul_rows", tag, {"a": f32(m, k), "b": f32(k, n)})
    case("matmul_nt", tag, {"a": f32(m, k), "b": f32(n, k)})
    for name in ("linear", "linear_pad", "linear_gemv"):
        case(name, tag, {"x": f32(m, k), "w": f32(n, k), "b": f32(n)})
for t, m, k, n in ((1, 1, 1, 1), (2, 1, 5, 1), (1, 17, 1, 3)):
    case("batch_matmul", "%dx%dx%dx%d" % (t, m, k, n), {"a": f32(t, m, k), "b": f32(t, k, n)})

# Convolutions: all ones; a 1 x 1 kernel at stride 2 (stride above the window); one channel
# in and out; a 3 x 3 kernel over a 1 x 1 input with padding 1; one output column.
for tag, x, w, s, p in (("ones", (1, 1, 1, 1), (1, 1, 1, 1), 1, 0),
                        ("k1s2", (1, 3, 5, 5), (4, 3, 1, 1), 2, 0),
                        ("c1k1", (1, 1, 6, 9), (1, 1, 3, 3), 1, 1),
                        ("in1x1p1", (1, 2, 1, 1), (3, 2, 3, 3), 1, 1),
                        ("col1", (1, 2, 5, 3), (2, 2, 3, 3), 1, 0)):
    case("conv2d", tag, {"x": f32(*x), "wt": f32(*w)}, S=s, P=p)
    k, c, r, q = w
    case("conv2d_ext", tag, {"x": f32(*x), "wt": f32(*w)}, SH=s, SW=s, PT=p, PL=p, PB=p,
         PR=p, DH=1, DW=1, G=1)
    for kv in (8, 16):
        case("conv2d_pack_weight", "%s_kv%d" % (tag, kv), {"wt": f32(*w)}, KV=kv)
        case("conv2d_packed", "%s_kv%d" % (tag, kv),
             {"x": f32(*x), "wp": f32((k + kv - 1) // kv, r, q, c, kv)}, S=s, P=p, K=k, KV=kv,
             WT=7)
# Grouped convolution with one channel per group, a 1 x 1 kernel at stride 3.
case("conv2d_ext", "g2s3", {"x": f32(1, 2, 4, 4), "wt": f32(2, 1, 1, 1)}, SH=3, SW=3, PT=0,
     PL=0, PB=0, PR=0, DH=1, DW=1, G=2)
for tag, x, ks, s, p in (("ones", (1, 1, 1, 1), 1, 1, 0), ("k1s2", (1, 3, 5, 5), 1, 2, 0),
                         ("in1x1p1", (1, 1, 1, 1), 3, 1, 1), ("c1", (1, 1, 7, 9), 3, 2, 1),
                         ("col1", (1, 2, 4, 3), 3, 1, 0)):
    if s == 1:
        case("conv2d_depthwise", tag, {"x": f32(*x), "wt": f32(x[1], 1, ks, ks)}, P=p, KS=ks)
    else:
        case("conv2d_depthwise_strided", tag, {"x": f32(*x), "wt": f32(x[1], 1, ks, ks)}, S=s,
             P=p, KS=ks)
    case("conv2d_depthwise_cb", tag, {"x": f32(*x), "wt": f32(x[1], 1, ks, ks)}, S=s, P=p,
         KS=ks)

# Pooling: 1 x 1 windows (stride 1 and 2), a window of 2 at stride 3 (rows between windows),
# one element in and out, a window the size of the input (one output column).
for tag, x, k, s, p in (("k1s1", (1, 3, 4, 4), 1, 1, 0), ("k1s2", (1, 1, 5, 5), 1, 2, 0),
                        ("k2s3", (1, 2, 7, 7), 2, 3, 0), ("ones", (1, 1, 1, 1), 1, 1, 0),
                        ("whole", (1, 2, 3, 3), 3, 1, 0), ("k3p1in1", (1, 1, 1, 1), 3, 1, 1)):
    for name in ("max_pool2d", "avg_pool2d"):
        case(name, tag, {"x": f32(*x)}, K=k, S=s, P=p)
    case("max_pool2d_ext", tag, {"x": f32(*x)}, KH=k, KW=k, SH=s, SW=s, PT=p, PL=p, PB=p,
         PR=p, DH=1, DW=1)
    for cip in (0, 1):
        case("avg_pool2d_ext", "%s_cip%d" % (tag, cip), {"x": f32(*x)}, KH=k, KW=k, SH=s,
             SW=s, PT=p, PL=p, PB=p, PR=p, CIP=cip)
for shape in ((1, 1, 1, 1), (1, 1, 1, 7), (1, 3, 5, 1)):
    case("global_avg_pool2d", "x".join(map(str, shape)), {"x": f32(*shape)})

# Normalisation over [N, C, I] with one channel and one element per channel.
for shape in ((1, 1, 1), (1, 1, 37), (2, 3, 1)):
    tag = "x".join(map(str, shape))
    c = shape[1]
    case("channel_bias_add", tag, {"x": f32(*shape), "b": f32(c)})
    case("batch_norm", tag, {"x": f32(*shape), "scale": f32(c), "bias": f32(c),
                             "mean": f32(c), "var": pos(c), "eps": 1e-5})
    for name in ("sum_mid", "mean_mid", "max_mid", "min_mid"):
        case(name, tag, {"x": f32(*shape)})
    for mx in (0, 1):
        for last in (0, 1):
            case("arg_reduce_mid", "%s_%d%d" % (tag, mx, last), {"x": f32(*shape)}, MAX=mx,
                 LAST=last)

# Shape operators.
for tag, x, like in (("ones", (1, 1, 1, 1), (1, 1, 1, 1)), ("c", (1, 3, 1, 1), (2, 3, 4, 5)),
                     ("w", (1, 1, 1, 9), (1, 2, 1, 9))):
    case("broadcast4", tag, {"x": f32(*x), "like": f32(*like)})
    case("expand4", tag, {"x": f32(*x)}, N0=like[0], N1=like[1], N2=like[2], N3=like[3])
for tag, shape, k in (("ones", (1, 1, 1), 0), ("row", (1, 1, 7), -1), ("col", (2, 5, 1), 3)):
    for upper in (0, 1):
        case("trilu", "%s_%d" % (tag, upper), {"x": f32(*shape), "kt": idx([k])}, UPPER=upper)
        case("trilu_i64", "%s_%d" % (tag, upper),
             {"x": idx(np.arange(np.prod(shape)).reshape(shape).tolist()), "kt": idx([k])},
             UPPER=upper)
case("embedding", "ones", {"table": f32(1, 1), "idx": idx([0])})
case("embedding", "d1", {"table": f32(5, 1), "idx": idx([4, -1, 0])})
case("slice_axis", "ones", {"x": f32(1, 1, 1)}, S=0, E=1, T=1)
case("slice_axis", "step_above", {"x": f32(1, 5, 1)}, S=0, E=5, T=7)
case("concat2", "ones", {"a": f32(1, 1, 1), "b": f32(1, 1, 1)})
case("concat2", "c1", {"a": f32(2, 1, 1), "b": f32(2, 6, 1)})
case("concat3", "ones", {"a": f32(1, 1, 1), "b": f32(1, 1, 1), "c": f32(1, 1, 1)})
case("concat3", "c1", {"a": f32(2, 1, 1), "b": f32(2, 6, 1), "c": f32(2, 1, 1)})
case("concat4", "ones", {"a": f32(1, 1, 1), "b": f32(1, 1, 1), "c": f32(1, 1, 1), "d": f32(1, 1, 1)})
case("concat4", "c1", {"a": f32(2, 1, 3), "b": f32(2, 6, 3), "c": f32(2, 1, 3), "d": f32(2, 2, 3)})
case("pad_axis", "none", {"x": f32(1, 1, 1), "v": 0.0}, BF=0, AF=0)
case("pad_axis", "before", {"x": f32(1, 1, 1), "v": -1.0}, BF=1, AF=0)
case("swap_axes", "ones", {"x": f32(1, 1, 1, 1)})
case("swap_axes", "n5", {"x": f32(1, 1, 5, 1)})

# Losses and optimiser updates (spec §13): one row, one class, one parameter.
for b, c in ((1, 1), (1, 37), (37, 1)):
    case("cross_entropy", "%dx%d" % (b, c), {"logits": f32(b, c), "labels": idx([c - 1] * b)})
for n in (1, 37):
    case("mse_loss", "%d" % n, {"a": f32(n), "b": f32(n)})
    case("sgd", "%d" % n, {"p": f32(n), "g": f32(n), "lr": 0.1})
    case("sgd_momentum", "%d" % n, {"p": f32(n), "g": f32(n), "v": f32(n), "lr": 0.1,
                                     "mu": 0.9})
    for step in (1, 3):
        case("adam", "%d_step%d" % (n, step),
             {"p": f32(n), "g": f32(n), "m": f32(n), "v": pos(n), "step": step, "lr": 0.1,
              "beta1": 0.9, "beta2": 0.999, "eps": 1e-8})


def run_case(index, tag, func, inputs, consts):
    rng = np.random.default_rng(index)
    args = ["--func", func]
    for name, spec in inputs.items():
        if isinstance(spec, (int, float)):
            args += ["--input", "%s=%r" % (name, spec)]
            continue
        path = os.path.join(TMP, "%s.%s.npy" % (tag, name))
        if spec[0] == "i64":
            np.save(path, np.array(spec[1], dtype=np.int64))
        else:
            _, shape, lo, hi = spec
            np.save(path, rng.uniform(lo, hi, size=shape).astype(np.float32))
        args += ["--input", "%s=%s" % (name, path)]
    for name, value in consts.items():
        args += ["-D", "%s=%d" % (name, value)]
    ran = []
    for route, flags in ROUTES:
        p = subprocess.run([TDSL_RUN, SOURCE, *args, *flags, "--check"], capture_output=True,
                           text=True, timeout=300)
        out = p.stdout + p.stderr
        if p.returncode != 0 or "check: OK" not in out:
            lines = [l for l in out.splitlines() if l.strip()]
            return "FAIL %s %s: %s" % (tag, route, " | ".join(lines[:3]) or "exit %d" %
                                       p.returncode)
        ran.append(route)
    return "OK %s: %s" % (tag, " ".join(ran))


funcs = set(re.findall(r"^func (\w+)", open(SOURCE).read(), re.M))
missing = sorted(funcs - {c[1] for c in CASES})
failed = bool(missing)
for name in missing:
    print("FAIL %s: no degenerate case" % name)
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = pool.map(lambda ic: run_case(ic[0], *ic[1]), enumerate(CASES))
    for line in results:
        print(line, flush=True)
        failed |= line.startswith("FAIL")
print("CASES %d" % len(CASES))
sys.exit(1 if failed else 0)
