//===- passes/schedule/Dependence.h -----------------------------------------------------------===//
//
// When the iterations of a loop touch disjoint elements: the test behind
// parallel (iterations may run at once) and reorder (iterations may run in another order).

#pragma once

#include "passes/schedule/State.h"

#include <map>

namespace tdsl::schedule {

/// A load or store of a block under a loop, indices in loop variables (bindings substituted).
struct LoopAccess {
  const ir::Block *block;
  ir::Buffer buffer;
  std::vector<ir::Expr> indices;
  bool write;
};

/// Every access of the blocks under `loop`.
std::vector<LoopAccess> accessesUnder(const ir::For *loop);

/// The loops inside `loop` with their constant extents (-1 when not constant).
std::map<const ir::VarNode *, int64_t> innerLoops(const ir::For *loop);

/// Whether `a` and `b` touch disjoint elements in different iterations of `var`: some dimension
/// is `c·var + fixed + rest` in both, with the same c ≠ 0 and the same `fixed` part (loops that
/// do not vary and constants), and both `rest`s (over the `varying` loops, with their extents)
/// within one window narrower than |c|: each iteration owns its slice. `i * 4 + j` and
/// `i * 4 + ax0` with j, ax0 in [0, 4) are separated; `i + j`, or `i * 4 + j - 1`, are not.
/// Dimensions that are the mixed-radix digits of one expression (`f / 6`, `f % 6`: what fuse
/// binds) are tested as that expression, since the digits together determine it.
bool separatedBy(const LoopAccess &a, const LoopAccess &b, const ir::Var &var,
                 const std::map<const ir::VarNode *, int64_t> &varying);

/// Throws a ScheduleError naming the two blocks unless, for every buffer written under `loop`,
/// each pair of its accesses there is separated by `var`. With `allowSameIndexUpdates`, a block
/// reading the element it writes (a reduction's `Y[i] = Y[i] + …`) is no dependence: reordering
/// keeps each element's updates in order (up to the reassociation spec §7 allows). A buffer
/// allocated by a block under `loop` is private to an iteration and never a dependence.
void requireIndependentIterations(const ir::For *loop, const ir::Var &var,
                                  const std::map<const ir::VarNode *, int64_t> &varying,
                                  bool allowSameIndexUpdates);

} // namespace tdsl::schedule
