//===- frontend/CheckAccesses.cpp -------------------------------------------------------------===//
//
// Spec §5 rules 6 and 7 on the built IR: provably out-of-bounds accesses
// (by interval analysis of block axes under `where`, `if` and `select` guards), alloc buffers
// read before any block writes them, and outputs never written (a warning).

#include "frontend/Sema.h"
#include "frontend/SemaInternal.h"

#include "ir/Arith.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <map>
#include <set>

namespace tdsl::sema {

using namespace ir;

namespace {

constexpr int64_t kInf = INT64_MAX / 4;

/// A closed integer interval; bounds at ±kInf mean unbounded.
struct Interval {
  int64_t lo = -kInf, hi = kInf;
  bool bounded() const { return lo > -kInf && hi < kInf; }
  bool empty() const { return lo > hi; }
};

int64_t clampInf(__int128 v) {
  if (v <= -kInf)
    return -kInf;
  if (v >= kInf)
    return kInf;
  return static_cast<int64_t>(v);
}

/// What is known at a point of a block: an interval per variable, and intervals of whole
/// expressions that guards such as `i + r >= 1` bound (keyed by their printed form).
struct Env {
  std::map<const VarNode *, Interval> vars;
  std::map<std::string, Interval> facts;

  Interval &operator[](const VarNode *v) { return vars[v]; }
  auto find(const VarNode *v) const { return vars.find(v); }
  auto end() const { return vars.end(); }
  size_t count(const VarNode *v) const { return vars.count(v); }
};

Interval evalStructure(const Expr &e, const Env &env);

Interval eval(const Expr &e, const Env &env) {
  Interval r = evalStructure(e, env);
  if (env.facts.empty() || e.as<VarRef>() || asConstInt(e))
    return r;
  auto it = env.facts.find(toString(e));
  if (it == env.facts.end())
    return r;
  return {std::max(r.lo, it->second.lo), std::min(r.hi, it->second.hi)};
}

Interval evalStructure(const Expr &e, const Env &env) {
  if (auto c = asConstInt(e))
    return {*c, *c};
  if (auto *v = e.as<VarRef>()) {
    auto it = env.find(v->var.get());
    return it == env.end() ? Interval{} : it->second;
  }
  if (auto *c = e.as<Cast>()) {
    if (c->type.isInteger() && c->value.dtype().isInteger())
      return eval(c->value, env);
    return {};
  }
  if (auto *n = e.as<Neg>()) {
    Interval a = eval(n->a, env);
    return {clampInf(-__int128(a.hi)), clampInf(-__int128(a.lo))};
  }
  auto both = [&](const Expr &x, const Expr &y) { return std::pair{eval(x, env), eval(y, env)}; };
  if (auto *b = e.as<Add>()) {
    auto [x, y] = both(b->a, b->b);
    return {clampInf(__int128(x.lo) + y.lo), clampInf(__int128(x.hi) + y.hi)};
  }
  if (auto *b = e.as<Sub>()) {
    auto [x, y] = both(b->a, b->b);
    return {clampInf(__int128(x.lo) - y.hi), clampInf(__int128(x.hi) - y.lo)};
  }
  if (auto *b = e.as<Mul>()) {
    auto [x, y] = both(b->a, b->b);
    if (!x.bounded() || !y.bounded())
      return {};
    __int128 p[] = {__int128(x.lo) * y.lo, __int128(x.lo) * y.hi, __int128(x.hi) * y.lo,
                    __int128(x.hi) * y.hi};
    return {clampInf(*std::min_element(p, p + 4)), clampInf(*std::max_element(p, p + 4))};
  }
  if (auto *b = e.as<Div>()) {
    auto [x, y] = both(b->a, b->b);
    if (y.lo != y.hi || y.lo <= 0 || !x.bounded())
      return {};
    return {floorDiv(x.lo, y.lo), floorDiv(x.hi, y.lo)};
  }
  if (auto *b = e.as<Mod>()) {
    auto [x, y] = both(b->a, b->b);
    if (y.lo != y.hi || y.lo <= 0)
      return {};
    if (x.bounded() && floorDiv(x.lo, y.lo) == floorDiv(x.hi, y.lo))
      return {floorMod(x.lo, y.lo), floorMod(x.hi, y.lo)};
    return {0, y.lo - 1};
  }
  if (auto *b = e.as<Min>()) {
    auto [x, y] = both(b->a, b->b);
    return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
  }
  if (auto *b = e.as<Max>()) {
    auto [x, y] = both(b->a, b->b);
    return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
  }
  if (auto *s = e.as<Select>()) {
    Interval x = eval(s->trueValue, env), y = eval(s->falseValue, env);
    return {std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
  }
  return {};
}

/// Narrows `env` under the assumption that `cond` holds (or does not, with `negate`).
/// Understands `x OP e` and `e OP x` for a variable x (plus or minus a constant), combined with
/// && (or || when negated); anything else leaves `env` as it is.
void refine(const Expr &cond, bool negate, Env &env) {
  if (auto *a = cond.as<And>()) {
    if (!negate) {
      refine(a->a, false, env);
      refine(a->b, false, env);
    }
    return;
  }
  if (auto *o = cond.as<Or>()) {
    if (negate) {
      refine(o->a, true, env);
      refine(o->b, true, env);
    }
    return;
  }
  if (auto *n = cond.as<Not>())
    return refine(n->a, !negate, env);

  enum Op { LT, LE, GT, GE, EQ, NE } op;
  Expr lhs, rhs;
  if (auto *c = cond.as<ir::LT>())
    op = LT, lhs = c->a, rhs = c->b;
  else if (auto *c = cond.as<ir::LE>())
    op = LE, lhs = c->a, rhs = c->b;
  else if (auto *c = cond.as<ir::GT>())
    op = GT, lhs = c->a, rhs = c->b;
  else if (auto *c = cond.as<ir::GE>())
    op = GE, lhs = c->a, rhs = c->b;
  else if (auto *c = cond.as<ir::EQ>())
    op = EQ, lhs = c->a, rhs = c->b;
  else if (auto *c = cond.as<ir::NE>())
    op = NE, lhs = c->a, rhs = c->b;
  else
    return;
  if (!lhs.dtype().isInteger())
    return;
  if (negate) {
    static const Op flip[] = {GE, GT, LE, LT, NE, EQ};
    op = flip[op];
  }
  // Peel `x + c` / `x - c` on either side into the other side. x is a variable, or any
  // integer expression, whose bound is then recorded as a fact about that expression.
  auto peel = [](const Expr &e, int64_t &offset) -> Expr {
    offset = 0;
    if (auto *a = e.as<Add>())
      if (auto c = asConstInt(a->b)) {
        offset = *c;
        return a->a;
      }
    if (auto *s = e.as<Sub>())
      if (auto c = asConstInt(s->b)) {
        offset = -*c;
        return s->a;
      }
    return e;
  };
  auto apply = [&](const Expr &side, const Expr &other, Op o) {
    int64_t off;
    Expr base = peel(side, off);
    if (asConstInt(base))
      return;
    Interval r = eval(other, env);
    Interval *target;
    if (auto *v = base.as<VarRef>()) {
      if (!env.count(v->var.get()))
        return;
      target = &env[v->var.get()];
    } else {
      std::string key = toString(base);
      if (!env.facts.count(key))
        env.facts[key] = evalStructure(base, env);
      target = &env.facts[key];
    }
    Interval &x = *target;
    // x + off OP r  ⇔  x OP r - off
    switch (o) {
    case LT:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, r.hi - off - 1);
      break;
    case LE:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, r.hi - off);
      break;
    case GT:
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, r.lo - off + 1);
      break;
    case GE:
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, r.lo - off);
      break;
    case EQ:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, r.hi - off);
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, r.lo - off);
      break;
    case NE:
      break;
    }
  };
  static const Op mirror[] = {GT, GE, LT, LE, EQ, NE};
  apply(lhs, rhs, op);
  apply(rhs, lhs, mirror[op]);
}

