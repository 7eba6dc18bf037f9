//===- tools/tdsl-run/FlopCount.h - Floating-point operations of a lowered function -------===//
//
// The figure behind `tdsl-run --bench`'s GFLOP/s. The rule (docs/llvm-backend.md): each float
// Add, Sub, Mul and Div in a stored value or let value counts one operation per lane, an fma
// call two; other operations (min, max, comparisons, casts, other intrinsics, integer and
// index arithmetic) count nothing. A statement counts as many times as its enclosing loops
// run: their extents are evaluated with the shape variables' values and the enclosing loop
// variables at their first value. Both branches of an `if` count (an upper bound: guards of
// non-dividing splits and `where` clauses are not evaluated). A lowered graph's call of a raw
// entry counts the callee's operations with its shape variables bound to the call's
// arguments (an extern's count nothing: its code is not known).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

namespace tdsl {

/// The operations of one call of `lowered` (a lowered PrimFunc) with `shapeVars` bound;
/// `callees`: the lowered functions a lowered graph calls, by name.
double countFlops(const ir::Func &lowered, const std::unordered_map<ir::Var, int64_t> &shapeVars,
                  const std::map<std::string, ir::Func> &callees = {});

/// The same for one statement of a lowered function (a region of --profile).
double countFlops(const ir::Stmt &stmt, const std::unordered_map<ir::Var, int64_t> &shapeVars,
                  const std::map<std::string, ir::Func> &callees = {});

} // namespace tdsl
