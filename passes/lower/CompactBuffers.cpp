//===- passes/lower/CompactBuffers.cpp - Allocations shrunk to the region they use --------===//
#include "passes/lower/CompactBuffers.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

namespace tdsl::lower {

using namespace ir;

namespace {

/// Replaces one buffer by its compact form, re-basing indices.
class Rebaser : public IRMutator {
public:
  Rebaser(Buffer from, Buffer to, std::vector<Expr> mins)
      : from_(std::move(from)), to_(std::move(to)), mins_(std::move(mins)) {}

protected:
  Expr visit(const BufferLoad *op) override {
    bool changed = false;
    std::vector<Expr> indices = mutateExprs(op->indices, changed);
    if (!(op->buffer == from_))
      return changed ? BufferLoad::make(op->buffer, indices, op->loc) : Expr(op);
    return BufferLoad::make(to_, rebase(indices), op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    bool changed = false;
    std::vector<Expr> indices = mutateExprs(op->indices, changed);
    Expr value = mutate(op->value);
    if (!(op->buffer == from_))
      return changed || !value.sameAs(op->value)
                 ? BufferStore::make(op->buffer, value, indices, op->loc)
                 : Stmt(op);
    return BufferStore::make(to_, value, rebase(indices), op->loc);
  }

private:
  std::vector<Expr> rebase(std::vector<Expr> indices) {
    for (size_t d = 0; d < indices.size(); ++d)
      if (mins_[d].defined())
        indices[d] = canonical(indices[d] - mins_[d]);
    return indices;
  }

  Buffer from_, to_;
  std::vector<Expr> mins_;
};

class Compactor : public IRMutator {
protected:
  Stmt visit(const Allocate *op) override {
    Stmt body = mutate(op->body);
    const Buffer &b = op->buffer;
    auto boxes = accessBoxes(body, b);
    auto keep = [&] { return body.sameAs(op->body) ? Stmt(op) : Allocate::make(b, body, op->loc); };
    if (!boxes || boxes->empty())
      return keep();
    std::vector<Expr> shape = b.shape(), mins(b.rank());
    bool shrunk = false;
    for (size_t d = 0; d < b.rank(); ++d) {
      Interval all = (*boxes)[0][d];
      for (const auto &box : *boxes)
        all = hull(all, box[d]);
      if (!all.bounded())
        continue;
      std::optional<int64_t> span = constDiff(all.max, all.min);
      if (!span || *span < 0)
        continue;
      int64_t extent = *span + 1;
      std::optional<int64_t> old = asConstInt(simplify(b.shape()[d]));
      if (old && *old <= extent)
        continue;
      shape[d] = intImm(extent);
      mins[d] = all.min;
      shrunk = true;
    }
    if (!shrunk)
      return keep();
    Buffer compact(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
    return Allocate::make(compact, Rebaser(b, compact, mins).mutate(body), op->loc);
  }
};

} // namespace

Func compactBuffers(const Func &func) {
  return mapBody(func, "compactBuffers takes a PrimFunc",
                 [](const Stmt &body) { return Compactor().mutate(body); });
}

} // namespace tdsl::lower