std::string intervalString(Interval i) {
  auto s = [](int64_t v) {
    return v <= -kInf ? std::string("-inf") : v >= kInf ? std::string("inf") : std::to_string(v);
  };
  return "[" + s(i.lo) + ", " + s(i.hi) + "]";
}

void collectVars(const Expr &e, std::vector<Var> &out) {
  struct V : IRVisitor {
    std::vector<Var> &out;
    explicit V(std::vector<Var> &o) : out(o) {}
    void visit(const VarRef *op) override {
      for (const Var &v : out)
        if (v == op->var)
          return;
      out.push_back(op->var);
    }
  } v(out);
  v.visitExpr(e);
}

/// Walks one PrimFunc in program order.
class AccessChecker {
public:
  AccessChecker(const PrimFunc &f, DiagnosticEngine &diags) : f_(f), diags_(diags) {}

  void run() {
    stmt(f_.body);
    for (const Buffer &out : f_.outputs)
      if (!written_.count(out.get()))
        diags_.warning(SourceRange(out->loc), "output '" + out.name() + "' is never written");
  }

private:
  void stmt(const Stmt &s) {
    if (!s.defined())
      return;
    if (auto *seqS = s.as<SeqStmt>()) {
      for (const Stmt &x : seqS->seq)
        stmt(x);
    } else if (auto *f = s.as<For>()) {
      stmt(f->body);
    } else if (auto *b = s.as<Block>()) {
      block(*b);
    } else if (auto *l = s.as<ir::LetStmt>()) {
      stmt(l->body);
    } else if (auto *i = s.as<IfThenElse>()) {
      stmt(i->thenCase);
      stmt(i->elseCase);
    }
  }

