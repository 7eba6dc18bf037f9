//===- passes/schedule/ReverseComputeInline.cpp -----------------------------------------------===//
//
// reverse_compute_inline(block): inline an element-wise consumer
// into its producer (TVM's tir.Schedule.reverse_compute_inline).

#include "passes/schedule/Primitives.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "passes/schedule/Dependence.h"
#include "passes/schedule/Regions.h"
#include "support/Join.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Replaces every load of `buffer` by `value`.
struct LoadReplacer : IRMutator {
  Buffer buffer;
  Expr value;
  Expr visit(const BufferLoad *op) override {
    if (op->buffer == buffer)
      return value;
    return IRMutator::visit(op);
  }
};

/// The iter var of each index of a store or load, when they are distinct axes of `block`.
std::optional<std::vector<size_t>> distinctAxes(const Block *block,
                                                const std::vector<Expr> &indices) {
  std::vector<size_t> out;
  for (const Expr &index : indices) {
    std::optional<size_t> k = plainAxis(block, index);
    if (!k || std::find(out.begin(), out.end(), *k) != out.end())
      return std::nullopt;
    out.push_back(*k);
  }
  return out;
}

/// Whether `a` and `b` differ only by terms in axes of `block` of extent 1 (always 0).
bool sameUpToUnitAxes(const Block *block, const Expr &a, const Expr &b) {
  std::optional<AffineForm> d = affineForm(a - b);
  if (!d || d->constant != 0)
    return false;
  for (const auto &[v, c] : d->terms) {
    std::optional<size_t> k = plainAxis(block, VarRef::make(v));
    if (c != 0 && (!k || !isConstInt(simplify(block->iterVars[*k].extent), 1)))
      return false;
  }
  return true;
}

/// Whether the store `indices` of `producer` (under `guard`, undefined when none) write every
/// element of `buf` exactly once. Two sufficient tests:
/// - each index is a mixed-radix number of distinct axes (`kb * 32 + kv`, kv of extent 32;
///   `h * 56 + w`), together using every axis of extent above 1: the instances write a box
///   one to one; each dimension of the box is at least the buffer's, and `guard` is a
///   conjunction of bounds `index < extent` of the buffer's dimensions (up to axes of extent
///   1), so the box is cut to the buffer (the guarded write-back of a blocked kernel);
/// - without `guard`: the indices tell every axis apart (quasi-affine, one to one:
///   `C[vi / 16, vi % 16, vj]`) and there are as many instances as elements.
bool writesEveryElementOnce(const Block *producer, const std::vector<Expr> &indices,
                            const Expr &guard, const Buffer &buf) {
  std::vector<bool> used(producer->iterVars.size(), false);
  bool box = true;
  std::vector<Expr> spans;
  for (size_t d = 0; box && d < indices.size(); ++d) {
    std::optional<AffineForm> form = affineForm(indices[d]);
    if (!form || form->constant != 0) {
      box = false;
      break;
    }
    std::vector<std::pair<int64_t, int64_t>> digits; // (coefficient, extent)
    for (const auto &[v, c] : form->terms) {
      std::optional<size_t> k = plainAxis(producer, VarRef::make(v));
      std::optional<int64_t> e =
          k ? asConstInt(simplify(producer->iterVars[*k].extent)) : std::nullopt;
      if (!k || c <= 0 || used[*k] || !e) {
        box = false;
        break;
      }
      used[*k] = true;
      if (*e != 1) // an axis of extent 1 adds 0 whatever its coefficient
        digits.emplace_back(c, *e);
    }
    std::sort(digits.begin(), digits.end());
    int64_t radix = 1;
    for (size_t i = 0; box && i < digits.size(); ++i)
      box = digits[i].first == radix && !__builtin_mul_overflow(radix, digits[i].second, &radix);
    if (box)
      spans.push_back(intImm(radix));
  }
  for (size_t k = 0; box && k < used.size(); ++k)
    box = used[k] || isConstInt(simplify(producer->iterVars[k].extent), 1);
  if (box) {
    // Every conjunct of the guard bounds a dimension; a dimension whose span passes the
    // buffer's extent must have one.
    std::vector<bool> bounded(indices.size(), false);
    for (const Expr &c : guard.defined() ? conjuncts(guard) : std::vector<Expr>{}) {
      const auto *bound = c.as<LT>();
      bool isBound = false;
      for (size_t d = 0; bound && !isBound && d < indices.size(); ++d)
        if (sameUpToUnitAxes(producer, bound->a, indices[d]) &&
            constDiff(bound->b, buf.shape()[d]) == 0)
          isBound = bounded[d] = true;
      if (!isBound)
        return false;
    }
    for (size_t d = 0; d < spans.size(); ++d) {
      std::optional<int64_t> span = asConstInt(spans[d]),
                             extent = asConstInt(simplify(buf.shape()[d]));
      if (!span || !extent || *span < *extent || (*span > *extent && !bounded[d]))
        return false;
    }
    return true;
  }
  if (guard.defined())
    return false;
  std::map<const VarNode *, LoopRange> axes;
  int64_t instances = 1, elements = 1;
  for (const IterVar &iv : producer->iterVars) {
    std::optional<int64_t> e = asConstInt(simplify(iv.extent));
    if (!e || __builtin_mul_overflow(instances, *e, &instances))
      return false;
    axes[iv.var.get()] = LoopRange{int64_t(0), e};
  }
  for (const Expr &d : buf.shape()) {
    std::optional<int64_t> e = asConstInt(simplify(d));
    if (!e || __builtin_mul_overflow(elements, *e, &elements))
      return false;
  }
  if (instances != elements)
    return false;
  for (const IterVar &iv : producer->iterVars)
    if (!valuesDetermine(indices, iv.var, axes))
      return false;
  return true;
}

