# Runs `tdsl-run --check-grad` on each grad of FUNCS on three routes (interpreter, LLVM JIT, C++
# through the Clang libraries). Prints `OK <grad>: <routes>` when every route passes,
# `FAILED <grad>: <routes>` when every route reports errors above 1e-2 (then the last output),
# and `MIXED <grad>: …` with the outputs when the routes disagree or a run errs.
import subprocess
import sys

TDSL_RUN, FUNCS, INPUTS = sys.argv[1:4]
ROUTES = (("interp", ["--interpret"]), ("llvm", []), ("cpp", ["--via=cpp"]))
CASES = [
    ("intrinsics_grad", []),
    ("guards_grad", []),
    ("window_grad", []),
    ("extremes_grad", []),
    ("gather_grad", []),
    ("inplace_grad", []),
    ("two_grad", []),
    ("cnn_grad", ["--input", "label=%s/cnn-label.npy" % INPUTS]),
    ("norm_grad", []),
    ("kink_grad", ["--input", "x=%s/zeros3.npy" % INPUTS]),
]

for name, extra in CASES:
    results, outputs = [], []
    for route, flags in ROUTES:
        p = subprocess.run([TDSL_RUN, FUNCS, "--func", name, "--check-grad"] + flags + extra,
                           capture_output=True, text=True)
        ok = p.returncode == 0 and "check-grad: OK" in p.stdout
        failed = p.returncode == 1 and "check-grad: FAILED" in p.stdout
        results.append("ok" if ok else "failed" if failed else "error")
        outputs.append(p.stdout + p.stderr)
    routes = " ".join(r for r, _ in ROUTES)
    if all(r == "ok" for r in results):
        print("OK %s: %s" % (name, routes))
    elif all(r == "failed" for r in results):
        print("FAILED %s: %s" % (name, routes))
        print(outputs[-1].strip())
    else:
        print("MIXED %s: %s" % (name, " ".join(results)))
        for out in outputs:
            print(out.strip())
