//===- passes/lower/PlaceAllocations.cpp - Allocations at the innermost covering statement ===//
#include "passes/lower/PlaceAllocations.h"

#include "ir/IRMutator.h"
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

/// Whether distinct iterations of `loop` touch disjoint elements of `b`.
bool iterationsDisjoint(const For *loop, const Buffer &b) {
  if (isConstInt(loop->extent, 1))
    return true;
  auto boxes = accessBoxes(loop->body, b);
  if (!boxes || boxes->empty())
    return false;
  const Var &v = loop->loopVar;
  for (size_t d = 0; d < b.rank(); ++d) {
    std::optional<int64_t> coefficient;
    const Expr &ref = (*boxes)[0][d].min;
    int64_t lo = 0, hi = 0;
    bool ok = true;
    for (const auto &box : *boxes) {
      std::optional<int64_t> cmin = coefficientOf(box[d].min, v);
      std::optional<int64_t> cmax = coefficientOf(box[d].max, v);
      std::optional<int64_t> dlo = constDiff(box[d].min, ref);
      std::optional<int64_t> dhi = constDiff(box[d].max, ref);
      if (!cmin || !cmax || *cmin != *cmax || *cmin == 0 || !dlo || !dhi ||
          (coefficient && *coefficient != *cmin)) {
        ok = false;
        break;
      }
      coefficient = cmin;
      lo = std::min(lo, *dlo);
      hi = std::max(hi, *dhi);
    }
    if (ok && coefficient && hi - lo + 1 <= std::llabs(*coefficient))
      return true;
  }
  return false;
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
