"""A small MLP whose weights are graph constants (see constants-mlp.tdsl): the .npy files are
generated here into the test's folder (found through -I), then the graph runs on every route
and is compared with NumPy (rtol 1e-4, atol 1e-5): the interpreter, the LLVM JIT and the C++
route's JIT (both with --check against the interpreter on the graph as written, unfolded), and
three objects linked into a C program through the header (LLVM, --via=cpp, and the emitted C++
compiled by g++). The .npy files are removed before the C programs run: the constants are in
the objects. Prints `ROUTE <name> OK` or what differs."""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphtest import *  # noqa: E402,F401,F403

LDFLAGS = ["-L" + OMP_LIBDIR, "-Wl,-rpath," + OMP_LIBDIR, "-lomp", "-lstdc++", "-lm", "-lpthread"]


rng = np.random.default_rng(15)
B = 4
consts = {
    "w0": rng.uniform(-1, 1, (32, 16)).astype(np.float32),  # nn.linear's [N, K]
    "b0": rng.uniform(-1, 1, (32,)).astype(np.float32),
    "w1": rng.uniform(-1, 1, (32, 10)).astype(np.float32),  # [K, N]: transposed at compile time
    "b1": rng.uniform(-1, 1, (10,)).astype(np.float32),
}


def write_consts():
    for name, value in consts.items():
        np.save(os.path.join(TMP, "constants_mlp_%s.npy" % name), value)


def remove_consts():
    for name in consts:
        os.remove(os.path.join(TMP, "constants_mlp_%s.npy" % name))


write_consts()
x = rng.uniform(-1, 1, (B, 16)).astype(np.float32)
X = os.path.join(TMP, "x.npy")
np.save(X, x)
x.tofile(os.path.join(TMP, "x.bin"))
want = np.maximum(x @ consts["w0"].T + consts["b0"], 0) @ consts["w1"] + consts["b1"]
INC = ["-I", TMP]


def compare(route, got):
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5):
        print("ROUTE %s OK" % route)
    else:
        diff = np.max(np.abs(got - want)) if got.shape == want.shape else float("inf")
        print("ROUTE %s DIFFERS: max diff %g" % (route, diff))


def tdsl_run(route, extra):
    out = os.path.join(TMP, "o_%s.npy" % route)
    r = run_or_die([TDSL_RUN, SOURCE, "--func", "mlp", "--input", "x=" + X, "--output",
                    "o=" + out] + INC + extra)
    if "--check" in extra and "check: OK: 'mlp'" not in r.stdout:
        print("CHECK FAILED [%s]: %s" % (route, r.stdout))
    compare(route, np.load(out))


tdsl_run("interpret", ["--interpret"])
tdsl_run("jit-llvm", ["--check"])
tdsl_run("jit-cpp", ["--check", "--via=cpp"])

# Objects and a C program through the header (the raw entry).
MAIN = os.path.join(TMP, "main.c")
with open(MAIN, "w") as f:
    f.write("""#include "mlp.h"
#include <stdio.h>
int main(int argc, char **argv) {
  float x[%(B)d * 16], o[%(B)d * 10];
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(x, sizeof(float), %(B)d * 16, in) != %(B)d * 16) return 2;
  fclose(in);
  int32_t status = mlp(x, o, %(B)d);
  if (status) { fprintf(stderr, "mlp: %%s\\n", tdsl_last_error()); return 1; }
  FILE *out = fopen(argv[2], "wb");
  fwrite(o, sizeof(float), %(B)d * 10, out);
  fclose(out);
  return 0;
}
""" % {"B": B})
run_or_die([TDSLC, SOURCE, "--emit=header", "-o", os.path.join(TMP, "mlp.h")] + INC)
objects = {}
objects["obj-llvm"] = os.path.join(TMP, "mlp_llvm.o")
run_or_die([TDSLC, SOURCE, "-o", objects["obj-llvm"]] + INC)
objects["obj-via-cpp"] = os.path.join(TMP, "mlp_via_cpp.o")
run_or_die([TDSLC, SOURCE, "--emit=obj", "--via=cpp", "-o", objects["obj-via-cpp"]] + INC)
CPP = os.path.join(TMP, "mlp.cpp")
run_or_die([TDSLC, SOURCE, "--emit=cpp", "-o", CPP] + INC)
# The folded constant's data lies next to the C++ file; the others are read from the .npy files.
print("COMPANION", sorted(f for f in os.listdir(TMP) if f.startswith("mlp.") and f.endswith(".bin")))
objects["obj-gxx"] = os.path.join(TMP, "mlp_gxx.o")
run_or_die(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-c", CPP,
            "-o", objects["obj-gxx"]])
remove_consts()
for route, obj in objects.items():
    exe = os.path.join(TMP, route + ".exe")
    run_or_die(["gcc", "-std=c11", "-Wall", "-Werror", "-I", TMP, MAIN, obj, "-o", exe] + LDFLAGS)
    out = os.path.join(TMP, route + ".bin")
    run_or_die([exe, os.path.join(TMP, "x.bin"), out])
    compare(route, np.fromfile(out, dtype=np.float32).reshape(B, 10))
write_consts()  # for the test's next RUN line
print("DONE")