  void block(const Block &b) {
    Env env;
    sourceNames_.clear();
    for (const IterVar &iv : b.iterVars) {
      auto ext = asConstInt(iv.extent);
      env[iv.var.get()] = ext ? Interval{0, *ext - 1} : Interval{0, kInf};
      // A short-form axis `i` becomes loop `i` and axis `vi`, both at the axis' location:
      // messages use the name the user wrote.
      if (auto *loop = iv.binding.as<VarRef>(); loop && loop->var->loc == iv.var->loc)
        sourceNames_[iv.var.get()] = loop->var;
    }
    // A `where` over an axis' binding narrows that axis.
    if (b.predicate.defined()) {
      std::map<std::string, const VarNode *> byBinding;
      for (const IterVar &iv : b.iterVars)
        if (iv.binding.defined())
          byBinding[toString(iv.binding)] = iv.var.get();
      narrowByBindings(b.predicate, byBinding, env);
    }
    blockWrites_.clear();
    collectWrites(b.init);
    collectWrites(b.body);
    body(b.init, env);
    body(b.body, env);
    for (const BufferNode *w : blockWrites_)
      written_.insert(w);
  }

  void narrowByBindings(const Expr &pred, const std::map<std::string, const VarNode *> &byBinding,
                        Env &env) {
    // Rewrite comparisons of a binding expression into comparisons of its axis, then refine.
    struct R {
      const std::map<std::string, const VarNode *> &m;
      Expr rewrite(const Expr &e) {
        auto it = m.find(toString(e));
        if (it != m.end())
          return VarRef::make(Var(it->second));
        if (auto *a = e.as<And>())
          return And::make(rewrite(a->a), rewrite(a->b));
        if (auto *c = e.as<ir::LT>())
          return ir::LT::make(rewrite(c->a), rewrite(c->b));
        if (auto *c = e.as<ir::LE>())
          return ir::LE::make(rewrite(c->a), rewrite(c->b));
        if (auto *c = e.as<ir::GT>())
          return ir::GT::make(rewrite(c->a), rewrite(c->b));
        if (auto *c = e.as<ir::GE>())
          return ir::GE::make(rewrite(c->a), rewrite(c->b));
        return e;
      }
    } r{byBinding};
    refine(r.rewrite(pred), false, env);
  }

  void collectWrites(const Stmt &s) {
    struct W : IRVisitor {
      std::set<const BufferNode *> &out;
      explicit W(std::set<const BufferNode *> &o) : out(o) {}
      void visit(const BufferStore *op) override {
        out.insert(op->buffer.get());
        IRVisitor::visit(op);
      }
    } w(blockWrites_);
    w.visitStmt(s);
  }

  void body(const Stmt &s, Env env) {
    if (!s.defined())
      return;
    if (auto *seqS = s.as<SeqStmt>()) {
      for (const Stmt &x : seqS->seq)
        body(x, env);
    } else if (auto *st = s.as<BufferStore>()) {
      access(st->buffer, st->indices, st->loc, env);
      expr(st->value, env);
    } else if (auto *l = s.as<ir::LetStmt>()) {
      expr(l->value, env);
      if (l->value.dtype().isInteger())
        env[l->var.get()] = eval(l->value, env);
      body(l->body, env);
    } else if (auto *i = s.as<IfThenElse>()) {
      expr(i->condition, env);
      Env t = env, e = env;
      refine(i->condition, false, t);
      refine(i->condition, true, e);
      body(i->thenCase, t);
      body(i->elseCase, e);
    } else if (auto *f = s.as<For>()) {
      body(f->body, env);
    } else if (auto *inner = s.as<Block>()) {
      // A block nested in a block (blockize): checked on its own, in program order.
      auto saved = blockWrites_;
      auto names = sourceNames_;
      block(*inner);
      blockWrites_ = saved;
      sourceNames_ = names;
    }
  }

