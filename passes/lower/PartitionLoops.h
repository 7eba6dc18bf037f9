//===- passes/lower/PartitionLoops.h - Guard-free main parts of guarded loops -------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Splits a Serial or Parallel loop whose body holds a guard — an `if` (no else) or a
/// `select` in a stored value or index — with conjuncts affine in the loop variable into a
/// guard-free main part and guarded head/tail parts:
///
///   for i0 in 0..4 {                         for i0 in 0..3 {
///     for i1 in 0..3 {                         for i1 in 0..3 { B[i0 * 3 + i1] = ... }
///       if i0 * 3 + i1 < 10 {          -->   }
///         B[i0 * 3 + i1] = ...               for i0 in 3..4 {
///                                              for i1 in 0..3 { if i0 * 3 + i1 < 10 { ... } }
///
/// A conjunct `x < y` (also <=, >, >=) holds for every iteration of the loops between the
/// loop and the guard exactly when its worst case over them does; when that worst case is
/// a * v + b with a constant a != 0 (b free of loop variables inside the loop: constants,
/// shape variables, outer loop variables), it holds on a half-line of v whose end is
/// floordiv(-b, a) + 1 (a > 0) or ceil(b / -a) (a < 0). The first guard with such conjuncts
/// picks the main part: the loop range where all of them hold, clamped to the loop (symbolic
/// bounds become min/max expressions). There every guard under the loop drops the conjuncts
/// whose half-line is one of those (the same end, structurally): an `if` left without
/// conjuncts becomes its body, a `select` its true value (the padding of a convolution). The
/// main part is then partitioned again for the guards left on the same variable (each round
/// drops at least one conjunct), and its inner loops on theirs. Parts that are provably empty
/// are dropped; the head and tail are left as they are (partitioning them too multiplies the
/// code: tens of seconds of LLVM time on a convolution). Vectorized and Unrolled loops are
/// not split themselves (they keep their constant extent); a loop around them is.
///
/// Requires: no Block.
/// Guarantees: every part runs the iterations of the original loop in order; a guard (or a
/// conjunct of it) is removed only where it is proven.
ir::Func partitionLoops(const ir::Func &func);

} // namespace tdsl::lower
