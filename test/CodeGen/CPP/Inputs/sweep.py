"""The C++ sweep: every function of the numerical test programs, scheduled and unscheduled,
emitted as C++, compiled with g++ -O2 -Wall -Wextra -Werror, run through its DLPack entry and
compared with the reference interpreter (tdsl-run --interpret, unscheduled).

Usage: sweep.py TDSLC TDSL_RUN SRCROOT TMPDIR
  SRCROOT: the repository root; the programs are test/Interp, test/Schedule (not *_errors),
  test/Lowering, test/CodeGen/CPP and examples.

For each program and mode (scheduled, --no-schedule) the whole module is one translation unit
(`tdslc --emit=cpp`), linked with a generated table of wrappers and sweep_harness.cpp (compiled
once). Shape variables get the values 5, 7, 6, 9, 4, 8, ... in order of appearance (so splits
have tails); inputs are seeded random values (floats in [-1, 1), integers in [-8, 8], bools);
outputs start as zeros. Tolerances: exact for integer and bool outputs; f32/f64 rtol 1e-4
atol 1e-5 (schedules reorder reductions); f16/bf16 rtol 1e-2 atol 1e-2.

A program whose unscheduled C++ equals its scheduled C++ is built once. Also checked: the
emitted C++ of each program is byte-identical across two runs of tdslc, and
a subset (SANITIZE below, scheduled and unscheduled) is rebuilt with
-fsanitize=address,undefined (-O1) and must run clean and still match.

Prints `OK file func mode` per comparison, `SKIP file[:func] reason` for what is not run, and
a summary line `SWEEP ok=N skipped=M failed=K`. Exit status 1 when anything failed.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import zlib

import numpy as np

TDSLC, TDSL_RUN, ROOT, TMP = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(TMP, exist_ok=True)
CXX = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fopenmp"]
O2 = ["-O2"]
SAN = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
       "-fno-omit-frame-pointer"]
# The programs rebuilt with sanitizers (both modes): a spread of features at a bounded cost.
SANITIZE = {"test/Interp/conv2d.tdsl", "test/Interp/intarith.tdsl", "test/Interp/halfs.tdsl",
            "test/Interp/softmax_layernorm.tdsl", "test/Schedule/cache_write.tdsl",
            "test/Schedule/compute_at.tdsl", "test/Schedule/rfactor.tdsl",
            "test/Schedule/vectorize.tdsl", "test/Schedule/unroll.tdsl", "test/Lowering/cases.tdsl",
            "test/Lowering/mm_relu.tdsl", "test/CodeGen/CPP/numerics.tdsl"}
SHAPE_VALUES = [5, 7, 6, 9, 4, 8, 3, 10]
ENV = dict(os.environ, OMP_NUM_THREADS="2", ASAN_OPTIONS="detect_leaks=1",
           UBSAN_OPTIONS="print_stacktrace=1")

NP_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
             "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
             "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "bool": np.bool_}
C_SCALAR = {"f32": "float", "f64": "double", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t",
            "i64": "int64_t", "u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t",
            "u64": "uint64_t", "bool": "uint8_t"}

results = {"ok": 0, "skipped": 0, "failed": 0}


def report(kind, text):
    print("%s %s" % (kind, text))
    results[{"OK": "ok", "SKIP": "skipped", "FAIL": "failed"}[kind]] += 1


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, env=ENV, **kw)


def programs():
    out = []
    for folder in ["test/Interp", "test/Schedule", "test/Lowering", "test/CodeGen/CPP", "examples"]:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".tdsl") and not name.endswith("_errors.tdsl"):
                out.append(folder + "/" + name)
    return out


def split_top(text):
    """Splits on commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_param(text):
    name, ty = [p.strip() for p in text.split(":", 1)]
    m = re.match(r"(\w+)(?:\[(.*)\])?$", ty)
    dims = None if m.group(2) is None else split_top(m.group(2))
    return name, m.group(1), dims


SIG = re.compile(r"^func (\S+?)\((.*)\) -> \((.*)\) \{$")
# Graphs return unnamed types: `-> f32[N]` or `-> (f32[R], i64[1])`.
GRAPH_SIG = re.compile(r"^graph (\S+?)\((.*)\) -> \(?(.*?)\)? \{$")


def signatures(ir_text):
    """Source name -> (inputs, outputs) for the non-generic funcs and graphs at top level."""
    sigs = {}
    for line in ir_text.splitlines():
        m = SIG.match(line)
        if m:
            sigs[m.group(1)] = ([parse_param(p) for p in split_top(m.group(2))],
                                [parse_param(p) for p in split_top(m.group(3))])
        m = GRAPH_SIG.match(line)
        if m:
            results = split_top(m.group(3))
            sigs[m.group(1)] = ([parse_param(p) for p in split_top(m.group(2))],
                                [parse_param("out%d: %s" % (i, t)) for i, t in enumerate(results)])
    return sigs


