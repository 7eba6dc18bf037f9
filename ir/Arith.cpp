//===- ir/Arith.cpp - Integer arithmetic: floor division, affine forms, intervals ---------===//
#include "ir/Arith.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"

#include <algorithm>
#include <functional>
#include <tuple>

namespace tdsl::ir {

// ---------------------------------------------------------------------------------------------
// Floor division
// ---------------------------------------------------------------------------------------------

int64_t floorDiv(int64_t a, int64_t b) {
  TDSL_IR_CHECK(b != 0, "floorDiv by zero");
  if (b == -1) // INT64_MIN / -1 overflows; the quotient wraps
    return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floorMod(int64_t a, int64_t b) {
  TDSL_IR_CHECK(b != 0, "floorMod by zero");
  if (b == -1)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// ---------------------------------------------------------------------------------------------
// Affine forms
// ---------------------------------------------------------------------------------------------

int64_t AffineForm::coeff(const Var &v) const {
  for (const auto &[var, c] : terms)
    if (var == v)
      return c;
  return 0;
}

namespace {

bool mulOverflows(int64_t a, int64_t b, int64_t &out) { return __builtin_mul_overflow(a, b, &out); }

/// Adds `scale * e` to `form`; false when an overflow or a non-affine part gets in the way.
bool accumulate(const Expr &e, int64_t scale, AffineForm &form, NonAffine nonAffine) {
  auto recurse = [&](const Expr &x, int64_t k) { return accumulate(x, k, form, nonAffine); };
  if (auto v = asConstInt(e)) {
    int64_t p;
    return !mulOverflows(*v, scale, p) && !__builtin_add_overflow(form.constant, p, &form.constant);
  }
  if (auto *op = e.as<VarRef>()) {
    for (auto &[var, coef] : form.terms)
      if (var == op->var)
        return !__builtin_add_overflow(coef, scale, &coef);
    form.terms.emplace_back(op->var, scale);
    return true;
  }
  if (auto *op = e.as<Add>())
    return recurse(op->a, scale) && recurse(op->b, scale);
  if (auto *op = e.as<Sub>())
    return recurse(op->a, scale) && scale != INT64_MIN && recurse(op->b, -scale);
  if (auto *op = e.as<Neg>())
    return scale != INT64_MIN && recurse(op->a, -scale);
  if (auto *op = e.as<Mul>()) {
    int64_t p;
    if (auto c = asConstInt(op->b))
      return !mulOverflows(*c, scale, p) && recurse(op->a, p);
    if (auto c = asConstInt(op->a))
      return !mulOverflows(*c, scale, p) && recurse(op->b, p);
  }
  if (auto *op = e.as<Cast>(); op && op->value.dtype() == DType::i64())
    return recurse(op->value, scale);
  if (nonAffine == NonAffine::Fail || !(e.dtype() == DType::i64()))
    return false;
  form.opaque.push_back(scale == 1 ? e : e * intImm(scale));
  return true;
}

} // namespace

std::optional<AffineForm> affineForm(const Expr &e, NonAffine nonAffine) {
  AffineForm form;
  if (!accumulate(e, 1, form, nonAffine))
    return std::nullopt;
  std::erase_if(form.terms, [](const auto &t) { return t.second == 0; });
  return form;
}

// ---------------------------------------------------------------------------------------------
// Canonical forms
// ---------------------------------------------------------------------------------------------

namespace {

// Integers wrap (two's complement): coefficient arithmetic goes through uint64_t.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

/// sum(coefficient * term) + constant, terms compared by equalExpr.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void addTerm(const Expr &term, int64_t k) {
    for (auto &[t, c] : terms)
      if (equalExpr(t, term)) {
        c = wrapAdd(c, k);
        return;
      }
    terms.emplace_back(term, k);
  }
  void addScaled(const Linear &other, int64_t k) {
    for (const auto &[t, c] : other.terms)
      addTerm(t, wrapMul(c, k));
    constant = wrapAdd(constant, wrapMul(other.constant, k));
  }
  bool isConstant() const {
    return std::all_of(terms.begin(), terms.end(), [](const auto &t) { return t.second == 0; });
  }
  bool allDivisibleBy(int64_t c) const {
    return std::all_of(terms.begin(), terms.end(),
                       [&](const auto &t) { return t.second % c == 0; });
  }
  /// The terms with their coefficients divided by `c` (multiples of it), plus `newConstant`.
  Linear termsDividedBy(int64_t c, int64_t newConstant) const {
    Linear l;
    for (const auto &[t, k] : terms)
      l.addTerm(t, k / c);
    l.constant = newConstant;
    return l;
  }
};

/// The expression of `l`: positive terms, then the negative ones subtracted, then the constant.
Expr rebuild(const Linear &l) {
  Expr acc;
  for (const auto &[t, k] : l.terms) {
    if (k <= 0)
      continue;
    Expr term = k == 1 ? t : Mul::make(t, intImm(k));
    acc = acc.defined() ? Add::make(acc, term) : term;
  }
  bool constantFirst = !acc.defined() && l.constant != 0;
  if (constantFirst)
    acc = intImm(l.constant);
  for (const auto &[t, k] : l.terms) {
    if (k >= 0)
      continue;
    Expr term = k == -1 ? t : Mul::make(t, intImm(k == INT64_MIN ? k : -k));
    acc = acc.defined() ? Sub::make(acc, term) : Neg::make(term);
  }
  if (!acc.defined())
    return intImm(l.constant);
  if (constantFirst || l.constant == 0)
    return acc;
  if (l.constant > 0 || l.constant == INT64_MIN)
    return Add::make(acc, intImm(l.constant));
  return Sub::make(acc, intImm(-l.constant));
}

Linear atom(const Expr &e) {
  Linear l;
  l.addTerm(e, 1);
  return l;
}

Interval boundOf(const Linear &l, const Domain &dom);

/// With `dom`: `a` split into q + r, every coefficient of q a multiple of c, r the other terms
/// and the constant, when r stays within [k·c, k·c + c - 1] over `dom`: (q, r, k).
std::optional<std::tuple<Linear, Linear, int64_t>> inOneMultiple(const Linear &a, int64_t c,
                                                                 const Domain *dom) {
  if (!dom)
    return std::nullopt;
  Linear q, r;
  for (const auto &[t, k] : a.terms)
    (k % c == 0 ? q : r).addTerm(t, k);
  r.constant = a.constant;
  Interval b = boundOf(r, *dom);
  std::optional<int64_t> lo, hi;
  if (b.min.defined())
    lo = asConstInt(b.min);
  if (b.max.defined())
    hi = asConstInt(b.max);
  if (!lo || !hi || floorDiv(*lo, c) != floorDiv(*hi, c))
    return std::nullopt;
  return std::make_tuple(q, r, floorDiv(*lo, c));
}

/// `a` / c, floor division by a positive constant c: floor((c * x + r) / c) == x + floor(r / c)
/// for integer x.
Linear dividedBy(const Linear &a, int64_t c, const Domain *dom) {
  if (!a.allDivisibleBy(c)) {
    // floor((c * x + r) / c) == x + k where r stays in [k * c, k * c + c - 1].
    auto split = inOneMultiple(a, c, dom);
    if (!split)
      return atom(Div::make(rebuild(a), intImm(c)));
    return std::get<0>(*split).termsDividedBy(c, std::get<2>(*split));
  }
  return a.termsDividedBy(c, floorDiv(a.constant, c));
}

/// `a` % c, by a positive constant c: (c * x + r) % c == r % c; terms whose coefficient is a
/// multiple of c drop out.
Linear moduloOf(const Linear &a, int64_t c, const Domain *dom) {
  Linear rest;
  for (const auto &[t, k] : a.terms)
    if (k % c != 0)
      rest.addTerm(t, k);
  rest.constant = a.constant;
  if (rest.isConstant()) {
    Linear l;
    l.constant = floorMod(rest.constant, c);
    return l;
  }
  // (c * x + r) % c == r - k * c where r stays in [k * c, k * c + c - 1].
  if (auto split = inOneMultiple(a, c, dom)) {
    Linear l = std::get<1>(*split);
    l.constant = wrapAdd(l.constant, wrapMul(-std::get<2>(*split), c));
    return l;
  }
  return atom(Mod::make(rebuild(rest), intImm(c)));
}

Linear linearize(const Expr &e, const Domain *dom = nullptr) {
  if (std::optional<int64_t> c = asConstInt(e)) {
    Linear l;
    l.constant = *c;
    return l;
  }
  switch (e.kind()) {
  case ExprKind::Add: {
    auto *n = e.as<Add>();
    Linear l = linearize(n->a, dom);
    l.addScaled(linearize(n->b, dom), 1);
    return l;
  }
  case ExprKind::Sub: {
    auto *n = e.as<Sub>();
    Linear l = linearize(n->a, dom);
    l.addScaled(linearize(n->b, dom), -1);
    return l;
  }
  case ExprKind::Neg: {
    Linear l;
    l.addScaled(linearize(e.as<Neg>()->a, dom), -1);
    return l;
  }
  case ExprKind::Mul: {
    auto *n = e.as<Mul>();
    Linear a = linearize(n->a, dom), b = linearize(n->b, dom);
    Linear l;
    if (a.isConstant())
      l.addScaled(b, a.constant);
    else if (b.isConstant())
      l.addScaled(a, b.constant);
    else
      return atom(Mul::make(rebuild(a), rebuild(b)));
    return l;
  }
  case ExprKind::Div:
  case ExprKind::Mod: {
    bool div = e.kind() == ExprKind::Div;
    Linear a = linearize(div ? e.as<Div>()->a : e.as<Mod>()->a, dom);
    Linear b = linearize(div ? e.as<Div>()->b : e.as<Mod>()->b, dom);
    if (!b.isConstant() || b.constant <= 0)
      return atom(div ? Div::make(rebuild(a), rebuild(b)) : Mod::make(rebuild(a), rebuild(b)));
    return div ? dividedBy(a, b.constant, dom) : moduloOf(a, b.constant, dom);
  }
  default:
    return atom(simplify(e));
  }
}

} // namespace

Expr canonical(const Expr &e) {
  if (!e.defined() || e.dtype() != DType::i64())
    return e.defined() ? simplify(e) : e;
  return rebuild(linearize(simplify(e)));
}

std::optional<int64_t> constDiff(const Expr &a, const Expr &b) {
  if (!a.defined() || !b.defined())
    return std::nullopt;
  return asConstInt(canonical(a - b));
}

std::optional<std::pair<size_t, Expr>> axisPlusOffset(const std::vector<Var> &axes, const Expr &e) {
  Linear l = linearize(simplify(e));
  std::optional<size_t> axis;
  Linear rest;
  rest.constant = l.constant;
  for (const auto &[t, k] : l.terms) {
    if (k == 0)
      continue;
    if (auto *v = t.as<VarRef>()) {
      auto it = std::find(axes.begin(), axes.end(), v->var);
      if (it != axes.end()) {
        if (k != 1 || axis)
          return std::nullopt;
        axis = static_cast<size_t>(it - axes.begin());
        continue;
      }
    }
    for (const Var &a : axes)
      if (usesVar(t, a))
        return std::nullopt;
    rest.addTerm(t, k);
  }
  if (!axis)
    return std::nullopt;
  return std::make_pair(*axis, rebuild(rest));
}

// ---------------------------------------------------------------------------------------------
// Symbolic intervals
// ---------------------------------------------------------------------------------------------

namespace {

bool usesAny(const Expr &e, const Domain &dom) {
  for (const auto &[v, range] : dom)
    if (usesVar(e, v))
      return true;
  return false;
}

/// min/max of two bounds that may be undefined; `undefinedWins` says whether an undefined
/// bound (infinite) absorbs the other.
Expr pick(const Expr &a, const Expr &b, bool wantMin, bool undefinedWins) {
  if (!a.defined() || !b.defined())
    return undefinedWins ? Expr() : (a.defined() ? a : b);
  if (std::optional<int64_t> d = constDiff(a, b))
    return (*d <= 0) == wantMin ? a : b;
  return wantMin ? min(a, b) : max(a, b);
}

/// [a.min op b.min, a.max op b.max], or with b's bounds swapped (for a - b).
Interval apply(const Interval &a, const Interval &b, Expr (*op)(Expr, Expr), bool swapB) {
  const Expr &bLo = swapB ? b.max : b.min, &bHi = swapB ? b.min : b.max;
  Interval r;
  if (a.min.defined() && bLo.defined())
    r.min = canonical(op(a.min, bLo));
  if (a.max.defined() && bHi.defined())
    r.max = canonical(op(a.max, bHi));
  return r;
}

Interval scale(const Interval &a, int64_t k) {
  Interval r;
  const Expr &lo = k >= 0 ? a.min : a.max, &hi = k >= 0 ? a.max : a.min;
  if (lo.defined())
    r.min = canonical(lo * intImm(k));
  if (hi.defined())
    r.max = canonical(hi * intImm(k));
  return r;
}

/// Each defined bound of `a` through `fn` (canonical).
Interval eachBound(const Interval &a, const std::function<Expr(const Expr &)> &fn) {
  Interval r;
  if (a.min.defined())
    r.min = canonical(fn(a.min));
  if (a.max.defined())
    r.max = canonical(fn(a.max));
  return r;
}

} // namespace

Interval Interval::ofRange(const Expr &min, const Expr &extent) {
  return {canonical(min), canonical(min + extent - 1)};
}

Expr Interval::extent() const {
  if (!bounded())
    return Expr();
  return canonical(max - min + 1);
}

Interval bound(const Expr &e, const Domain &dom) {
  if (!e.defined())
    return {};
  if (!usesAny(e, dom))
    return Interval::point(canonical(e));
  switch (e.kind()) {
  case ExprKind::VarRef:
    for (const auto &[v, range] : dom)
      if (v == e.as<VarRef>()->var)
        return range;
    return Interval::point(e);
  case ExprKind::Add: {
    auto *n = e.as<Add>();
    return apply(bound(n->a, dom), bound(n->b, dom), add, false);
  }
  case ExprKind::Sub: {
    auto *n = e.as<Sub>();
    return apply(bound(n->a, dom), bound(n->b, dom), sub, true);
  }
  case ExprKind::Neg:
    return scale(bound(e.as<Neg>()->a, dom), -1);
  case ExprKind::Mul: {
    auto *n = e.as<Mul>();
    if (std::optional<int64_t> k = asConstInt(canonical(n->b)))
      return scale(bound(n->a, dom), *k);
    if (std::optional<int64_t> k = asConstInt(canonical(n->a)))
      return scale(bound(n->b, dom), *k);
    return {};
  }
  case ExprKind::Div: {
    auto *n = e.as<Div>();
    std::optional<int64_t> k = asConstInt(canonical(n->b));
    if (!k || *k <= 0)
      return {};
    return eachBound(bound(n->a, dom), [&](const Expr &x) { return x / intImm(*k); });
  }
  case ExprKind::Mod: {
    auto *n = e.as<Mod>();
    std::optional<int64_t> k = asConstInt(canonical(n->b));
    if (!k || *k <= 0)
      return {};
    Interval a = bound(n->a, dom);
    if (a.bounded() && equalExpr(canonical(a.min / intImm(*k)), canonical(a.max / intImm(*k))))
      return eachBound(a, [&](const Expr &x) { return x % intImm(*k); });
    return {intImm(0), intImm(*k - 1)};
  }
  case ExprKind::Min: {
    auto *n = e.as<Min>();
    Interval a = bound(n->a, dom), b = bound(n->b, dom);
    return {pick(a.min, b.min, true, true), pick(a.max, b.max, true, false)};
  }
  case ExprKind::Max: {
    auto *n = e.as<Max>();
    Interval a = bound(n->a, dom), b = bound(n->b, dom);
    return {pick(a.min, b.min, false, false), pick(a.max, b.max, false, true)};
  }
  default:
    return {};
  }
}

Interval hull(const Interval &a, const Interval &b) {
  return {pick(a.min, b.min, true, true), pick(a.max, b.max, false, true)};
}

void addLoop(Domain &dom, const For *loop) {
  Interval lo = bound(loop->min, dom), hi = bound(loop->min + loop->extent - 1, dom);
  dom.emplace_back(loop->loopVar, Interval{lo.min, hi.max});
}

bool proveLE(const Expr &a, const Expr &b, const Domain &dom) {
  if (!a.defined() || !b.defined())
    return false;
  Interval d = bound(canonical(b - a), dom);
  std::optional<int64_t> lo = d.min.defined() ? asConstInt(d.min) : std::nullopt;
  return lo && *lo >= 0;
}

namespace {

Interval boundOf(const Linear &l, const Domain &dom) { return bound(rebuild(l), dom); }

/// resolveDivMod's walk: the loops around each expression make its domain.
class DivModResolver : public IRMutator {
protected:
  Stmt visit(const For *op) override {
    size_t depth = dom_.size();
    addLoop(dom_, op);
    Stmt s = IRMutator::visit(op);
    dom_.resize(depth);
    return s;
  }
  Expr visit(const Div *op) override { return resolve(IRMutator::visit(op)); }
  Expr visit(const Mod *op) override { return resolve(IRMutator::visit(op)); }

private:
  Expr resolve(const Expr &e) {
    if (dom_.empty() || e.dtype() != DType::i64())
      return e;
    Expr r = rebuild(linearize(simplify(e), &dom_));
    return r.kind() == ExprKind::Div || r.kind() == ExprKind::Mod ? e : r;
  }
  Domain dom_;
};

} // namespace

Stmt resolveDivMod(const Stmt &s) { return DivModResolver().mutate(s); }

std::optional<int64_t> evaluateInt(const Expr &e,
                                   const std::function<std::optional<int64_t>(const Var &)> &var) {
  auto value = [&](const Expr &x) { return evaluateInt(x, var); };
  if (const auto *c = e.as<IntImm>())
    return c->value;
  if (const auto *v = e.as<VarRef>())
    return var(v->var);
  if (const auto *n = e.as<Not>()) {
    std::optional<int64_t> a = value(n->a);
    return a ? std::optional<int64_t>(!*a) : std::nullopt;
  }
  if (const auto *n = e.as<Neg>()) {
    std::optional<int64_t> a = value(n->a);
    return a ? std::optional<int64_t>(int64_t(0ull - uint64_t(*a))) : std::nullopt;
  }
  if (const auto *c = e.as<Cast>())
    return e.dtype().isInteger() || e.dtype().isBool() ? value(c->value) : std::nullopt;
  if (const auto *s = e.as<Select>()) {
    std::optional<int64_t> c = value(s->condition);
    return c ? value(*c ? s->trueValue : s->falseValue) : std::nullopt;
  }
  auto [pa, pb] = binaryOperands(e);
  if (!pa || !pb)
    return std::nullopt;
  std::optional<int64_t> x = value(*pa), y = value(*pb);
  if (!x || !y)
    return std::nullopt;
  int64_t a = *x, b = *y, r = 0;
  bool divisible = b != 0 && !(a == INT64_MIN && b == -1);
  switch (e.kind()) {
  case ExprKind::Add:
    return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  case ExprKind::Sub:
    return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  case ExprKind::Mul:
    return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  case ExprKind::Div:
    return divisible ? std::optional<int64_t>(floorDiv(a, b)) : std::nullopt;
  case ExprKind::Mod:
    return divisible ? std::optional<int64_t>(floorMod(a, b)) : std::nullopt;
  case ExprKind::Min:
    return std::min(a, b);
  case ExprKind::Max:
    return std::max(a, b);
  case ExprKind::EQ:
    return a == b;
  case ExprKind::NE:
    return a != b;
  case ExprKind::LT:
    return a < b;
  case ExprKind::LE:
    return a <= b;
  case ExprKind::GT:
    return a > b;
  case ExprKind::GE:
    return a >= b;
  case ExprKind::And:
    return a && b;
  case ExprKind::Or:
    return a || b;
  default:
    return std::nullopt;
  }
}

} // namespace tdsl::ir
