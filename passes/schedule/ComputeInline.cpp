//===- passes/schedule/ComputeInline.cpp ------------------------------------------------------===//
//
// compute_inline(block): inline a producer into its consumers; its buffer
// disappears (TVM's tir.Schedule.compute_inline).

#include "passes/schedule/Primitives.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "passes/schedule/Regions.h"

#include <algorithm>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Replaces every load of `buffer` by the stored value at the load's indices.
struct Inliner : IRMutator {
  Buffer buffer;
  Expr value;
  std::vector<Var> axes; ///< The iter var of each dimension of the store.

  Expr visit(const BufferLoad *op) override {
    Expr e = IRMutator::visit(op);
    auto *load = e.as<BufferLoad>();
    if (!load || !(load->buffer == buffer))
      return e;
    std::vector<std::pair<Var, Expr>> map;
    for (size_t d = 0; d < axes.size(); ++d)
      map.emplace_back(axes[d], load->indices[d]);
    return substitute(value, map);
  }
};

} // namespace

/// compute_inline(B) — before:
///   alloc B: f32[128, 128];
///   for i in 0..128 { for j in 0..128 { block B(vi = i, vj = j) { B[vi, vj] = A[vi, vj] * 2.0; } }
///   } for i in 0..128 { for j in 0..128 { block C(vi = i, vj = j) { C[vi, vj] = B[vi, vj] + 1.0; }
///   } }
/// after (B, its loops and its allocation are gone):
///   for i in 0..128 { for j in 0..128 { block C(vi = i, vj = j) { C[vi, vj] = A[vi, vj] * 2.0
///   + 1.0; } } }
///
/// Preconditions: the block has no reduce axis (and so no init); its body is one store
/// `B[v0, v1, …] = value;` indexed by distinct axes, and `value` uses no other axis and does
/// not read B; B is an allocation (not an output) that no other block writes; no block reads
/// B before the block, and no block between it and the last reader writes what `value` reads;
/// its `where`, if any, bounds its axes only.
void computeInline(ScheduleState &s, const std::string &name) {
  requireNoNestedBlocks(s, "compute_inline");
  // Step 1: check.
  const Block *block = s.block(name);
  const std::string b = quoted(name), blockNote = "block " + b + " is here";
  if (const IterVar *iv = firstReduceAxis(block))
    throw ScheduleError("block " + b + " has reduce axis " + quoted(iv->var.name()) +
                            "; only a block without reduce axes can be inlined",
                        block->loc, blockNote);
  if (block->init.defined())
    throw ScheduleError("block " + b + " has an init; only a block without one can be inlined",
                        block->loc, blockNote);
  const BufferStore *store = singleStore(block);
  if (!store)
    throw ScheduleError("the body of block " + b + " is not a single store 'BUF[axes] = value;'",
                        block->loc, blockNote);
  const Buffer buf = store->buffer;
  const Expr value = store->value;
  const std::string bufName = quoted(buf.name());
  if (buf.role() != BufferRole::Alloc)
    throw ScheduleError("block " + b + " writes output " + bufName + ", which would disappear",
                        block->loc, blockNote);
  std::vector<Var> axes;
  for (const Expr &index : store->indices) {
    std::optional<size_t> k = plainAxis(block, index);
    if (!k)
      throw ScheduleError("index '" + toString(index) + "' of the store to " + bufName +
                              " in block " + b + " is not an axis of the block",
                          block->loc, blockNote);
    const Var &v = block->iterVars[*k].var;
    if (std::find(axes.begin(), axes.end(), v) != axes.end())
      throw ScheduleError("axis " + quoted(v.name()) + " indexes two dimensions of " + bufName +
                              " in block " + b,
                          block->loc, blockNote);
    axes.push_back(v);
  }
  for (const IterVar &iv : block->iterVars)
    if (uses(store->value, iv.var) && std::find(axes.begin(), axes.end(), iv.var) == axes.end())
      throw ScheduleError("the value block " + b + " stores depends on axis " +
                              quoted(iv.var.name()) + ", which does not index " + bufName,
                          block->loc, blockNote);
  std::unordered_set<Buffer> read = buffersRead(Stmt(block));
  if (read.count(buf))
    throw ScheduleError("block " + b + " reads " + bufName + ", which it writes", block->loc,
                        blockNote);
  if (!predicateInAxes(s, block, "inlining would drop it").empty())
    throw ScheduleError(
        "block " + b +
            " has a 'where' condition other than bounds of its axes; inlining would drop it",
        block->loc, blockNote);
  checkOnlyWriter(s, block, {buf});

  std::vector<const Block *> all = s.blocks();
  size_t at = programIndex(s, block), last = at;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == block || !buffersRead(Stmt(all[i])).count(buf))
      continue;
    if (i < at)
      throw ScheduleError("block " + quoted(all[i]->name) + " reads " + bufName + " before block " +
                              b + " writes it",
                          all[i]->loc, "consumer " + quoted(all[i]->name) + " is here");
    last = i;
  }
  for (size_t i = at + 1; i < last; ++i) {
    std::unordered_set<Buffer> clash = common(buffersWritten(Stmt(all[i])), read);
    if (!clash.empty())
      throw ScheduleError("block " + quoted(all[i]->name) + " writes " + bufferNames(clash) +
                              ", which block " + b + " reads; its readers of " + bufName +
                              " come after and would see the new values",
                          all[i]->loc, "block " + quoted(all[i]->name) + " is here");
  }

  // Step 2: remove the block with its loops, then substitute the value into every load.
  removeAndInsert(s, subtreeOf(s, block), nullptr, 0, Stmt());
  Inliner inliner;
  inliner.buffer = buf;
  inliner.value = value;
  inliner.axes = axes;
  Stmt body = inliner.mutate(s.prim().body);

  // Step 3: replace the body; the buffer disappears.
  s.setBody(body);
  dropAllocation(s, buf);
}

} // namespace tdsl::schedule
