//===- ir/ShapeBounds.cpp ---------------------------------------------------------------------===//
#include "ir/ShapeBounds.h"

#include "ir/Arith.h"
#include "ir/Contains.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>

namespace tdsl::ir {

namespace {

class Analysis {
public:
  explicit Analysis(const PrimFunc &f) {
    for (const Var &v : f.shapeVars)
      shapeVars_.insert(v.get());
    for (const FuncParam &p : f.inputs)
      if (!p.isTensor())
        scalars_.push_back(p.scalar);
  }

  void stmt(const Stmt &s, bool guarded) {
    if (!s.defined())
      return;
    if (const auto *f = s.as<For>()) {
      expr(f->min, guarded);
      expr(f->extent, guarded);
      addLoop(dom_, f);
      extents_.push_back(f->extent);
      stmt(f->body, guarded);
      extents_.pop_back();
      dom_.pop_back();
      return;
    }
    if (const auto *b = s.as<Block>()) {
      size_t saved = axes_.size();
      for (const IterVar &iv : b->iterVars)
        if (iv.binding.defined())
          axes_.emplace_back(iv.var, substitute(iv.binding, axisMap()));
      bool inner = guarded || (b->predicate.defined() && !isConstInt(b->predicate, 1));
      stmt(b->init, inner);
      stmt(b->body, inner);
      axes_.resize(saved);
      return;
    }
    if (const auto *c = s.as<IfThenElse>()) {
      expr(c->condition, guarded);
      stmt(c->thenCase, true);
      stmt(c->elseCase, true);
      return;
    }
    if (const auto *l = s.as<LetStmt>()) {
      expr(l->value, guarded);
      lets_[l->var] = substituteLets(l->value, lets_);
      stmt(l->body, guarded);
      return;
    }
    if (const auto *st = s.as<BufferStore>()) {
      for (const Expr &i : st->indices)
        expr(i, guarded);
      expr(st->value, guarded);
      access(st->buffer, st->indices, st->loc, guarded);
      return;
    }
    if (const auto *seq = s.as<SeqStmt>()) {
      for (const Stmt &x : seq->seq)
        stmt(x, guarded);
      return;
    }
    if (const auto *e = s.as<Evaluate>()) {
      expr(e->value, guarded);
      return;
    }
  }

  ShapeBounds result;

private:
  void expr(const Expr &e, bool guarded) {
    if (!e.defined())
      return;
    if (const auto *s = e.as<Select>()) {
      expr(s->condition, guarded);
      expr(s->trueValue, true);
      expr(s->falseValue, true);
      return;
    }
    if (const auto *l = e.as<BufferLoad>()) {
      for (const Expr &i : l->indices)
        expr(i, guarded);
      access(l->buffer, l->indices, l->loc, guarded);
      return;
    }
    // The direct children, under the same guard.
    struct Children : IRVisitor {
      std::vector<Expr> kids;
      void visit(const BufferLoad *op) override { kids.push_back(op); }
      void visit(const Select *op) override { kids.push_back(op); }
    } c;
    c.IRVisitor::visitExpr(e);
    for (const Expr &k : c.kids)
      expr(k, guarded);
  }

  std::unordered_map<Var, Expr> axisMap() const {
    std::unordered_map<Var, Expr> m;
    for (const auto &[v, e] : axes_)
      m[v] = e;
    return m;
  }

  /// Whether `e` is >= 0 (`strict`: > 0) for every value of the shape variables (>= 0): a
  /// constant with shape-variable terms of non-negative coefficients.
  bool provablyNonNegative(const Expr &e, bool strict) const {
    std::optional<AffineForm> a = affineForm(canonical(e));
    if (!a || a->constant < (strict ? 1 : 0))
      return false;
    return std::all_of(a->terms.begin(), a->terms.end(), [&](const auto &t) {
      return t.second >= 0 && shapeVars_.count(t.first.get());
    });
  }

  /// Whether `e` uses only shape variables, generic constants and constants (no loop variable,
  /// no axis, no `let` name, no scalar input).
  bool shapeOnly(const Expr &e) const {
    for (const Var &v : usedVars(e)) {
      if (std::any_of(dom_.begin(), dom_.end(), [&](const auto &d) { return d.first == v; }))
        return false;
      if (std::any_of(axes_.begin(), axes_.end(), [&](const auto &a) { return a.first == v; }))
        return false;
      if (lets_.count(v) ||
          std::any_of(scalars_.begin(), scalars_.end(), [&](const Var &s) { return s == v; }))
        return false;
    }
    return true;
  }

