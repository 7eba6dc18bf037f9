//===- backends/llvm/JIT.h - Running emitted code in-process (ORC LLJIT) ------------------===//
//
// `tdsl-run` without --interpret: modules from emitModule (optimised like tdslc's objects)
// are added to an LLJIT and their entries looked up. Symbols the code calls resolve in the
// process (libm, libc) and in LLVM's OpenMP runtime, /usr/lib/llvm-19/lib/libomp.so (loaded
// on first use; it exports GOMP_parallel, which parallel loops call), and in the shared
// libraries given to loadLibrary (`tdsl-run --load`: the C symbols of externs that graphs call).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "backends/llvm/Target.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace tdsl::llvmgen {

class Jit {
public:
  /// A JIT for `options` (CPU, features, -O level); nullptr with `error` set on failure.
  static std::unique_ptr<Jit> create(const TargetOptions &options, std::string &error);
  ~Jit();

  /// Makes the symbols of the shared library at `path` resolvable by the code added later
  /// (searched after the process and the OpenMP runtime). False with `error` set when it
  /// cannot be loaded.
  bool loadLibrary(const std::string &path, std::string &error);

  /// Emits `sources` (lowered as `lowered`; graphs calling `externs`, see emitModule) with
  /// their packed entries (LLVMBackend.h), optimises them like tdslc does, and adds them.
  bool addFunctions(const std::string &name, const std::vector<ir::Func> &sources,
                    const std::vector<ir::Func> &lowered, std::string &error,
                    const std::vector<ir::Func> &externs = {});
  /// Adds a relocatable object (e.g. from the C++ backend's compileCpp) defining the raw
  /// entries of `sources`, and their packed entries.
  bool addObject(const std::string &bytes, const std::string &name,
                 const std::vector<ir::Func> &sources, const std::vector<ir::Func> &lowered,
                 std::string &error);
  /// The address of `symbol` (materialising what it needs), or nullptr with `error` set.
  void *lookup(const std::string &symbol, std::string &error);

private:
  Jit();
  bool addModule(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                 std::string &error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tdsl::llvmgen
