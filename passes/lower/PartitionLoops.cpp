//===- passes/lower/PartitionLoops.cpp - Guard-free main parts of guarded loops -----------===//
#include "passes/lower/PartitionLoops.h"

#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <optional>
#include <type_traits>
#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

namespace {

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

/// One side of a conjunct that holds on a half-line of the loop variable: `v < at` (upper) or
/// `v >= at`.
struct HalfLine {
  bool upper = false;
  Expr at;
};

bool sameHalfLine(const HalfLine &x, const HalfLine &y) {
  return x.upper == y.upper && equalExpr(x.at, y.at);
}

/// A guard found under the loop: an `if` without else or a `select`, its conjuncts, the
/// loops between the loop and it, and for each conjunct the half-line of `v` on which it holds
/// for every iteration of those loops (when there is one).
struct Guard {
  const void *node = nullptr;
  std::vector<Expr> terms;
  std::vector<std::optional<HalfLine>> halves;
  /// For each conjunct, its disjuncts (`a || b`: two) and for each the half-line of `v` on
  /// which it holds for no iteration of those loops (when there is one): the complement of
  /// another guard's half-line where `tensorize` runs the original computation on partial
  /// tiles only (`vi_o >= 170` beside `vi_o < 170`; `vi_o >= 170 || vj_o >= 4` in 2-D).
  std::vector<std::vector<Expr>> disjuncts;
  std::vector<std::vector<std::optional<HalfLine>>> nevers;
};

/// The selects of an expression (also nested ones).
void findSelects(const Expr &e, std::vector<const Select *> &out) {
  struct Selects : IRVisitor {
    std::vector<const Select *> *out;
    void visit(const Select *op) override {
      out->push_back(op);
      IRVisitor::visit(op);
    }
  } selects;
  selects.out = &out;
  selects.visitExpr(e);
}

bool usesInner(const Expr &e, const Domain &inner) {
  for (const auto &[var, range] : inner)
    if (usesVar(e, var))
      return true;
  return false;
}

/// The half-line of `v` on which `term` holds for all values of the `inner` loops.
std::optional<HalfLine> halfLineOf(const Expr &term, const Var &v, const Domain &inner) {
  Expr e = asNonPositive(term);
  if (!e.defined() || !usesVar(e, v) || contains<BufferLoad>(e))
    return std::nullopt;
  Expr worst = bound(e, inner).max;
  if (!worst.defined() || usesInner(worst, inner))
    return std::nullopt;
  std::optional<int64_t> a = coefficientOf(worst, v);
  if (!a || *a == 0)
    return std::nullopt;
  Expr b = canonical(substitute(worst, {{v, intImm(0)}}));
  // a * v + b <= 0.
  if (*a > 0)
    return HalfLine{true, simplify(Div::make(canonical(intImm(0) - b), intImm(*a)) + intImm(1))};
  int64_t c = -*a;
  return HalfLine{false, simplify(Div::make(b + intImm(c - 1), intImm(c)))};
}

/// The half-line of `v` on which `term` holds for no value of the `inner` loops: where the
/// best case of `e <= 0` is `e >= 1`, i.e. `1 - min(e) <= 0`.
std::optional<HalfLine> neverHalfLineOf(const Expr &term, const Var &v, const Domain &inner) {
  Expr e = asNonPositive(term);
  if (!e.defined() || !usesVar(e, v) || contains<BufferLoad>(e))
    return std::nullopt;
  Expr best = bound(e, inner).min;
  if (!best.defined() || usesInner(best, inner))
    return std::nullopt;
  return halfLineOf(LE::make(intImm(1) - best, intImm(0)), v, {});
}

/// The guards under `s` (`if`s without else and selects in stored values and indices), with
/// the loops around them up to the partitioned loop. Statements that define variables other
/// than loops (let) end the search.
class GuardFinder {
public:
  explicit GuardFinder(const Var &v) : v_(v) {}

  std::vector<Guard> guards;

