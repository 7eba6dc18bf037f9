//===- passes/lower/FlattenBuffers.cpp - Multi-dimensional accesses to flat indices -------===//
#include "passes/lower/FlattenBuffers.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"

#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

std::vector<Expr> bufferStrides(const Buffer &buffer) {
  size_t rank = buffer.rank();
  std::vector<Expr> strides(rank);
  Expr inner = intImm(1);
  for (size_t d = rank; d-- > 0;) {
    Expr stride = inner;
    if (d < buffer->align.size() && buffer->align[d].factor > 0) {
      const StorageAlign &a = buffer->align[d];
      stride = stride + (intImm(a.offset) - stride) % intImm(a.factor);
    }
    strides[d] = simplify(stride);
    inner = simplify(stride * buffer.shape()[d]);
  }
  return strides;
}

Expr bufferStorageSize(const Buffer &buffer) {
  if (buffer.rank() == 0)
    return intImm(1);
  return simplify(bufferStrides(buffer)[0] * buffer.shape()[0]);
}

namespace {

class Flattener : public IRMutator {
public:
  Buffer mutateBuffer(const Buffer &buffer) override { return flat(buffer).buffer; }

protected:
  Expr visit(const BufferLoad *op) override {
    bool changed = false;
    std::vector<Expr> indices = mutateExprs(op->indices, changed);
    const Flat &f = flat(op->buffer);
    return BufferLoad::make(f.buffer, {flatIndex(f, indices)}, op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    bool changed = false;
    std::vector<Expr> indices = mutateExprs(op->indices, changed);
    const Flat &f = flat(op->buffer);
    return BufferStore::make(f.buffer, mutate(op->value), {flatIndex(f, indices)}, op->loc);
  }

private:
  struct Flat {
    Buffer buffer;
    std::vector<Expr> strides;
    std::vector<Expr> shape; // of the buffer before flattening
  };

  const Flat &flat(const Buffer &buffer) {
    auto it = flat_.find(buffer);
    if (it != flat_.end())
      return it->second;
    Buffer b(buffer.name(), buffer.dtype(), {bufferStorageSize(buffer)}, buffer.role(),
             buffer.scope(), {}, buffer->loc);
    return flat_.emplace(buffer, Flat{b, bufferStrides(buffer), buffer.shape()}).first->second;
  }

  /// Whether dimensions d and d + 1 are indexed by `x / n` and `x % n`, n the extent of d + 1
  /// and the stride of d that of d + 1 times n (no storage_align between them): together they
  /// are `x` at the stride of d + 1 (floor division: x / n · n + x % n == x for every x and n,
  /// n == 0 included). The flat index of an access through fused loops (`A[f / W, f % W]`)
  /// is then `f`, which the vectorizer can step lane by lane.
  static bool splitPair(const Flat &f, const std::vector<Expr> &indices, size_t d) {
    if (d + 1 >= indices.size())
      return false;
    const auto *q = indices[d].as<Div>();
    const auto *r = indices[d + 1].as<Mod>();
    return q && r && q->type == DType::i64() && equalExpr(q->a, r->a) && equalExpr(q->b, r->b) &&
           equalExpr(q->b, f.shape[d + 1]) &&
           equalExpr(f.strides[d], simplify(f.strides[d + 1] * f.shape[d + 1]));
  }

  static Expr flatIndex(const Flat &f, const std::vector<Expr> &indices) {
    Expr index;
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr i = indices[d].dtype() == DType::i64() ? indices[d] : cast(DType::i64(), indices[d]);
      if (splitPair(f, indices, d))
        i = indices[d].as<Div>()->a, ++d;
      Expr term = isConstInt(f.strides[d], 1) ? i : i * f.strides[d];
      index = index.defined() ? index + term : term;
    }
    return index.defined() ? index : intImm(0);
  }

  std::unordered_map<Buffer, Flat> flat_;
};

} // namespace

Func flattenBuffers(const Func &func) {
  TDSL_IR_CHECK(func.as<PrimFunc>(), "flattenBuffers takes a PrimFunc");
  return Flattener().mutateFunc(func);
}

} // namespace tdsl::lower
