#!/usr/bin/python3
"""bench/models/bench_models.py — end-to-end latency of whole models, batch 1, TDSL against
ONNX Runtime (and optionally PyTorch) on the same machine, in one script (docs/benchmarks.md,
"End-to-end models").

    /usr/bin/python3 bench/models/bench_models.py [--build build] [--work DIR]
        [--models mm_relu,resnet18,mobilenet_v2,encoder,bert_layer|vision|NAME,...] [--threads 1,2]
        [--peers ort[,torch]] [--rounds 10] [--block 0.3] [--calls N] [--csv FILE]
        [--profile] [--tuning-db FILE [--tuned-threads T]]

The models are those of test/Import/Inputs/torch_models.py (imported from there, not copied):
the course's `mm_relu` (x[128, 128] · w[128, 128], relu), torchvision's ResNet-18 and
MobileNetV2 (random weights, eval mode, 1×3×224×224), the small transformer encoder (16 token
ids; exported here at batch 1 instead of the tests' 2) and the BERT-style encoder layer
(sequence 128, width 256, 4 heads, feed-forward 1024, GELU, post-LayerNorm). `--models vision`
(or any of its names) adds other torchvision classification models that no schedule or pass
names (VISION below: SqueezeNet 1.1, ShuffleNetV2, MNASNet, MobileNetV3-Large, EfficientNet-B0,
RegNetY-400MF, ResNet-50, GoogLeNet, DenseNet-121), exported the same way.

TDSL side: each model is exported to ONNX by torch_models.build(), imported with
`tdsl-import --name NAME`, compiled on the default route (`tdslc --emit=obj`: the LLVM backend,
-O2, the weights embedded in the object as constants) and linked into a shared object
(`g++ -shared NAME.o -lomp`), whose §10 raw entry `int32_t NAME(inputs…, outputs…)` is called
through ctypes. With --tuning-db, tdslc compiles with `--tuning-db FILE` (docs/tuning.md): the
records of tdsl-tune for this machine at T threads (--tuned-threads, default the number of
cores) replace the plain schedules they beat.

Peers (--peers, default ort):
- ort: ONNX Runtime's CPU build from npm's onnxruntime-node (installed into BUILD/bench-ort by
  bench/models/setup-ort.sh, which this script runs), driven by bench/models/ort_worker.js under
  Node.js: the same ONNX file, graph optimisation level "all", sequential execution, T intra-op
  threads. Its first result is checked against PyTorch's reference and becomes the reference
  the TDSL side is checked against.
- torch: the same PyTorch module (same seed), `torch.inference_mode()`, torch.set_num_threads(T)
  and one inter-op thread (Debian's PyTorch 1.13: AVX2 only, a generic BLAS — a weak peer).
Every side is timed call by call in its own loop (time.perf_counter() here, hrtime in Node.js;
each includes its language's call overhead, microseconds).

Threads: each side runs in its own worker process per thread count T, started with
OMP_NUM_THREADS=T (the documented way for TDSL's OpenMP code, docs/benchmarks.md; libomp reads
it). Separate processes keep the runtimes' thread pools apart.

Alternation: per model and thread count, after a warm-up, ROUNDS rounds of one block of calls
per side in turn (each block about --block seconds, or --calls calls), with a pause between
blocks so that the idle side's threads stop spinning; the figure is the median call time over
all blocks of a side. Each worker checks its first result (rtol 1e-3, atol 1e-4 times the
output's largest magnitude where that is below 1) and stops on a mismatch.

Printed and written to --csv (default WORK/models.csv) per model and thread count: median ms of
each side, PEER_over_tdsl = the peer's time over TDSL's (above 1: TDSL is faster), GFLOP per
call (2·MACs of Conv, Gemm and MatMul nodes), each side's GFLOP/s and % of the FMA peak of T
cores (the f32 FMA peak of one core measured at the start, bench/models/fma_peak.c, as
bench_matmul measures it, times T), the CPU time per call of the busy threads, the 1-minute
load average during the row. --profile then runs `tdsl-run --profile` on each model at each
thread count (its table; the trace in WORK/NAME.T.trace.json).
"""
import argparse
import csv
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "Import", "Inputs"))
MODELS = ["mm_relu", "resnet18", "mobilenet_v2", "encoder", "bert_layer"]
# Other torchvision classification models, exported as a user would (random weights, eval mode,
# 1x3x224x224, opset 13): no schedule or pass was written for them by name. Not in the default
# set (each takes a minute to export, import and compile); `--models vision` runs them all.
VISION = ["squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "mobilenet_v3_large",
          "efficientnet_b0", "regnet_y_400mf", "resnet50", "googlenet", "densenet121"]
