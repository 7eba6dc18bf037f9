//===- passes/schedule/TransformLayout.cpp ----------------------------------------------------===//
//
// transform_layout(block, buffer, (i, j) => (…)): re-lays out an
// intermediate buffer.

#include "passes/schedule/Primitives.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/schedule/BufferUtils.h"

#include <cstdint>
#include <map>
#include <set>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Enumerates the map over the old shape when it has at most this many elements.
constexpr int64_t kExhaustiveLimit = 1 << 16;

std::string tuple(const std::vector<int64_t> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

/// When the map is small and constant enough, checks that distinct elements stay distinct.
void checkOneToOne(const Buffer &buffer, const std::vector<Var> &params,
                   const std::vector<Expr> &results, const std::vector<Expr> &newShape) {
  std::vector<int64_t> oldExt, newExt;
  int64_t oldSize = 1, newSize = 1;
  for (const Expr &e : buffer.shape()) {
    std::optional<int64_t> c = asConstInt(e);
    if (!c)
      return;
    oldExt.push_back(*c);
    if (__builtin_mul_overflow(oldSize, *c, &oldSize))
      return; // above 2^63 elements: nothing to count
  }
  for (const Expr &e : newShape) {
    std::optional<int64_t> c = asConstInt(e);
    if (!c)
      return;
    newExt.push_back(*c);
    // Saturates: a new shape of more than 2^63 elements holds the old one.
    if (__builtin_mul_overflow(newSize, *c, &newSize))
      newSize = INT64_MAX;
  }
  if (oldSize == 0)
    return;
  if (newSize < oldSize)
    throw ScheduleError("the layout map is not one-to-one: it sends the " +
                        std::to_string(oldSize) + " elements of '" + buffer.name() +
                        "' to a shape " + tuple(newExt) + " of " + std::to_string(newSize));
  if (oldSize > kExhaustiveLimit)
    return;
  std::map<std::vector<int64_t>, std::vector<int64_t>> seen;
  std::vector<int64_t> point(oldExt.size(), 0);
  for (int64_t n = 0; n < oldSize; ++n) {
    std::vector<std::pair<Var, Expr>> map;
    for (size_t d = 0; d < point.size(); ++d)
      map.emplace_back(params[d], intImm(point[d]));
    std::vector<int64_t> image;
    for (const Expr &r : results) {
      std::optional<int64_t> c = asConstInt(simplify(substitute(r, map)));
      if (!c)
        return; // Not foldable: give up on the exhaustive check.
      image.push_back(*c);
    }
    auto [it, inserted] = seen.emplace(image, point);
    if (!inserted)
      throw ScheduleError("the layout map is not one-to-one: it sends " + tuple(it->second) +
                          " and " + tuple(point) + " to " + tuple(image));
    for (size_t d = point.size(); d-- > 0;) {
      if (++point[d] < oldExt[d])
        break;
      point[d] = 0;
    }
  }
}

} // namespace

