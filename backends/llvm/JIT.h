//===- backends/llvm/JIT.h - Running emitted code in-process (ORC LLJIT) ------------------===//
//
// `tdsl-run` without --interpret: modules from emitModule (optimised like tdslc's objects)
// are added to an LLJIT and their entries looked up. Symbols the code calls resolve in the
// process (libm, libc) and in LLVM's OpenMP runtime, /usr/lib/llvm-19/lib/libomp.so (loaded
// on first use; it exports GOMP_parallel, which parallel loops call), and in the shared
// libraries given to loadLibrary (`tdsl-run --load`: the C symbols of externs that graphs call).
// JitFunction calls one function of an added module with tensors and scalars by name: it packs
// them into the slots of the function's packed entry (LLVMBackend.h).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "backends/llvm/Target.h"
#include "ir/LoweredModule.h"
#include "runtime/Tensor.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
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
  /// cannot be loaded. A library's own tdsl_last_error(), when it defines one, is read for the
  /// message of a failing call (JitFunction::call).
  bool loadLibrary(const std::string &path, std::string &error);

  /// Makes the code added later resolve `symbol` to `address`, before any library (a runner's
  /// own functions, such as the timers of --profile, runtime/Profile.h). False with `error` set
  /// when the symbol is defined already.
  bool defineSymbol(const std::string &symbol, void *address, std::string &error);

  /// Emits the functions of `lowered` (emitModule) with their packed entries (LLVMBackend.h),
  /// optimises them like tdslc does, and adds them.
  bool addModule(const std::string &name, const ir::LoweredModule &lowered, std::string &error);
  /// Adds a relocatable object (e.g. from the C++ backend's compileCpp) defining the raw
  /// entries of the functions of `lowered`, and their packed entries.
  bool addObject(const std::string &bytes, const std::string &name,
                 const ir::LoweredModule &lowered, std::string &error);
  /// The address of `symbol` (materialising what it needs), or nullptr with `error` set.
  void *lookup(const std::string &symbol, std::string &error);

private:
  friend class JitFunction;
  Jit();
  bool addModule(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                 std::string &error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Arguments by parameter name: tensors and scalars of the inputs, and the outputs (a graph's
/// results by their names); the same map as the interpreter's interp::ArgMap.
using JitArgs = std::map<std::string, std::variant<runtime::Tensor, runtime::Scalar>>;

/// The first slots of a packed entry's argument array, in signature order: for each input of
/// `source` and then each output, a pointer to the tensor's bytes or to the scalar's bits in its
/// ABI type. The scalars' bits go to `scalars`, which must have reserved room for them (and for
/// any appended after, such as the shape values) so that the pointers stay valid.
void packArgs(const ir::PrimFunc &source, JitArgs &args, std::vector<void *> &slots,
              std::vector<uint64_t> &scalars);

/// One function of a module added to a Jit, called through its packed entry.
class JitFunction {
public:
  /// The function named `name` of `lowered`, whose code `jit` holds; nullopt with `error` set
  /// when its entry cannot be linked. `jit` and `lowered` must outlive the result.
  static std::optional<JitFunction> find(Jit &jit, const ir::LoweredModule &lowered,
                                         const std::string &name, std::string &error);

  const ir::LoweredFunc &func() const { return *func_; }

  /// The values of the shape variables, from the dimensions of the tensors in `args`.
  std::unordered_map<ir::Var, int64_t> shapeValues(const JitArgs &args) const;

  /// Calls the function on `args` (every input, and every output with its initial contents);
  /// the outputs are updated in place. False with `error` set ("'F' returned 1: message", the
  /// message of tdsl_last_error()) when it fails or a shape variable is not bound.
  bool call(JitArgs &args, std::string &error) const;

private:
  JitFunction() = default;
  const Jit *jit_ = nullptr;
  const ir::LoweredFunc *func_ = nullptr;
  int32_t (*entry_)(void **) = nullptr;
  const char *(*lastError_)() = nullptr;
};

} // namespace tdsl::llvmgen
