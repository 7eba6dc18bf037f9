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

Func unrollLoops(const Func &func) {
  return mapBody(func, "unrollLoops takes a PrimFunc", [](const Stmt &body) {
    return rewriteLoops(body, ForKind::Unrolled, unrollLoop);
  });
}

} // namespace tdsl::lower
