// Primitives.h — the schedule primitives of spec §7, one file each. Every primitive checks its
// preconditions first (throwing ScheduleError, which names the rule and the loop or block
// concerned), then rewrites, then replaces the subtree in the state.
#pragma once

#include "passes/schedule/State.h"

#include <optional>

namespace tdsl::schedule {

/// loops(block): the loops above `block`, outermost first.
std::vector<ir::Var> getLoops(ScheduleState &s, const std::string &block);

/// split(loop, [f0, …, fn]): n+1 loops whose extents are the factors; at most one factor is
/// inferred (std::nullopt). A product that does not divide the extent adds a `where` to every
/// block under the loop.
///   for i in 0..10 { B(vi = i) }  --split [_, 4]-->
///   for i_0 in 0..3 { for i_1 in 0..4 { B(vi = i_0 * 4 + i_1) where i_0 * 4 + i_1 < 10 } }
std::vector<ir::Var> split(ScheduleState &s, const ir::Var &loop,
                           const std::vector<std::optional<int64_t>> &factors);

/// fuse(l0, …, lk): one loop over the product of the extents; the loops must be consecutive
/// and perfectly nested, each starting at 0.
ir::Var fuse(ScheduleState &s, const std::vector<ir::Var> &loops);

/// reorder(l0, …, lk): the given loops take the given order in their nest; they must lie on
/// one chain of perfectly nested loops with no block between them.
void reorder(ScheduleState &s, const std::vector<ir::Var> &order);

/// tile(l0, l1, [f0, f1]): split both loops (inner extents f0 and f1), then reorder to
/// l0o, l1o, l0i, l1i.
std::vector<ir::Var> tile(ScheduleState &s, const ir::Var &l0, const ir::Var &l1, int64_t f0, int64_t f1);

/// parallel(loop): refused when a block under the loop binds it to a reduce axis, or when the
/// iterations depend on each other (a block reads what it writes at another point).
void parallel(ScheduleState &s, const ir::Var &loop);
/// vectorize(loop): constant extent, bound to spatial axes only.
void vectorize(ScheduleState &s, const ir::Var &loop);
/// unroll(loop): constant extent.
void unroll(ScheduleState &s, const ir::Var &loop);
/// bind(loop, "threadIdx.x"): cuda target only; spatial only; one loop per tag in a nest.
void bind(ScheduleState &s, const ir::Var &loop, const std::string &tag);

} // namespace tdsl::schedule
