"""Graph numerics (see numerics.tdsl): C++ backend vs interpreter vs NumPy."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtest import *  # noqa: E402,F401,F403

LIB, LINK, LOAD = extern_library()
CHECKED = ("C++", 1e-5, 1e-6)


def numpy_check(name, got, want, rtol=1e-4, atol=1e-5):
    ok = np.allclose(got, want, rtol=rtol, atol=atol)
    print("NUMPY %s %s" % (name, "OK" if ok else "MISMATCH max %g" % np.max(np.abs(got - want))))


def interp_check(func, inputs):
    """tdsl-run --check: the graph after passes and schedules vs as written, in the interpreter."""
    args = [TDSL_RUN, SOURCE, "--func", func, "--interpret", "--check"] + LOAD
    for name, value in inputs.items():
        path = os.path.join(TMP, "chk_%s_%s.npy" % (func, name))
        np.save(path, value)
        args += ["--input", "%s=%s" % (name, path)]
    print(run_or_die(args).stdout.splitlines()[0])


def relu(a):
    return np.maximum(a, 0)


# MLP: linear → relu (fused) → linear.
B = 5
x, w0, b0 = uniform((B, 64), 1), uniform((32, 64), 2), uniform((32,), 3)
w1, b1 = uniform((10, 32), 4), uniform((10,), 5)
ins = {"x": x, "w0": w0, "b0": b0, "w1": w1, "b1": b1}
got = check("mlp", ins, {"o": np.zeros((B, 10), np.float32)}, {"o": CHECKED[1:]})
interp_check("mlp", ins)
numpy_check("o", got["o"], relu(x @ w0.T + b0) @ w1.T + b1)

# A reshape, an instance of repeat<2>, linear → sigmoid fused; `flat` is copied from x.
x3, w, b = uniform((B, 4, 4), 6), uniform((8, 32), 7), uniform((8,), 8)
ins = {"x": x3, "w": w, "b": b}
got = check("shapes", ins, {"s": np.zeros((B, 8), np.float32), "flat": np.zeros((B, 16), np.float32)},
            {"s": CHECKED[1:]})
interp_check("shapes", ins)
flat = x3.reshape(B, 16)
numpy_check("s", got["s"], 1 / (1 + np.exp(-(np.repeat(flat, 2, axis=1) @ w.T + b))))
numpy_check("flat", got["flat"], flat, 0, 0)

# Extern calls through OpenBLAS.
xb, wb, vb = uniform((B, 16), 9), uniform((16, 8), 10), uniform((8, 8), 11)
ins = {"x": xb, "w": wb, "v": vb}
got = check("blas", ins, {"r": np.zeros((B, 8), np.float32)}, {"r": CHECKED[1:]}, ldflags=LINK,
            run_flags=LOAD)
interp_check("blas", ins)
numpy_check("r", got["r"], relu(np.tanh(xb @ wb) @ vb))

# An impure extern outside dataflow that succeeds.
xg = uniform((300,), 12, lo=0.0, hi=1.0)
got = check("guarded", {"x": xg}, {"c": np.zeros(300, np.float32)}, ldflags=LINK, run_flags=LOAD)
numpy_check("c", got["c"], xg * 8, 0, 0)

# ... and fails: the compiled graph returns the extern's status and message, frees its arena.
guarded_errors("--emit=cpp", ".cpp", LINK)

# The interpreter reports the same failure.
bad = xg.copy()
bad[5] = -2.0
path = os.path.join(TMP, "guarded_bad.npy")
np.save(path, bad)
r = subprocess.run([TDSL_RUN, SOURCE, "--func", "guarded", "--interpret", "--input", "x=" + path] + LOAD,
                   capture_output=True, text=True)
print("interp: exit %d %s" % (r.returncode, r.stderr.strip()))
print("DONE")
