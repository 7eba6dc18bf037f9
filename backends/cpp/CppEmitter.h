//===- backends/cpp/CppEmitter.h - The C++ backend ----------------------------------------===//
//
// Emits readable C++17 for the PrimFuncs and graphs of a module, with the binary interface of
// spec §10: for each function NAME a raw entry `int32_t NAME(inputs, outputs, shape vars)` and a
// validating `int32_t NAME_dlpack(DLTensor* ...)`, plus `tdsl_last_error()` once per
// translation unit. Each function is lowered (passes/lower/Pipeline.h) first; a graph by
// passes/lower/LowerGraph.h, its calls becoming calls of the callees' raw entries (externs
// declared `extern "C"` by their symbols), a failing call's status returned after releasing
// the arena.
//
// Semantics of the emitted code (spec §11): integer arithmetic wraps (computed through
// unsigned types unless interval analysis proves it cannot overflow); `/` and `%` are floor
// division and modulo (plain C operators only when both operands are provably non-negative
// and the divisor positive); float→int casts saturate; f16/bf16 values are computed in float
// and rounded to nearest even after each operation, as the reference interpreter does.
// Vector statements from lower.vectorize become GCC/Clang vector-extension code (typedefs
// `tdsl_f32x8`, memcpy loads and stores); AssertStmt (--bounds-check) records the first failure
// and the entry returns it at its end (docs/cpp-backend.md, docs/lowering.md).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "backends/abi/Abi.h"
#include "ir/IR.h"
#include "passes/lower/Pipeline.h"

#include <string>

namespace tdsl::cpp {

struct CppOptions {
  /// Only this function (its source name); empty for every one.
  std::string onlyFunc;
  /// Called after each lowering step of each function (for --print-ir-after); when set, it
  /// replaces lower.afterStep.
  lower::StepCallback afterLowerStep;
  /// The lowering options (--bounds-check, --print-ir-before).
  lower::LowerOptions lower;
  /// The include guard of the header (emitHeader).
  std::string headerGuard = "TDSL_GENERATED_H";
  /// Format the text with clang::format (LLVM style, 100 columns; backends/cpp/Format.h).
  bool format = true;
  /// The file's own items, which the unit exports (abi::OwnNames; by default the functions
  /// without a '.'). The other functions it defines are `static`, without a DLPack entry.
  abi::OwnNames ownNames;
  /// Floating-point contraction (--ffp-contract=on|off, spec §11): when false the unit says
  /// `#pragma STDC FP_CONTRACT OFF` (Clang) and `#pragma GCC optimize("fp-contract=off")` (GCC).
  bool fpContract = true;
};

/// The functions a backend emits (abi::definedFunctions): the exported PrimFuncs with no open
/// generic constant, in module order, then the exported graphs without open constants (all of
/// them, or the one named by `onlyFunc`), plus what the emitted graphs call.
std::vector<ir::Func> emittedFunctions(const ir::Module &module, const CppOptions &options);

/// A C++17 translation unit with both entries of every emitted function.
///
/// Requires: a checked, scheduled module.
/// Guarantees: deterministic text, formatted unless `options.format` is false; compiles
/// warning-free with g++/clang++ -std=c++17 -Wall -Wextra (and -fopenmp for the pragmas to take
/// effect).
std::string emitCpp(const ir::Module &module, const CppOptions &options = {});

/// Lowers every emitted function (the --emit=lowered output), calling afterLowerStep.
std::vector<ir::Func> lowerModule(const ir::Module &module, const CppOptions &options = {});

/// One C header (valid C and C++) declaring both entries of every emitted function and
/// tdsl_last_error().
std::string emitHeader(const ir::Module &module, const CppOptions &options = {});

} // namespace tdsl::cpp
