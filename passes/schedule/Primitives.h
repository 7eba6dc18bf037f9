//===- passes/schedule/Primitives.h -----------------------------------------------------------===//
//
// The schedule primitives of spec §7, one file each. Every primitive checks its
// preconditions first (throwing ScheduleError, which names the rule and the loop or block
// concerned), then rewrites, then replaces the subtree in the state.

#pragma once

#include "passes/schedule/State.h"

#include <functional>
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
std::vector<ir::Var> tile(ScheduleState &s, const ir::Var &l0, const ir::Var &l1, int64_t f0,
                          int64_t f1);

/// parallel(loop): refused when a block under the loop binds it to a reduce axis, or when the
/// iterations depend on each other (a block reads what it writes at another point).
void parallel(ScheduleState &s, const ir::Var &loop);
/// The rule of parallel and vectorize applied to the loops the explicit form marks `parallel`
/// or `vectorized` by hand (spec §6, §7): `report(loop, error)` for each loop that the
/// primitive would refuse.
void checkLoopKinds(const ir::Func &func,
                    const std::function<void(const ir::For *, const ScheduleError &)> &report);
/// After compute_at or reverse_compute_at moved `block` under loops already marked parallel
/// or vectorized: refused when two iterations of one of them would now write the same
/// elements of it (the halo of a tile, computed again by each iteration that needs it); the
/// state is then put back to `before`.
void requireNoRacingCopies(ScheduleState &s, const ir::Func &before, const std::string &block);
/// vectorize(loop): constant extent, bound to spatial axes only.
void vectorize(ScheduleState &s, const ir::Var &loop);
/// unroll(loop): constant extent.
void unroll(ScheduleState &s, const ir::Var &loop);
/// bind(loop, "threadIdx.x"): cuda target only; spatial only; one loop per tag in a nest.
void bind(ScheduleState &s, const ir::Var &loop, const std::string &tag);

/// compute_at(block, loop[, "preserve_unit_loops"]): moves the producer `block` under `loop` of
/// its consumer, computing only the region the consumers under `loop` need there. An axis whose
/// region has one element gets no loop unless `preserveUnitLoops` (TVM's flag of that name):
/// then every axis gets one, so that the loops a script binds afterwards do not depend on the
/// shapes.
void computeAt(ScheduleState &s, const std::string &block, const ir::Var &loop,
               bool preserveUnitLoops = false);
/// reverse_compute_at(block, loop[, "preserve_unit_loops"]): moves the consumer `block` under
/// `loop` of its producer, computing the region the producer under `loop` has just produced.
void reverseComputeAt(ScheduleState &s, const std::string &block, const ir::Var &loop,
                      bool preserveUnitLoops = false);
/// compute_inline(block): inlines a producer without reduce axes into its consumers; its
/// buffer (an alloc) disappears.
void computeInline(ScheduleState &s, const std::string &block);
/// reverse_compute_inline(block): inlines an element-wise consumer into its producer.
void reverseComputeInline(ScheduleState &s, const std::string &block);
/// cache_read(block, buffer, scope): a copy of `buffer` in `scope` that `block` reads
/// instead; returns the copy block's name.
std::string cacheRead(ScheduleState &s, const std::string &block, const ir::Buffer &buffer,
                      ir::MemScope scope);
/// cache_write(block, buffer, scope): `block` writes a cache in `scope`, copied back after;
/// returns the copy-back block's name.
std::string cacheWrite(ScheduleState &s, const std::string &block, const ir::Buffer &buffer,
                       ir::MemScope scope);
/// decompose_reduction(block, loop): splits `init` into its own block placed above `loop`;
/// returns the init block's name.
std::string decomposeReduction(ScheduleState &s, const std::string &block, const ir::Var &loop);
/// rfactor(loop, axis): factors the reduction over `loop` into a partial-result block whose
/// buffer has the factored dimension at position `axis`; returns that block's name.
std::string rfactor(ScheduleState &s, const ir::Var &loop, int64_t axis);
/// set_scope(block, buffer, scope): changes where an intermediate buffer lives.
void setScope(ScheduleState &s, const std::string &block, const ir::Buffer &buffer,
              ir::MemScope scope);
/// storage_align(block, buffer, axis, factor, offset): pads the stride of dimension `axis`.
void storageAlign(ScheduleState &s, const std::string &block, const ir::Buffer &buffer,
                  int64_t axis, int64_t factor, int64_t offset);
/// transform_layout(block, buffer, (i, j) => (…)): re-lays out an intermediate buffer.
void transformLayout(ScheduleState &s, const std::string &block, const ir::Buffer &buffer,
                     const std::vector<ir::Var> &params, const std::vector<ir::Expr> &results);
/// blockize(loop): makes the subtree under `loop` one block; returns its name.
std::string blockize(ScheduleState &s, const ir::Var &loop);
/// tensorize(loop, "NAME"): blockize(loop), match the block against the description of the
/// tensor intrinsic NAME of the state's module, replace its body by the implementation.
void tensorize(ScheduleState &s, const ir::Var &loop, const std::string &name);

} // namespace tdsl::schedule
