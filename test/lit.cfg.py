# lit configuration of the TDSL test suites. Tests are .tdsl files (and .test scripts) with
# `// RUN:` lines; FileCheck checks what tdslc prints.
import os
import lit.formats

config.name = "TDSL"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tdsl", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tdsl_obj_root, "test")

# Tools: the build tree's binaries first, then LLVM's FileCheck/not/count.
config.environment["PATH"] = os.pathsep.join(
    [config.tdsl_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "/usr/bin:/bin")])
config.environment["LC_ALL"] = "C"

config.substitutions.append(("%tdslc", os.path.join(config.tdsl_tools_dir, "tdslc")))
config.substitutions.append(("%tdsl-run", os.path.join(config.tdsl_tools_dir, "tdsl-run")))
config.substitutions.append(("%tdsl-import", os.path.join(config.tdsl_tools_dir, "tdsl-import")))
config.substitutions.append(("%tdsl-lsp", os.path.join(config.tdsl_tools_dir, "tdsl-lsp")))
config.substitutions.append(("%tdsl-tune", os.path.join(config.tdsl_tools_dir, "tdsl-tune")))
config.substitutions.append(("%python", config.python3))
config.substitutions.append(("%stdlib", os.path.join(config.tdsl_src_root, "stdlib")))
config.substitutions.append(("%spec", os.path.join(config.tdsl_src_root, "..", "shared", "spec")))
config.substitutions.append(("%testroot", config.test_source_root))

# nvcc (the CUDA toolkit) compiles the emitted .cu files: tests that need it say
# `REQUIRES: nvcc` and are reported UNSUPPORTED (with this reason) where it is missing.
nvcc = "/usr/local/cuda/bin/nvcc"
if os.path.exists(nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", nvcc))
else:
    lit_config.note("nvcc not found at " + nvcc + ": tests that compile emitted CUDA are skipped")
