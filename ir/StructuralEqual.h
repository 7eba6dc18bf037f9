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
// equalExpr() is the exact comparison the analyses use: the same shape and constants, with
// Vars and Buffers compared by identity (no renaming).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <unordered_map>

namespace tdsl::ir {

bool structuralEqual(const Expr &a, const Expr &b);
bool structuralEqual(const Stmt &a, const Stmt &b);
bool structuralEqual(const Func &a, const Func &b);
/// Same imports, the same functions in the same order, the same intrinsics.
bool structuralEqual(const Module &a, const Module &b);

/// Whether `a` and `b` are the same expression, Vars and Buffers compared by identity (after
/// `alias`, which maps a variable to the one it stands for: e.g. every threadIdx.x loop
/// variable to one). Float constants compare bitwise. Both undefined compare equal.
bool equalExpr(const Expr &a, const Expr &b, const std::unordered_map<Var, Var> &alias = {});

} // namespace tdsl::ir
