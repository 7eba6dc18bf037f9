//===- passes/graph/FoldConstants.cpp ---------------------------------------------------------===//
//
// graph.fold-constants: constant scalar arguments of graph calls are folded
// (float arithmetic in the dtype's IEEE precision, integers by the simplifier) and the shapes of
// the values graphs define are simplified.

#include "passes/graph/Graph.h"

#include "ir/FloatArith.h"
#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "passes/graph/GraphUtils.h"

namespace tdsl::graph {

using namespace ir;

namespace {

/// Folds float constants bottom-up: + - * / min max and unary minus on f32/f64 constants.
/// f32 is computed in float, as the backends do; f16/bf16 are left alone.
class FloatFolder : public IRMutator {
protected:
  Expr fold(const Expr &e, const Expr &a, const Expr &b, ExprKind kind) {
    const auto *x = a.as<FloatImm>(), *y = b.as<FloatImm>();
    DType t = e.dtype();
    if (!x || !y || !(t == DType::f32() || t == DType::f64()))
      return e;
    auto apply = [&](auto u, auto v) -> double { return floatBinary(kind, u, v); };
    double r = t == DType::f32() ? apply(static_cast<float>(x->value), static_cast<float>(y->value))
                                 : apply(x->value, y->value);
    return FloatImm::make(t, r, e->loc);
  }
#define TDSL_FOLD(NAME)                                                                            \
  Expr visit(const NAME *op) override {                                                            \
    Expr e = IRMutator::visit(op);                                                                 \
    const auto *n = e.as<NAME>();                                                                  \
    return n ? fold(e, n->a, n->b, ExprKind::NAME) : e;                                            \
  }
  TDSL_FOLD(Add)
  TDSL_FOLD(Sub)
  TDSL_FOLD(Mul)
  TDSL_FOLD(Div)
  TDSL_FOLD(Min)
  TDSL_FOLD(Max)
#undef TDSL_FOLD
  Expr visit(const Neg *op) override {
    Expr e = IRMutator::visit(op);
    if (const auto *n = e.as<Neg>())
      if (const auto *x = n->a.as<FloatImm>();
          x && (e.dtype() == DType::f32() || e.dtype() == DType::f64()))
        return FloatImm::make(e.dtype(), -x->value, e->loc);
    return e;
  }
};

Expr foldScalar(const Expr &e) {
  Expr out = FloatFolder().mutate(e);
  return out.dtype().isFloat() ? out : simplify(out);
}

/// The buffer with simplified dimensions (the same handle when nothing changed).
Buffer foldShape(const Buffer &b) {
  bool changed = false;
  std::vector<Expr> shape;
  for (const Expr &d : b.shape()) {
    shape.push_back(simplify(d));
    changed |= !shape.back().sameAs(d);
  }
  if (!changed)
    return b;
  return Buffer(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
}

Func foldGraph(const GraphFunc &g) {
  std::map<const BufferNode *, Buffer> renamed;
  for (const detail::PlacedBinding &pb : detail::bindingsInOrder(g))
    for (const Buffer &b : detail::definesOf(pb.binding)) {
      Buffer folded = foldShape(b);
      if (!folded.sameAs(b))
        renamed[b.get()] = folded;
    }
  Func f = detail::rewriteBindings(g, [](const GraphBinding &b) -> std::vector<GraphBinding> {
    if (!std::holds_alternative<CallBinding>(b))
      return {b};
    CallBinding c = std::get<CallBinding>(b);
    for (GraphArg &a : c.args)
      if (auto *e = std::get_if<Expr>(&a))
        *e = foldScalar(*e);
    for (Expr &e : c.constArgs)
      e = simplify(e);
    return {c};
  });
  return renamed.empty() ? f : detail::renameBuffers(*f.as<GraphFunc>(), renamed);
}

} // namespace

void foldConstants(Module &module) {
  for (const Func &f : std::vector<Func>(module.functions()))
    if (const auto *g = f.as<GraphFunc>())
      module.replace(foldGraph(*g));
}

} // namespace tdsl::graph
