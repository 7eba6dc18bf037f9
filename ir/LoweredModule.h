//===- ir/LoweredModule.h - What the module pipeline hands to the backends -------------------===//
//
// The result of passes/Pipeline.h: the scheduled module and, for each function a backend emits,
// its source form, the signature its entries take and its lowered (loop-level) form. Every
// backend (C++, header, CUDA, LLVM, the JIT) reads this and never lowers anything itself.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace tdsl::ir {

/// One emitted function.
struct LoweredFunc {
  /// The function of the scheduled module: a PrimFunc, or a GraphFunc (CPU target only).
  Func source;
  /// The PrimFunc whose parameters the entries take (what the DLPack entry validates):
  /// `source` itself, or a graph's signature (inputs, one output per result; empty body).
  Func signature;
  /// The lowered form: no blocks, rank-1 buffers; its inputs and outputs are the flat forms of
  /// `signature`'s, position by position.
  Func lowered;
  /// Whether an object of the module exports it (spec §10): external linkage, both entries, a
  /// prototype in the header. Only the file's own items are; every other function an object
  /// defines (an imported function, an instance or a fused function a graph calls) is private
  /// to it, so that objects that import the same module link together.
  bool exported = true;

  bool isGraph() const { return source.as<GraphFunc>() != nullptr; }
};

/// A graph constant that lowered graphs read: the module's constant and the flat (rank-1,
/// role Constant) buffer the lowered functions name for it. Backends embed its data read-only,
/// 64-byte aligned, and bind that buffer to it.
struct LoweredConstant {
  Constant source;
  Buffer flat;
};

struct LoweredModule {
  /// The scheduled module (what `--emit=ir` prints; the externs graphs call).
  Module module;
  /// The emitted functions in emission order: the PrimFuncs, then the graphs (which call them).
  /// CPU: the file's own PrimFuncs and graphs without open generic constants (or the one that
  /// --func names) and, transitively, every function an emitted graph calls.
  std::vector<LoweredFunc> funcs;
  /// The ExternFuncs of `module`, in module order.
  std::vector<Func> externs;
  /// The graph constants the lowered graphs read, in module order.
  std::vector<LoweredConstant> constants;
  /// The callees of the FuncCalls in the lowered functions (emitted functions and externs),
  /// each once, in order of first call: what a backend declares and a JIT must resolve.
  std::vector<std::string> calledFunctions;

  /// The `source` of every function, in order.
  std::vector<Func> sources() const {
    std::vector<Func> out;
    for (const LoweredFunc &f : funcs)
      out.push_back(f.source);
    return out;
  }
  /// The `lowered` of every function, in order.
  std::vector<Func> lowered() const {
    std::vector<Func> out;
    for (const LoweredFunc &f : funcs)
      out.push_back(f.lowered);
    return out;
  }
};

} // namespace tdsl::ir
