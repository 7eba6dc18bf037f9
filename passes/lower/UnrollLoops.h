//===- passes/lower/UnrollLoops.h - Small unrolled loops copied out -----------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Utils.h"

namespace tdsl::lower {

/// Replaces an Unrolled loop with a constant min and a constant extent n <= ir::kUnrollLimit by n
/// copies of its body, the loop variable replaced by min, min + 1, ... (then simplified):
///
///   for k in 0..2 unrolled { S(k) }   -->   S(0); S(1)
///
/// Each copy gets fresh variables and buffers for what it defines (inner loops, lets,
/// Allocates), so no name is defined twice in one scope. A longer or symbolic Unrolled loop
/// stays a loop of that kind (the C++ backend then emits `#pragma GCC unroll`); one whose
/// copies would exceed ir::kMaxUnrolledStatements becomes a serial loop.
///
/// Requires: no Block.
/// Guarantees: the copies run in the loop's order; nothing else changes.
ir::Func unrollLoops(const ir::Func &func);

} // namespace tdsl::lower