def eval_dim(text, env):
    expr = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: "env[%r]" % m.group(1), text).replace("/", "//")
    return int(eval(expr, {"env": env}))


def random_array(dtype, shape, rng):
    if dtype in ("f32", "f64", "f16"):
        return rng.uniform(-1, 1, size=shape).astype(NP_DTYPES[dtype])
    if dtype == "bf16":
        bits = rng.uniform(-1, 1, size=shape).astype(np.float32).view(np.uint32)
        return (bits >> 16).astype(np.uint16)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    lo = 0 if dtype.startswith("u") else -8
    return rng.integers(lo, 9, size=shape).astype(NP_DTYPES[dtype])


def compare(got, want, dtype):
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s%s vs %s%s" % (got.dtype, got.shape, want.dtype, want.shape)
    if dtype in ("f32", "f64", "f16", "bf16"):
        g, w = got, want
        if dtype == "bf16":
            g = (got.astype(np.uint32) << 16).view(np.float32)
            w = (want.astype(np.uint32) << 16).view(np.float32)
        g, w = g.astype(np.float64), w.astype(np.float64)
        rtol, atol = (1e-2, 1e-2) if dtype in ("f16", "bf16") else (1e-4, 1e-5)
        bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
        if bad.any():
            idx = np.argwhere(bad)[0]
            return "max abs diff %g (first at %s: %r vs %r)" % (
                np.nanmax(np.abs(g - w)), tuple(idx), g[tuple(idx)], w[tuple(idx)])
        return None
    if not np.array_equal(got, want):
        return "integer mismatch at %s" % (tuple(np.argwhere(got != want)[0]),)
    return None


class Program:
    def __init__(self, rel):
        self.rel = rel
        self.path = os.path.join(ROOT, rel)
        self.stem = os.path.join(TMP, rel.replace("/", "_").replace(".tdsl", ""))
        # A program that calls externs links the C library beside it: Inputs/<stem>_lib.c.
        lib = os.path.join(os.path.dirname(self.path), "Inputs",
                           os.path.basename(self.path).replace(".tdsl", "_lib.c"))
        self.extern_lib = lib if os.path.exists(lib) else None
        self.extern_so = None
        if self.extern_lib:
            self.extern_so = self.stem + "_lib.so"
            r = run(["cc", "-shared", "-fPIC", self.extern_lib, "-o", self.extern_so])
            if r.returncode != 0:
                report("FAIL", "%s: its extern library does not build: %s" % (rel, r.stderr[:500]))

    def emit(self, mode):
        """Emits C++ and header; returns (ok, reason, funcs) with funcs = [(source, cname)]."""
        flags = ["--no-schedule"] if mode == "plain" else []
        base = self.stem + "_" + mode
        r1 = run([TDSLC, self.path, "--emit=cpp", "-o", base + ".cpp"] + flags)
        if r1.returncode != 0:
            return False, "tdslc --emit=cpp fails: " + (r1.stderr.strip().splitlines() or ["?"])[0], []
        if mode == "sched":
            r2 = run([TDSLC, self.path, "--emit=cpp"] + flags)
            with open(base + ".cpp") as f:
                if f.read() != r2.stdout:
                    report("FAIL", "%s %s: emitted C++ differs between two runs" % (self.rel, mode))
        run([TDSLC, self.path, "--emit=header", "-o", base + ".h"] + flags)
        lowered = run([TDSLC, self.path, "--emit=lowered"] + flags).stdout
        self.lowered_outputs = {m.group(1): [parse_param(p)[0] for p in split_top(m.group(3))]
                                for m in map(SIG.match, lowered.splitlines()) if m}
        # The header declares the file's own items only (spec §10); the lowered module also
        # holds the private functions its graphs call (imported, instances, fused ones).
        with open(self.path) as f:
            own = set(re.findall(r"^(?:func|graph) (\w+)", f.read(), re.M))
        names = [n for n in re.findall(r"^func (\S+?)\(", lowered, re.M) if n in own]
        with open(base + ".h") as f:
            protos = re.findall(r"int32_t (\w+)_dlpack\(([^)]*)\);", f.read().replace("\n", " "))
        if len(names) != len(protos):
            report("FAIL", "%s %s: the header's functions are not the own lowered ones" % (self.rel, mode))
            return False, None, []
        return True, "", list(zip(names, protos))

    def table(self, mode, funcs, sigs):
        base = self.stem + "_" + mode
        lines = ['#include "%s.h"' % os.path.basename(base), "#include <cstdint>", "",
                 "struct SweepEntry {", "  const char *name;",
                 "  int (*call)(DLTensor *tensors, const double *scalars);", "};", ""]
        entries = []
        for i, (source, (cname, params)) in enumerate(funcs):
            if source not in sigs:
                continue
            inputs, outputs = sigs[source]
            args, t, s = [], 0, 0
            for name, dtype, dims in inputs:
                if dims is None:
                    args.append("static_cast<%s>(s[%d])" % (C_SCALAR[dtype], s))
                    s += 1
                else:
                    args.append("&t[%d]" % t)
                    t += 1
            for _ in outputs:
                args.append("&t[%d]" % t)
                t += 1
            lines.append("static int call_%d(DLTensor *t, const double *s) {" % i)
            lines.append("  (void)t;\n  (void)s;")
            lines.append("  return %s_dlpack(%s);\n}" % (cname, ", ".join(args)))
            entries.append('  {"%s", call_%d},' % (source, i))
        lines.append("extern const SweepEntry tdsl_sweep_entries[];")
        lines.append("const SweepEntry tdsl_sweep_entries[] = {")
        lines += entries + ["  {nullptr, nullptr}};", ""]
        with open(base + "_table.cpp", "w") as f:
            f.write("\n".join(lines))

    def build(self, mode, flags, tag, harness_obj):
        base = self.stem + "_" + mode
        exe = base + tag + ".exe"
        for src, obj in [(base + ".cpp", base + tag + ".o"), (base + "_table.cpp", base + tag + "_t.o")]:
            r = run(CXX + flags + ["-I", TMP, "-c", src, "-o", obj])
            if r.returncode != 0:
                return None, "g++ fails on %s: %s" % (os.path.basename(src), r.stderr[:2000])
        libs = []
        if self.extern_lib:
            libs = [base + tag + "_lib.o"]
            r = run(["cc", "-O2", "-c", self.extern_lib, "-o", libs[0]] + (SAN if tag else []))
            if r.returncode != 0:
                return None, "the extern library fails: " + r.stderr[:2000]
        r = run(CXX + flags + [base + tag + ".o", base + tag + "_t.o", harness_obj] + libs +
                ["-o", exe, "-lm"])
        if r.returncode != 0:
            return None, "link fails: " + r.stderr[:2000]
        return exe, None


