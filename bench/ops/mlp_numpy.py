#!/usr/bin/python3
# examples/mlp (784-128-10: linear, relu, linear) at batch 256: `tdsl-run --bench` against the
# same three operations in NumPy (float32, x @ w.T + b), 1 and 2 threads (OMP_NUM_THREADS for
# TDSL; NumPy's BLAS gets OPENBLAS_NUM_THREADS). Median of --repeat calls on both sides.
# usage: bench/ops/mlp_numpy.py [BUILD_DIR] [--repeat N]
import os, re, subprocess, sys, tempfile, time

build = "build"
repeat = 50
args = sys.argv[1:]
while args:
    a = args.pop(0)
    if a == "--repeat":
        repeat = int(args.pop(0))
    else:
        build = a
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tdsl_run = os.path.join(build, "bin", "tdsl-run")

for threads in (1, 2):
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    code = f"""
import numpy as np, time, sys
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (256, 784)).astype(np.float32)
w0 = rng.uniform(-1, 1, (128, 784)).astype(np.float32); b0 = rng.uniform(-1, 1, 128).astype(np.float32)
w1 = rng.uniform(-1, 1, (10, 128)).astype(np.float32); b1 = rng.uniform(-1, 1, 10).astype(np.float32)
np.save(sys.argv[1], x)
ts = []
for _ in range({repeat} + 2):
    t0 = time.perf_counter()
    o = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    ts.append(time.perf_counter() - t0)
print(sorted(ts[2:])[len(ts[2:]) // 2] * 1e3)
"""
    with tempfile.TemporaryDirectory() as tmp:
        xfile = os.path.join(tmp, "x.npy")
        numpy_ms = float(subprocess.check_output(["/usr/bin/python3", "-c", code, xfile],
                                                 env=env, text=True))
        out = subprocess.check_output(
            [tdsl_run, os.path.join(root, "examples", "mlp", "mlp.tdsl"), "--func", "mlp",
             "--input", "x=" + xfile, "--bench", "--repeat", str(repeat), "--threads",
             str(threads)], text=True)
    tdsl_ms = float(re.search(r"([0-9.]+) ms per call", out).group(1))
    print(f"{threads} thread(s): TDSL {tdsl_ms:.3f} ms, NumPy {numpy_ms:.3f} ms, "
          f"TDSL/NumPy time {tdsl_ms / numpy_ms:.2f}")
