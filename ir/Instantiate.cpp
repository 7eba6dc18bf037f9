//===- ir/Instantiate.cpp ---------------------------------------------------------------------===//
//
// Implementation of ir/Instantiate.h.

#include "ir/Instantiate.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <map>

namespace tdsl::ir {

namespace {

/// Whether an i64 operation of `e` on constants overflows: such a shape or extent is left
/// unfolded (simplify() would wrap it), so that the checks of the instance report it (spec §4).
bool overflows(const Expr &e) {
  struct V : IRVisitor {
    bool found = false;
    void check(const ExprNode *op, const Expr &a, const Expr &b, char kind) {
      auto x = asConstInt(a), y = asConstInt(b);
      int64_t r;
      if (found || !x || !y || op->type != DType::i64())
        return;
      found = kind == '+'   ? __builtin_add_overflow(*x, *y, &r)
              : kind == '-' ? __builtin_sub_overflow(*x, *y, &r)
                            : __builtin_mul_overflow(*x, *y, &r);
    }
    void visit(const Add *op) override {
      IRVisitor::visit(op);
      check(op, op->a, op->b, '+');
    }
    void visit(const Sub *op) override {
      IRVisitor::visit(op);
      check(op, op->a, op->b, '-');
    }
    void visit(const Mul *op) override {
      IRVisitor::visit(op);
      check(op, op->a, op->b, '*');
    }
  } v;
  v.visitExpr(e);
  return v.found;
}

class ConstSubstituter : public IRMutator {
public:
  explicit ConstSubstituter(std::map<const VarNode *, int64_t> values)
      : values_(std::move(values)) {}

  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end())
      return it->second;
    bool changed = false;
    std::vector<Expr> shape;
    for (const Expr &d : b.shape()) {
      Expr m = mutate(d);
      overflow |= overflows(m);
      shape.push_back(overflows(m) ? m : simplify(m));
      changed |= !shape.back().sameAs(d);
    }
    Buffer out =
        changed ? Buffer(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc) : b;
    buffers_[b.get()] = out;
    return out;
  }

protected:
  Expr visit(const VarRef *op) override {
    auto it = values_.find(op->var.get());
    if (it == values_.end())
      return op;
    return IntImm::make(op->var.dtype(), it->second, op->loc);
  }

public:
  bool overflow = false; // some shape, bound or extent overflows i64 once substituted

protected:
  Stmt visit(const For *op) override {
    Stmt s = IRMutator::visit(op);
    if (auto *f = s.as<For>())
      overflow |= overflows(f->min) || overflows(f->extent);
    return s;
  }
  Stmt visit(const Block *op) override {
    Stmt s = IRMutator::visit(op);
    if (auto *b = s.as<Block>())
      for (const IterVar &iv : b->iterVars)
        overflow |= overflows(iv.extent);
    return s;
  }

private:
  std::map<const VarNode *, int64_t> values_;
  std::map<const BufferNode *, Buffer> buffers_;
};

} // namespace

Func instantiate(const Func &f, const std::vector<int64_t> &values) {
  const PrimFunc *p = f.as<PrimFunc>();
  TDSL_IR_CHECK(p && p->constVars.size() == values.size(),
                "instantiate needs one value per constant");
  std::map<const VarNode *, int64_t> map;
  for (size_t i = 0; i < values.size(); ++i)
    map[p->constVars[i].get()] = values[i];
  ConstSubstituter sub(map);
  Func g = sub.mutateFunc(f);
  const PrimFunc *q = g.as<PrimFunc>();
  // An overflowing shape or extent stays as written, for the checks to report.
  return PrimFunc::make(q->name, {}, q->inputs, q->outputs, q->shapeVars, q->allocBuffers,
                        sub.overflow ? q->body : simplify(q->body), q->loc);
}

Func specializeShapes(const Func &f, const std::map<const VarNode *, int64_t> &values) {
  const PrimFunc *p = f.as<PrimFunc>();
  TDSL_IR_CHECK(p && p->constVars.empty(), "specializeShapes needs a func without constants");
  ConstSubstituter sub(values);
  Func g = sub.mutateFunc(f);
  const PrimFunc *q = g.as<PrimFunc>();
  std::vector<Var> left;
  for (const Var &v : q->shapeVars)
    if (!values.count(v.get()))
      left.push_back(v);
  return PrimFunc::make(q->name, {}, q->inputs, q->outputs, left, q->allocBuffers,
                        sub.overflow ? q->body : simplify(q->body), q->loc);
}

} // namespace tdsl::ir