std::vector<BufferRegion> without(const std::vector<BufferRegion> &regions, const Buffer &b) {
  std::vector<BufferRegion> out;
  for (const BufferRegion &r : regions)
    if (!(r.buffer == b))
      out.push_back(r);
  return out;
}

} // namespace

/// reverse_compute_inline(C) — before:
///   alloc B: f32[128, 128];
///   for i in 0..128 { for j in 0..128 { block B(vi = i, vj = j) { B[vi, vj] = A[vi, vj] * 2.0; } }
///   } for i in 0..128 { for j in 0..128 { block C(vi = i, vj = j) { C[vj, vi] = B[vi, vj] + 1.0; }
///   } }
/// after (C, its loops and B's allocation are gone; the producer keeps its name):
///   for i in 0..128 { for j in 0..128 { block B(vi = i, vj = j) { C[vj, vi] = A[vi, vj] * 2.0
///   + 1.0; } } }
///
/// Preconditions: the block has no reduce axis, its body is one store `C[…] = f(B[…], …)`, it
/// does not read C and is C's only writer; exactly one block (the producer) writes what it
/// reads, one buffer B, an allocation no other block reads; every load of B has the same
/// indices, each a mixed-radix number of distinct axes (`vi`, or `vi * 4 + vj` with vj of
/// extent 4: a reshape, the axes becoming digits `v / 4`, `v % 4` of the producer's axis),
/// covering every axis of the block, reading at most the extent of the producer axis that
/// indexes that dimension (less: the producer gets a `where`); the producer is complete (no reduce
/// axis, no init), its body is one store to B (or one under `if`), and it writes every element
/// of B once: indexed by distinct axes, or as writesEveryElementOnce proves; the block's `where`,
/// if any, bounds its axes only; no block between the producer and the block touches what the block
/// reads or writes.
void reverseComputeInline(ScheduleState &s, const std::string &name) {
  requireNoNestedBlocks(s, "reverse_compute_inline");
  // Step 1: check.
  const Block *block = s.block(name);
  Stmt keepBlock(block);
  const std::string b = quoted(name), blockNote = "block " + b + " is here";
  if (const IterVar *iv = firstReduceAxis(block))
    throw ScheduleError("block " + b + " has reduce axis " + quoted(iv->var.name()) +
                            "; only a block without reduce axes can be inlined into its producer",
                        block->loc, blockNote);
  const BufferStore *store = singleStore(block);
  if (block->init.defined() || !store)
    throw ScheduleError("the body of block " + b + " is not a single store 'BUF[…] = value;'",
                        block->loc, blockNote);
  const Buffer out = store->buffer;
  std::unordered_set<Buffer> read = buffersRead(Stmt(block));
  if (read.count(out))
    throw ScheduleError("block " + b + " reads " + quoted(out.name()) + ", which it writes",
                        block->loc, blockNote);
  checkOnlyWriter(s, block, {out});

  const Block *producer = nullptr;
  Buffer buf;
  for (const Block *other : s.blocks()) {
    std::unordered_set<Buffer> feeds = common(buffersWritten(Stmt(other)), read);
    if (other == block || feeds.empty())
      continue;
    if (producer || feeds.size() > 1)
      throw ScheduleError(
          "block " + b + " reads what more than one block or buffer produces (" +
              quoted(producer ? producer->name : other->name) + " writes " +
              (producer ? quoted(buf.name()) : bufferNames(feeds)) +
              (producer ? ", " + quoted(other->name) + " writes " + bufferNames(feeds) : "") +
              "); it can be inlined only into a single producer",
          other->loc, "producer " + quoted(other->name) + " is here");
    producer = other;
    buf = *feeds.begin();
  }
  if (!producer)
    throw ScheduleError("no block writes what block " + b +
                            " reads; there is no producer to inline it into",
                        block->loc, blockNote);
  Stmt keepProducer(producer);
  const std::string p = quoted(producer->name), bufName = quoted(buf.name());
  const std::string producerNote = "producer " + p + " is here";
  if (buf.role() != BufferRole::Alloc)
    throw ScheduleError("buffer " + bufName +
                            " is an output of the function; it must keep the values block " + p +
                            " writes",
                        producer->loc, producerNote);
  for (const Block *other : s.blocks())
    if (other != block && other != producer && buffersRead(Stmt(other)).count(buf))
      throw ScheduleError("buffer " + bufName + " has another consumer, block " +
                              quoted(other->name) + "; the consumer inlined must be the only one",
                          other->loc, "consumer " + quoted(other->name) + " is here");
  size_t at = programIndex(s, block), from = programIndex(s, producer);
  if (at < from)
    throw ScheduleError("block " + b + " comes before its producer " + p, block->loc, blockNote);

  std::optional<std::vector<Expr>> loadIndices;
  for (const Access &a : accessesOf(block)) {
    if (a.write || !(a.buffer == buf))
      continue;
    if (!loadIndices) {
      loadIndices = a.indices;
      continue;
    }
    bool same = a.indices.size() == loadIndices->size();
    for (size_t d = 0; same && d < a.indices.size(); ++d)
      same = equalExpr(a.indices[d], (*loadIndices)[d]);
    if (!same)
      throw ScheduleError("block " + b + " reads " + bufName + " at more than one index",
                          block->loc, blockNote);
  }
  // Each index of the read is a mixed-radix number of distinct axes of the block (a plain axis,
  // or `vi * 4 + vj` with vj of extent 4: a reshape), so the axes are the digits of the index.
  struct Digit {
    size_t axis;
    int64_t coeff, extent;
  };
  std::vector<std::vector<Digit>> digits;
  std::vector<bool> seen(block->iterVars.size(), false);
  auto notDigits = [&](size_t d) {
    return ScheduleError("the index " + toString((*loadIndices)[d]) + " of the read of " + bufName +
                             " in block " + b +
                             " is not a mixed-radix number of distinct axes (like `vi` or `vi * "
                             "4 + vj` with vj of extent 4)",
                         block->loc, blockNote);
  };
  for (size_t d = 0; d < loadIndices->size(); ++d) {
    std::optional<Affine> form = affine((*loadIndices)[d]);
    if (!form || form->constant != 0)
      throw notDigits(d);
    std::vector<Digit> dim;
    for (const auto &[v, c] : form->terms) {
      if (c == 0)
        continue;
      std::optional<size_t> k = plainAxis(block, VarRef::make(v));
      if (!k || c < 0 || seen[*k])
        throw notDigits(d);
      seen[*k] = true;
      std::optional<int64_t> e = asConstInt(block->iterVars[*k].extent);
      dim.push_back({*k, c, e ? *e : -1});
    }
    std::sort(dim.begin(), dim.end(),
              [](const Digit &x, const Digit &y) { return x.coeff < y.coeff; });
    int64_t lower = 1;
    for (size_t i = 0; i < dim.size(); ++i) {
      if (dim[i].coeff != lower || (i + 1 < dim.size() && dim[i].extent < 1) ||
          (i + 1 < dim.size() && __builtin_mul_overflow(lower, dim[i].extent, &lower)))
        throw notDigits(d);
    }
    if (dim.empty())
      throw notDigits(d);
    digits.push_back(dim);
  }
  // An axis of extent 1 that does not index the read is 0 in every instance (TVM's
  // `D[0, vj, vk, vl] = C[vj, vk, vl]`); any other must be a digit of the index.
  std::vector<size_t> unitAxes;
  for (size_t k = 0; k < block->iterVars.size(); ++k)
    if (!seen[k] && isConstInt(block->iterVars[k].extent, 1))
      unitAxes.push_back(k);
    else if (!seen[k])
      throw ScheduleError("axis " + quoted(block->iterVars[k].var.name()) + " of block " + b +
                              " does not index its read of " + bufName,
                          block->loc, blockNote);
  if (const IterVar *iv = firstReduceAxis(producer))
    throw ScheduleError("producer " + p + " is a reduction block (axis " + quoted(iv->var.name()) +
                            "); reverse_compute_inline needs a complete producer",
                        producer->loc, producerNote);
  // The producer's body is one store, or one store under `if` (a blocked kernel's write-back
  // of the elements inside the buffer: `if kb * 8 + kv < K { y[n, kb * 8 + kv, h, w] = … }`).
  const BufferStore *pstore = singleStore(producer);
  Expr guard;
  if (const auto *branch = producer->body.as<IfThenElse>();
      !pstore && branch && !branch->elseCase.defined()) {
    pstore = branch->thenCase.as<BufferStore>();
    guard = branch->condition;
  }
  if (producer->init.defined() || !pstore || !(pstore->buffer == buf))
    throw ScheduleError("the body of producer " + p + " is not a single store to " + bufName,
                        producer->loc, producerNote);
  if (buffersRead(Stmt(producer)).count(buf))
    throw ScheduleError("producer " + p + " reads " + bufName +
                            ", which it writes, so it is not a complete block",
                        producer->loc, producerNote);
  // The producer writes each element once: its store indices are distinct axes, or any
  // quasi-affine indices from which every axis can be told (`C[vi / 16, vi % 16, vj]`, what an
  // earlier reverse_compute_inline of a reshape leaves; TVM's affine chain).
  std::optional<std::vector<size_t>> producerAxes =
      guard.defined() ? std::nullopt : distinctAxes(producer, pstore->indices);
  // (the tests count the instances of the axes' domains: a `where` of the producer may only
  // bound its axes)
  if (!producerAxes &&
      (!predicateInAxes(s, producer, "inlining could not tell what it writes").empty() ||
       !writesEveryElementOnce(producer, pstore->indices, guard, buf)))
    throw ScheduleError("producer " + p + " does not provably write every element of " + bufName +
                            " exactly once (its store at [" +
                            join(pstore->indices, ", ", [](const Expr &e) { return toString(e); }) +
                            "]" + (guard.defined() ? " under `if " + toString(guard) + "`" : "") +
                            ")",
                        producer->loc, producerNote);
  // Each axis of the block is a digit of the index that the producer stores dimension d at.
  // Where the producer writes more than the block reads (it was over-computed), a `where`
  // keeps the producer to what the block reads (TVM does the same).
  std::vector<std::pair<Var, Expr>> map;
  Expr predicate = producer->predicate;
  std::unordered_map<Var, Expr> bindings; // a `where` sees loop variables: the axes' bindings
  for (const IterVar &iv : producer->iterVars)
    if (iv.binding.defined())
      bindings[iv.var] = iv.binding;
  for (size_t d = 0; d < digits.size(); ++d) {
    const Digit &top = digits[d].back();
    const IterVar &topAxis = block->iterVars[top.axis];
    Expr covered = simplify(intImm(top.coeff) * topAxis.extent);
    Expr stored = pstore->indices[d];
    // How many elements of dimension d the producer writes: its axis's extent, or the buffer's
    // where the index is not one axis.
    Expr written = producerAxes ? producer->iterVars[(*producerAxes)[d]].extent : buf.shape()[d];
    std::string writer = producerAxes
                             ? "axis " + quoted(producer->iterVars[(*producerAxes)[d]].var.name()) +
                                   " of producer " + p + ", which writes it, has extent "
                             : "producer " + p + " writes it at " + toString(stored) + ", of ";
    std::optional<int64_t> diff = constDiff(covered, written);
    if (!diff || *diff > 0)
      throw ScheduleError("block " + b + " reads " + toString(covered) + " elements of dimension " +
                              std::to_string(d) + " of " + bufName + " but " + writer +
                              (producerAxes ? "" : "extent ") + toString(written),
                          producer->loc, producerNote);
    // A `where` can narrow only an axis: the checker proves the consumer's store in bounds
    // from the axes' domains and such a `where`, not from one on a compound index (the printed
    // IR would not compile again).
    if (*diff < 0 && !producerAxes)
      throw ScheduleError("block " + b + " reads " + toString(covered) + " elements of dimension " +
                              std::to_string(d) + " of " + bufName + " but producer " + p +
                              " writes " + toString(written) + " at " + toString(stored) +
                              ", not one axis that a `where` could narrow",
                          producer->loc, producerNote);
    if (*diff < 0) {
      Expr bound = lt(substitute(stored, bindings), covered);
      predicate = isConstInt(predicate, 1) ? bound : logicalAnd(predicate, bound);
    }
    for (const Digit &g : digits[d]) {
      Expr value = stored;
      if (g.coeff != 1)
        value = Div::make(value, intImm(g.coeff));
      if (&g != &top)
        value = Mod::make(value, intImm(g.extent));
      map.emplace_back(block->iterVars[g.axis].var, simplify(value));
    }
  }
  for (size_t k : unitAxes)
    map.emplace_back(block->iterVars[k].var, intImm(0));
  if (!predicateInAxes(s, block, "inlining would drop it").empty())
    throw ScheduleError(
        "block " + b +
            " has a 'where' condition other than bounds of its axes; inlining would drop it",
        block->loc, blockNote);

  std::vector<const Block *> all = s.blocks();
  std::unordered_set<Buffer> inputs = read;
  inputs.erase(buf);
  for (size_t i = from + 1; i < at; ++i) {
    std::unordered_set<Buffer> w = buffersWritten(Stmt(all[i])), r = buffersRead(Stmt(all[i]));
    std::unordered_set<Buffer> clash = common(w, inputs);
    if (w.count(out) || r.count(out))
      clash.insert(out);
    if (!clash.empty())
      throw ScheduleError("block " + quoted(all[i]->name) + " uses " + bufferNames(clash) +
                              " between producer " + p + " and block " + b + "; inlining " + b +
                              " would move its work before it",
                          all[i]->loc, "block " + quoted(all[i]->name) + " is here");
  }

  // Step 2: the producer stores the consumer's value, its axes renamed to the producer's.
  LoadReplacer replace;
  replace.buffer = buf;
  replace.value = pstore->value;
  Expr value = replace.mutate(substitute(store->value, map));
  std::vector<Expr> indices;
  for (const Expr &index : store->indices)
    indices.push_back(substitute(index, map));
  Stmt newStore = BufferStore::make(out, value, indices, store->loc);
  if (guard.defined())
    newStore = IfThenElse::make(guard, newStore, Stmt(), producer->body->loc);
  Stmt newProducer =
      Block::make(producer->name, producer->iterVars, predicate, producer->init, newStore,
                  without(producer->reads, buf), without(producer->writes, buf),
                  producer->allocBuffers, producer->loc);

  // Step 3: replace the producer, remove the consumer with its loops; the buffer disappears.
  s.replace(producer, newProducer);
  removeAndInsert(s, subtreeOf(s, block), nullptr, 0, Stmt());
  dropAllocation(s, buf);
}

} // namespace tdsl::schedule
