//===- ir/Simplify.cpp - The integer simplifier -----------------------------------------===//
#include "ir/Simplify.h"

#include "ir/Arith.h"
#include "ir/IRMutator.h"

namespace tdsl::ir {

namespace {

/// Integer arithmetic wraps (two's complement), so folding goes through uint64_t.
int64_t wrap(DType t, uint64_t v) {
  return asConstInt(IntImm::make(t, static_cast<int64_t>(v))).value();
}

class Simplifier : public IRMutator {
protected:
  Expr visit(const Add *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Add>();
    if (!n || !n->type.isInteger())
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (a && b)
      return IntImm::make(n->type, wrap(n->type, uint64_t(*a) + uint64_t(*b)));
    if (b && *b == 0)
      return n->a;
    if (a && *a == 0)
      return n->b;
    // (x + c1) + c2 → x + (c1 + c2)
    if (auto *inner = n->a.as<Add>(); b && inner)
      if (auto c1 = asConstInt(inner->b))
        return simplify(Add::make(
            inner->a, IntImm::make(n->type, wrap(n->type, uint64_t(*c1) + uint64_t(*b)))));
    return e;
  }
  Expr visit(const Neg *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Neg>();
    if (!n || !n->type.isInteger())
      return e;
    if (auto a = asConstInt(n->a))
      return IntImm::make(n->type, wrap(n->type, uint64_t(0) - uint64_t(*a)));
    return e;
  }
  Expr visit(const Sub *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Sub>();
    if (!n || !n->type.isInteger())
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (a && b)
      return IntImm::make(n->type, wrap(n->type, uint64_t(*a) - uint64_t(*b)));
    if (b && *b == 0)
      return n->a;
    if (auto *va = n->a.as<VarRef>(), *vb = n->b.as<VarRef>(); va && vb && va->var == vb->var)
      return IntImm::make(n->type, 0);
    return e;
  }
  Expr visit(const Mul *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Mul>();
    if (!n || !n->type.isInteger())
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (a && b)
      return IntImm::make(n->type, wrap(n->type, uint64_t(*a) * uint64_t(*b)));
    if ((a && *a == 0) || (b && *b == 0))
      return IntImm::make(n->type, 0);
    if (b && *b == 1)
      return n->a;
    if (a && *a == 1)
      return n->b;
    return e;
  }
  Expr visit(const Div *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Div>();
    if (!n || !n->type.isInteger())
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (b && *b == 1)
      return n->a;
    if (a && b && *b != 0 && n->type.isInt())
      return IntImm::make(n->type, floorDiv(*a, *b));
    return e;
  }
  Expr visit(const Mod *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Mod>();
    if (!n || !n->type.isInteger())
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (b && *b == 1)
      return IntImm::make(n->type, 0);
    if (a && b && *b != 0 && n->type.isInt())
      return IntImm::make(n->type, floorMod(*a, *b));
    return e;
  }
  Expr visit(const Min *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Min>();
    if (!n)
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (a && b && n->type.isInt())
      return IntImm::make(n->type, std::min(*a, *b));
    return e;
  }
  Expr visit(const Max *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<Max>();
    if (!n)
      return e;
    auto a = asConstInt(n->a), b = asConstInt(n->b);
    if (a && b && n->type.isInt())
      return IntImm::make(n->type, std::max(*a, *b));
    return e;
  }
#define TDSL_FOLD_CMP(NODE, OP)                                                                    \
  Expr visit(const NODE *op) override {                                                            \
    Expr e = IRMutator::visit(op);                                                                 \
    auto *n = e.as<NODE>();                                                                        \
    if (!n || !n->a.dtype().isInt())                                                               \
      return e;                                                                                    \
    auto a = asConstInt(n->a), b = asConstInt(n->b);                                               \
    if (a && b)                                                                                    \
      return boolImm(*a OP * b);                                                                   \
    return e;                                                                                      \
  }
  TDSL_FOLD_CMP(LT, <)
  TDSL_FOLD_CMP(LE, <=)
  TDSL_FOLD_CMP(GT, >)
  TDSL_FOLD_CMP(GE, >=)
  TDSL_FOLD_CMP(EQ, ==)
  TDSL_FOLD_CMP(NE, !=)
#undef TDSL_FOLD_CMP
  Stmt visit(const IfThenElse *op) override {
    Stmt s = IRMutator::visit(op);
    auto *n = s.as<IfThenElse>();
    if (!n)
      return s;
    if (isConstInt(n->condition, 1))
      return n->thenCase;
    if (isConstInt(n->condition, 0))
      return n->elseCase.defined() ? n->elseCase : SeqStmt::make({});
    return s;
  }
  Expr visit(const And *op) override {
    Expr e = IRMutator::visit(op);
    auto *n = e.as<And>();
    if (!n)
      return e;
    if (isConstInt(n->a, 1))
      return n->b;
    if (isConstInt(n->b, 1))
      return n->a;
    if (isConstInt(n->a, 0) || isConstInt(n->b, 0))
      return boolImm(false);
    return e;
  }
};

} // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) { return Simplifier().mutate(s); }

} // namespace tdsl::ir
