//===- passes/lower/PlaceAllocations.cpp - Allocations at the innermost covering statement ===//
#include "passes/lower/PlaceAllocations.h"

#include "ir/IRMutator.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <cstdlib>

namespace tdsl::lower {

using namespace ir;

namespace {

bool anyUses(const std::vector<Expr> &exprs, const Buffer &b) {
  for (const Expr &e : exprs)
    if (e.defined() && usesBuffer(e, b))
      return true;
  return false;
}

using Boxes = std::vector<std::vector<Interval>>;

/// Whether dimension `d` of every box is `a·v + c` with one constant a ≠ 0 for all boxes and
/// the spread of c over all boxes below |a| (and free of each of `absent`): then accesses made
/// at distinct values of `v` fall in disjoint slices of that dimension.
bool dimensionSeparates(const Boxes &boxes, size_t d, const Var &v,
                        const std::vector<Var> &absent = {}) {
  std::optional<int64_t> coefficient;
  const Expr &ref = boxes[0][d].min;
  int64_t lo = 0, hi = 0;
  if (!ref.defined())
    return false;
  for (const auto &box : boxes) {
    if (!box[d].bounded())
      return false;
    std::optional<int64_t> cmin = coefficientOf(box[d].min, v);
    std::optional<int64_t> cmax = coefficientOf(box[d].max, v);
    std::optional<int64_t> dlo = constDiff(box[d].min, ref);
    std::optional<int64_t> dhi = constDiff(box[d].max, ref);
    if (!cmin || !cmax || *cmin != *cmax || *cmin == 0 || !dlo || !dhi ||
        (coefficient && *coefficient != *cmin))
      return false;
    for (const Var &other : absent)
      if (usesVar(box[d].min, other) || usesVar(box[d].max, other))
        return false;
    coefficient = cmin;
    lo = std::min(lo, *dlo);
    hi = std::max(hi, *dhi);
  }
  return coefficient && hi - lo + 1 <= std::llabs(*coefficient);
}

/// The boxes with `v / m` and `v % m` replaced by the variables `quotient` and `remainder`
/// when every use of `v` is in one of the two forms with the same divisor m (a loop made by
/// `fuse`: its outer loop's index is v / m, its inner loop's v % m); nullopt otherwise.
std::optional<Boxes> splitDigits(const Boxes &boxes, const Var &v, const Var &quotient,
                                 const Var &remainder) {
  struct Digits : IRMutator {
    const Var &v, &q, &r;
    Expr divisor;
    bool ok = true;
    Digits(const Var &v, const Var &q, const Var &r) : v(v), q(q), r(r) {}
    bool matches(const Expr &a, const Expr &b) {
      const auto *ref = a.as<VarRef>();
      if (!ref || ref->var != v || usesVar(b, v))
        return false;
      if (!divisor.defined())
        divisor = b;
      ok = ok && structuralEqual(divisor, b);
      return true;
    }
    Expr visit(const Div *op) override {
      return matches(op->a, op->b) ? VarRef::make(q) : IRMutator::visit(op);
    }
    Expr visit(const Mod *op) override {
      return matches(op->a, op->b) ? VarRef::make(r) : IRMutator::visit(op);
    }
  } digits(v, quotient, remainder);
  Boxes out = boxes;
  for (auto &box : out)
    for (Interval &i : box) {
      if (!i.bounded())
        continue;
      i.min = digits.mutate(i.min);
      i.max = digits.mutate(i.max);
      if (usesVar(i.min, v) || usesVar(i.max, v))
        return std::nullopt;
    }
  if (!digits.ok || !digits.divisor.defined())
    return std::nullopt;
  return out;
}

/// Whether distinct iterations of `loop` touch disjoint elements of `b`: some dimension
/// separates them (dimensionSeparates), or, for a fused loop v, one dimension separates the
/// values of v % m (its index free of v / m) and another those of v / m (two iterations with
/// the same v % m differ in v / m). The (row block, channel block) loop of nn.conv2d_packed
/// indexes its tile buffer by kb = v % KB and h = v / KB * HT + h1.
bool iterationsDisjoint(const For *loop, const Buffer &b) {
  if (isConstInt(loop->extent, 1))
    return true;
  // Dimensions whose bounds are unknown (undefined intervals) separate nothing.
  auto boxes = accessBoxes(loop->body, b, /*partial=*/true);
  if (!boxes || boxes->empty())
    return false;
  const Var &v = loop->loopVar;
  for (size_t d = 0; d < b.rank(); ++d)
    if (dimensionSeparates(*boxes, d, v))
      return true;
  Var quotient(v.name() + "_q"), remainder(v.name() + "_r");
  std::optional<Boxes> digits = splitDigits(*boxes, v, quotient, remainder);
  if (!digits)
    return false;
  bool byRemainder = false, byQuotient = false;
  for (size_t d = 0; d < b.rank(); ++d) {
    byRemainder = byRemainder || dimensionSeparates(*digits, d, remainder, {quotient});
    byQuotient = byQuotient || dimensionSeparates(*digits, d, quotient);
  }
  return byRemainder && byQuotient;
}

Stmt place(const Buffer &b, const Stmt &s, const SourceLoc &loc) {
  auto wrap = [&] { return Allocate::make(b, s, loc); };
  if (!usesBuffer(s, b))
    return wrap();
  switch (s.kind()) {
  case StmtKind::SeqStmt: {
    const std::vector<Stmt> &items = s.as<SeqStmt>()->seq;
    size_t first = items.size(), last = 0;
    for (size_t i = 0; i < items.size(); ++i)
      if (usesBuffer(items[i], b)) {
        first = std::min(first, i);
        last = i;
      }
    std::vector<Stmt> out(items.begin(), items.begin() + static_cast<long>(first));
    if (first == last)
      out.push_back(place(b, items[first], loc));
    else
      out.push_back(
          Allocate::make(b,
                         seq(std::vector<Stmt>(items.begin() + static_cast<long>(first),
                                               items.begin() + static_cast<long>(last) + 1)),
                         loc));
    out.insert(out.end(), items.begin() + static_cast<long>(last) + 1, items.end());
    return SeqStmt::make(std::move(out), s->loc);
  }
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (anyUses({op->min, op->extent}, b) || !iterationsDisjoint(op, b))
      return wrap();
    return withBody(op, place(b, op->body, loc));
  }
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    if (anyUses({op->condition}, b))
      return wrap();
    bool inThen = usesBuffer(op->thenCase, b);
    bool inElse = op->elseCase.defined() && usesBuffer(op->elseCase, b);
    if (inThen && inElse)
      return wrap();
    if (inThen)
      return IfThenElse::make(op->condition, place(b, op->thenCase, loc), op->elseCase, op->loc);
    return IfThenElse::make(op->condition, op->thenCase, place(b, op->elseCase, loc), op->loc);
  }
  case StmtKind::LetStmt: {
    const auto *op = s.as<LetStmt>();
    if (anyUses({op->value}, b))
      return wrap();
    return LetStmt::make(op->var, op->value, place(b, op->body, loc), op->loc);
  }
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    return Allocate::make(op->buffer, place(b, op->body, loc), op->loc);
  }
  case StmtKind::AssertStmt: {
    const auto *op = s.as<AssertStmt>();
    if (anyUses({op->condition}, b) || anyUses(op->args, b))
      return wrap();
    return AssertStmt::make(op->condition, op->message, op->args, place(b, op->body, loc), op->loc);
  }
  case StmtKind::ProfileRegion: {
    const auto *op = s.as<ProfileRegion>();
    return ProfileRegion::make(op->id, op->label, place(b, op->body, loc), op->loc);
  }
  default:
    return wrap();
  }
}

class Placer : public IRMutator {
protected:
  Stmt visit(const Allocate *op) override {
    Stmt body = mutate(op->body);
    if (op->buffer.role() != BufferRole::Alloc)
      return body.sameAs(op->body) ? Stmt(op) : Allocate::make(op->buffer, body, op->loc);
    return place(op->buffer, body, op->loc);
  }
};

} // namespace

Func placeAllocations(const Func &func) {
  return mapBody(func, "placeAllocations takes a PrimFunc",
                 [](const Stmt &body) { return Placer().mutate(body); });
}

} // namespace tdsl::lower
