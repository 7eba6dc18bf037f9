# fp_contract.tdsl: --ffp-contract=off results against the interpreter's, compared bit for bit.
import os, subprocess, sys
import numpy as np

TDSLC, TDSL_RUN, SOURCE, TMP = sys.argv[1:5]
sys.argv[1:5] = [TDSLC, TDSL_RUN, SOURCE, TMP]
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "CPP", "Inputs"))
from cpptest import check  # noqa: E402

OFF = ["--ffp-contract=off"]
rng = np.random.default_rng(7)
inputs = {n: rng.uniform(-4, 4, 4096).astype(np.float32) for n in "abc"}
paths = {}
for n, v in inputs.items():
    paths[n] = os.path.join(TMP, n + ".npy")
    np.save(paths[n], v)


def run(tag, extra):
    args = [TDSL_RUN, SOURCE, "--func", "muladd"] + extra
    for n, p in paths.items():
        args += ["--input", "%s=%s" % (n, p)]
    outs = {}
    for n in "yzw":
        outs[n] = os.path.join(TMP, "%s_%s.npy" % (tag, n))
        args += ["--output", "%s=%s" % (n, outs[n])]
    subprocess.run(args, check=True, capture_output=True)
    return {n: np.load(p) for n, p in outs.items()}


want = run("interp", ["--interpret"])
for tag, extra in [("jit", OFF), ("jit-cpp", OFF + ["--via=cpp"])]:
    got = run(tag, extra)
    same = [n for n in "yzw" if got[n].tobytes() == want[n].tobytes()]
    print("%s bitwise: %s" % (tag, " ".join(same)))
# The emitted C++ by g++ with FMA instructions available, and the --via=cpp object: exact.
for obj in (False, True):
    got = check("muladd", inputs, {n: np.zeros(4096, np.float32) for n in "yzw"},
                tdslc_flags=OFF + ["--mcpu=x86-64-v3"], interp_flags=OFF,
                cxxflags=[] if obj else ["-march=x86-64-v3"], obj=obj, tag=".obj" if obj else "")
    print("%s bitwise: %s" % ("obj" if obj else "g++", " ".join(
        n for n in "yzw" if got[n].tobytes() == want[n].tobytes())))
