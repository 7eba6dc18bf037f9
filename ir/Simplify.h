//===- ir/Simplify.h - The integer simplifier -------------------------------------------===//
//
// The integer simplifier: constant folding and algebraic identities on i64 index
// arithmetic, with floor semantics for `/` and `%` (spec §11). The symbolic analyses of
// ir/Arith.h build on it; the lowering pipeline runs it as the step `lower.simplify`.

#pragma once

#include "ir/IR.h"

namespace tdsl::ir {

/// Folds constants and applies identities (x + 0, x * 1, x * 0, (x + c1) + c2, x / 1, x % 1,
/// c1 < c2 …) bottom-up; an `if` with a constant condition becomes the branch taken. Never changes
/// what the expression computes, wrap-around included.
Expr simplify(const Expr &e);

/// simplify() applied to every expression of a statement.
Stmt simplify(const Stmt &s);

} // namespace tdsl::ir
