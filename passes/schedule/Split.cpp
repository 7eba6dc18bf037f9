//===- passes/schedule/Split.cpp - split(loop, factors): one loop into several nested ones ----===//

#include "passes/schedule/Primitives.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Adds `cond` to the predicate of every block in `s`.
struct AddPredicate : IRMutator {
  Expr cond;
  Stmt visit(const Block *op) override {
    Stmt inner = IRMutator::visit(op);
    auto *b = inner.as<Block>();
    Expr pred = isConstInt(b->predicate, 1) ? cond : logicalAnd(b->predicate, cond);
    return Block::make(b->name, b->iterVars, pred, b->init, b->body, b->reads, b->writes,
                       b->allocBuffers, b->loc);
  }
};

} // namespace

std::vector<Var> split(ScheduleState &s, const Var &loopVar,
                       const std::vector<std::optional<int64_t>> &factors) {
  // Step 1: check.
  const For *loop = s.loop(loopVar);
  auto declared = [&] { return loopVar->loc; };
  if (factors.size() < 2)
    throw ScheduleError("split needs at least two factors", declared(), "loop declared here");
  int placeholders = 0;
  int64_t known = 1;
  for (const std::optional<int64_t> &f : factors) {
    if (!f) {
      ++placeholders;
      continue;
    }
    if (*f <= 0)
      throw ScheduleError("split factor " + std::to_string(*f) + " is not positive", declared(),
                          "loop declared here");
    if (__builtin_mul_overflow(known, *f, &known))
      throw ScheduleError("the product of the split factors overflows i64", declared(),
                          "loop declared here");
  }
  if (placeholders > 1)
    throw ScheduleError("split takes at most one inferred factor '_'", declared(),
                        "loop declared here");
  std::optional<int64_t> extent = asConstInt(loop->extent);
  // §7: a product below the extent would drop iterations.
  if (extent && placeholders == 0 && known < *extent)
    throw ScheduleError("the product of the split factors, " + std::to_string(known) +
                            ", is below the extent " + std::to_string(*extent) + " of loop '" +
                            loopVar.name() + "'; the split would drop iterations",
                        declared(), "loop declared here");
  // The inferred factor is ceil(extent / known): extent + known - 1 must not overflow either.
  int64_t ignored;
  if (extent && placeholders == 1 && __builtin_add_overflow(*extent, known - 1, &ignored))
    throw ScheduleError("the split factors are too large: extent + product - 1 overflows i64",
                        declared(), "loop declared here");
  if (!extent && placeholders == 0)
    throw ScheduleError("loop '" + loopVar.name() +
                            "' has a symbolic extent; one factor must be inferred ('_')",
                        loopVar->loc, "loop declared here");

  // A symbolic extent x * c whose constant c the known factors divide ((N + 31) / 32 * 32
  // split by 32) splits exactly, without a guard: the inferred loop runs x * (c / known) times.
  std::optional<Expr> exactQuotient;
  if (const auto *m = loop->extent.as<Mul>(); !extent && m)
    for (auto [x, c] : {std::pair{m->a, m->b}, std::pair{m->b, m->a}})
      if (std::optional<int64_t> v = asConstInt(c); v && *v % known == 0 && !exactQuotient)
        exactQuotient = simplify(x * (*v / known));

  // Step 2: the new loops, outermost first.
  std::vector<Expr> extents;
  for (const std::optional<int64_t> &f : factors) {
    if (f) {
      extents.push_back(intImm(*f));
      continue;
    }
    if (extent)
      extents.push_back(intImm((*extent + known - 1) / known));
    else if (exactQuotient)
      extents.push_back(*exactQuotient);
    else
      extents.push_back(simplify((loop->extent + (known - 1)) / known));
  }
  std::vector<Var> vars;
  for (size_t i = 0; i < factors.size(); ++i)
    vars.push_back(freshVar(loopVar.name() + "_" + std::to_string(i), loopVar->loc));
  // loop = min + ((v0 * e1 + v1) * e2 + v2) …
  Expr fused = VarRef::make(vars[0]);
  for (size_t i = 1; i < vars.size(); ++i)
    fused = fused * extents[i] + VarRef::make(vars[i]);
  fused = simplify(fused);
  Expr value = isConstInt(loop->min, 0) ? fused : simplify(loop->min + fused);

  // Step 3: rewrite the body and guard it when the factors overshoot the extent.
  Stmt body = simplify(substitute(loop->body, {{loopVar, value}}));
  bool exact = exactQuotient.has_value();
  if (extent) {
    int64_t product = 1;
    bool overflow = false;
    for (const Expr &e : extents)
      overflow |= __builtin_mul_overflow(product, *asConstInt(e), &product);
    if (overflow)
      throw ScheduleError("the product of the split loops' extents overflows i64", declared(),
                          "loop declared here");
    exact = product == *extent;
  }
  if (!exact) {
    AddPredicate add;
    add.cond = lt(fused, loop->extent);
    body = add.mutate(body);
  }
  for (size_t i = vars.size(); i-- > 0;)
    body = For::make(vars[i], intImm(0), extents[i], ForKind::Serial, body, {}, loop->loc);
  s.replace(loop, body);
  return vars;
}

} // namespace tdsl::schedule