/// transform_layout(Y, Y, (i, j) => (i / 16, j, i % 16)) (TVM's transform_layout): the
/// intermediate buffer Y takes the shape the map's results span over Y's old shape (each
/// result must range from 0), and every access Y[e0, e1] becomes Y[e0 / 16, e1, e0 % 16].
///
///   alloc Y: f32[64, 64];                    alloc Y: f32[4, 64, 16];
///   … Y[vi, vj] = …;                 -->     … Y[vi / 16, vj, vi % 16] = …;
///   … C[vi, vj] = Y[vi, vj] …                … C[vi, vj] = Y[vi / 16, vj, vi % 16] …
///
/// Refused when the block does not write the buffer, for inputs and outputs, when the map
/// takes a number of indices other than the buffer's rank, uses other variables than its
/// parameters and the function's shape variables, has a result the analysis cannot bound or
/// that does not start at 0, or (checked by enumeration for constant shapes of up to 65536
/// elements) sends two elements to one.
void transformLayout(ScheduleState &s, const std::string &blockName, const Buffer &buffer,
                     const std::vector<Var> &params, const std::vector<Expr> &results) {
  // Step 1: check.
  const Block *block = s.block(blockName);
  requireWrites(block, buffer);
  requireAlloc(s, buffer, "transform_layout");
  if (params.size() != buffer.rank())
    throw ScheduleError("the layout map takes " + std::to_string(params.size()) + " ind" +
                            (params.size() == 1 ? "ex" : "ices") + ", but '" + buffer.name() +
                            "' has " + std::to_string(buffer.rank()) + " dimension" +
                            (buffer.rank() == 1 ? "" : "s"),
                        buffer->loc, "'" + buffer.name() + "' declared here");
  if (results.empty())
    throw ScheduleError("the layout map has no result");
  std::set<const VarNode *> allowed;
  for (const Var &v : params)
    allowed.insert(v.get());
  for (const Var &v : varsInScope(s, {}))
    allowed.insert(v.get());
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].dtype().isInt())
      throw ScheduleError("result " + std::to_string(r) + " of the layout map, '" +
                          toString(results[r]) + "', is not an integer");
    struct V : IRVisitor {
      const std::set<const VarNode *> &allowed;
      const VarNode *bad = nullptr;
      bool load = false;
      explicit V(const std::set<const VarNode *> &a) : allowed(a) {}
      void visit(const VarRef *op) override {
        if (!allowed.count(op->var.get()) && !bad)
          bad = op->var.get();
      }
      void visit(const BufferLoad *) override { load = true; }
    } v(allowed);
    v.visitExpr(results[r]);
    if (v.bad)
      throw ScheduleError("the layout map uses '" + v.bad->name +
                          "', which is not one of its parameters");
    if (v.load)
      throw ScheduleError("the layout map reads a buffer; it must be a function of the indices");
  }
  std::vector<std::pair<Var, Expr>> ranges;
  for (size_t d = 0; d < params.size(); ++d)
    ranges.emplace_back(params[d], buffer.shape()[d]);
  std::vector<Expr> newShape;
  for (size_t r = 0; r < results.size(); ++r) {
    std::optional<Range> range = rangeOf(s, results[r], ranges);
    if (!range)
      throw ScheduleError("cannot bound result " + std::to_string(r) + " of the layout map, '" +
                          toString(results[r]) + "', over the shape of '" + buffer.name() + "'");
    if (!isConstInt(range->min, 0))
      throw ScheduleError("result " + std::to_string(r) + " of the layout map, '" +
                          toString(results[r]) + "', ranges from " + toString(range->min) +
                          "; every result must start at 0");
    newShape.push_back(range->extent);
  }
  checkOneToOne(buffer, params, results, newShape);

  // Step 2: rewrite — the new buffer, and every access through the map.
  BufferSpec spec(buffer);
  spec.shape = newShape;
  spec.align.clear();
  Buffer relaid = spec.make();
  struct Relayout : IRMutator {
    const Buffer &from, &to;
    const std::vector<Var> &params;
    const std::vector<Expr> &results;
    Relayout(const Buffer &f, const Buffer &t, const std::vector<Var> &p,
             const std::vector<Expr> &r)
        : from(f), to(t), params(p), results(r) {}
    Buffer mutateBuffer(const Buffer &b) override { return b == from ? to : b; }
    std::vector<Expr> map(const std::vector<Expr> &indices) {
      std::vector<std::pair<Var, Expr>> m;
      for (size_t d = 0; d < params.size(); ++d)
        m.emplace_back(params[d], indices[d]);
      std::vector<Expr> out;
      for (const Expr &r : results)
        out.push_back(simplify(substitute(r, m)));
      return out;
    }
    // The base visits would pair the new buffer with the old indices: handle these first.
    Expr visit(const BufferLoad *op) override {
      if (!(op->buffer == from))
        return IRMutator::visit(op);
      bool changed = false;
      std::vector<Expr> indices = mutateExprs(op->indices, changed);
      return BufferLoad::make(to, map(indices), op->loc);
    }
    Stmt visit(const BufferStore *op) override {
      if (!(op->buffer == from))
        return IRMutator::visit(op);
      bool changed = false;
      std::vector<Expr> indices = mutateExprs(op->indices, changed);
      return BufferStore::make(to, mutate(op->value), map(indices), op->loc);
    }
  } relayout(buffer, relaid, params, results);

  // Step 3: replace.
  s.setFunc(relayout.mutateFunc(s.func()));
}

} // namespace tdsl::schedule
