"""The numerical test driver of the standard library: runs one stdlib function through every
backend route on the same inputs and compares each result with a NumPy reference.

A test script is called as `script.py TDSLC TDSL_RUN NN.tdsl TMPDIR`. For each case it calls
check(), which prints one line per case:

    MATCH <case>: interp interp-noschedule cpp          (the routes that ran, all matching)
    MISMATCH <case> <output> [<route>]: <what differs>  (one line per bad output)

and finish() exits with status 1 if anything failed (lit's pipefail fails the RUN line).

Routes (ROUTES below; adding a backend is one line there):
- interp            `tdsl-run --interpret --check`: the scheduled function in the reference
                    interpreter, which also checks it against the unscheduled one;
- interp-noschedule `tdsl-run --interpret --no-schedule`;
- cpp               `tdslc --emit=cpp` + `--emit=header`, compiled with g++ -O2 -Wall -Wextra
                    -Werror -fopenmp with the generic DLPack harness of test/CodeGen/CPP
                    (built once per function, constants and scalar inputs: the
                    shapes are bound at run time, so the cases of a function share it;
                    the harness's main() is compiled once per test, -DTDSL_HARNESS_SPLIT,
                    and a two-line shim compiled with the header makes the call);
- llvm-jit          `tdsl-run` without --interpret (the LLVM JIT);
- llvm-obj          `tdslc --emit=obj` (LLVM directly) linked with the same harness.
Every route always runs: one that breaks fails the case, it is never skipped.
Cross-compiled routes (CROSS_ROUTES; test/Cross runs them, they run only when
TDSL_STDLIB_ROUTES names them):
- a64-obj           `tdslc --triple=aarch64-linux-gnu --emit=obj` linked with the harness by
                    aarch64-linux-gnu-g++ -fopenmp (libgomp), run under qemu-aarch64-static;
- a64-cpp           the same with --via=cpp (the C++ compiled for AArch64 by the Clang libraries).
Every route takes graphs too (a graph's header declares the funcs it calls first; the
end-to-end graphs are in examples.test).
`TDSL_STDLIB_ROUTES=interp,cpp` restricts the routes (for debugging).

Comparison: |got - want| <= atol + rtol * |want| elementwise, NaNs must match, in float64.
"""
import itertools
import os
import re
import subprocess
import sys

import numpy as np

TDSLC, TDSL_RUN, SOURCE, TMP = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "CodeGen", "CPP", "Inputs"))
import harness_split  # noqa: E402
CXXFLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"]
OMP_LIBDIR = os.environ.get("TDSL_OMP_LIBDIR", "/usr/lib/llvm-19/lib")
OBJ_LDFLAGS = ["-L" + OMP_LIBDIR, "-Wl,-rpath," + OMP_LIBDIR, "-lomp", "-lm", "-lpthread"]
os.makedirs(TMP, exist_ok=True)

_failures = []


def rng(seed):
    return np.random.default_rng(seed)


def uniform(shape, seed, lo=-1.0, hi=1.0):
    return rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def conv2d(x, w, stride, pad):
    """The reference of nn.conv2d<stride, pad> (NCHW, weights [K, C, R, Q], zero padding) in
    float64, for conv2d.py and conv2d_packed.py."""
    n, c, h, wd = x.shape
    k, _, r, q = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - q) // stride + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(q):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j].astype(np.float64))
    return y


def _run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env)


class RouteError(Exception):
    pass


def _ok(result, args):
    if result.returncode != 0:
        raise RouteError("status %d: %s\n%s" % (result.returncode, " ".join(args),
                                                result.stdout + result.stderr))
    return result


def _defines(func, consts):
    out = []
    for name, value in consts.items():
        out += ["-D", "%s.%s=%d" % (func, name, value)]
    return out


def _save_inputs(stem, inputs, outputs):
    """Writes the tensor inputs and the zero initial outputs; returns their paths."""
    paths = {}
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            paths[name] = "%s_in_%s.npy" % (stem, name)
            np.save(paths[name], value)
    for name, want in outputs.items():
        paths[name] = "%s_init_%s.npy" % (stem, name)
        np.save(paths[name], np.zeros(want.shape, dtype=np.float32))
    return paths


