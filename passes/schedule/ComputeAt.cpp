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
/// An axis whose region has one element gets no loop; a `where` keeps each axis in its domain
/// when the region can overshoot it. Reduce axes keep their whole domain (the reduction moves
/// with the block, init included).
///
/// Preconditions: the block is complete (spatial axes, does not read what it writes) or a
/// reduction block with an init; it is the only writer of its buffers, none of which is an
/// output; every block that reads them is under `loop` (at least one is), after the block in
/// program order; no block it moves past writes what it reads or writes; its `where`, if any,
/// bounds its axes only.
void computeAt(ScheduleState &s, const std::string &name, const Var &loopVar) {
  requireNoNestedBlocks(s, "compute_at");
  // Step 1: check.
  const Block *block = s.block(name);
  const For *loop = s.loop(loopVar);
  const std::string l = quoted(loopVar.name()), b = quoted(name);
  const std::string blockNote = "block " + b + " is here";
  checkLoopOutsideBlock(s, block, loop);

  std::unordered_set<Buffer> written = buffersWritten(Stmt(block)), read = buffersRead(Stmt(block));
  bool reduction = false;
  for (const IterVar &iv : block->iterVars)
    reduction |= iv.kind == IterKind::Reduce;
  if (reduction && !block->init.defined())
    throw ScheduleError(
        "block " + b +
            " has reduce axes but no init, so it is not a reduction block that can be "
            "recomputed under a loop",
        block->loc, blockNote);
  if (!reduction && !common(read, written).empty())
    throw ScheduleError(
        "block " + b + " reads " + bufferNames(common(read, written)) +
            ", which it writes, so it is neither a complete block nor a reduction block",
        block->loc, blockNote);
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
      throw ScheduleError("block " + quoted(other->name) + " writes " + bufferNames(clash) +
                              ", which block " + b + " uses; moving " + b + " under loop " + l +
                              " would change what it computes",
                          other->loc, "block " + quoted(other->name) + " is here");
  }
  std::vector<Expr> extra = predicateInAxes(s, block, "it cannot move under loop " + l);

  // Step 2: the region the consumers read in one iteration of `loop` (the loops above and at
  // `loop` fixed, the loops inside it ranging), then the axis domains that write it.
  std::unordered_map<Buffer, std::vector<Interval>> needed;
  for (const Block *c : consumers) {
    Domain dom = loopsBetween(s, loop, c);
    for (const Buffer &buf : written) {
      std::optional<std::vector<Interval>> r = accessRegion(s, c, buf, false, dom);
      if (!r)
        continue;
      auto [it, fresh] = needed.emplace(buf, *r);
      if (!fresh)
        for (size_t d = 0; d < r->size(); ++d)
          it->second[d] = hull(it->second[d], (*r)[d]);
    }
  }
  std::vector<std::optional<Interval>> demand(block->iterVars.size());
  for (const Access &a : accessesOf(block)) {
    auto it = needed.find(a.buffer);
    if (!a.write || it == needed.end())
      continue;
    std::vector<std::optional<Interval>> domains = axisDomains(block, a.indices, it->second);
    for (size_t k = 0; k < domains.size(); ++k) {
      if (!domains[k] || block->iterVars[k].kind != IterKind::Spatial)
        continue;
      std::optional<Interval> &slot = demand[k];
      slot = slot ? hull(*slot, *domains[k]) : *domains[k];
    }
  }
  std::vector<Interval> domains;
  for (size_t k = 0; k < demand.size(); ++k) {
    const IterVar &iv = block->iterVars[k];
    domains.push_back(demand[k] && demand[k]->bounded() ? *demand[k]
                                                        : Interval::ofRange(intImm(0), iv.extent));
  }

  // Step 3: rebuild the block under new loops, before the first consumer in the loop's body.
  Stmt nest = makeLoopNest(block, domains, extra, loopsAroundAndAt(s, loop));
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
}

} // namespace tdsl::schedule