  void find(const Stmt &s) {
    switch (s.kind()) {
    case StmtKind::For: {
      const auto *op = s.as<For>();
      inner_.push_back({op->loopVar, Interval::ofRange(op->min, op->extent)});
      find(op->body);
      inner_.pop_back();
      return;
    }
    case StmtKind::SeqStmt:
      for (const Stmt &item : s.as<SeqStmt>()->seq)
        find(item);
      return;
    case StmtKind::Allocate:
      return find(s.as<Allocate>()->body);
    case StmtKind::IfThenElse: {
      const auto *op = s.as<IfThenElse>();
      if (op->elseCase.defined())
        return;
      add(op, op->condition);
      return find(op->thenCase);
    }
    case StmtKind::BufferStore: {
      const auto *op = s.as<BufferStore>();
      std::vector<const Select *> selects;
      findSelects(op->value, selects);
      for (const Expr &index : op->indices)
        findSelects(index, selects);
      for (const Select *sel : selects)
        add(sel, sel->condition);
      return;
    }
    default:
      return;
    }
  }

private:
  void add(const void *node, const Expr &condition) {
    Guard g;
    g.node = node;
    g.terms = conjuncts(condition);
    for (const Expr &term : g.terms) {
      g.halves.push_back(halfLineOf(term, v_, inner_));
      std::vector<Expr> ors = disjuncts(term);
      std::vector<std::optional<HalfLine>> nevers;
      for (const Expr &d : ors)
        nevers.push_back(neverHalfLineOf(d, v_, inner_));
      g.disjuncts.push_back(std::move(ors));
      g.nevers.push_back(std::move(nevers));
    }
    guards.push_back(std::move(g));
  }

  const Var &v_;
  Domain inner_;
};

/// Drops from the guards of `guards` each conjunct whose half-line is one of `proven`; an `if`
/// left without conjuncts becomes its body, a select its true value. A guard with a conjunct
/// that holds nowhere on one of `proven` is false there: the `if` goes, a select becomes its
/// false value.
class StripGuards : public IRMutator {
public:
  StripGuards(const std::vector<Guard> &guards, const std::vector<HalfLine> &proven)
      : proven_(proven) {
    for (const Guard &g : guards)
      guards_[g.node] = &g;
  }

protected:
  Stmt visit(const IfThenElse *op) override { return strip(op, IRMutator::visit(op)); }
  Expr visit(const Select *op) override { return strip(op, IRMutator::visit(op)); }

private:
  static std::pair<Stmt, Stmt> branches(const IfThenElse *n) { return {n->thenCase, n->elseCase}; }
  static std::pair<Expr, Expr> branches(const Select *n) { return {n->trueValue, n->falseValue}; }

  /// The guard `op` (an if or a select), as `mutated` rebuilt it, without its proven conjuncts.
  template <typename Node, typename Handle> Handle strip(const Node *op, const Handle &mutated) {
    if (never(op)) {
      if constexpr (std::is_same_v<Node, IfThenElse>)
        return seqOrNoOp({});
      else
        return mutated.template as<Node>()->falseValue;
    }
    std::optional<Expr> cond = remaining(op);
    if (!cond)
      return mutated;
    auto [yes, no] = branches(mutated.template as<Node>());
    if (!cond->defined())
      return yes;
    return Node::make(*cond, yes, no, op->loc);
  }

  /// Whether `n` is one of the proven half-lines.
  bool isProven(const std::optional<HalfLine> &n) const {
    for (const HalfLine &h : proven_)
      if (n && sameHalfLine(*n, h))
        return true;
    return false;
  }

  /// Conjunct `i` of `g` without its disjuncts that hold nowhere on a proven half-line
  /// (undefined: none left, the conjunct is false there); the conjunct itself when none goes.
  Expr possible(const Guard &g, size_t i) const {
    std::vector<Expr> kept;
    for (size_t d = 0; d < g.disjuncts[i].size(); ++d)
      if (!isProven(g.nevers[i][d]))
        kept.push_back(g.disjuncts[i][d]);
    if (kept.size() == g.disjuncts[i].size())
      return g.terms[i];
    Expr e;
    for (const Expr &term : kept)
      e = e.defined() ? logicalOr(e, term) : term;
    return e;
  }

  /// Whether a conjunct of the guard `node` holds nowhere on a proven half-line.
  bool never(const void *node) const {
    auto it = guards_.find(node);
    if (it == guards_.end())
      return false;
    for (size_t i = 0; i < it->second->terms.size(); ++i)
      if (!possible(*it->second, i).defined())
        return true;
    return false;
  }

  /// The condition left once proven conjuncts and impossible disjuncts go (undefined: none
  /// left); nullopt: unchanged.
  std::optional<Expr> remaining(const void *node) const {
    auto it = guards_.find(node);
    if (it == guards_.end())
      return std::nullopt;
    const Guard &g = *it->second;
    std::vector<Expr> kept;
    bool changed = false;
    for (size_t i = 0; i < g.terms.size(); ++i) {
      if (g.halves[i] && isProven(g.halves[i])) {
        changed = true;
        continue;
      }
      Expr p = possible(g, i);
      changed = changed || p.get() != g.terms[i].get();
      kept.push_back(p);
    }
    if (!changed)
      return std::nullopt;
    Expr cond;
    for (const Expr &term : kept)
      cond = cond.defined() ? logicalAnd(cond, term) : term;
    return cond;
  }

