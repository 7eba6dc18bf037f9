"""Shared helpers of the CodeGen/CPP numerical tests.

A test script is called as `script.py TDSLC TDSL_RUN SOURCE.tdsl TMPDIR`. check() emits the
function's C++ and header with tdslc, compiles them with g++ (-std=c++17 -O2 -Wall -Wextra
-Werror -fopenmp) together with the generic harness (harness.cpp, which calls the _dlpack
entry; its main() is compiled once, harness_split.py), runs it on .npy inputs, runs
`tdsl-run --interpret` on the same inputs and compares the outputs: it prints `MATCH name` for
each output within tolerance (|got - want| <= atol + rtol * |want|, exact when both are 0), or
a description of the mismatch.

With TDSL_CPPTEST_VIA=both in the environment (test/CodeGen/LLVM), check() builds the function
twice and compares both with the interpreter and with each other: the harness is compiled
once (g++ -c), then linked with the emitted C++ compiled by g++ (-fopenmp, libgomp) and with
the LLVM backend's object (`tdslc --emit=obj`, linked with -lomp as an object with parallel
loops needs); `MATCH name` means both builds are within tolerance of the interpreter and
bitwise identical to each other.

With obj=True the function is compiled by tdslc itself (`--emit=obj --via=cpp`, the Clang
libraries in-process) and only the harness by g++, linked as docs/cpp-backend.md says:
`g++ harness.cpp f.o -lm -lpthread` plus LLVM's OpenMP runtime (-lomp) for parallel loops.
"""
import itertools
import os
import subprocess
import sys

import numpy as np

import harness_split

TDSLC, TDSL_RUN, SOURCE, TMP = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(TMP, exist_ok=True)
CXXFLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-fopenmp"]
# Where Debian's libomp-19-dev puts LLVM's OpenMP runtime (scripts/setup.sh installs it).
OMP_LIBDIR = os.environ.get("TDSL_OMP_LIBDIR", "/usr/lib/llvm-19/lib")
OBJ_LDFLAGS = ["-L" + OMP_LIBDIR, "-Wl,-rpath," + OMP_LIBDIR, "-lomp", "-lm", "-lpthread"]


def rng(seed=0):
    return np.random.default_rng(seed)


def uniform(shape, seed=0, dtype=np.float32, lo=-1.0, hi=1.0):
    return rng(seed).uniform(lo, hi, size=shape).astype(dtype)


