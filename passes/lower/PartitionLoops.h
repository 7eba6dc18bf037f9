//===- passes/lower/PartitionLoops.h - Guard-free main parts of guarded loops -------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Splits a Serial or Parallel loop whose body holds an `if` (no else) with conjuncts affine
/// in the loop variable into a guard-free main part and guarded head/tail parts:
///
///   for i0 in 0..4 {                         for i0 in 0..3 {
///     for i1 in 0..3 {                         for i1 in 0..3 { B[i0 * 3 + i1] = ... }
///       if i0 * 3 + i1 < 10 {          -->   }
///         B[i0 * 3 + i1] = ...               for i0 in 3..4 {
///                                              for i1 in 0..3 { if i0 * 3 + i1 < 10 { ... } }
///
/// A conjunct `x < y` (also <=, >, >=) holds for every iteration of the loops between the
/// loop and the `if` exactly when its worst case over them does; when that worst case is
/// a * v + b with a constant a != 0 (b free of loop variables inside the loop: constants,
/// shape variables, outer loop variables), it holds on a half-line of v whose end is
/// floordiv(-b, a) + 1 (a > 0) or ceil(b / -a) (a < 0). The main part is the loop range where
/// every such conjunct holds, clamped to the loop (symbolic bounds become min/max
/// expressions); the `if` there keeps only the other conjuncts (or goes). Parts that are
/// provably empty are dropped. Only the main part is partitioned further. Vectorized and
/// Unrolled loops are not split themselves (they keep their constant extent); a loop around
/// them is.
///
/// Requires: no Block.
/// Guarantees: every part runs the iterations of the original loop in order; an `if` is
/// removed only where its condition is proven.
ir::Func partitionLoops(const ir::Func &func);

} // namespace tdsl::lower
