//===- passes/schedule/CacheRead.cpp ----------------------------------------------------------===//
//
// cache_read(block, buffer, scope): `block` reads a copy of `buffer` in `scope`.

#include "passes/schedule/Primitives.h"

#include "ir/IRMutator.h"
#include "passes/schedule/BufferUtils.h"

namespace tdsl::schedule {

using namespace ir;

/// cache_read(B, A, "local") (TVM's cache_read with B as the only consumer): a new buffer
/// A_local in the scope, a block A_local copying the region of A that B reads, and B reading
/// A_local. The copy goes where TVM's CacheLocDetector puts it: for a buffer no block writes
/// before B, first in the function; otherwise in the innermost sequence holding both the last
/// writer and B, just before the statement holding B.
///
///   for i in 0..128 { for j in 0..128 {
///     block B(vi: spatial 128 = i, vj: spatial 128 = j) { B[vi, vj] = A[vi, vj] * 2.0; } } }
/// becomes
///   alloc A_local: f32[128, 128] scope(local);
///   for ax0 in 0..128 { for ax1 in 0..128 {
///     block A_local(v0: spatial 128 = ax0, v1: spatial 128 = ax1) { A_local[v0, v1] = A[v0, v1]; }
///     } }
///   for i in 0..128 { for j in 0..128 {
///     block B(vi: spatial 128 = i, vj: spatial 128 = j) { B[vi, vj] = A_local[vi, vj] * 2.0; } } }
///
/// Refused when B does not read A, or writes A too (the copy would go stale).
std::string cacheRead(ScheduleState &s, const std::string &blockName, const Buffer &buffer,
                      MemScope scope) {
  requireNoNestedBlocks(s, "cache_read");
  // Step 1: check.
  const Block *block = s.block(blockName);
  std::vector<BufferAccess> accesses = accessesOf(block, buffer);
  if (!blockReads(block, buffer))
    throw ScheduleError("block '" + blockName + "' does not read '" + buffer.name() + "'",
                        block->loc, "block '" + blockName + "' is here");
  if (blockWrites(block, buffer))
    throw ScheduleError("block '" + blockName + "' writes '" + buffer.name() +
                            "' as well as reading it; a cached copy would not see its writes",
                        block->loc, "block '" + blockName + "' is here");

  // Step 2: where the copy goes, and what it copies.
  const Block *lastWriter = nullptr;
  for (const Block *b : s.blocks()) {
    if (b == block)
      break;
    if (blockWrites(b, buffer))
      lastWriter = b;
  }
  std::vector<const For *> above = s.loopsAbove(block);
  StagePoint at;
  if (lastWriter) {
    at = stageBetween(s, lastWriter, block);
  } else {
    const Stmt &root = s.prim().body;
    const auto *rootSeq = root.as<SeqStmt>();
    at.anchor = rootSeq && !rootSeq->seq.empty() ? rootSeq->seq.front().get() : root.get();
    at.inner = above;
  }
  std::vector<std::vector<Expr>> reads;
  for (const BufferAccess &a : accesses) {
    std::vector<Expr> idx;
    for (const Expr &e : a.indices)
      idx.push_back(bindAxes(block, e));
    reads.push_back(idx);
  }
  Region region = relaxRegion(s, buffer, reads, at.inner, at.outer);

  // Step 3: rewrite — the cache buffer, its copy nest, and the block reading the cache.
  Buffer cache = makeCacheBuffer(s, buffer, scope);
  std::string copyName = freshBlockName(s, cache.name());
  Stmt copy = copyNest(copyName, buffer, cache, region, block->loc);
  Stmt newBlock = replaceBufferIn(Stmt(block), buffer, cache);

  // Step 4: replace (the insertion keeps `block` itself, so it can still be found after).
  insertBefore(s, at.anchor, copy);
  s.replace(block, newBlock);
  addRootAlloc(s, cache);
  return copyName;
}

} // namespace tdsl::schedule