  void expr(const Expr &e, const Env &env) {
    if (!e.defined())
      return;
    if (auto *l = e.as<BufferLoad>()) {
      for (const Expr &i : l->indices)
        expr(i, env);
      access(l->buffer, l->indices, l->loc, env);
      readBeforeWrite(*l);
      return;
    }
    if (auto *s = e.as<Select>()) {
      expr(s->condition, env);
      Env t = env, f = env;
      refine(s->condition, false, t);
      refine(s->condition, true, f);
      expr(s->trueValue, t);
      expr(s->falseValue, f);
      return;
    }
    // Other nodes: visit the operands under the same environment.
    struct Children : IRVisitor {
      std::vector<Expr> kids;
      void visit(const BufferLoad *op) override { kids.push_back(op); }
      void visit(const Select *op) override { kids.push_back(op); }
    };
    Children c;
    // Visit direct children only: IRVisitor recurses, so stop at loads/selects (handled above).
    c.IRVisitor::visitExpr(e);
    for (const Expr &k : c.kids)
      expr(k, env);
  }

  void readBeforeWrite(const BufferLoad &l) {
    const Buffer &b = l.buffer;
    if (b.role() != BufferRole::Alloc || written_.count(b.get()) || blockWrites_.count(b.get()))
      return;
    if (!reportedUnwritten_.insert(b.get()).second)
      return;
    diags_.error(SourceRange(l.loc), "'" + b.name() + "' is read before any block writes it")
        .note(SourceRange(b->loc), "allocated here");
  }

  void access(const Buffer &b, const std::vector<Expr> &indices, SourceLoc loc, const Env &env) {
    for (size_t d = 0; d < indices.size() && d < b.rank(); ++d) {
      auto extent = asConstInt(b.shape()[d]);
      if (!extent)
        continue;
      Interval r = eval(indices[d], env);
      if (r.empty())
        continue; // guarded away entirely
      bool below = r.lo > -kInf && r.lo < 0 && r.hi > -kInf;
      bool above = r.hi < kInf && r.hi >= *extent && r.lo < kInf;
      // Only a provable violation is an error: both ends known, or the offending end known.
      if (!(below && r.lo > -kInf) && !(above && r.hi < kInf))
        continue;
      if ((below && r.hi == kInf) || (above && r.lo == -kInf))
        continue;
      std::string vars;
      std::vector<Var> vs;
      collectVars(indices[d], vs);
      for (const Var &v : vs) {
        auto it = env.find(v.get());
        if (it == env.end())
          continue;
        vars += (vars.empty() ? " with '" : ", '") + sourceName(v).name() + "' in " +
                intervalString(it->second);
      }
      diags_
          .error(SourceRange(loc), "out-of-bounds access to '" + b.name() + "': index " +
                                       std::to_string(d) + " (" + asWritten(indices[d]) +
                                       ") ranges over " + intervalString(r) + vars +
                                       ", but dimension " + std::to_string(d) + " has extent " +
                                       std::to_string(*extent))
          .note(SourceRange(b->loc), "'" + b.name() + "' declared here");
      return;
    }
  }

  Var sourceName(const Var &v) const {
    auto it = sourceNames_.find(v.get());
    return it == sourceNames_.end() ? v : it->second;
  }

  /// `e` printed with the axis names of the source.
  std::string asWritten(const Expr &e) const {
    struct Rename : IRMutator {
      const std::map<const VarNode *, Var> &names;
      explicit Rename(const std::map<const VarNode *, Var> &n) : names(n) {}
      Expr visit(const VarRef *op) override {
        auto it = names.find(op->var.get());
        return it == names.end() ? Expr(op) : VarRef::make(it->second, op->loc);
      }
    };
    return toString(Rename(sourceNames_).mutate(e));
  }

  const PrimFunc &f_;
  DiagnosticEngine &diags_;
  std::map<const VarNode *, Var> sourceNames_; // short-form axes of the current block
  std::set<const BufferNode *> written_, blockWrites_, reportedUnwritten_;
};

} // namespace

} // namespace tdsl::sema

void tdsl::checkFunctionAccesses(const ir::Func &f, DiagnosticEngine &diags) {
  if (auto *p = f.as<ir::PrimFunc>())
    sema::AccessChecker(*p, diags).run();
}

namespace tdsl::sema {

void checkAccesses(const Module &m, DiagnosticEngine &diags) {
  for (const Func &f : m.functions())
    if (auto *p = f.as<PrimFunc>())
      AccessChecker(*p, diags).run();
}

} // namespace tdsl::sema
