//===- backends/cpp/CompileCpp.h - Emitted C++ to an object, in-process -------------------===//
//
// `tdslc --emit=obj|asm --via=cpp`: the translation unit of emitCpp is compiled by the Clang
// libraries inside tdslc (clang::driver builds the -cc1 command line for the host, with the
// system's C++ headers; clang::CompilerInstance compiles the in-memory buffer). No compiler
// process is started.
//
// The object is position independent and built with -fopenmp: `#pragma omp simd` needs no
// runtime, and parallel loops call GOMP_parallel (the prelude's tdsl_parallel_for), which GCC's
// libgomp and LLVM's libomp both provide: an object links with either compiler's -fopenmp
// (docs/cpp-backend.md has the link lines).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tdsl::cpp {

struct CompileOptions {
  std::string triple;          ///< the target triple (Clang's --target); "": the host's
  int optLevel = 2;            ///< -O0..-O3
  std::string mcpu = "native"; ///< the target CPU (-march= on x86); "native": the host's
  std::string mattr;           ///< "+avx512f,-fma": each becomes -target-feature
  bool fastMath = false;       ///< -ffast-math
  bool fpContract = true;      ///< -ffp-contract=on (Clang's default), or off
  bool remarks = false;        ///< warnings and -Rpass-missed/-Rpass-analysis remarks shown
  bool assembly = false;       ///< textual assembly instead of an ELF object
};

/// Compiles `code` (a C++17 translation unit, named `bufferName` in messages) for the host, or
/// for `options.triple` (the headers of that target's GCC installation, as Clang finds them:
/// /usr/aarch64-linux-gnu for the Debian cross toolchain).
/// Returns true and the object (or assembly) bytes in `output`; false with Clang's
/// diagnostics in `errors` (the emitted code should never fail: that is a backend bug, or a
/// bad --mcpu/--mattr).
bool compileCpp(const std::string &code, const std::string &bufferName,
                const CompileOptions &options, std::string &output, std::string &errors);

} // namespace tdsl::cpp