PEERS = ["ort", "torch"]
RTOL, ATOL = 1e-3, 1e-4
PAUSE = 0.25  # seconds between blocks: libomp's threads spin 200 ms after a parallel region
OMP_LIBDIR = os.environ.get("TDSL_OMP_LIBDIR", "/usr/lib/llvm-19/lib")


def csv_header(peers):
    cols = ["model", "threads", "tdsl_ms"]
    for p in peers:
        cols += [p + "_ms", p + "_over_tdsl"]
    cols += ["gflop", "tdsl_gflops", "tdsl_peak_pct"]
    for p in peers:
        cols += [p + "_gflops", p + "_peak_pct"]
    cols += ["tdsl_cpu_ms"] + [p + "_cpu_ms" for p in peers]
    return cols + ["calls", "load_avg", "peak_core"]


def log(*args):
    print(*args, flush=True)


def run(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit("bench_models: %s failed (%d):\n%s" % (" ".join(args), r.returncode,
                                                       r.stdout + r.stderr))
    return r


def torch_models():
    """test/Import/Inputs/torch_models.py, with the encoder at batch 1."""
    import torch_models as tm
    ctor, shapes, dynamic, opset = tm.MODELS["encoder"]
    tm.MODELS["encoder"] = (ctor, {"ids": ("int", (1, 16), 50)}, dynamic, opset)
    for name in VISION:
        tm.MODELS[name] = (lambda n=name: tm._vision(n), {"x": (1, 3, 224, 224)}, None, 13)
    return tm


def gflop(onnx_path):
    """2·MACs of the Conv, Gemm and MatMul nodes (ONNX shape inference gives the shapes)."""
    import numpy as np
    import onnx
    m = onnx.shape_inference.infer_shapes(onnx.load(onnx_path))
    shapes = {}
    for v in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
        shapes[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    for t in m.graph.initializer:
        shapes[t.name] = list(t.dims)
    total = 0
    for n in m.graph.node:
        if n.op_type == "Conv":
            w, y = shapes[n.input[1]], shapes[n.output[0]]
            total += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
        elif n.op_type in ("Gemm", "MatMul"):
            a, y = shapes[n.input[0]], shapes[n.output[0]]
            k = a[-1]
            if n.op_type == "Gemm" and any(x.name == "transA" and x.i for x in n.attribute):
                k = a[0]
            total += 2 * int(np.prod(y)) * k
    return total * 1e-9


def prepare(name, args, tm):
    """Exports, imports and compiles one model; returns its description for the workers."""
    import numpy as np
    work = args.work
    t0 = time.time()
    inputs, want = tm.build(name, work)
    onnx_path = os.path.join(work, name + ".onnx")
    tdsl = os.path.join(work, name + ".tdsl")
    run([os.path.join(args.build, "bin", "tdsl-import"), onnx_path, "-o", tdsl, "--name", name])
    obj, lib = os.path.join(work, name + ".o"), os.path.join(work, name + ".so")
    tdslc = [os.path.join(args.build, "bin", "tdslc"), tdsl, "--emit=obj", "-o", obj]
    env = None
    if args.tuning_db:
        # A record applies where its target key matches: the thread count it was tuned for.
        tdslc += ["--tuning-db", os.path.abspath(args.tuning_db)]
        env = dict(os.environ, OMP_NUM_THREADS=str(args.tuned_threads or os.cpu_count()))
    run(tdslc, env=env)
    run(["g++", "-shared", "-o", lib, obj, "-L" + OMP_LIBDIR, "-Wl,-rpath," + OMP_LIBDIR, "-lomp",
         "-lm", "-lpthread"])
    import onnx
    graph = onnx.load(onnx_path).graph
    weights = {t.name for t in graph.initializer}
    desc = {"name": name, "lib": lib, "onnx": onnx_path, "tdsl": tdsl, "inputs": [],
            "input_names": [i.name for i in graph.input if i.name not in weights],
            "outputs": [], "ort_outputs": []}
    for i, (iname, value) in enumerate(inputs.items()):
        path = os.path.join(work, "%s_in%d.npy" % (name, i))
        np.save(path, value)
        desc["inputs"].append(path)
    for i, value in enumerate(want.values()):
        path = os.path.join(work, "%s_ref%d.npy" % (name, i))
        np.save(path, value.astype(np.float32))
        desc["outputs"].append(path)
        desc["ort_outputs"].append(os.path.join(work, "%s_ort%d.npy" % (name, i)))
    desc["gflop"] = gflop(onnx_path)
    log("prepared %s: %.1f MFLOP per call, exported, imported and compiled in %.1f s" %
        (name, desc["gflop"] * 1e3, time.time() - t0))
    return desc


def relu1_model(work):
    """A one-element Relu model: what a call of ONNX Runtime through Node.js costs by itself."""
    import onnx
    from onnx import TensorProto, helper
    path = os.path.join(work, "relu1.onnx")
    if not os.path.exists(path):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu1", [x], [y])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def fma_peak(work):
    src, lib = os.path.join(HERE, "fma_peak.c"), os.path.join(work, "fma_peak.so")
    run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src])
    f = ctypes.CDLL(lib).tdsl_fma_peak
    f.restype = ctypes.c_double
    return f()