def run_or_die(args, env=None):
    result = subprocess.run(args, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        print("FAILED (%d): %s" % (result.returncode, " ".join(args)))
        print(result.stdout + result.stderr)
        sys.exit(1)
    return result


def literal(value):
    if isinstance(value, float):
        return repr(value) + "f"
    return str(value)


def harness_shim(func, stem, inputs, outputs):
    """The shim that makes the split harness (harness_split.py) call `func`'s DLPack entry:
    one `&t[k]` per array argument, a literal for each scalar, in the order of the parameters."""
    tensor = itertools.count()
    args = ["&t[%d]" % next(tensor) if isinstance(v, np.ndarray) else literal(v)
            for v in list(inputs.values()) + list(outputs.values())]
    return harness_split.shim(stem + "_call.cpp", stem + ".h", func, args)


def harness_driver(flags):
    """The split harness's main(), compiled once per set of flags."""
    return harness_split.driver(TMP, flags, run_or_die)


def build(func, inputs, outputs, tdslc_flags=(), cxxflags=(), tag="", obj=False, ldflags=()):
    """Emits and compiles `func`; returns the harness executable. `ldflags` come last on the
    link line (libraries defining extern symbols)."""
    stem = os.path.join(TMP, func + tag)
    if obj:
        run_or_die([TDSLC, SOURCE, "--func", func, "--emit=obj", "--via=cpp", "-o", stem + ".o"] + list(tdslc_flags))
    else:
        run_or_die([TDSLC, SOURCE, "--func", func, "--emit=cpp", "-o", stem + ".cpp"] + list(tdslc_flags))
    run_or_die([TDSLC, SOURCE, "--func", func, "--emit=header", "-o", stem + ".h"] + list(tdslc_flags))
    exe = stem + ".exe"
    shim = harness_shim(func, stem, inputs, outputs)
    if obj:
        flags = [f for f in CXXFLAGS if f != "-fopenmp"] + list(cxxflags)
        run_or_die(["g++"] + flags + [shim, stem + ".o", harness_driver(flags), "-o", exe]
                   + OBJ_LDFLAGS + list(ldflags))
        return exe
    flags = CXXFLAGS + list(cxxflags)
    run_or_die(["g++"] + flags + [shim, stem + ".cpp", harness_driver(flags), "-o", exe, "-lm"]
               + list(ldflags))
    return exe


def build_both(func, inputs, outputs, tdslc_flags=(), cxxflags=(), tag=""):
    """One harness object, linked with the C++ build and with the LLVM build of `func`."""
    stem = os.path.join(TMP, func + tag)
    run_or_die([TDSLC, SOURCE, "--func", func, "--emit=cpp", "-o", stem + ".cpp"] + list(tdslc_flags))
    run_or_die([TDSLC, SOURCE, "--func", func, "--emit=header", "-o", stem + ".h"] + list(tdslc_flags))
    run_or_die([TDSLC, SOURCE, "--func", func, "--emit=obj", "-o", stem + ".llvm.o"] + list(tdslc_flags))
    flags = CXXFLAGS + list(cxxflags)
    shim = harness_shim(func, stem, inputs, outputs)
    run_or_die(["g++", "-c"] + flags + [shim, "-o", stem + ".call.o"])
    harness = [stem + ".call.o", harness_driver(flags)]
    run_or_die(["g++", "-c"] + flags + [stem + ".cpp", "-o", stem + ".cpp.o"])
    run_or_die(["g++"] + flags + harness + [stem + ".cpp.o", "-o", stem + ".cpp.exe", "-lm"])
    plain = [f for f in flags if f != "-fopenmp"]
    run_or_die(["g++"] + plain + harness + [stem + ".llvm.o", "-o", stem + ".llvm.exe"] + OBJ_LDFLAGS)
    return {"cpp": stem + ".cpp.exe", "llvm": stem + ".llvm.exe"}


def add_inputs(func, tag, inputs, bf16, harness_args, interp_args):
    """Saves each array input as a .npy file, named on both command lines (the harness's and
    tdsl-run's); a scalar goes to tdsl-run only (the shim has it in the call)."""
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            path = os.path.join(TMP, "%s%s_in_%s%s.npy" % (func, tag, name, ".bf16" if name in bf16 else ""))
            np.save(path, value)
            harness_args.append(path)
            interp_args += ["--input", "%s=%s" % (name, path)]
        else:
            interp_args += ["--input", "%s=%s" % (name, value)]


def check(func, inputs, outputs, tolerances=None, tdslc_flags=(), cxxflags=(), env=None, tag="",
          bf16=(), obj=False, ldflags=(), run_flags=(), interp_flags=None):
    """`inputs`: name -> array or Python scalar, in signature order; `outputs`: name -> initial
    array, in signature order; `tolerances`: name -> (rtol, atol), exact by default; `bf16`:
    the names whose arrays are bf16 bit patterns (<u2); `ldflags`: extra link arguments;
    `run_flags`: extra tdsl-run arguments (`--load lib.so`, `--check`); `interp_flags`: the
    flags for tdsl-run when they differ from `tdslc_flags` (e.g. without --bounds-check, which
    tdsl-run does not take). Returns the outputs of the compiled code by name."""
    tolerances = tolerances or {}
    if os.environ.get("TDSL_CPPTEST_VIA") == "both" and not obj and not ldflags:
        return check_both(func, inputs, outputs, tolerances, tdslc_flags, cxxflags, env, tag, bf16)
    exe = build(func, inputs, outputs, tdslc_flags, cxxflags, tag, obj, ldflags)
    harness_args, interp_args = [], [TDSL_RUN, SOURCE, "--func", func, "--interpret"] + list(
        tdslc_flags if interp_flags is None else interp_flags) + list(run_flags)
    add_inputs(func, tag, inputs, bf16, harness_args, interp_args)
    got_paths, want_paths = {}, {}
    for name, init in outputs.items():
        init_path = os.path.join(TMP, "%s%s_init_%s%s.npy" % (func, tag, name, ".bf16" if name in bf16 else ""))
        np.save(init_path, init)
        got_paths[name] = os.path.join(TMP, "%s%s_cpp_%s.npy" % (func, tag, name))
        want_paths[name] = os.path.join(TMP, "%s%s_interp_%s.npy" % (func, tag, name))
        harness_args.append("out:%s:%s" % (init_path, got_paths[name]))
        interp_args += ["--input", "%s=%s" % (name, init_path), "--output", "%s=%s" % (name, want_paths[name])]
    run_or_die([exe] + harness_args, env=env)
    run_or_die(interp_args)
    got = {}
    for name in outputs:
        got[name] = np.load(got_paths[name])
        compare(name, got[name], np.load(want_paths[name]), *tolerances.get(name, (0.0, 0.0)))
    return got


def check_both(func, inputs, outputs, tolerances, tdslc_flags, cxxflags, env, tag, bf16):
    """check() with TDSL_CPPTEST_VIA=both."""
    exes = build_both(func, inputs, outputs, tdslc_flags, cxxflags, tag)
    interp_args = [TDSL_RUN, SOURCE, "--func", func, "--interpret"] + list(tdslc_flags)
    harness_args = []
    add_inputs(func, tag, inputs, bf16, harness_args, interp_args)
    paths = {build: {} for build in exes}
    init_paths, want_paths = {}, {}
    for name, init in outputs.items():
        init_paths[name] = os.path.join(TMP, "%s%s_init_%s%s.npy" % (func, tag, name, ".bf16" if name in bf16 else ""))
        np.save(init_paths[name], init)
        want_paths[name] = os.path.join(TMP, "%s%s_interp_%s.npy" % (func, tag, name))
        interp_args += ["--input", "%s=%s" % (name, init_paths[name]), "--output", "%s=%s" % (name, want_paths[name])]
        for build in exes:
            paths[build][name] = os.path.join(TMP, "%s%s_%s_%s.npy" % (func, tag, build, name))
    for build, exe in exes.items():
        run_or_die([exe] + harness_args + ["out:%s:%s" % (init_paths[n], paths[build][n]) for n in outputs], env=env)
    run_or_die(interp_args)
    for name in outputs:
        want = np.load(want_paths[name])
        got = {build: np.load(paths[build][name]) for build in exes}
        problems = []
        for build in exes:
            verdict = difference(got[build], want, *tolerances.get(name, (0.0, 0.0)))
            if verdict:
                problems.append("%s build vs interpreter: %s" % (build, verdict))
        verdict = difference(got["llvm"], got["cpp"])
        if verdict:
            problems.append("LLVM build vs C++ build: %s" % verdict)
        print("MATCH %s" % name if not problems else "MISMATCH %s: %s" % (name, "; ".join(problems)))


def difference(got, want, rtol=0.0, atol=0.0):
    """None when `got` is within tolerance of `want` (bitwise equal for rtol == atol == 0),
    else a description of the difference."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return "%s%s vs %s%s" % (got.dtype, got.shape, want.dtype, want.shape)
    if rtol == 0 and atol == 0:
        ok = np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)) if got.size else True
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = bool(np.all((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w))))
    if ok:
        return None
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if not np.any(np.isfinite(diff)):
        return "bits differ"
    return "max abs diff %g at %s" % (np.nanmax(diff), np.unravel_index(np.nanargmax(diff), diff.shape))


def compare(name, got, want, rtol=0.0, atol=0.0):
    verdict = difference(got, want, rtol, atol)
    print("MATCH %s" % name if verdict is None else "MISMATCH %s: %s" % (name, verdict))
