//===- ir/Gpu.h - What the IR says about GPU code: thread tags and the barrier ----------------===//
//
// Loops bound to "blockIdx.x|y|z" or "threadIdx.x|y|z" (ForKind::ThreadBinding), and the barrier
// statement lower.cuda-syncs inserts: an Evaluate of syncThreadsVar(), printed `__syncthreads;`,
// which the CUDA backend emits as `__syncthreads();`.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>

namespace tdsl::ir {

/// True for the tags "threadIdx.*"; false for "blockIdx.*".
inline bool isThreadIdxTag(const std::string &tag) { return tag.rfind("threadIdx.", 0) == 0; }

/// The variable whose `Evaluate` statement stands for a barrier of the threads of a block.
inline const Var &syncThreadsVar() {
  static const Var var("__syncthreads", DType::i32());
  return var;
}

/// True for the barrier statement.
inline bool isSyncThreads(const Stmt &s) {
  const auto *e = s.as<Evaluate>();
  const auto *ref = e ? e->value.as<VarRef>() : nullptr;
  return ref && ref->var == syncThreadsVar();
}

} // namespace tdsl::ir
