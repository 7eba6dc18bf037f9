//===- ir/StructuralEqual.h - Alpha-equivalence of IR -------------------------------------===//
//
// Two pieces of IR are structurally equal when they have the same shape, dtypes, constants,
// block names, loop kinds and function names, and their Vars and Buffers correspond one to one.
// Names of Vars and Buffers and source locations are ignored: a module and the parse of its
// print compare equal.
//
// Vars and Buffers are matched at their definitions (parameters, loop variables, iter vars,
// let variables, allocations), so two loops may reuse one Var on one side and use two on the
// other. A Var or Buffer used without a definition (free) is matched at its first use.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::ir {

bool structuralEqual(const Expr &a, const Expr &b);
bool structuralEqual(const Stmt &a, const Stmt &b);
bool structuralEqual(const Func &a, const Func &b);
/// Same imports, and the same functions in the same order.
bool structuralEqual(const Module &a, const Module &b);

} // namespace tdsl::ir
