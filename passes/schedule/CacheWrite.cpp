//===- passes/schedule/CacheWrite.cpp ---------------------------------------------------------===//
//
// cache_write(block, buffer, scope): `block` writes a cache, copied back after.

#include "passes/schedule/Primitives.h"

#include "ir/Arith.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/schedule/BufferUtils.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <optional>

namespace tdsl::schedule {

using namespace ir;

/// cache_write(B, B, "local") (TVM's cache_write): a new buffer B_local in the scope that
/// block B writes (and reads, for a reduction) instead of B, and a block B_local copying the
/// region B wrote back into B. The copy goes where TVM's CacheLocDetector puts it: in the
/// innermost sequence holding both B and its first consumer, just before the statement holding
/// the consumer; at the end of the function when no block reads B after it.
///
///   for i in 0..128 { for j in 0..128 {
///     block B(vi: spatial 128 = i, vj: spatial 128 = j) { B[vi, vj] = A[vi, vj] * 2.0; } } }
///   for i in 0..128 { … block C(…) { C[vi, vj] = B[vi, vj] + 1.0; } … }
/// becomes
///   alloc B_local: f32[128, 128] scope(local);
///   for i in 0..128 { for j in 0..128 {
///     block B(vi: spatial 128 = i, vj: spatial 128 = j) { B_local[vi, vj] = A[vi, vj] * 2.0; } } }
///   for ax0 in 0..128 { for ax1 in 0..128 {
///     block B_local(v0: spatial 128 = ax0, v1: spatial 128 = ax1) { B[v0, v1] = B_local[v0, v1]; }
///     } }
///   for i in 0..128 { … block C(…) { C[vi, vj] = B[vi, vj] + 1.0; } … }
///
/// Refused when B does not write the buffer, or another block writes it too (the copy back
/// would overwrite or miss that block's values), or B does not write every element of its
/// region (a `where` other than bounds of its axes, an `if` with a store in one branch only:
/// the copy back would write elements B never computed), or B reads the buffer's initial
/// contents — an update without `init` (`B[i] += A[i, k]` with no `init`, `B[i] = B[i] * 2.0`):
/// the cache does not hold them.
std::string cacheWrite(ScheduleState &s, const std::string &blockName, const Buffer &buffer,
                       MemScope scope) {
  requireNoNestedBlocks(s, "cache_write");
  // Step 1: check.
  const Block *block = s.block(blockName);
  requireWrites(block, buffer);
  for (const Block *other : writersOf(s, buffer))
    if (other != block)
      throw ScheduleError("'" + buffer.name() + "' is written by more than one block: '" +
                              blockName + "' and '" + other->name + "'",
                          other->loc,
                          "block '" + other->name + "' also writes '" + buffer.name() + "'");

  // The copy back writes every element of the region, so the block must compute all of them:
  // no `where` but the bounds of its axes, and a store of the buffer on every path of its body.
  const std::string partial = "so the copy back would write elements of '" + buffer.name() +
                              "' that block '" + blockName + "' does not compute";
  if (!predicateInAxes(s, block, partial).empty())
    throw ScheduleError("block '" + blockName + "' has a 'where' condition other than bounds of " +
                            "its axes, " + partial,
                        block->loc, "block '" + blockName + "' is here");
  if (!storesOnEveryPath(block->body, buffer))
    throw ScheduleError(
        "block '" + blockName + "' does not write '" + buffer.name() +
            "' on every path of its body (an 'if' without a store in each branch), " + partial,
        block->loc, "block '" + blockName + "' is here");

  // The cache starts empty: a block that reads the buffer's initial contents (no `init` before
  // an update) would read garbage from it instead.
  if (const StmtNode *r = readBeforeWrite(block->init, buffer); r)
    throw ScheduleError("the 'init' of block '" + blockName + "' reads '" + buffer.name() +
                            "' before writing it, and the cache would not hold its initial "
                            "contents",
                        r->loc.valid() ? r->loc : block->loc, "the read is here");
  if (const StmtNode *r =
          readBeforeWrite(block->body, buffer, storesOnEveryPath(block->init, buffer));
      r)
    throw ScheduleError("block '" + blockName + "' reads '" + buffer.name() +
                            "' before writing it (its initial contents" +
                            std::string(block->init.defined() ? "" : "; the block has no 'init'") +
                            "), and the cache would not hold them",
                        r->loc.valid() ? r->loc : block->loc, "the read is here");

  // Step 2: where the copy back goes, and what it copies.
  const Block *consumer = nullptr;
  bool after = false;
  for (const Block *b : s.blocks()) {
    if (b == block) {
      after = true;
      continue;
    }
    if (after && blockReads(b, buffer)) {
      consumer = b;
      break;
    }
  }
  std::vector<const For *> above = s.loopsAbove(block);
  std::vector<const For *> outer, inner;
  const StmtNode *anchor;
  if (consumer) {
    StagePoint at = stageBetween(s, block, consumer);
    anchor = at.anchor;
    outer = at.outer;
    inner.assign(above.begin() + static_cast<long>(outer.size()), above.end());
  } else {
    const Stmt &root = s.prim().body;
    const auto *rootSeq = root.as<SeqStmt>();
    anchor = rootSeq && !rootSeq->seq.empty() ? rootSeq->seq.back().get() : root.get();
    inner = above;
  }
  std::vector<std::vector<Expr>> writes;
  for (const BufferAccess &a : accessesOf(block, buffer)) {
    if (!a.write)
      continue;
    std::vector<Expr> idx;
    for (const Expr &e : a.indices)
      idx.push_back(bindAxes(block, e));
    writes.push_back(idx);
  }
  Region region = relaxRegion(s, buffer, writes, inner, outer);
  // The copy back writes the whole region: it must not reach past what the block's axes write
  // (a block of extent n - 1 into f32[n] under a split whose factor does not divide it relaxes
  // to the whole dimension, and the copy would store the cache's unwritten last element).
  {
    Domain axes, around;
    for (const IterVar &iv : block->iterVars)
      axes.emplace_back(iv.var, Interval::ofRange(intImm(0), iv.extent));
    for (const For *f : outer)
      addLoop(around, f);
    for (const BufferAccess &a : accessesOf(block, buffer)) {
      if (!a.write)
        continue;
      for (size_t d = 0; d < a.indices.size() && d < region.min.size(); ++d) {
        Interval wrote = bound(a.indices[d], axes);
        Expr last = region.min[d] + region.extent[d] - 1;
        if (wrote.bounded() && proveLE(wrote.min, region.min[d], around) &&
            proveLE(last, wrote.max, around))
          continue;
        throw ScheduleError("the copy back of block '" + blockName + "' would write elements of '" +
                                buffer.name() + "' in dimension " + std::to_string(d) +
                                " that the block does not compute (its axes write " +
                                (wrote.bounded()
                                     ? "[" + toString(wrote.min) + ", " + toString(wrote.max) + "]"
                                     : std::string("an unknown range")) +
                                ", the copy would cover [" + toString(simplify(region.min[d])) +
                                ", " + toString(simplify(last)) + "])",
                            block->loc, "block '" + blockName + "' is here");
      }
    }
  }

  // Step 3: rewrite — the cache, the block using it, the copy back.
  Buffer cache = makeCacheBuffer(s, buffer, scope);
  std::string copyName = freshBlockName(s, cache.name());
  Stmt copy = copyNest(copyName, cache, buffer, region, block->loc);
  Stmt newBlock = replaceBufferIn(Stmt(block), buffer, cache);

  // Step 4: replace.
  if (consumer)
    insertBefore(s, anchor, copy);
  else
    insertAfter(s, anchor, copy);
  s.replace(block, newBlock);
  addRootAlloc(s, cache);
  return copyName;
}

} // namespace tdsl::schedule
