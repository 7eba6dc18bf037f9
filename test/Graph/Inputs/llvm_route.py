"""Graphs through the LLVM backend (see llvm.tdsl): for each graph, `tdsl-run --check` in the
JIT and with --via=cpp, and the `tdslc --emit=obj` object linked with the DLPack harness of
test/CodeGen/CPP; every route against NumPy (rtol 1e-4, atol 1e-5), the object bitwise against
the JIT. Prints `ROUTES <graph> <output> OK` or what differs; then the error paths."""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtest import *  # noqa: E402,F401,F403

HARNESS = os.path.join(INPUTS, "..", "..", "CodeGen", "CPP", "Inputs", "harness.cpp")
LIB, LINK, LOAD = extern_library()


def uniform(shape, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def save(stem, name, value):
    path = os.path.join(TMP, "%s_%s.npy" % (stem, name))
    np.save(path, value)
    return path


def tdsl_run(graph, inputs, outputs, via):
    """tdsl-run --check (JIT or --via=cpp): the outputs by name."""
    args = [TDSL_RUN, SOURCE, "--func", graph, "--check", "--via=" + via] + LOAD
    for name, value in inputs.items():
        args += ["--input", "%s=%s" % (name, save(graph, "in_" + name, value))]
    paths = {}
    for name in outputs:
        paths[name] = os.path.join(TMP, "%s_%s_%s.npy" % (graph, via, name))
        args += ["--output", "%s=%s" % (name, paths[name])]
    r = run_or_die(args)
    if "check: OK: '%s'" % graph not in r.stdout:
        print("CHECK FAILED %s [%s]: %s" % (graph, via, r.stdout))
    return {name: np.load(path) for name, path in paths.items()}


def object_run(graph, inputs, outputs):
    """The LLVM object of `graph` linked with the harness (through the header's _dlpack)."""
    stem = os.path.join(TMP, graph + "_obj")
    run_or_die([TDSLC, SOURCE, "--func", graph, "--emit=obj", "-o", stem + ".o"])
    run_or_die([TDSLC, SOURCE, "--func", graph, "--emit=header", "-o", stem + ".h"])
    # The graph is declared after the funcs it calls.
    symbol = re.findall(r"int32_t (\w+)_dlpack\(", open(stem + ".h").read())[-1]
    n = len(inputs) + len(outputs)
    call = "TDSL_CALL(t)=%s_dlpack(%s)" % (symbol, ", ".join("&t[%d]" % i for i in range(n)))
    exe = stem + ".exe"
    run_or_die(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", TMP,
                '-DTDSL_HEADER="%s.h"' % os.path.basename(stem), "-D" + call, HARNESS,
                stem + ".o", "-o", exe] + OBJ_LDFLAGS + LINK)
    args = [exe] + [save(graph, "in_" + k, v) for k, v in inputs.items()]
    paths = {}
    for name, shape in outputs.items():
        paths[name] = stem + "_" + name + ".npy"
        args.append("out:%s:%s" % (save(graph, "init_" + name, np.zeros(shape, np.float32)),
                                   paths[name]))
    run_or_die(args)
    return {name: np.load(path) for name, path in paths.items()}


def routes(graph, inputs, want):
    """All routes of `graph` on `inputs`; `want`: output name -> NumPy reference."""
    shapes = {name: w.shape for name, w in want.items()}
    got = {"jit": tdsl_run(graph, inputs, shapes, "llvm"),
           "cpp": tdsl_run(graph, inputs, shapes, "cpp"),
           "obj": object_run(graph, inputs, shapes)}
    for name, w in want.items():
        problems = []
        for route, outs in got.items():
            g = outs[name]
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
                problems.append("%s vs NumPy: max diff %g" % (
                    route, np.max(np.abs(g - w)) if g.shape == w.shape else float("inf")))
        if not np.array_equal(got["obj"][name], got["jit"][name]):
            problems.append("object vs JIT not bitwise equal")
        print("ROUTES %s %s %s" % (graph, name, "OK" if not problems else "; ".join(problems)))


def relu(a):
    return np.maximum(a, 0)


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


B = 5
x, w0, b0 = uniform((B, 64), 1), uniform((32, 64), 2), uniform((32,), 3)
w1, b1 = uniform((10, 32), 4), uniform((10,), 5)
routes("mlp", {"x": x, "w0": w0, "b0": b0, "w1": w1, "b1": b1},
       {"o": relu(x @ w0.T + b0) @ w1.T + b1})

x, y = uniform((7, 64), 6), uniform((64, 64), 7)
b = sigmoid(relu(x))
d = np.tanh(b) + b
routes("chain", {"x": x, "y": y}, {"d": d, "v": 2 * d[:, ::2] + relu(y)[0, 1]})

x = uniform((8, 16), 8)
routes("small", {"x": x}, {"z": sigmoid(x) + np.tanh(sigmoid(x))})

x, w = uniform((3, 4), 9), uniform((4, 4), 10)
routes("copies", {"x": x, "w": w},
       {"f": w.reshape(16), "k": relu(x).reshape(12)})

x = uniform((37,), 11)
routes("scalars", {"x": x}, {"y": x * np.float32(1.5) + np.float32(0.25 - 3 - 300 + 200)})

x, w, v = uniform((B, 16), 12), uniform((16, 8), 13), uniform((8, 8), 14)
routes("blas", {"x": x, "w": w, "v": v}, {"r": relu(np.tanh(x @ w) @ v)})

xg = uniform((300,), 15, lo=0.0, hi=1.0)
routes("guarded", {"x": xg}, {"c": xg * 8})

# A failing extern through the JIT and --via=cpp: the extern's status and message, exit 1.
bad = xg.copy()
bad[5] = -2.0
path = save("guarded", "bad", bad)
for via in ("llvm", "cpp"):
    r = subprocess.run([TDSL_RUN, SOURCE, "--func", "guarded", "--via=" + via, "--input",
                        "x=" + path] + LOAD, capture_output=True, text=True)
    print("%s: exit %d %s" % ("jit" if via == "llvm" else via, r.returncode,
                              r.stderr.strip().splitlines()[-1]))

# The LLVM object in a program under AddressSanitizer: status, message, and no leak of the
# heap arena (8192 floats per intermediate) on the error path.
guarded_errors("--emit=obj", ".o", LINK, " (LLVM object)")

# No --load: the extern's symbol is missing.
r = subprocess.run([TDSL_RUN, SOURCE, "--func", "blas", "--input", "x=" + save("blas", "in_x", x)],
                   capture_output=True, text=True)
print("nolib: exit %d %s" % (r.returncode, r.stderr.strip()))
print("DONE")