class Interp:
    """tdsl-run with the reference interpreter; with the schedule, --check also compares the
    scheduled function with the unscheduled one."""

    def __init__(self, name, schedule, jit=False):
        self.name, self.schedule, self.jit = name, schedule, jit


    def run(self, func, consts, inputs, outputs, stem):
        paths = _save_inputs(stem, inputs, {})
        args = [TDSL_RUN, SOURCE, "--func", func] + _defines(func, consts)
        if not self.jit:
            args.append("--interpret")
        if not self.schedule:
            args.append("--no-schedule")
        elif not self.jit:
            args.append("--check")
        for name, value in inputs.items():
            args += ["--input", "%s=%s" % (name, paths.get(name, value))]
        results = {}
        for name in outputs:
            results[name] = "%s_%s_%s.npy" % (stem, self.name, name)
            args += ["--output", "%s=%s" % (name, results[name])]
        result = _ok(_run(args), args)
        if "--check" in args and "check: OK" not in result.stdout:
            raise RouteError("--check did not report OK:\n" + result.stdout + result.stderr)
        return {name: np.load(path) for name, path in results.items()}


def _literal(value):
    return repr(float(value)) + "f" if isinstance(value, float) else str(value)


class Toolchain:
    """Where a compiled route's executable is built and run: the host's g++, or a cross g++
    (Debian's searches /usr/include after the target's headers: dlpack.h is found) whose
    executables run under QEMU user emulation (`-L` the target's libraries)."""

    def __init__(self, cxx, run_prefix=()):
        self.cxx, self.run_prefix = cxx, list(run_prefix)


HOST = Toolchain("g++")
A64 = Toolchain("aarch64-linux-gnu-g++", ["qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu"])


def _compile_harness(func, consts, inputs, outputs, stem, obj_flags, tools=HOST):
    """Emits `func` (C++ compiled by g++, or an object from tdslc when obj_flags is set) and
    links it with the harness by `tools`; returns the executable."""
    flags = ["--func", func] + _defines(func, consts)
    header = stem + ".h"
    args = [TDSLC, SOURCE, "--emit=header", "-o", header] + flags
    _ok(_run(args), args)
    # The function itself is declared last (a graph after the funcs it calls).
    symbol = re.findall(r"int32_t (\w+)_dlpack\(", open(header).read())[-1]
    tensor = itertools.count()
    call_args = ["&t[%d]" % next(tensor) if isinstance(v, np.ndarray) else _literal(v)
                 for v in list(inputs.values()) + list(outputs.values())]
    # The call, compiled with the function's header; the harness's main() is compiled once.
    shim = harness_split.shim(stem + "_call.cpp", header, symbol, call_args)
    driver = harness_split.driver(TMP, CXXFLAGS, lambda args: _ok(_run(args), args), tools.cxx)
    exe = stem + ".exe"
    if obj_flags is None:
        args = [TDSLC, SOURCE, "--emit=cpp", "-o", stem + ".cpp"] + flags
        _ok(_run(args), args)
        args = ["g++"] + CXXFLAGS + ["-fopenmp", shim, stem + ".cpp", driver, "-o", exe, "-lm"]
    else:
        args = [TDSLC, SOURCE, "--emit=obj", "-o", stem + ".o"] + obj_flags + flags
        _ok(_run(args), args)
        # The host links LLVM's libomp (the JIT's); a target its GCC's libgomp (-fopenmp).
        ldflags = OBJ_LDFLAGS if tools is HOST else ["-fopenmp", "-lm"]
        args = [tools.cxx] + CXXFLAGS + [shim, stem + ".o", driver, "-o", exe] + ldflags
    _ok(_run(args), args)
    return exe


