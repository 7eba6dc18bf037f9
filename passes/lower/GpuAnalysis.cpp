//===- passes/lower/GpuAnalysis.cpp - Index analysis shared by the GPU lowering steps -----===//
#include "passes/lower/GpuAnalysis.h"

#include "ir/IRVisitor.h"

#include <algorithm>

namespace tdsl::lower {

using namespace ir;

bool sameExpr(const Expr &a, const Expr &b, const std::unordered_map<Var, Var> &alias) {
  if (a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || !(a.dtype() == b.dtype()))
    return false;
  switch (a.kind()) {
  case ExprKind::IntImm:
    return a.as<IntImm>()->value == b.as<IntImm>()->value;
  case ExprKind::VarRef: {
    auto canon = [&](const Var &v) {
      auto it = alias.find(v);
      return it == alias.end() ? v : it->second;
    };
    return canon(a.as<VarRef>()->var) == canon(b.as<VarRef>()->var);
  }
  case ExprKind::Cast:
    return sameExpr(a.as<Cast>()->value, b.as<Cast>()->value, alias);
  case ExprKind::Neg:
    return sameExpr(a.as<Neg>()->a, b.as<Neg>()->a, alias);
#define TDSL_SAME_BINARY(NAME)                                                                     \
  case ExprKind::NAME:                                                                             \
    return sameExpr(a.as<NAME>()->a, b.as<NAME>()->a, alias) &&                                    \
           sameExpr(a.as<NAME>()->b, b.as<NAME>()->b, alias);
    TDSL_FOR_EACH_BINARY_NODE(TDSL_SAME_BINARY)
#undef TDSL_SAME_BINARY
  default:
    return false;
  }
}

namespace {

bool mulOverflows(int64_t a, int64_t b, int64_t &out) { return __builtin_mul_overflow(a, b, &out); }

/// Adds `scale * e` to `form`; false when an overflow or a non-i64 expression gets in the way.
bool accumulate(const Expr &e, int64_t scale, AffineForm &form) {
  if (auto v = asConstInt(e)) {
    int64_t p;
    if (mulOverflows(*v, scale, p) || __builtin_add_overflow(form.constant, p, &form.constant))
      return false;
    return true;
  }
  if (auto *op = e.as<VarRef>()) {
    for (auto &[var, coef] : form.terms)
      if (var == op->var)
        return !__builtin_add_overflow(coef, scale, &coef);
    form.terms.emplace_back(op->var, scale);
    return true;
  }
  if (auto *op = e.as<Add>())
    return accumulate(op->a, scale, form) && accumulate(op->b, scale, form);
  if (auto *op = e.as<Sub>())
    return accumulate(op->a, scale, form) && scale != INT64_MIN && accumulate(op->b, -scale, form);
  if (auto *op = e.as<Neg>())
    return scale != INT64_MIN && accumulate(op->a, -scale, form);
  if (auto *op = e.as<Mul>()) {
    int64_t p;
    if (auto c = asConstInt(op->b))
      return !mulOverflows(*c, scale, p) && accumulate(op->a, p, form);
    if (auto c = asConstInt(op->a))
      return !mulOverflows(*c, scale, p) && accumulate(op->b, p, form);
  }
  if (auto *op = e.as<Cast>(); op && op->value.dtype() == DType::i64())
    return accumulate(op->value, scale, form);
  if (!(e.dtype() == DType::i64()))
    return false;
  form.opaque.push_back(scale == 1 ? e : e * intImm(scale));
  return true;
}

} // namespace

std::optional<AffineForm> affineForm(const Expr &e) {
  AffineForm form;
  if (!accumulate(e, 1, form))
    return std::nullopt;
  form.terms.erase(std::remove_if(form.terms.begin(), form.terms.end(),
                                  [](const auto &t) { return t.second == 0; }),
                   form.terms.end());
  return form;
}

std::vector<Var> usedVars(const Expr &e) {
  struct Collect : IRVisitor {
    std::vector<Var> vars;
    void visit(const VarRef *op) override {
      if (std::find(vars.begin(), vars.end(), op->var) == vars.end())
        vars.push_back(op->var);
    }
  } c;
  c.visitExpr(e);
  return c.vars;
}

std::optional<Interval> intervalOf(const Expr &e, const std::unordered_map<Var, Interval> &vars) {
  if (auto v = asConstInt(e))
    return Interval{*v, *v};
  if (auto *op = e.as<VarRef>()) {
    auto it = vars.find(op->var);
    if (it == vars.end())
      return std::nullopt;
    return it->second;
  }
  auto two = [&](const Expr &a, const Expr &b) -> std::optional<std::pair<Interval, Interval>> {
    auto x = intervalOf(a, vars), y = intervalOf(b, vars);
    if (!x || !y)
      return std::nullopt;
    return std::make_pair(*x, *y);
  };
  // Bounds stay far below 2^62 in practice; anything larger is given up on.
  const int64_t kLimit = int64_t(1) << 40;
  auto ok = [&](Interval r) -> std::optional<Interval> {
    if (r.lo < -kLimit || r.hi > kLimit)
      return std::nullopt;
    return r;
  };
  if (auto *op = e.as<Add>()) {
    auto p = two(op->a, op->b);
    if (!p)
      return std::nullopt;
    return ok({p->first.lo + p->second.lo, p->first.hi + p->second.hi});
  }
  if (auto *op = e.as<Sub>()) {
    auto p = two(op->a, op->b);
    if (!p)
      return std::nullopt;
    return ok({p->first.lo - p->second.hi, p->first.hi - p->second.lo});
  }
  if (auto *op = e.as<Mul>()) {
    auto p = two(op->a, op->b);
    if (!p)
      return std::nullopt;
    int64_t c[4] = {p->first.lo * p->second.lo, p->first.lo * p->second.hi,
                    p->first.hi * p->second.lo, p->first.hi * p->second.hi};
    return ok({*std::min_element(c, c + 4), *std::max_element(c, c + 4)});
  }
  if (auto *op = e.as<Div>()) { // floor division by a positive constant
    auto x = intervalOf(op->a, vars);
    auto d = asConstInt(op->b);
    if (!x || !d || *d <= 0)
      return std::nullopt;
    auto fdiv = [&](int64_t a) { return a >= 0 ? a / *d : -((-a + *d - 1) / *d); };
    return Interval{fdiv(x->lo), fdiv(x->hi)};
  }
  if (auto *op = e.as<Mod>()) {
    auto x = intervalOf(op->a, vars);
    auto d = asConstInt(op->b);
    if (!d || *d <= 0)
      return std::nullopt;
    if (x && x->lo >= 0 && x->hi < *d)
      return *x;
    return Interval{0, *d - 1};
  }
  if (auto *op = e.as<Min>()) {
    auto p = two(op->a, op->b);
    if (!p)
      return std::nullopt;
    return Interval{std::min(p->first.lo, p->second.lo), std::min(p->first.hi, p->second.hi)};
  }
  if (auto *op = e.as<Max>()) {
    auto p = two(op->a, op->b);
    if (!p)
      return std::nullopt;
    return Interval{std::max(p->first.lo, p->second.lo), std::max(p->first.hi, p->second.hi)};
  }
  if (auto *op = e.as<Cast>(); op && op->value.dtype().isInteger())
    return intervalOf(op->value, vars);
  return std::nullopt;
}

bool isThreadIdxTag(const std::string &tag) { return tag.rfind("threadIdx.", 0) == 0; }

} // namespace tdsl::lower
