//===- passes/schedule/ComputeAt.cpp ----------------------------------------------------------===//
//
// compute_at(block, loop): move a producer under a loop of its consumers,
// computing only the region they need there (TVM's tir.Schedule.compute_at).

#include "passes/schedule/Primitives.h"

#include "passes/schedule/Regions.h"

#include <algorithm>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

/// compute_at(B, j0) — before:
///   for i in 0..128 { for j in 0..128 { block B(vi = i, vj = j) { B[vi, vj] = A[vi, vj] * 2.0; } }
///   } for i in 0..128 { for j0 in 0..32 { for j1 in 0..4 {
///     block C(vi = i, vj = j0 * 4 + j1) { C[vi, vj] = B[vi, vj] + 1.0; } } } }
/// after: B computes, in each iteration of j0, the region C reads there (B[i, j0*4 .. j0*4+3]):
///   for i in 0..128 { for j0 in 0..32 {
///     for ax0 in 0..4 { block B(vi = i, vj = j0 * 4 + ax0) { B[vi, vj] = A[vi, vj] * 2.0; } }
///     for j1 in 0..4 { block C(vi = i, vj = j0 * 4 + j1) { C[vi, vj] = B[vi, vj] + 1.0; } } } }
/// An axis whose region has one element gets no loop (unless "preserve_unit_loops"); a `where`
/// keeps each axis in its domain when the region can overshoot it. Reduce axes keep their whole
/// domain (the reduction moves with the block, init included).
///
/// Preconditions: the block is complete (spatial axes, does not read what it writes) or a
/// reduction block with an init; it is the only writer of its buffers, none of which is an
/// output; every block that reads them is under `loop` (at least one is), after the block in
/// program order; no block it moves past writes what it reads or writes; its `where`, if any,
/// bounds its axes only.
void computeAt(ScheduleState &s, const std::string &name, const Var &loopVar,
               bool preserveUnitLoops) {
  const Func before = s.func();
  // Step 1: check.
  MovedBlock m = checkMovedBlock(s, "compute_at", name, loopVar);
  const auto &[block, loop, b, l, blockNote, reduction, read, written] = m;
  for (const Buffer &buf : written)
    if (buf.role() == BufferRole::Output)
      throw ScheduleError(
          "block " + b + " writes output " + quoted(buf.name()) +
              ", which must be computed in full, not just the region its consumers need",
          block->loc, blockNote);
  checkOnlyWriter(s, block, written);

  std::vector<const Block *> consumers;
  for (const Block *other : s.blocks()) {
    if (isWithin(s, other, block) || common(buffersRead(Stmt(other)), written).empty())
      continue;
    if (!isWithin(s, other, loop))
      throw ScheduleError("block " + quoted(other->name) + " reads " +
                              bufferNames(common(buffersRead(Stmt(other)), written)) +
                              " of block " + b + " but is not under loop " + l +
                              "; every consumer must be",
                          other->loc, "consumer " + quoted(other->name) + " is here");
    consumers.push_back(other);
  }
  if (consumers.empty())
    throw ScheduleError("block " + b + " has no consumer under loop " + l +
                            ": no block there reads " + bufferNames(written),
                        loopVar->loc, "loop " + l + " declared here");

  std::vector<const Block *> all = s.blocks(), under = blocksIn(Stmt(loop));
  size_t at = programIndex(s, block), firstUnder = programIndex(s, under.front());
  if (at > firstUnder)
    throw ScheduleError("block " + b + " comes after loop " + l +
                            "; a producer must come before its consumers",
                        block->loc, blockNote);
  // The blocks the move puts `block` after: those between it and the loop, and every block
  // under the loop (other iterations run before it).
  std::unordered_set<Buffer> touched = read;
  touched.insert(written.begin(), written.end());
  for (size_t i = at + 1; i < all.size(); ++i) {
    const Block *other = all[i];
    if (isWithin(s, other, block) || (i >= firstUnder && !isWithin(s, other, loop)))
      continue;
    std::unordered_set<Buffer> clash = common(buffersWritten(Stmt(other)), touched);
    if (!clash.empty())
      m.refusePast(other, clash, "writes", "uses", "what it computes");
  }
  std::vector<Expr> extra = predicateInAxes(s, block, "it cannot move under loop " + l);

  // Step 2: the region the consumers read in one iteration of `loop` (the loops above and at
  // `loop` fixed, the loops inside it ranging), then the axis domains that write it.
  std::vector<Interval> domains = domainsCovering(
      block, accessesOf(block), regionInOneIteration(s, loop, consumers, written, false), true);

  // Step 3: rebuild the block under new loops, before the first consumer in the loop's body.
  Stmt nest = makeLoopNest(block, domains, extra, loopsAroundAndAt(s, loop), preserveUnitLoops);
  std::vector<Stmt> items = bodyItems(loop);
  size_t position = 0;
  while (position < items.size()) {
    bool hasConsumer = false;
    for (const Block *c : blocksIn(items[position]))
      hasConsumer |= std::find(consumers.begin(), consumers.end(), c) != consumers.end();
    if (hasConsumer)
      break;
    ++position;
  }
  removeAndInsert(s, subtreeOf(s, block), loop, position, nest);
  requireNoRacingCopies(s, before, name);
}

} // namespace tdsl::schedule
