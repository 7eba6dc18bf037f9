//===- tools/tdsl-run/FlopCount.h - Floating-point operations of a lowered function -------===//
//
// The figure behind `tdsl-run --bench`'s GFLOP/s. The rule (docs/llvm-backend.md): each float
// Add, Sub, Mul and Div in a stored value or let value counts one operation per lane, an fma
// call two; other operations (min, max, comparisons, casts, other intrinsics, integer and
// index arithmetic) count nothing. A statement counts as many times as its enclosing loops
// run: their extents are evaluated with the shape variables' values and the enclosing loop
// variables at their first value. Both branches of an `if` count (an upper bound: guards of
// non-dividing splits and `where` clauses are not evaluated).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <unordered_map>

namespace tdsl {

/// The operations of one call of `lowered` (a lowered PrimFunc) with `shapeVars` bound.
double countFlops(const ir::Func &lowered, const std::unordered_map<ir::Var, int64_t> &shapeVars);

} // namespace tdsl
