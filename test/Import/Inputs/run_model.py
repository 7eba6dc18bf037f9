"""End-to-end test driver of tdsl-import: builds a model (onnx:NAME from models.py, checked
against the NumPy evaluator onnx_ref.py; torch:NAME from torch_models.py, checked against
PyTorch), imports it, runs the graph `main` through the backend routes of
test/Stdlib/Inputs/routes.py and compares every output (rtol 1e-3, atol 1e-4).

usage: run_model.py TDSL_IMPORT TDSLC TDSL_RUN TMPDIR --mode=consts|inputs CASE[@ROUTES] ...

--mode=consts runs the module as tdsl-import wrote it (the weights are `const`s, spec §8).
--mode=inputs first turns every `const NAME: T = load("F");` into a graph input NAME: T fed
from F, which tests the translation without graph constants.
ROUTES narrows the routes (comma-separated names of routes.py: interp, interp-noschedule, cpp,
llvm-jit, llvm-obj, and the cross routes a64-obj, a64-cpp); the default is all but the cross
routes.
Prints `MATCH CASE: routes` or `MISMATCH …` lines (routes.py) and exits 1 on a mismatch."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TDSL_IMPORT, TDSLC, TDSL_RUN, TMP, MODE = sys.argv[1:6]
MODE = MODE.split("=", 1)[1]
CASES = sys.argv[6:]
os.makedirs(TMP, exist_ok=True)
sys.argv = [sys.argv[0], TDSLC, TDSL_RUN, "", TMP]
sys.path.insert(0, os.path.join(HERE, "..", "..", "Stdlib", "Inputs"))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
import onnx  # noqa: E402

import routes  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4


def build(case):
    kind, name = case.split(":", 1)
    if kind == "torch":
        import torch_models
        inputs, want = torch_models.build(name, TMP)
        return os.path.join(TMP, name + ".onnx"), inputs, list(want.values())
    import models
    import onnx_ref
    path = os.path.join(TMP, name + ".onnx")
    m = models.MODELS[name]()
    onnx.save(m, path)
    inputs = {}
    for seed, i in enumerate(m.graph.input):
        if i.name in {t.name for t in m.graph.initializer}:
            continue
        dims = [d.dim_value if d.HasField("dim_value") else 3
                for d in i.type.tensor_type.shape.dim]
        inputs[i.name] = routes.uniform(dims, seed + 1)
    want = onnx_ref.run(m, {k: v.astype(np.float64) for k, v in inputs.items()})
    return path, inputs, want


def as_inputs(src):
    """The module with its consts turned into the graph's first inputs; returns (text,
    [(name, npy path relative to the module)])."""
    consts = re.findall(r'^const (\w+): ([^=]+) = load\("([^"]+)"\);\n', src, re.M)
    src = re.sub(r"^const .*\n", "", src, flags=re.M)
    params = ", ".join("%s: %s" % (n, t.strip()) for n, t, _ in consts)
    src = re.sub(r"^(graph \w+\()", lambda m: m.group(1) + params + (", " if params else ""),
                 src, count=1, flags=re.M)
    return src, [(n, p) for n, _, p in consts]


def run(spec):
    case, _, wanted = spec.partition("@")
    name = case.split(":", 1)[1]
    path, inputs, want = build(case)
    out = os.path.join(TMP, name + ".tdsl")
    r = subprocess.run([TDSL_IMPORT, path, "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        print("MISMATCH %s [import]: %s" % (name, r.stderr.strip()))
        routes._failures.append(name)
        return
    src = open(out).read()
    args = {}
    if MODE == "inputs":
        src, consts = as_inputs(src)
        out = os.path.join(TMP, name + "_inputs.tdsl")
        open(out, "w").write(src)
        for n, p in consts:
            args[n] = np.load(os.path.join(TMP, p))
    sig = re.search(r"^graph main\((.*)\) ->", src, re.M).group(1)
    names = [p.split(":")[0].strip() for p in sig.split(", ") if ":" in p]
    for tdsl_name, value in zip(names[len(args):], inputs.values()):
        args[tdsl_name] = value
    results = re.search(r"^  return (.*);", src, re.M).group(1).split(", ")
    routes.SOURCE = out
    every = routes.ROUTES + routes.CROSS_ROUTES
    for route in every:  # the harness executables are per module, all named `main`
        if hasattr(route, "built"):
            route.built.clear()
    # (The cross routes run only where named.)
    routes._active = [r for r in every if r.name in wanted.split(",")] if wanted else routes.ROUTES
    # atol below 1 scales with the outputs' largest magnitude: a model whose outputs are all
    # tiny (MobileNetV2 with random weights: about 1e-9) is compared at that scale, not
    # within an absolute 1e-4 that any result would meet.
    scale = max([float(np.max(np.abs(w))) for w in want if np.size(w)] or [1.0])
    routes.check(name, "main", args, dict(zip(results, want)), RTOL, ATOL * min(1.0, scale))


for spec in CASES:
    run(spec)
routes.finish()
