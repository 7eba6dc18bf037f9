//===- passes/lower/UnrollLoops.cpp - Small unrolled loops copied out ---------------------===//
#include "passes/lower/UnrollLoops.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

namespace {

/// A copy of a statement with fresh variables and buffers for what it defines, and given
/// values for some free variables.
class Copier : public IRMutator {
public:
  explicit Copier(std::unordered_map<Var, Expr> vars) : vars_(std::move(vars)) {}

  Buffer mutateBuffer(const Buffer &buffer) override {
    auto it = buffers_.find(buffer);
    return it == buffers_.end() ? buffer : it->second;
  }

protected:
  Expr visit(const VarRef *op) override {
    auto it = vars_.find(op->var);
    return it == vars_.end() ? Expr(op) : it->second;
  }
  Stmt visit(const For *op) override {
    Var fresh = renew(op->loopVar);
    return For::make(fresh, mutate(op->min), mutate(op->extent), op->forKind, mutate(op->body),
                     op->threadTag, op->loc);
  }
  Stmt visit(const LetStmt *op) override {
    Expr value = mutate(op->value);
    Var fresh = renew(op->var);
    return LetStmt::make(fresh, value, mutate(op->body), op->loc);
  }
  Stmt visit(const Allocate *op) override {
    const Buffer &b = op->buffer;
    Buffer fresh(b.name(), b.dtype(), b.shape(), b.role(), b.scope(), b->align, b->loc);
    buffers_[b] = fresh;
    return Allocate::make(fresh, mutate(op->body), op->loc);
  }

private:
  Var renew(const Var &v) {
    Var fresh(v.name(), v.dtype(), v->loc);
    vars_[v] = Expr(fresh);
    return fresh;
  }

  std::unordered_map<Var, Expr> vars_;
  std::unordered_map<Buffer, Buffer> buffers_;
};

class Unroller : public IRMutator {
protected:
  Stmt visit(const For *op) override {
    Stmt s = IRMutator::visit(op);
    const auto *loop = s.as<For>();
    if (!loop || loop->forKind != ForKind::Unrolled)
      return s;
    std::optional<int64_t> min = asConstInt(loop->min), extent = asConstInt(loop->extent);
    if (!min || !extent || *extent > kUnrollLimit)
      return s;
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *extent; ++k)
      copies.push_back(simplify(Copier({{loop->loopVar, intImm(*min + k)}}).mutate(loop->body)));
    return seqOrNoOp(std::move(copies));
  }
};

} // namespace

Func unrollLoops(const Func &func) {
  return mapBody(func, "unrollLoops takes a PrimFunc",
                 [](const Stmt &body) { return Unroller().mutate(body); });
}

} // namespace tdsl::lower
