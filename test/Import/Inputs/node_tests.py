"""ONNX's backend node tests (Debian's libonnx-testdata, data/node/test_*/) through tdsl-import
and tdsl-run: each case's model.onnx is imported, run by the LLVM JIT on test_data_set_0's
inputs, and its outputs compared with the expected ones (rtol 1e-3, atol 1e-5, as ONNX's
backend test runner; integers and bools exactly; NaNs where NaNs are expected).

    node_tests.py TDSL_IMPORT TDSL_RUN DATA_DIR TMPDIR [--pass-list FILE] [--jobs J]
                  [--only NAME,...] [--write-pass-list FILE]

One line per case, `STATUS name: detail`, then a summary line
`node tests: N cases, P pass, R refused, E run errors, W wrong, C crashes`. Statuses:
- PASS     imported, compiled, ran, every output matched;
- REFUSED  tdsl-import said no (exit 1, a message naming what is unsupported);
- RUNERROR tdsl-run failed with a diagnostic (exit 1): a clear error, not a result;
- WRONG    an output differs from the expected one;
- CRASH    a tool exited with another status or a signal, or hung (120 s).
Exit status 1 when a case is WRONG or CRASH, or when a case of --pass-list does not pass.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("tdsl_import")
ap.add_argument("tdsl_run")
ap.add_argument("data")
ap.add_argument("tmp")
ap.add_argument("--pass-list")
ap.add_argument("--write-pass-list")
ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
ap.add_argument("--only", default="")
args = ap.parse_args()
os.makedirs(args.tmp, exist_ok=True)

RTOL, ATOL, TIMEOUT = 1e-3, 1e-5, 120


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def close(got, want):
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if want.dtype.kind in "biu":
        if got.dtype.kind not in "biu" and got.dtype != want.dtype:
            return "dtype %s, expected %s" % (got.dtype, want.dtype)
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(w)
        bad = (np.isnan(g) != nan) | (~nan & ~(np.abs(g - w) <= ATOL + RTOL * np.abs(w)))
        bad &= ~(np.isinf(w) & (g == w))
    if bad.any():
        i = tuple(np.argwhere(bad)[0])
        return "%d of %d elements differ (at %s: %r, expected %r)" % (
            int(bad.sum()), bad.size, list(i), got[i].item(), want[i].item())
    return None


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT
    return p.returncode, p.stdout + p.stderr


def one(name):
    case = os.path.join(args.data, name)
    work = os.path.join(args.tmp, name)
    os.makedirs(work, exist_ok=True)
    model = onnx.load(os.path.join(case, "model.onnx"))
    inits = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    data = os.path.join(case, "test_data_set_0")
    out = os.path.join(work, "m.tdsl")
    rc, text = run([args.tdsl_import, os.path.join(case, "model.onnx"), "-o", out])
    if rc is None or rc not in (0, 1):
        return "CRASH", "tdsl-import: " + (first_line(text) or "exit %s" % rc)
    if rc == 1:
        return "REFUSED", first_line(text)
    module = open(out).read()
    returned = re.search(r"^  return (.*);$", module, re.M)
    results = [r.strip() for r in returned.group(1).split(",")] if returned else []
    cmd = [args.tdsl_run, out, "--func", "main"]
    sig = re.search(r"^graph main\((.*)\) ->", module, re.M)
    params = [p.split(":")[0].strip() for p in re.split(r",\s*(?![^\[]*\])", sig.group(1))
              if p.strip()] if sig else []
    if len(params) != len(inputs):
        return "CRASH", "the graph has %d inputs, the model %d" % (len(params), len(inputs))
    for k, param in enumerate(params):
        arr = tensor(os.path.join(data, "input_%d.pb" % k))
        path = os.path.join(work, "in%d.npy" % k)
        np.save(path, arr)
        cmd += ["--input", "%s=%s" % (param, path)]
    for k, r in enumerate(results):
        cmd += ["--output", "%s=%s" % (r, os.path.join(work, "out%d.npy" % k))]
    rc, text = run(cmd)
    if rc is None or rc not in (0, 1):
        return "CRASH", "tdsl-run: " + (first_line(text) or "exit %s" % rc)
    if rc == 1:
        return "RUNERROR", first_line(text)
    for k in range(len(model.graph.output)):
        want = tensor(os.path.join(data, "output_%d.pb" % k))
        got = np.load(os.path.join(work, "out%d.npy" % k))
        why = close(got, want)
        if why:
            return "WRONG", "output %d: %s" % (k, why)
    return "PASS", ""


if not os.path.isdir(args.data):
    sys.exit("node_tests.py: %s does not exist: the Debian package libonnx-testdata has the "
             "cases (scripts/setup.sh installs it)" % args.data)
names = sorted(d for d in os.listdir(args.data)
               if os.path.isfile(os.path.join(args.data, d, "model.onnx")))
if args.only:
    names = [n for n in names if n in args.only.split(",")]
counts = {s: 0 for s in ("PASS", "REFUSED", "RUNERROR", "WRONG", "CRASH")}
status = {}
with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
    for name, (s, detail) in zip(names, pool.map(one, names)):
        status[name] = s
        counts[s] += 1
        print("%s %s%s" % (s, name, ": " + detail if detail else ""), flush=True)
failed = counts["WRONG"] + counts["CRASH"] > 0
if args.pass_list:
    for name in open(args.pass_list).read().split():
        if status.get(name) != "PASS":
            print("REGRESSION %s: was passing, now %s" % (name, status.get(name, "missing")))
            failed = True
if args.write_pass_list:
    with open(args.write_pass_list, "w") as f:
        f.write("".join(n + "\n" for n in names if status[n] == "PASS"))
print("node tests: %d cases, %d pass, %d refused, %d run errors, %d wrong, %d crashes" % (
    len(names), counts["PASS"], counts["REFUSED"], counts["RUNERROR"], counts["WRONG"],
    counts["CRASH"]))
sys.exit(1 if failed else 0)
