//===- backends/llvm/LLVMBackend.h - The LLVM backend -------------------------------------===//
//
// Lowered PrimFuncs to an llvm::Module built with LLVM 19's IRBuilder, with the binary
// interface of spec §10 (the same symbols and messages as the C++ backend, so that one header
// serves both): for each function NAME a raw entry `int32_t NAME(inputs, outputs, shape vars)`
// whose buffer arguments are `noalias`, a validating `int32_t NAME_dlpack(DLTensor *...)`,
// and a weak `tdsl_last_error()`. Then: a TargetMachine from --mcpu/--mattr, the -O pipeline
// of the new pass manager, objects and assembly (Target.cpp), and an ORC JIT (JIT.h).
//
// Semantics (spec §11, ir/IR.h) as the reference interpreter has them: integers wrap (no
// nsw/nuw), `/` and `%` floor (x / 0 == 0, x % 0 == x, MIN / -1 wraps), float→int casts
// saturate (llvm.fptosi.sat), `round` is llvm.round (half away from zero), select evaluates
// one branch, f16/bf16 are stored as bit patterns, computed in f32 and rounded to nearest even
// after each operation (by integer code, no libcall), bool is one byte in memory. No fast-math
// flag unless `fastMath`. Loops: Parallel loops are outlined and run by GOMP_parallel,
// Vectorized ones carry llvm.loop.vectorize metadata, Unrolled ones llvm.loop.unroll.full;
// Ramp/Broadcast become LLVM vector types. Lowered graphs: views are pointers into their
// source's storage, calls of raw entries (module funcs, extern symbols) are followed by a status
// check that frees the heap allocations and returns a non-zero status. docs/llvm-backend.md
// has the details.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/LoweredModule.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace tdsl::llvmgen {

struct CodeGenOptions {
  /// Fast-math flags on every float operation (--ffast-math).
  bool fastMath = false;
  /// Floating-point contraction (--ffp-contract=on, spec §11): `a * b + c` in one expression
  /// becomes llvm.fmuladd, exactly where Clang's -ffp-contract=on forms it in the C++ backend's
  /// code (a product operand of + or -, possibly negated; the left one first). Off: no
  /// fmuladd, and no `contract` flag even with fastMath.
  bool fpContract = true;
  /// The buffer of tdsl_last_error() is thread_local, like the C++ backend's (objects). The
  /// JIT links without the ORC runtime, which thread-local storage needs: there it is a plain
  /// global.
  bool threadLocalError = true;
  /// Also emit a packed entry per function (see packedEntryName), for the JIT.
  bool packedEntries = false;
  /// Vector exp, exp2, log, log2, tanh, sigmoid, erf, sin, cos and pow of f32/f64 call glibc's
  /// libmvec (which `-lm` links) with the variants of this ISA and narrower ('b' SSE, 'c' AVX,
  /// 'd' AVX2, 'e' AVX-512: vectorMathIsa() in Target.h); 0: libm's scalar functions, lane by
  /// lane.
  char vectorMath = 0;
};

/// Emits the functions of `module` (the CPU pipeline's result: PrimFuncs, then graphs). A
/// lowered graph's call of an extern becomes a call of its C symbol, declared in the module and
/// resolved at link time.
///
/// Requires: externSymbolClash(module) is empty.
/// Guarantees: a module that passes the LLVM verifier (a failure is an internal error), with
/// deterministic contents; no target is set yet (see prepareModule in Target.h).
std::unique_ptr<llvm::Module> emitModule(llvm::LLVMContext &context, const std::string &name,
                                         const ir::LoweredModule &module,
                                         const CodeGenOptions &options = {});

/// Why the externs that the lowered graphs of `module` call cannot share one LLVM module with
/// its functions: a symbol that is also the C name of an emitted function, one of the C library
/// or OpenMP functions the emitted code calls, or one that two externs declare with different
/// raw-entry types. Empty when there is no such clash.
std::string externSymbolClash(const ir::LoweredModule &module);

/// The packed entry of the function with C name `cName`: `int32_t cName.packed(void **args)`,
/// one slot per raw-entry argument, in order: a buffer's slot holds its data pointer, a
/// scalar's or shape variable's slot points at the value (in its ABI type).
std::string packedEntryName(const std::string &cName);

/// Adds the packed entries of the exported functions of `lowered` to `module`, calling the raw
/// entries (defined in the module or, for the C++ backend's object in the JIT, only declared).
void addPackedEntries(llvm::Module &module, const ir::LoweredModule &lowered);

} // namespace tdsl::llvmgen