class Compiled:
    """Emitted code linked with test/CodeGen/CPP/Inputs/harness.cpp (the _dlpack entry):
    obj_flags None means --emit=cpp compiled by g++, otherwise tdslc --emit=obj with them."""

    def __init__(self, name, obj_flags=None, tools=HOST):
        self.name, self.obj_flags, self.tools = name, obj_flags, tools
        self.built = {}  # (func, consts) -> executable: shapes are bound at run time


    def run(self, func, consts, inputs, outputs, stem):
        stem = "%s_%s" % (stem, self.name)
        scalars = tuple(v for v in inputs.values() if not isinstance(v, np.ndarray))
        key = (func, tuple(sorted(consts.items())), scalars)  # scalars are in the call
        if key not in self.built:
            self.built[key] = _compile_harness(func, consts, inputs, outputs, stem,
                                               self.obj_flags, self.tools)
        exe = self.built[key]
        paths = _save_inputs(stem, inputs, outputs)
        args = self.tools.run_prefix + [exe]
        args += [paths[n] for n, v in inputs.items() if isinstance(v, np.ndarray)]
        results = {}
        for name in outputs:
            results[name] = "%s_out_%s.npy" % (stem, name)
            args.append("out:%s:%s" % (paths[name], results[name]))
        _ok(_run(args), args)
        return {name: np.load(path) for name, path in results.items()}


ROUTES = [
    Interp("interp", schedule=True),
    Interp("interp-noschedule", schedule=False),
    Compiled("cpp"),
    Interp("llvm-jit", schedule=True, jit=True),
    Compiled("llvm-obj", obj_flags=[]),
]
CROSS_ROUTES = [
    Compiled("a64-obj", obj_flags=["--triple=aarch64-linux-gnu"], tools=A64),
    Compiled("a64-cpp", obj_flags=["--triple=aarch64-linux-gnu", "--via=cpp"], tools=A64),
]


def active_routes():
    wanted = os.environ.get("TDSL_STDLIB_ROUTES")
    # Every route runs: a route that breaks fails the test (none is skipped). The variable
    # narrows the set by hand while debugging one route, and names the cross routes.
    if not wanted:
        return ROUTES
    return [r for r in ROUTES + CROSS_ROUTES if r.name in wanted.split(",")]


_active = None


def compare(got, want, rtol, atol):
    """None when `got` matches `want`, else a description of the first difference."""
    want = np.asarray(want)
    if got.dtype != np.float32 or got.shape != want.shape:
        return "got %s%s, expected float32%s" % (got.dtype, list(got.shape), list(want.shape))
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)))
    if not bad.any():
        return None
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return "%d of %d elements differ; first at %s: got %r, expected %r (max abs diff %g)" % (
        int(bad.sum()), bad.size, list(index), float(g[index]), float(w[index]),
        float(np.nanmax(np.abs(g - w))))


def check(case, func, inputs, want, rtol, atol, consts=None, routes=None):
    """Runs `func` (with generic constants `consts`) on `inputs` (name -> array or Python
    scalar, in signature order) through every active route; `want` maps each output, in
    signature order, to its float64 NumPy reference. `routes` (route names) narrows a case to
    those routes: the MATCH line names the routes that ran, so the test's CHECK lines show it."""
    global _active
    if _active is None:
        _active = active_routes()
    consts = consts or {}
    stem = os.path.join(TMP, case)
    ok = True
    chosen = [r for r in _active if routes is None or r.name in routes]
    for route in chosen:
        try:
            got = route.run(func, consts, inputs, want, stem)
        except RouteError as e:
            print("MISMATCH %s [%s]: %s" % (case, route.name, e))
            ok = False
            continue
        for name, reference in want.items():
            problem = compare(got[name], reference, rtol, atol)
            if problem:
                print("MISMATCH %s %s [%s]: %s" % (case, name, route.name, problem))
                ok = False
    if ok:
        print("MATCH %s: %s" % (case, " ".join(r.name for r in chosen)))
    else:
        _failures.append(case)


def finish():
    if _failures:
        print("FAILED: %s" % ", ".join(_failures))
        sys.exit(1)
