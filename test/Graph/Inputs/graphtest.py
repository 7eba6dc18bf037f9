"""Shared helpers of the test/Graph scripts, called as `script.py TDSLC TDSL_RUN SOURCE.tdsl
TMPDIR`: all of test/CodeGen/CPP/Inputs/cpptest.py (the command line, run_or_die, check(), …),
the library of externs.cpp, and errors.cpp (a program whose `guarded` graph's extern fails)
under AddressSanitizer."""
import os
import subprocess
import sys

INPUTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(INPUTS, "..", "..", "CodeGen", "CPP", "Inputs"))
from cpptest import *  # noqa: E402,F401,F403


def extern_library():
    """Builds externs.cpp into TMP/libgraphext.so; returns its path, the link flags of a program
    that calls it and the tdsl-run flags that load it."""
    lib = os.path.join(TMP, "libgraphext.so")
    run_or_die(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                os.path.join(INPUTS, "externs.cpp"), "-o", lib, "-lopenblas"])
    return lib, [lib, "-Wl,-rpath," + TMP], ["--load", lib]


def guarded_errors(emit, suffix, link, label=""):
    """The `guarded` graph emitted with `emit` (into TMP/guarded_err`suffix`) and its header,
    linked with errors.cpp and `link` under AddressSanitizer, run: prints the program's output
    and `errors.cpp<label> exit N`, and its stderr when N is not 0."""
    stem = os.path.join(TMP, "guarded_err")
    run_or_die([TDSLC, SOURCE, "--func", "guarded", emit, "-o", stem + suffix])
    run_or_die([TDSLC, SOURCE, "--func", "guarded", "--emit=header", "-o",
                os.path.join(TMP, "guarded.h")])
    exe = stem + ".exe"
    run_or_die(["g++", "-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
                "-fsanitize=address,undefined", "-I", TMP, os.path.join(INPUTS, "errors.cpp"),
                stem + suffix, "-o", exe] + link)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1")
    r = subprocess.run([exe], capture_output=True, text=True, env=env)
    print(r.stdout, end="")
    print("errors.cpp%s exit %d" % (label, r.returncode))
    if r.returncode != 0:
        print(r.stderr)