# ---- workers: one process per side and thread count; commands on stdin, answers on stdout ----

def close(got, want):
    """Within RTOL of each element plus ATOL, scaled down by the output's largest magnitude
    when that is below 1 (MobileNetV2 with random weights gives outputs of about 1e-9, which an
    absolute 1e-4 would not compare at all)."""
    import numpy as np
    g, w = got.astype(np.float64), want.astype(np.float64)
    atol = ATOL * min(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
    return got.shape == want.shape and bool(np.all(np.abs(g - w) <= atol + RTOL * np.abs(w)))


def tdsl_callable(desc, reference):
    import numpy as np
    ins = [np.ascontiguousarray(np.load(p)) for p in desc["inputs"]]
    refs = [np.load(p) for p in desc[reference]]
    outs = [np.zeros_like(r) for r in refs]
    entry = getattr(ctypes.CDLL(desc["lib"]), desc["name"])
    entry.restype = ctypes.c_int32
    ptrs = [a.ctypes.data_as(ctypes.c_void_p) for a in ins + outs]

    def call():
        if entry(*ptrs) != 0:
            sys.exit("bench_models: %s returned an error" % desc["name"])
    return call, lambda: outs, refs


def torch_callable(desc, tm):
    import numpy as np
    import torch
    torch.manual_seed(0)  # as torch_models.build(): the same weights
    model = tm.MODELS[desc["name"]][0]().eval()
    ins = [torch.from_numpy(np.load(p)) for p in desc["inputs"]]
    refs = [np.load(p) for p in desc["outputs"]]
    outs = [None]

    def call():
        with torch.inference_mode():
            outs[0] = model(*ins)
    return call, lambda: [outs[0].numpy()], refs


def thread_cpu():
    """The CPU time of each thread of this process so far, in ns: each thread's CPU clock
    (Linux's clock id of thread TID is (~TID << 3) | 6, what pthread_getcpuclockid returns)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[tid] = time.clock_gettime_ns(((~int(tid)) << 3) | 6)
        except OSError:  # the thread ended meanwhile
            pass
    return out


def worker(side, threads, descs, reference):
    tm = None
    if side == "torch":
        import torch
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
        tm = torch_models()
    calls = {}
    for d in descs:
        call, results, refs = (tdsl_callable(d, reference) if side == "tdsl"
                               else torch_callable(d, tm))
        call()
        for got, want in zip(results(), refs):
            if not close(got, want):
                sys.exit("bench_models: %s %s differs from %s" % (
                    side, d["name"], "ONNX Runtime's result" if reference == "ort_outputs"
                    else "PyTorch's export reference"))
        calls[d["name"]] = call
    print("ready", flush=True)
    for line in sys.stdin:
        name, n = line.split()
        call, times = calls[name], []
        before = thread_cpu()
        for _ in range(int(n)):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        after = thread_cpu()
        used = [after[t] - before.get(t, 0) for t in after]
        busy = [u for u in used if u >= max(used) / 2]
        print(json.dumps({"times": times, "cpu": sum(busy) / len(busy) / int(n) * 1e-9,
                          "busy": len(busy)}), flush=True)


class Worker:
    def __init__(self, side, threads, descs_path, args, reference="outputs"):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        if side == "ort":
            env["NODE_PATH"] = os.path.join(args.build, "bench-ort", "node_modules")
            command = ["node", os.path.join(HERE, "ort_worker.js"), descs_path, str(threads),
                       relu1_model(args.work)]
        else:
            command = [sys.executable, os.path.abspath(__file__), "--worker", side,
                       "--threads", str(threads), "--work", descs_path, "--reference",
                       reference]
        self.p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("bench_models: the %s worker (%d threads) failed" % (side, threads))
        if len(ready) > 1:
            log("%s worker, %d thread%s: %s µs per call of a one-element Relu (the call "
                "overhead its every call includes)" % (side, threads, "" if threads == 1 else "s",
                                                       ready[1]))

    def time(self, name, n):
        self.p.stdin.write("%s %d\n" % (name, n))
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit("bench_models: a worker died")
        return json.loads(line)

    def stop(self):
        self.p.stdin.close()
        self.p.wait()


def measure(desc, threads, sides, args, peak):
    """`sides`: (name, Worker) pairs, TDSL's first."""
    name = desc["name"]
    load0 = os.getloadavg()[0]
    warm = {s: statistics.median(w.time(name, 3)["times"]) for s, w in sides}
    times = {s: [] for s, _ in sides}
    cpu = {s: [] for s, _ in sides}
    busy = {}
    blocks = {s: args.calls or max(1, min(200, round(args.block / warm[s]))) for s in warm}
    for _ in range(args.rounds):
        for side, w in sides:
            block = w.time(name, blocks[side])
            times[side] += block["times"]
            cpu[side].append(block["cpu"])
            busy[side] = max(busy.get(side, 0), block["busy"])
            time.sleep(PAUSE)
    load = (load0 + os.getloadavg()[0]) / 2
    med = {s: statistics.median(t) * 1e3 for s, t in times.items()}
    cpu = {s: statistics.median(c) * 1e3 for s, c in cpu.items()}
    g = desc["gflop"]
    row = {"model": name, "threads": threads, "tdsl_ms": "%.3f" % med["tdsl"],
           "gflop": "%.6f" % g, "load_avg": "%.2f" % load, "peak_core": "%.1f" % peak,
           "calls": "/".join(str(len(times[s])) for s, _ in sides)}
    for s, _ in sides:
        rate = g / med[s] * 1e3
        row[s + "_gflops"] = "%.2f" % rate
        row[s + "_peak_pct"] = "%.1f" % (100 * rate / (peak * threads))
        row[s + "_cpu_ms"] = "%.3f" % cpu[s]
        if s != "tdsl":
            row[s + "_ms"] = "%.3f" % med[s]
            row[s + "_over_tdsl"] = "%.3f" % (med[s] / med["tdsl"])
    return row


def profile(desc, threads, args):
    """tdsl-run --profile on the imported model with its benchmark inputs."""
    cmd = [os.path.join(args.build, "bin", "tdsl-run"), desc["tdsl"], "--func", desc["name"],
           "--profile", "--threads", str(threads), "--repeat", "20", "--profile-json",
           os.path.join(args.work, "%s.%d.trace.json" % (desc["name"], threads))]
    for iname, path in zip(desc["input_names"], desc["inputs"]):
        cmd += ["--input", "%s=%s" % (iname, path)]
    if args.tuning_db:
        cmd += ["--tuning-db", os.path.abspath(args.tuning_db)]
    out = run(cmd).stdout
    # The table, without the outputs' summary lines ("out: f32[1, 1000] min=…").
    log("\n".join(line for line in out.splitlines() if not re.match(r"^\w+: \w+\[", line)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None, help="scratch folder (default BUILD/bench/models)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--block", type=float, default=0.3, help="seconds per block of calls")
    ap.add_argument("--calls", type=int, default=0, help="calls per block (0: from --block)")
    ap.add_argument("--peers", default="ort", help="comma-separated: ort, torch")
    ap.add_argument("--profile", action="store_true",
                    help="then tdsl-run --profile each model at each thread count")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--tuning-db", default=None, help="tdsl-tune's records for tdslc")
    ap.add_argument("--tuned-threads", type=int, default=0,
                    help="the thread count the records were tuned for (default: the cores)")
    ap.add_argument("--worker", choices=["tdsl", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--reference", default="outputs", help=argparse.SUPPRESS)
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    if args.worker:
        with open(args.work) as f:
            return worker(args.worker, threads[0], json.load(f), args.reference)
    peers = args.peers.split(",")
    for p in peers:
        if p not in PEERS:
            sys.exit("bench_models: unknown peer '%s' (%s)" % (p, ", ".join(PEERS)))
    args.build = os.path.abspath(args.build)
    args.work = os.path.abspath(args.work or os.path.join(args.build, "bench", "models"))
    os.makedirs(args.work, exist_ok=True)
    names = [m for n in args.models.split(",") for m in (VISION if n == "vision" else [n])]
    for n in names:
        if n not in MODELS + VISION:
            sys.exit("bench_models: unknown model '%s' (%s, or 'vision': %s)" %
                     (n, ", ".join(MODELS), ", ".join(VISION)))
    if "ort" in peers:
        run([os.path.join(HERE, "setup-ort.sh"), args.build])
    peak = fma_peak(args.work)
    log("measured f32 FMA peak of one core: %.1f GFLOP/s; %d online CPUs; load average %.2f" %
        (peak, os.cpu_count(), os.getloadavg()[0]))
    tm = torch_models()
    descs = [prepare(n, args, tm) for n in names]
    descs_path = os.path.join(args.work, "models.json")
    with open(descs_path, "w") as f:
        json.dump(descs, f)
    rows = []
    for t in threads:
        sides = []
        # ONNX Runtime first: its results are the reference of the TDSL side.
        for p in peers:
            sides.append((p, Worker(p, t, descs_path, args)))
        reference = "ort_outputs" if "ort" in peers else "outputs"
        sides.insert(0, ("tdsl", Worker("tdsl", t, descs_path, args, reference)))
        for d in descs:
            row = measure(d, t, sides, args, peak)
            rows.append(row)
            log("%-13s %d thr  TDSL %9s ms (%5s%% peak)  " % (
                row["model"], t, row["tdsl_ms"], row["tdsl_peak_pct"]) + "  ".join(
                "%s %9s ms (%5s%% peak) %s/TDSL %6sx" % (
                    p, row[p + "_ms"], row[p + "_peak_pct"], p, row[p + "_over_tdsl"])
                for p in peers) + "  | calls %s, load %s" % (row["calls"], row["load_avg"]))
        for _, w in sides:
            w.stop()
    path = args.csv or os.path.join(args.work, "models.csv")
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, csv_header(peers), extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    log("PEER/TDSL: the peer's median time over TDSL's (above 1: TDSL is faster); %% peak: "
        "GFLOP/s over the FMA peak of the threads' cores (%.1f GFLOP/s per core). CSV: %s" %
        (peak, path))
    if args.profile:
        for t in threads:
            for d in descs:
                log("\n%s, %d thread%s:" % (d["name"], t, "" if t == 1 else "s"))
                profile(d, t, args)


if __name__ == "__main__":
    main()
