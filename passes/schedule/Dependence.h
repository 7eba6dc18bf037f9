//===- passes/schedule/Dependence.h -----------------------------------------------------------===//
//
// When the iterations of a loop touch disjoint elements: the test behind
// parallel and vectorize (iterations may run at once) and reorder (iterations may run in
// another order).

#pragma once

#include "passes/schedule/State.h"

#include <map>
#include <optional>

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

/// The range of a variable defined inside a loop: a loop's constant min and extent (unset when
/// not constant), or nothing known (a `let` name).
struct LoopRange {
  std::optional<int64_t> min, extent;
};

/// The variables defined inside `loop` (its inner loops and `let` names) with their ranges.
std::map<const ir::VarNode *, LoopRange> innerLoops(const ir::For *loop);

/// Whether `a` and `b` touch disjoint elements in different iterations of `var`. The loops of
/// `varying` (and `var`) take independent values in the two iterations compared; every other
/// variable is the same in both. `ranges` gives the ranges of `var` and of the varying loops.
///
/// The test derives which quasi-affine terms are equal in both iterations when the elements
/// are: a dimension `c·t + rest` in both (the same term t and coefficient, the same fixed part)
/// whose rests lie in one window narrower than |c| has t equal, then the rests are compared the
/// same way; the mixed-radix digits of one base (`f / 6`, `f % 6`: what fuse binds, TVM's
/// quasi-affine iter splits) all equal make the base equal, which is compared in turn. The two
/// iterations are separated when `var` itself is found equal. `i * 4 + j` and `i * 4 + ax0`
/// (j, ax0 in [0, 4)) are separated; `i + j`, or `i * 4 + j - 1`, are not; `f / 2 * 8 + i_1`,
/// `f % 2 * 8 + j_1` (a tile whose outer loops are fused) are. A symbolic radix counts too:
/// `kb * KV + rest` (KV a shape variable or generic constant) has kb equal when rest is at least
/// 0 and below KV by a condition that holds in both iterations: a conjunct `rest < KV` of the
/// accessing blocks' `where` or of `bounds` (what the loops' symbolic extents say: `v < V`).
bool separatedBy(const LoopAccess &a, const LoopAccess &b, const ir::Var &var,
                 const std::map<const ir::VarNode *, LoopRange> &varying,
                 const std::map<const ir::VarNode *, LoopRange> &ranges,
                 const std::vector<ir::Expr> &bounds = {});

/// Whether the values of `values` (expressions in loop variables) determine `var`: equal values
/// in two points of the loops of `varying` (and `var`) imply equal `var`. With every loop a
/// block's bindings use in `varying`, this for each of them says that the bindings are
/// quasi-affine and one-to-one (`k_0 * 4 + k_1`, `f / 6`, `f % 6`; not `k * k / 2`).
bool valuesDetermine(const std::vector<ir::Expr> &values, const ir::Var &var,
                     const std::map<const ir::VarNode *, LoopRange> &varying);

/// Refuses `block` (for `primitive`) unless its bindings are quasi-affine and one-to-one in
/// every loop that a reduce binding uses: the reduction then has one first step per spatial
/// point (where its init runs), and its steps can be regrouped.
void requireAffineReduceBindings(const ScheduleState &s, const ir::Block *block,
                                 const std::string &primitive);

/// Throws a ScheduleError naming the two blocks unless, for every buffer written under `loop`,
/// each pair of its accesses there is separated by `var` (the loops of `varying` moving with
/// it). With `allowSameIndexUpdates`, a block reading the element it writes (a reduction's
/// `Y[i] = Y[i] + …`) is no dependence: reordering keeps each element's updates in order (up
/// to the reassociation spec §7 allows). A buffer allocated by a block under `loop` is private
/// to an iteration and never a dependence. Where this symbolic test cannot tell and `var` is
/// the loop's own variable, a nest of constant extents (with `outer`, the loops around `loop`,
/// outermost first) small enough is run on constants instead: the exact answer.
void requireIndependentIterations(const ir::For *loop, const ir::Var &var,
                                  const std::map<const ir::VarNode *, LoopRange> &varying,
                                  bool allowSameIndexUpdates,
                                  const std::vector<const ir::For *> &outer = {});

} // namespace tdsl::schedule
