//===- passes/lower/VectorizeLoops.h - Vectorized loops to vector code --------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Replaces a Vectorized loop of constant extent L (a power of two, 2 to 64) whose body is
/// straight-line stores by vector statements of L lanes:
///
///   for j1 in 0..8 vectorized {        C[ramp(i * 64 + j0 * 8, 1, 8)] =
///     C[i * 64 + j0 * 8 + j1] =  -->     A[ramp(i * 64 + j0 * 8, 1, 8)] * broadcast(s, 8);
///       A[i * 64 + j0 * 8 + j1] * s;
///
/// Lowered forms: an index with coefficient 1 in the loop variable becomes
/// `ramp(index at the loop's min, 1, L)` (a contiguous vector load or store); an expression
/// that does not depend on the loop variable becomes `broadcast(e, L)` (computed once); every
/// other node is the same node on f32xL / f64xL values (Add, Sub, Mul, Div, Min, Max, Neg,
/// Cast between f32 and f64). Min and Max keep the scalar semantics lane by lane (NaN rules
/// of fmin/fmax).
///
/// Anything else leaves the loop as it is (a scalar loop still marked Vectorized): a body
/// with other statements (if, let, loops), a stored dtype other than f32/f64, a store index
/// without coefficient 1, an index with another coefficient (gathers, strided access), calls,
/// selects, comparisons, integer or half arithmetic, a value using the loop variable other
/// than in an index, or a stored buffer accessed at another index anywhere in the body
/// (which rules out cross-lane dependences and reductions into one element).
///
/// Requires: flattened buffers (rank 1).
/// Guarantees: each vectorized statement computes, lane by lane, what the loop computed,
/// and touches the same elements.
ir::Func vectorizeLoops(const ir::Func &func);

} // namespace tdsl::lower
