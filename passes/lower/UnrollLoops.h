//===- passes/lower/UnrollLoops.h - Small unrolled loops copied out -----------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Loops of kind Unrolled with a constant extent up to this are copied out.
constexpr int64_t kUnrollLimit = 16;

/// The most statements that unrolling may make of a function: the unroll primitive refuses to
/// go beyond, and lower.unroll leaves an Unrolled loop whose copies would go beyond a plain
/// serial loop (so no backend unrolls it either): a 256×256 nest once took minutes and GBs.
constexpr int64_t kMaxUnrolledStatements = 4096;

/// The number of statements `s` becomes once its Unrolled loops of constant extent are copied
/// out (each loop, block, if, let and store counts one; saturates at INT64_MAX).
int64_t unrolledSize(const ir::Stmt &s);

/// Replaces an Unrolled loop with a constant min and a constant extent n <= kUnrollLimit by n
/// copies of its body, the loop variable replaced by min, min + 1, ... (then simplified):
///
///   for k in 0..2 unrolled { S(k) }   -->   S(0); S(1)
///
/// Each copy gets fresh variables and buffers for what it defines (inner loops, lets,
/// Allocates), so no name is defined twice in one scope. A longer or symbolic Unrolled loop
/// stays a loop of that kind (the C++ backend then emits `#pragma GCC unroll`); one whose
/// copies would exceed kMaxUnrolledStatements becomes a serial loop.
///
/// Requires: no Block.
/// Guarantees: the copies run in the loop's order; nothing else changes.
ir::Func unrollLoops(const ir::Func &func);

} // namespace tdsl::lower