  void access(const Buffer &buffer, const std::vector<Expr> &indices, SourceLoc loc, bool guarded) {
    if (guarded)
      return;
    // The access runs when every loop around it runs at least once.
    std::vector<Expr> runs;
    for (const Expr &e : extents_) {
      if (!shapeOnly(e))
        return;
      runs.push_back(e);
    }
    bool alwaysRuns = std::all_of(runs.begin(), runs.end(),
                                  [&](const Expr &e) { return provablyNonNegative(e - 1, false); });
    Expr someLoopEmpty;
    for (const Expr &e : runs)
      if (!provablyNonNegative(e - 1, false)) {
        Expr empty = lt(e, intImm(1));
        someLoopEmpty = someLoopEmpty.defined() ? logicalOr(someLoopEmpty, empty) : empty;
      }
    std::unordered_map<Var, Expr> axes = axisMap();
    for (size_t d = 0; d < indices.size() && d < buffer.rank(); ++d) {
      Expr index = substituteLets(substitute(indices[d], axes), lets_);
      if (contains<BufferLoad>(index) || !affineForm(index))
        continue;
      if (std::any_of(scalars_.begin(), scalars_.end(),
                      [&](const Var &s) { return usesVar(index, s); }))
        continue;
      Interval range = bound(index, dom_);
      Expr extent = canonical(buffer.shape()[d]);
      if (!range.bounded() || !shapeOnly(range.min) || !shapeOnly(range.max) || !shapeOnly(extent))
        continue;
      if (asConstInt(range.min) && asConstInt(range.max) && asConstInt(extent))
        continue; // the checker's interval analysis decides constant ones
      for (bool upper : {true, false}) {
        const Expr &extreme = upper ? range.max : range.min;
        Expr slack = upper ? canonical(extent - 1 - extreme) : extreme; // >= 0 when in bounds
        ShapeBound b{buffer, d, indices[d], extreme, extent, upper, Expr(), loc};
        if (provablyNonNegative(slack, false))
          continue;
        if (alwaysRuns && provablyNonNegative(-slack, true)) {
          result.violations.push_back(b);
          continue;
        }
        // Decided without the loops' extents (`N < N`): the check is whether some loop is
        // empty (a C compiler warns on a comparison of a value with itself).
        std::optional<int64_t> known = upper ? constDiff(extreme, extent) : asConstInt(extreme);
        if (known && (upper ? *known < 0 : *known >= 0))
          continue;
        Expr ok = known ? boolImm(false) : upper ? lt(extreme, extent) : ge(extreme, intImm(0));
        b.inBounds = simplify(someLoopEmpty.defined() ? logicalOr(someLoopEmpty, ok) : ok);
        if (!isConstInt(b.inBounds, 1))
          result.checks.push_back(b);
      }
    }
  }

  std::set<const VarNode *> shapeVars_;
  std::vector<Var> scalars_;
  Domain dom_;
  std::vector<Expr> extents_;
  std::vector<std::pair<Var, Expr>> axes_;
  std::unordered_map<Var, Expr> lets_;
};

/// What makes `e` (an i64 expression in the shape variables) computable without overflow, as
/// conditions that cannot overflow or divide by zero themselves (appended to `out`): `a * b`
/// needs `a == 0 || (a > 0 && b >= 0 && b <= INT64_MAX / max(a, 1))`, `a + b` needs
/// `b >= 0 && a <= INT64_MAX - b` (extents are sums and products of non-negative terms). False
/// when `e` has a part this cannot check.
bool noOverflow(const Expr &e, std::vector<Expr> &out) {
  if (asConstInt(e) || e.as<VarRef>())
    return true;
  const Expr big = intImm(INT64_MAX), zero = intImm(0), one = intImm(1);
  if (const auto *m = e.as<Mul>()) {
    if (!noOverflow(m->a, out) || !noOverflow(m->b, out))
      return false;
    out.push_back(logicalOr(eq(m->a, zero), logicalAnd(logicalAnd(gt(m->a, zero), ge(m->b, zero)),
                                                       le(m->b, big / max(m->a, one)))));
    return true;
  }
  if (const auto *a = e.as<Add>()) {
    if (!noOverflow(a->a, out) || !noOverflow(a->b, out))
      return false;
    out.push_back(logicalAnd(ge(a->b, zero), le(a->a, big - a->b)));
    return true;
  }
  if (const auto *d = e.as<Sub>())
    return noOverflow(d->a, out) && noOverflow(d->b, out);
  if (const auto *d = e.as<Div>())
    return noOverflow(d->a, out) && noOverflow(d->b, out);
  return false;
}

/// The extent check of `b`, or nothing when its size is constant or cannot be checked.
std::optional<ExtentCheck> extentCheck(const Buffer &b) {
  std::vector<Expr> conds;
  Expr count = intImm((b.dtype().bits() + 7) / 8);
  bool symbolic = false;
  for (const Expr &d : b.shape()) {
    if (!asConstInt(d))
      symbolic = true;
    if (!noOverflow(d, conds))
      return std::nullopt;
    conds.push_back(ge(d, intImm(0)));
    // The running byte count times this dimension.
    conds.push_back(logicalOr(eq(d, intImm(0)), le(count, intImm(INT64_MAX) / max(d, intImm(1)))));
    count = count * d;
  }
  // A dimension that is a shape variable or a constant is a size the caller's tensor has; an
  // expression of them (`N * N`, `(H + 2 * P - K) / S + 1`) is computed, and may overflow.
  bool computed = std::any_of(b.shape().begin(), b.shape().end(),
                              [](const Expr &d) { return !asConstInt(d) && !d.as<VarRef>(); });
  if (!symbolic || !computed)
    return std::nullopt;
  Expr fits;
  for (const Expr &c : conds)
    fits = fits.defined() ? logicalAnd(fits, c) : c;
  return ExtentCheck{b, fits};
}

} // namespace

ShapeBounds analyzeShapeBounds(const Func &func) {
  const auto *p = func.as<PrimFunc>();
  if (!p)
    return {};
  Analysis a(*p);
  a.stmt(p->body, false);
  std::vector<Buffer> buffers;
  for (const FuncParam &in : p->inputs)
    if (in.isTensor())
      buffers.push_back(in.buffer);
  buffers.insert(buffers.end(), p->outputs.begin(), p->outputs.end());
  buffers.insert(buffers.end(), p->allocBuffers.begin(), p->allocBuffers.end());
  for (const Buffer &b : buffers)
    if (std::optional<ExtentCheck> c = extentCheck(b))
      a.result.extents.push_back(*c);
  return std::move(a.result);
}

} // namespace tdsl::ir
