//===- passes/lower/PartitionLoops.cpp - Guard-free main parts of guarded loops -----------===//
#include "passes/lower/PartitionLoops.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <unordered_set>

namespace tdsl::lower {

using namespace ir;

namespace {

void conjuncts(const Expr &e, std::vector<Expr> &out) {
  if (const auto *op = e.as<And>()) {
    conjuncts(op->a, out);
    conjuncts(op->b, out);
    return;
  }
  out.push_back(e);
}

/// `cond` as `e <= 0` on i64 values, when it is a comparison of i64 values.
Expr asNonPositive(const Expr &cond) {
  auto i64 = [](const Expr &a) { return a.dtype() == DType::i64(); };
  if (const auto *op = cond.as<LT>(); op && i64(op->a))
    return op->a - op->b + intImm(1);
  if (const auto *op = cond.as<LE>(); op && i64(op->a))
    return op->a - op->b;
  if (const auto *op = cond.as<GT>(); op && i64(op->a))
    return op->b - op->a + intImm(1);
  if (const auto *op = cond.as<GE>(); op && i64(op->a))
    return op->b - op->a;
  return Expr();
}

/// A guard found under the loop: the `if`, and the loops between the loop and it.
struct Guard {
  const IfThenElse *node = nullptr;
  Domain inner;
};

/// The `if`s without else under `s`, with the loops around them (up to the partitioned
/// loop). Statements that define variables other than loops (let) end the search.
void findGuards(const Stmt &s, Domain &inner, std::vector<Guard> &out) {
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    inner.push_back({op->loopVar, Interval::ofRange(op->min, op->extent)});
    findGuards(op->body, inner, out);
    inner.pop_back();
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &item : s.as<SeqStmt>()->seq)
      findGuards(item, inner, out);
    return;
  case StmtKind::Allocate:
    return findGuards(s.as<Allocate>()->body, inner, out);
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    if (!op->elseCase.defined())
      out.push_back({op, inner});
    return;
  }
  default:
    return;
  }
}

/// Replaces one `if` node by `replacement`.
class ReplaceIf : public IRMutator {
public:
  ReplaceIf(const IfThenElse *target, Stmt replacement)
      : target_(target), replacement_(std::move(replacement)) {}

protected:
  Stmt visit(const IfThenElse *op) override {
    if (op == target_)
      return replacement_;
    return IRMutator::visit(op);
  }

private:
  const IfThenElse *target_;
  Stmt replacement_;
};

class Partitioner : public IRMutator {
protected:
  Stmt visit(const For *op) override {
    if (op->forKind == ForKind::Serial || op->forKind == ForKind::Parallel)
      if (Stmt parts = partition(op); parts.defined())
        return parts;
    return IRMutator::visit(op);
  }

private:
  Stmt partition(const For *loop) {
    Domain inner;
    std::vector<Guard> guards;
    findGuards(loop->body, inner, guards);
    const Var &v = loop->loopVar;
    for (const Guard &g : guards) {
      std::vector<Expr> terms, kept;
      conjuncts(g.node->condition, terms);
      Expr lo, hi; // the main part is [lo, hi) before clamping; undefined: unbounded
      for (const Expr &term : terms) {
        Expr e = asNonPositive(term);
        std::optional<int64_t> a;
        Expr b;
        if (e.defined() && usesVar(e, v) && !hasLoad(e)) {
          Expr worst = bound(e, g.inner).max;
          if (worst.defined() && !usesInner(worst, g.inner)) {
            a = coefficientOf(worst, v);
            if (a && *a != 0)
              b = canonical(substitute(worst, {{v, intImm(0)}}));
          }
        }
        if (!b.defined()) {
          kept.push_back(term);
          continue;
        }
        // a * v + b <= 0.
        if (*a > 0) {
          Expr end = simplify(Div::make(canonical(intImm(0) - b), intImm(*a)) + intImm(1));
          hi = hi.defined() ? simplify(Min::make(hi, end)) : end;
        } else {
          int64_t c = -*a;
          Expr start = simplify(Div::make(b + intImm(c - 1), intImm(c)));
          lo = lo.defined() ? simplify(Max::make(lo, start)) : start;
        }
      }
      if (!lo.defined() && !hi.defined())
        continue;
      return build(loop, g.node, kept, lo, hi);
    }
    return Stmt();
  }

  static bool hasLoad(const Expr &e) {
    struct Loads : IRVisitor {
      bool found = false;
      void visit(const BufferLoad *) override { found = true; }
    } loads;
    loads.visitExpr(e);
    return loads.found;
  }

  static bool usesInner(const Expr &e, const Domain &inner) {
    for (const auto &[var, range] : inner)
      if (usesVar(e, var))
        return true;
    return false;
  }

  Stmt build(const For *loop, const IfThenElse *guard, const std::vector<Expr> &kept, Expr lo,
             Expr hi) {
    Expr begin = loop->min, end = simplify(loop->min + loop->extent);
    // Clamp: begin <= lo <= hi <= end.
    lo = lo.defined() ? simplify(Min::make(Max::make(lo, begin), end)) : begin;
    hi = hi.defined() ? simplify(Min::make(Max::make(hi, lo), end)) : end;
    Stmt thenCase = guard->thenCase;
    if (!kept.empty()) {
      Expr cond = kept[0];
      for (size_t i = 1; i < kept.size(); ++i)
        cond = logicalAnd(cond, kept[i]);
      thenCase = IfThenElse::make(cond, thenCase, Stmt(), guard->loc);
    }
    Stmt mainBody = mutate(ReplaceIf(guard, thenCase).mutate(loop->body));
    std::vector<Stmt> parts;
    auto part = [&](const Expr &from, const Expr &to, const Stmt &body) {
      Expr extent = simplify(to - from);
      if (auto n = asConstInt(extent); n && *n <= 0)
        return;
      parts.push_back(
          For::make(loop->loopVar, from, extent, loop->forKind, body, loop->threadTag, loop->loc));
    };
    part(begin, lo, loop->body);
    part(lo, hi, mainBody);
    part(hi, end, loop->body);
    return seqOrNoOp(std::move(parts));
  }
};

} // namespace

Func partitionLoops(const Func &func) {
  return mapBody(func, "partitionLoops takes a PrimFunc",
                 [](const Stmt &body) { return Partitioner().mutate(body); });
}

} // namespace tdsl::lower
