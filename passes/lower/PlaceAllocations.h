//===- passes/lower/PlaceAllocations.h - Allocations at the innermost covering statement --===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Moves each Allocate of an `alloc` buffer (root allocs, block allocs, cache buffers) down to
/// the smallest statement that covers every use of the buffer:
///
///   alloc T;                        for i parallel {
///   for i parallel {         -->      alloc T;
///     T[i, 0] = ...; ... T[i, 0]       T[i, 0] = ...; ... T[i, 0]
///   }                               }
///
/// It descends into the one item of a sequence that uses the buffer (several: the Allocate
/// wraps that run of items), the one branch of an `if`, the body of a `let`, an assert or
/// another Allocate, and into a loop body only when the iterations of the loop touch disjoint
/// parts of the buffer (some dimension's index is a * v + c with the per-iteration spread of c
/// below |a|): then no value flows from one iteration to another, and allocating per
/// iteration (per thread in a parallel loop) is exact.
///
/// Requires: no Block (after lowerBlocks), buffers not yet flattened.
/// Guarantees: every load and store of a buffer stays inside its Allocate; loops, stores and
/// buffers keep their identities.
ir::Func placeAllocations(const ir::Func &func);

} // namespace tdsl::lower
