//===- ir/ShapeBounds.h - Accesses against symbolic shapes -----------------------------------===//
//
// Rule 6 of spec §5 where shapes are symbolic (§4, §11): for each access of a func whose index
// is affine in the loops around it, unguarded (no `where`, `if` or `select` above it) and not
// read from data, the extremes of the index over the loops are expressions in the shape
// variables, attained by some iteration whenever every loop runs. Against the buffer's extent
// the access is then
//   - out of bounds for every value of the shapes (`B(i: spatial N + 1)` writing `f32[N]`): the
//     checker's error;
//   - in bounds for every value (`i < N` over `0..N`): nothing to do;
//   - undecided (`W[r, i]` with `i` over `0..N` and `W: f32[R, M]`): a condition on the shapes
//     alone, which the compiled entry checks once, before its body runs (lower.bounds-check).
// Accesses this analysis does not cover (guarded, data-dependent, not affine) are decided by the
// checker's interval analysis, checked at run time when they depend on data, and checked
// everywhere with --bounds-check.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace tdsl::ir {

/// One end of an access's index range against one dimension.
struct ShapeBound {
  Buffer buffer;
  size_t dim = 0;
  Expr index;   ///< the index as written (in the block's axes)
  Expr extreme; ///< its lowest (`upper` false) or highest value, in the shape variables
  Expr extent;  ///< the dimension's extent
  bool upper = true;
  /// What must hold for the access to stay in bounds, in the shape variables: every loop
  /// around it empty, or the extreme within [0, extent).
  Expr inBounds;
  SourceLoc loc;
};

/// A buffer whose size, computed from the shape variables, must fit in 64 bits (spec §4: an
/// extent or element count that overflows is an error, never a wrapped size).
struct ExtentCheck {
  Buffer buffer;
  /// What must hold, evaluated without overflow: each product `a * b` of its dimensions and
  /// byte size as `a == 0 || b <= INT64_MAX / a`, each dimension at least 0.
  Expr fits;
};

struct ShapeBounds {
  /// Out of bounds for every value of the shape variables (and every loop around it runs).
  std::vector<ShapeBound> violations;
  /// Neither proven nor refuted: checked at run time.
  std::vector<ShapeBound> checks;
  /// The signature's and the root allocations' buffers with a dimension computed from the shape
  /// variables (`f32[N * N]`; not `f32[N, M]`, whose dimensions are sizes of the caller's).
  std::vector<ExtentCheck> extents;
};

/// The accesses of `func` (a PrimFunc; others give nothing) against its symbolic shapes.
/// Dimensions whose extent and index range are both constant are left to the checker's
/// interval analysis.
ShapeBounds analyzeShapeBounds(const Func &func);

} // namespace tdsl::ir