def same_code(prog):
    with open(prog.stem + "_sched.cpp") as a, open(prog.stem + "_plain.cpp") as b:
        return a.read() == b.read()


def skip_reason(inputs, outputs):
    for name, dtype, dims in inputs:
        if dims is None and dtype in ("f16", "bf16"):
            return "a half-precision scalar parameter (passed as bits; not generated here)"
    return None


def prepare(prog, source, sig):
    """Writes inputs; runs the interpreter; returns (args for the harness, expected outputs)."""
    inputs, outputs = sig
    env, values = {}, iter(SHAPE_VALUES)
    for name, dtype, dims in inputs:
        for d in dims or []:
            if re.fullmatch(r"[A-Za-z_]\w*", d) and d not in env:
                env[d] = next(values)
    rng = np.random.default_rng(zlib.crc32((prog.rel + ":" + source).encode()))
    base = "%s_%s" % (prog.stem, source.replace(".", "_"))
    hargs, iargs = [], [TDSL_RUN, prog.path, "--func", source, "--interpret", "--no-schedule"]
    if prog.extern_so:
        iargs += ["--load", prog.extern_so]
    for name, dtype, dims in inputs:
        if dims is None:
            value = {"bool": "1", "f32": "0.75", "f64": "0.75"}.get(dtype, "3")
            hargs.append("s:" + ("1" if dtype == "bool" else value))
            iargs += ["--input", "%s=%s" % (name, "true" if dtype == "bool" else value)]
            continue
        shape = [eval_dim(d, env) for d in dims]
        a = random_array(dtype, shape, rng)
        path = "%s_in_%s%s.npy" % (base, name, ".bf16" if dtype == "bf16" else "")
        np.save(path, a)
        hargs.append(path)
        iargs += ["--input", "%s=%s" % (name, path)]
    expected = []
    for name, dtype, dims in outputs:
        shape = [eval_dim(d, env) for d in dims]
        init = np.zeros(shape, dtype=NP_DTYPES[dtype])
        init_path = "%s_init_%s%s.npy" % (base, name, ".bf16" if dtype == "bf16" else "")
        want = "%s_want_%s.npy" % (base, name)
        np.save(init_path, init)
        iargs += ["--input", "%s=%s" % (name, init_path), "--output", "%s=%s" % (name, want)]
        expected.append((name, dtype, init_path, want))
    r = run(iargs)
    if r.returncode != 0:
        return None, "the interpreter rejects the generated inputs: " + (r.stderr.strip().splitlines() or ["?"])[0]
    return (hargs, expected, base), None


