//===- passes/Simplify.h ----------------------------------------------------------------------===//
//
// The integer simplifier: constant folding and algebraic identities on i64 index
// arithmetic, with floor semantics for `/` and `%` (spec §11).

#pragma once

#include "ir/IR.h"

namespace tdsl {

/// Folds constants and applies identities (x + 0, x * 1, x * 0, (x + c1) + c2, x / 1, x % 1,
/// c1 < c2 …) bottom-up; an `if` with a constant condition becomes the branch taken. Never changes
/// what the expression computes, wrap-around included.
ir::Expr simplify(const ir::Expr &e);

/// simplify() applied to every expression of a statement.
ir::Stmt simplify(const ir::Stmt &s);

} // namespace tdsl
