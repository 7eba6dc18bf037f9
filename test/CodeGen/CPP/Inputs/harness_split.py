"""The split build of harness.cpp (-DTDSL_HARNESS_SPLIT) for the numerical tests: the
harness's main() is compiled once per test script and set of flags, and each function gets a
shim of two lines, compiled with its header, that makes the call. (Compiling the whole harness
with every function cost a second of g++ per build, a third of a Stdlib case's time.)
Used by cpptest.py and test/Stdlib/Inputs/routes.py."""
import os

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.cpp")
_drivers = {}


def driver(tmp, cxxflags, run, cxx="g++"):
    """The object of the harness's main(), compiled with `cxxflags` by `run(args)` (which
    fails the test when the compiler fails) the first time these flags and this compiler
    (`cxx`: g++, or a cross compiler such as aarch64-linux-gnu-g++) are asked for."""
    key = (tmp, tuple(cxxflags), cxx)
    if key not in _drivers:
        obj = os.path.join(tmp, "harness_driver%d.o" % len(_drivers))
        run([cxx, "-c"] + list(cxxflags) + ["-DTDSL_HARNESS_SPLIT", HARNESS, "-o", obj])
        _drivers[key] = obj
    return _drivers[key]


def shim(path, header, symbol, call_args):
    """Writes the shim that calls `symbol`_dlpack(call_args) (`&t[k]` for the k-th array
    argument, a literal for a scalar) and returns tdsl_last_error(); `header` is found beside
    it. Returns `path`."""
    with open(path, "w") as f:
        f.write('#include "%s"\n' % os.path.basename(header))
        f.write('extern "C" int32_t tdsl_harness_call(DLTensor *t) { return %s_dlpack(%s); }\n'
                % (symbol, ", ".join(call_args)))
        f.write('extern "C" const char *tdsl_harness_error(void) { return tdsl_last_error(); }\n')
    return path