def check(prog, source, mode, tag, exe, prepared):
    hargs, expected, base = prepared
    args = [exe, source] + hargs
    for name, dtype, init_path, want in expected:
        args.append("out:%s:%s_got_%s_%s%s.npy" % (init_path, base, mode, tag, name))
    r = run(args)
    label = "%s %s %s%s" % (prog.rel, source, mode, "+asan,ubsan" if tag else "")
    if r.returncode != 0 or "runtime error" in r.stderr or "Sanitizer" in r.stderr:
        report("FAIL", "%s: exit %d: %s" % (label, r.returncode, r.stderr[:1500]))
        return
    for name, dtype, init_path, want in expected:
        got = np.load("%s_got_%s_%s%s.npy" % (base, mode, tag, name))
        problem = compare(got, np.load(want), dtype)
        if problem:
            report("FAIL", "%s: output %s: %s" % (label, name, problem))
            return
    report("OK", label)


def main():
    harness_obj = os.path.join(TMP, "sweep_harness.o")
    harness_san = os.path.join(TMP, "sweep_harness_san.o")
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        h1 = pool.submit(run, CXX + O2 + ["-c", os.path.join(HERE, "sweep_harness.cpp"), "-o", harness_obj])
        h2 = pool.submit(run, CXX + SAN + ["-c", os.path.join(HERE, "sweep_harness.cpp"), "-o", harness_san])
        for h in (h1, h2):
            if h.result().returncode != 0:
                print("FAIL harness: " + h.result().stderr)
                sys.exit(1)

        units = []
        for rel in programs():
            prog = Program(rel)
            ir = run([TDSLC, prog.path, "--emit=ir"])
            if ir.returncode != 0:
                report("SKIP", "%s: does not compile (an error test): %s" % (
                    rel, (ir.stderr.strip().splitlines() or ["?"])[0]))
                continue
            sigs = signatures(ir.stdout)
            for mode in ("sched", "plain"):
                ok, reason, funcs = prog.emit(mode)
                if not ok:
                    if reason:
                        report("SKIP", "%s %s: %s" % (rel, mode, reason))
                    continue
                if not funcs:
                    if mode == "sched":
                        report("SKIP", "%s: no non-generic tensor function to emit" % rel)
                    continue
                # A graph's outputs are named by what it returns (as lowering names them).
                for name, (inputs, outputs) in list(sigs.items()):
                    names = prog.lowered_outputs.get(name)
                    if outputs and outputs[0][0] == "out0" and names and len(names) == len(outputs):
                        sigs[name] = (inputs, [(n,) + o[1:] for n, o in zip(names, outputs)])
                prog.table(mode, funcs, sigs)
                units.append((prog, mode, funcs, sigs))

        builds = {}
        for prog, mode, funcs, sigs in units:
            if mode == "plain" and same_code(prog):
                # No schedule changes this program: the scheduled build already ran this code.
                report("SKIP", "%s plain: same C++ as scheduled (no schedule applies)" % prog.rel)
                continue
            builds[(prog.rel, mode, "")] = pool.submit(prog.build, mode, O2, "", harness_obj)
            if prog.rel in SANITIZE:
                builds[(prog.rel, mode, "san")] = pool.submit(prog.build, mode, SAN, "san", harness_san)

        prepared = {}
        for prog, mode, funcs, sigs in units:
            for source, _ in funcs:
                key = (prog.rel, source)
                if key in prepared:
                    continue
                if source not in sigs:
                    prepared[key] = (None, "imported or generic in this module (tested in its own file)")
                    continue
                reason = skip_reason(*sigs[source])
                prepared[key] = (None, reason) if reason else prepare(prog, source, sigs[source])
                if prepared[key][0] is None:
                    report("SKIP", "%s:%s %s" % (prog.rel, source, prepared[key][1]))

        for prog, mode, funcs, sigs in units:
            for tag in ("", "san"):
                key = (prog.rel, mode, tag)
                if key not in builds:
                    continue
                exe, error = builds[key].result()
                if error:
                    report("FAIL", "%s %s%s: %s" % (prog.rel, mode, " " + tag if tag else "", error))
                    continue
                for source, _ in funcs:
                    p = prepared.get((prog.rel, source))
                    if p and p[0] is not None:
                        jobs.append(pool.submit(check, prog, source, mode, tag, exe, p[0]))
        for j in jobs:
            j.result()
    print("SWEEP ok=%d skipped=%d failed=%d" % (results["ok"], results["skipped"], results["failed"]))
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
