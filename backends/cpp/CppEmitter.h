//===- backends/cpp/CppEmitter.h - The C++ backend ----------------------------------------===//
//
// Emits readable C++17 for the PrimFuncs and graphs of a module, with the binary interface of
// spec §10: for each function NAME a raw entry `int32_t NAME(inputs, outputs, shape vars)` and a
// validating `int32_t NAME_dlpack(DLTensor* ...)`, plus `tdsl_last_error()` once per
// translation unit. The functions come lowered by the module pipeline (passes/Pipeline.h): a
// lowered graph's calls become calls of the callees' raw entries (externs declared
// `extern "C"` by their symbols), a failing call's status returned after releasing the arena.
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

#include "ir/LoweredModule.h"

#include <map>
#include <string>

namespace tdsl::cpp {

/// Where the bytes of a graph constant lie: a file and the offset of the data in it.
struct ConstantFile {
  std::string path;
  uint64_t offset = 0;
};

struct CppOptions {
  /// The include guard of the header (emitHeader).
  std::string headerGuard = "TDSL_GENERATED_H";
  /// Format the text with clang::format (LLVM style, 100 columns; backends/cpp/Format.h).
  bool format = true;
  /// Floating-point contraction (--ffp-contract=on|off, spec §11): when false the unit says
  /// `#pragma STDC FP_CONTRACT OFF` (Clang) and `#pragma GCC optimize("fp-contract=off")` (GCC).
  bool fpContract = true;
  /// Graph constants (spec §8) are not printed as literals: each is assembled into the object
  /// from a file by `.incbin` in a top-level `asm` (GCC and Clang alike). A constant loaded
  /// from a .npy file is read from that file (its absolute path, the data at its end); the
  /// others (folded) from the file given here by constant name (writeConstantFiles).
  std::map<std::string, ConstantFile> constantFiles;
};

/// Writes the data of each graph constant of `module` that has no .npy file (a folded one) raw
/// to `prefix + NAME + ".bin"` (NAME a C identifier), and records its absolute path in `files`.
/// False with `error` set when a file cannot be written.
bool writeConstantFiles(const ir::LoweredModule &module, const std::string &prefix,
                        std::map<std::string, ConstantFile> &files, std::string &error);

/// The files of writeConstantFiles in a fresh temporary folder, removed by the destructor: for
/// an in-process compilation (--via=cpp).
class TemporaryConstantFiles {
public:
  TemporaryConstantFiles() = default;
  TemporaryConstantFiles(const TemporaryConstantFiles &) = delete;
  TemporaryConstantFiles &operator=(const TemporaryConstantFiles &) = delete;
  ~TemporaryConstantFiles();
  /// Writes the files (none when no constant needs one); false with `error` set.
  bool write(const ir::LoweredModule &module, std::map<std::string, ConstantFile> &files,
             std::string &error);

private:
  std::string dir_;
};

/// A C++17 translation unit with both entries of every exported function of `module` (the
/// private ones are `static`, without a DLPack entry).
///
/// Requires: the CPU pipeline's result.
/// Guarantees: deterministic text, formatted unless `options.format` is false; compiles
/// warning-free with g++/clang++ -std=c++17 -Wall -Wextra (and -fopenmp for the pragmas to take
/// effect).
std::string emitCpp(const ir::LoweredModule &module, const CppOptions &options = {});

/// One C header (valid C and C++) declaring both entries of every exported function of `module`
/// (for the C++, LLVM and CUDA backends alike) and tdsl_last_error().
std::string emitHeader(const ir::LoweredModule &module, const CppOptions &options = {});

} // namespace tdsl::cpp