  const std::vector<HalfLine> &proven_;
  std::unordered_map<const void *, const Guard *> guards_;
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
    GuardFinder finder(loop->loopVar);
    finder.find(loop->body);
    for (const Guard &g : finder.guards) {
      std::vector<HalfLine> chosen;
      Expr lo, hi; // the main part is [lo, hi) before clamping; undefined: unbounded
      for (const std::optional<HalfLine> &h : g.halves) {
        if (!h)
          continue;
        chosen.push_back(*h);
        if (h->upper)
          hi = hi.defined() ? simplify(Min::make(hi, h->at)) : h->at;
        else
          lo = lo.defined() ? simplify(Max::make(lo, h->at)) : h->at;
      }
      if (chosen.empty())
        continue;
      return build(loop, finder.guards, chosen, lo, hi);
    }
    return Stmt();
  }

  Stmt build(const For *loop, const std::vector<Guard> &guards, const std::vector<HalfLine> &chosen,
             Expr lo, Expr hi) {
    Expr begin = loop->min, end = simplify(loop->min + loop->extent);
    // Clamp: begin <= lo <= hi <= end.
    lo = lo.defined() ? simplify(Min::make(Max::make(lo, begin), end)) : begin;
    hi = hi.defined() ? simplify(Min::make(Max::make(hi, lo), end)) : end;
    Stmt mainBody = StripGuards(guards, chosen).mutate(loop->body);
    std::vector<Stmt> parts;
    auto part = [&](const Expr &from, const Expr &to, const Stmt &body, bool again,
                    bool inner = false) {
      Expr extent = simplify(to - from);
      std::optional<int64_t> n = asConstInt(extent);
      if (n && *n <= 0)
        return;
      // A head or tail of one iteration of a parallel loop: the variable is `from` there, so
      // the guards of its inner loops become bounds of those loops and are partitioned in turn
      // (the last row block of a tile whose row count does not divide N: its inner tile loop
      // gets a guard-free main part). One copy of the body; the loop goes (one iteration runs
      // on the calling thread). Serial loops keep the rule below: a convolution's padding
      // heads are single iterations of nested serial loops, and partitioning inside them
      // multiplied its code.
      if (!again && n && *n == 1 && loop->forKind == ForKind::Parallel) {
        parts.push_back(mutate(simplify(substitute(body, {{loop->loopVar, from}}))));
        return;
      }
      Stmt s =
          For::make(loop->loopVar, from, extent, loop->forKind, body, loop->threadTag, loop->loc);
      // The main part may hold other guards on the variable: partition it again (each round
      // removes at least one conjunct, so this ends). Longer heads and tails stay as they are
      // (few iterations; partitioning their inner loops too would multiply the code), except
      // where `inner` asks for their inner loops to be partitioned (a parallel loop's tail).
      parts.push_back(again ? visit(s.as<For>()) : inner ? IRMutator::visit(s.as<For>()) : s);
    };
    // Symbolic split points are named (`let i_lo = …`): the parts' bounds stay short when the
    // main part is partitioned again (nested min/max otherwise), in the IR and in the emitted
    // code.
    std::vector<std::pair<Var, Expr>> lets;
    auto name = [&](Expr &e, const char *suffix) {
      if (asConstInt(e) || e.as<VarRef>())
        return;
      Var var(loop->loopVar.name() + suffix, e.dtype(), loop->loc);
      lets.emplace_back(var, e);
      e = VarRef::make(var, loop->loc);
    };
    name(lo, "_lo");
    name(hi, "_hi");
    part(begin, lo, loop->body, false);
    part(lo, hi, mainBody, true);
    // The tail of a parallel loop (the last, partial column block of a tile whose width does
    // not divide N, at most one iteration per guard but of symbolic extent) keeps its guards
    // on the loop's variable; the loops inside it are partitioned (its row blocks get a
    // guard-free main part, as those of the main part).
    part(hi, end, loop->body, false, loop->forKind == ForKind::Parallel);
    Stmt out = seqOrNoOp(std::move(parts));
    for (size_t i = lets.size(); i-- > 0;)
      out = LetStmt::make(lets[i].first, lets[i].second, out, loop->loc);
    return out;
  }
};

} // namespace

Func partitionLoops(const Func &func) {
  return mapBody(func, "partitionLoops takes a PrimFunc",
                 [](const Stmt &body) { return Partitioner().mutate(body); });
}

} // namespace tdsl::lower
