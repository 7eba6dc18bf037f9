//===- passes/lower/UnrollLoops.cpp - Small unrolled loops copied out ---------------------===//
#include "passes/lower/UnrollLoops.h"

#include "ir/FreshVarCopier.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

namespace {

/// A copy of a statement with fresh variables and buffers for what it defines, and given
/// values for some free variables.
class Copier : public FreshVarCopier {
public:
  explicit Copier(std::unordered_map<Var, Expr> vars) : vars_(std::move(vars)) {}

protected:
  Expr visit(const VarRef *op) override {
    auto it = vars_.find(op->var);
    return it == vars_.end() ? Expr(op) : it->second;
  }
  Stmt visit(const Allocate *op) override {
    const Buffer &b = op->buffer;
    Buffer fresh(b.name(), b.dtype(), b.shape(), b.role(), b.scope(), b->align, b->loc);
    buffers_[b] = fresh;
    return Allocate::make(fresh, mutate(op->body), op->loc);
  }

  void bindFresh(const Var &v, const Var &fresh) override { vars_[v] = Expr(fresh); }

private:
  std::unordered_map<Var, Expr> vars_;
};

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/// An unrolled loop (its body already unrolled) as copies of its body, one per iteration; too
/// large a result keeps the loop as a serial one.
Stmt unrollLoop(const For *loop, const Stmt &s) {
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
  case StmtKind::ProfileRegion:
    return saturatingAdd(1, unrolledSize(s.as<ProfileRegion>()->body));
  default:
    return 1;
  }
}

Func unrollLoops(const Func &func) {
  return mapBody(func, "unrollLoops takes a PrimFunc", [](const Stmt &body) {
    return rewriteLoops(body, ForKind::Unrolled, unrollLoop);
  });
}

} // namespace tdsl::lower
