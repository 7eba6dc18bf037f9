//===- passes/lower/BoundsCheck.h - Run-time bounds checks (--bounds-check) ---------------===//
#pragma once

#include "ir/IR.h"
#include "ir/ShapeBounds.h"

#include <functional>
#include <string>

namespace tdsl::lower {

/// Wraps each statement that makes an access the interval analysis cannot prove in bounds in
/// an AssertStmt per unproven (access, dimension):
///
///   C[i, j] = A[i, j + 1];   -->   assert 0 <= j + 1 && j + 1 < K,
///                                    "f: out-of-bounds access to 'A': index {} of dimension 1
///                                     is outside [0, {}) at f.tdsl:4:15", j + 1, K {
///                                    C[i, j] = A[i, j + 1];
///                                  }
///
/// A load under a `select` is checked only where its branch is chosen (`!cond || in bounds`).
/// Loads in an `if` condition, a `let` value or loop bounds are checked around that statement.
/// `locationText` spells a source location (nullptr: "line L, column C").
///
/// Requires: no Block (after lowerBlocks), buffers not yet flattened.
/// Guarantees: every access either is proven in bounds for every iteration of its enclosing
/// loops or runs only after its AssertStmt checked it; nothing else changes.
///
/// `dataOnly`: only the accesses whose index depends on data — a value loaded from a buffer
/// (`A[I[i]]`, a gather) or a scalar input — which no analysis of the shapes can prove in
/// bounds. Those are checked on every route (spec §6), --bounds-check or not.
ir::Func insertBoundsChecks(const ir::Func &func,
                            const std::function<std::string(const SourceLoc &)> &locationText,
                            bool dataOnly = false);

/// The body of `func` run only when `checks` (ir/ShapeBounds.h: conditions on its shape
/// variables) hold, each an AssertStmt around it:
///
///   assert M > N - 1 || R < 1 || N < 1, "f: out-of-bounds access to 'W': index {} of
///       dimension 1 is outside [0, {}) at f.tdsl:5:29", N - 1, M { body }
/// `extents` first (each buffer's size must fit in 64 bits: "f: the size of 'B' (f32[N * N * N *
/// N]) overflows 64-bit integers").
ir::Func insertShapeChecks(const ir::Func &func, const std::vector<ir::ShapeBound> &checks,
                           const std::vector<ir::ExtentCheck> &extents,
                           const std::function<std::string(const SourceLoc &)> &locationText);

} // namespace tdsl::lower
