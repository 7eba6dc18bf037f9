//===- passes/schedule/ReverseComputeAt.cpp ---------------------------------------------------===//
//
// reverse_compute_at(block, loop): move a consumer under a loop of its
// producers, computing what they have just produced (TVM's tir.Schedule.reverse_compute_at).

#include "passes/schedule/Primitives.h"

#include "ir/IRPrinter.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

/// reverse_compute_at(C, j0) — before (spec §1 after split and reorder):
///   for i in 0..128 { for j_0 in 0..32 { for k in 0..128 { for j_1 in 0..4 {
///     block Y(vi = i, vj = j_0 * 4 + j_1, vk = k) { … Y[vi, vj] = Y[vi, vj] + … } } } } }
///   for i in 0..128 { for j in 0..128 {
///     block C(vi = i, vj = j) { C[vi, vj] = max(Y[vi, vj], 0.0); } } }
/// after: C computes, in each iteration of j_0, what Y has produced there (Y[i, j_0*4 .. +3]):
///   for i in 0..128 { for j_0 in 0..32 {
///     for k in 0..128 { for j_1 in 0..4 { block Y(…) { … } } }
///     for ax0 in 0..4 { block C(vi = i, vj = j_0 * 4 + ax0) { C[vi, vj] = max(Y[vi, vj], 0.0); } }
///     } }
/// An axis whose region has one element gets no loop; a `where` keeps each axis in its domain
/// when the region can overshoot it.
///
/// Preconditions: the block is complete (spatial axes only, does not read what it writes) and
/// the only writer of its buffers; every block that writes what it reads is under `loop` (at
/// least one is), before it in program order, finishes its reduction inside one iteration of
/// `loop` and has no `where` on its axes other than their bounds; in one iteration the block reads
/// only elements produced in that iteration; no block it moves past touches what it writes.
void reverseComputeAt(ScheduleState &s, const std::string &name, const Var &loopVar) {
  // Step 1: check. A reduction block moves whole: init and every reduction step of its
  // spatial points.
  MovedBlock m = checkMovedBlock(s, "reverse_compute_at", name, loopVar);
  const Block *block = m.block;
  const For *loop = m.loop;
  const std::string &l = m.loopName, &b = m.blockName, &blockNote = m.note;
  const std::unordered_set<Buffer> &written = m.written, &read = m.read;
  checkOnlyWriter(s, block, written);

  std::vector<const Block *> producers;
  std::unordered_set<Buffer> produced;
  for (const Block *other : s.blocks()) {
    std::unordered_set<Buffer> feeds = common(buffersWritten(Stmt(other)), read);
    if (isWithin(s, other, block) || feeds.empty())
      continue;
    if (!isWithin(s, other, loop))
      throw ScheduleError("block " + quoted(other->name) + " writes " + bufferNames(feeds) +
                              ", which block " + b + " reads, but is not under loop " + l +
                              "; every producer must be",
                          other->loc, "producer " + quoted(other->name) + " is here");
    producers.push_back(other);
    produced.insert(feeds.begin(), feeds.end());
  }
  if (producers.empty())
    throw ScheduleError("block " + b + " has no producer under loop " + l +
                            ": no block there writes " +
                            (read.empty() ? std::string("what it reads") : bufferNames(read)),
                        loopVar->loc, "loop " + l + " declared here");

  std::vector<const Block *> all = s.blocks(), under = blocksIn(Stmt(loop));
  size_t at = programIndex(s, block), lastUnder = programIndex(s, under.back());
  if (at < lastUnder)
    throw ScheduleError("block " + b + " comes before loop " + l +
                            "; a consumer must come after its producers",
                        block->loc, blockNote);

  std::vector<const For *> fixed = s.loopsAbove(loop);
  fixed.push_back(loop);
  for (const Block *p : producers) {
    for (const IterVar &iv : p->iterVars)
      for (const For *f : fixed)
        if (iv.kind == IterKind::Reduce && iv.binding.defined() && uses(iv.binding, f->loopVar))
          throw ScheduleError("loop '" + f->loopVar.name() + "' is bound to reduce axis " +
                                  quoted(iv.var.name()) + " of block " + quoted(p->name) +
                                  ", so one iteration of loop " + l +
                                  " does not finish that reduction",
                              p->loc, "producer " + quoted(p->name) + " is here");
    // A condition on its axes other than their bounds makes the region unknown. One that uses
    // neither its axes nor a loop (`K > 0`, decompose_reduction's guard of an empty
    // reduction) holds in every iteration or in none: where it fails, the producer writes
    // nothing anywhere, so where the block reads changes nothing.
    std::vector<Expr> conditions =
        predicateInAxes(s, p, "the region it produces under loop " + l + " is unknown");
    bool onAxes = std::any_of(conditions.begin(), conditions.end(), [&](const Expr &c) {
      return std::any_of(p->iterVars.begin(), p->iterVars.end(),
                         [&](const IterVar &iv) { return uses(c, iv.var); });
    });
    if (onAxes)
      throw ScheduleError("block " + quoted(p->name) +
                              " has a 'where' condition other than bounds of its axes, so the "
                              "region it produces under loop " +
                              l + " is unknown",
                          p->loc, "producer " + quoted(p->name) + " is here");
  }

  // The blocks the move puts `block` before: every block under the loop after the producers
  // (other iterations run after it) and those between the loop and it.
  for (size_t i = programIndex(s, under.front()); i < at; ++i) {
    const Block *other = all[i];
    if (std::find(producers.begin(), producers.end(), other) != producers.end())
      continue;
    std::unordered_set<Buffer> clash = common(buffersWritten(Stmt(other)), written);
    for (const Buffer &buf : common(buffersRead(Stmt(other)), written))
      clash.insert(buf);
    if (!clash.empty())
      throw ScheduleError("block " + quoted(other->name) + " uses " + bufferNames(clash) +
                              ", which block " + b + " writes; moving " + b + " under loop " + l +
                              " would change what it sees",
                          other->loc, "block " + quoted(other->name) + " is here");
  }
  std::vector<Expr> extra = predicateInAxes(s, block, "it cannot move under loop " + l);

  // Step 2: the region the producers write in one iteration of `loop`, then the axis domains
  // that read it.
  // A reduce axis keeps its whole domain: the block's whole reduction (init included) then
  // runs in one iteration, so running it again elsewhere recomputes the same values.
  std::unordered_map<Buffer, std::vector<Interval>> region =
      regionInOneIteration(s, loop, producers, produced, true);
  std::vector<Access> accesses = accessesOf(block);
  std::vector<Interval> domains = domainsCovering(block, accesses, region, false);
  Domain axes;
  for (size_t k = 0; k < domains.size(); ++k)
    axes.emplace_back(block->iterVars[k].var, domains[k]);
  // Every element the block then reads must have been produced in the same iteration.
  Domain outer = loopsAroundAndAt(s, loop);
  for (const Access &a : accesses) {
    auto it = region.find(a.buffer);
    if (a.write || it == region.end())
      continue;
    for (size_t d = 0; d < a.indices.size() && d < it->second.size(); ++d) {
      Interval need = bound(a.indices[d], axes);
      const Interval &have = it->second[d];
      if (proveLE(have.min, need.min, outer) && proveLE(need.max, have.max, outer))
        continue;
      auto show = [](const Interval &r) {
        return r.bounded() ? "[" + toString(r.min) + ", " + toString(r.max) + "]"
                           : std::string("an unknown range");
      };
      throw ScheduleError("block " + b + " reads elements of " + quoted(a.buffer.name()) +
                              " that the blocks under loop " + l +
                              " do not produce in the same iteration (dimension " +
                              std::to_string(d) + ": reads " + show(need) + ", produced " +
                              show(have) + ")",
                          block->loc, blockNote);
    }
  }

  // Step 3: rebuild the block under new loops, at the end of the loop's body.
  Stmt nest = makeLoopNest(block, domains, extra, outer);
  removeAndInsert(s, subtreeOf(s, block), loop, bodyItems(loop).size(), nest);
}

} // namespace tdsl::schedule
