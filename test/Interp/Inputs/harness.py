"""Shared helpers of the Interp tests: run tdsl-run on NumPy inputs and compare its outputs
with a NumPy reference.

A test script is called as `script.py TDSL_RUN SOURCE.tdsl TMPDIR`. It builds inputs, calls
run() (which writes the inputs as .npy files, runs `tdsl-run --interpret` and loads the
outputs back; with TDSL_RUN_MODE=jit in the environment it runs `tdsl-run --check`
instead, the function compiled by the LLVM backend in the JIT and checked against the
interpreter, and with TDSL_RUN_MODE=jit-cpp `tdsl-run --check --via=cpp`), computes the expected outputs with NumPy and calls compare() on each, which
prints `MATCH name` or a description of the mismatch (the test's FileCheck lines look for the
MATCH lines).
"""
import os
import subprocess
import sys

import numpy as np

TOOL, SOURCE, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(TMP, exist_ok=True)


def rng(seed=0):
    return np.random.default_rng(seed)


def uniform(shape, seed=0, dtype=np.float32, lo=-1.0, hi=1.0):
    return rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def integers(shape, lo, hi, seed=0, dtype=np.int32):
    return rng(seed).integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def run(func, inputs, outputs, extra=(), mode=None):
    """Runs `func`; `inputs` maps names to arrays (written as .npy) or Python scalars (passed
    as literals); returns the arrays of the names in `outputs`. `mode` overrides
    TDSL_RUN_MODE (an extern func runs only in the interpreter)."""
    mode = mode or os.environ.get("TDSL_RUN_MODE", "interpret")
    args = [TOOL, SOURCE, "--func", func] + {"interpret": ["--interpret"], "jit": ["--check"],
                                             "jit-cpp": ["--check", "--via=cpp"]}[mode]
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            path = os.path.join(TMP, "in_%s_%s.npy" % (func, name))
            np.save(path, value)
            args += ["--input", "%s=%s" % (name, path)]
        else:
            args += ["--input", "%s=%s" % (name, value)]
    paths = {}
    for name in outputs:
        paths[name] = os.path.join(TMP, "out_%s_%s.npy" % (func, name))
        args += ["--output", "%s=%s" % (name, paths[name])]
    args += list(extra)
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        print("tdsl-run failed with status %d: %s" % (result.returncode, " ".join(args)))
        print(result.stdout + result.stderr)
        sys.exit(1)
    return {name: np.load(path) for name, path in paths.items()}


def compare(name, got, want, rtol=0.0, atol=0.0):
    """Exact for integers, bools and rtol == atol == 0; otherwise |got - want| <= atol +
    rtol * |want| elementwise (NaNs must match)."""
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        print("MISMATCH %s: got %s%s, expected %s%s" % (name, got.dtype, list(got.shape),
                                                        want.dtype, list(want.shape)))
        return False
    if got.dtype.kind in "biu" or (rtol == 0 and atol == 0):
        same = got == want
        if got.dtype.kind == "f":
            same |= np.isnan(got) & np.isnan(want)
        bad = ~same
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~(np.isclose(g, w, rtol=rtol, atol=atol) | (np.isnan(g) & np.isnan(w)))
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        print("MISMATCH %s: %d of %d elements differ; first at %s: got %r, expected %r"
              % (name, int(bad.sum()), bad.size, list(index), got[index], want[index]))
        return False
    print("MATCH %s" % name)
    return True


def bf16_bits(x):
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even (NaN stays quiet NaN)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)
