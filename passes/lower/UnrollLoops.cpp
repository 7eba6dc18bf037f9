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

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

class Unroller : public IRMutator {
protected:
  Stmt visit(const For *op) override {
    Stmt s = IRMutator::visit(op);
    const auto *loop = s.as<For>();
    if (!loop || loop->forKind != ForKind::Unrolled)
      return s;
    if (unrolledSize(s) > kMaxUnrolledStatements)
      return For::make(loop->loopVar, loop->min, loop->extent, ForKind::Serial, loop->body, {},
                       loop->loc);
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

int64_t unrolledSize(const Stmt &s) {
  if (!s.defined())
    return 0;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *f = s.as<For>();
    int64_t body = unrolledSize(f->body);
    std::optional<int64_t> extent = asConstInt(f->extent);
    if (f->forKind == ForKind::Unrolled && extent) {
      int64_t copies;
      if (__builtin_mul_overflow(body, std::max<int64_t>(*extent, 0), &copies))
        return INT64_MAX;
      return copies;
    }
    return saturatingAdd(body, 1);
  }
  case StmtKind::SeqStmt: {
    int64_t n = 0;
    for (const Stmt &x : s.as<SeqStmt>()->seq)
      n = saturatingAdd(n, unrolledSize(x));
    return n;
  }
  case StmtKind::Block: {
    const auto *b = s.as<Block>();
    return saturatingAdd(1, saturatingAdd(unrolledSize(b->init), unrolledSize(b->body)));
  }
  case StmtKind::IfThenElse: {
    const auto *i = s.as<IfThenElse>();
    return saturatingAdd(1, saturatingAdd(unrolledSize(i->thenCase), unrolledSize(i->elseCase)));
  }
  case StmtKind::LetStmt:
    return saturatingAdd(1, unrolledSize(s.as<LetStmt>()->body));
  case StmtKind::Allocate:
    return saturatingAdd(1, unrolledSize(s.as<Allocate>()->body));
  case StmtKind::AssertStmt:
    return saturatingAdd(1, unrolledSize(s.as<AssertStmt>()->body));
  case StmtKind::BufferView:
    return saturatingAdd(1, unrolledSize(s.as<BufferView>()->body));
  default:
    return 1;
  }
}

Func unrollLoops(const Func &func) {
  return mapBody(func, "unrollLoops takes a PrimFunc",
                 [](const Stmt &body) { return Unroller().mutate(body); });
}

} // namespace tdsl::lower
