//===- passes/schedule/Dependence.cpp ---------------------------------------------------------===//
//
// Implementation of passes/schedule/Dependence.h.

#include "passes/schedule/Dependence.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/Simplify.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace tdsl::schedule {

using namespace ir;

std::vector<LoopAccess> accessesUnder(const For *loop) {
  // Indices are rewritten into loop variables: a block's own bindings, then those of the blocks
  // around it under `loop` (a nested block's body may name an outer block's axes).
  struct V : IRVisitor {
    std::vector<LoopAccess> out;
    const Block *current = nullptr;
    std::vector<std::pair<Var, Expr>> bind;
    std::vector<Expr> sub(const std::vector<Expr> &idx) {
      std::vector<Expr> r;
      for (const Expr &e : idx)
        r.push_back(substitute(e, bind));
      return r;
    }
    void visit(const BufferLoad *op) override {
      if (current)
        out.push_back({current, op->buffer, sub(op->indices), false});
      IRVisitor::visit(op);
    }
    void visit(const BufferStore *op) override {
      if (current)
        out.push_back({current, op->buffer, sub(op->indices), true});
      IRVisitor::visit(op);
    }
    void visit(const Block *op) override {
      const Block *savedBlock = current;
      size_t savedSize = bind.size();
      std::vector<std::pair<Var, Expr>> own;
      for (const IterVar &iv : op->iterVars)
        if (iv.binding.defined())
          own.emplace_back(iv.var, substitute(iv.binding, bind));
      bind.insert(bind.end(), own.begin(), own.end());
      current = op;
      IRVisitor::visit(op);
      current = savedBlock;
      bind.resize(savedSize);
    }
  } v;
  v.visitStmt(loop->body);
  return std::move(v.out);
}

/// The loops inside `loop` with their constant extents (-1 when not constant).
std::map<const VarNode *, int64_t> innerLoops(const For *loop) {
  std::map<const VarNode *, int64_t> out;
  struct V : IRVisitor {
    std::map<const VarNode *, int64_t> &out;
    explicit V(std::map<const VarNode *, int64_t> &o) : out(o) {}
    void visit(const For *op) override {
      auto e = asConstInt(op->extent);
      out[op->loopVar.get()] = e ? *e : -1;
      IRVisitor::visit(op);
    }
  } v(out);
  v.visitStmt(loop->body);
  return out;
}

namespace {

/// The part of an affine index that stays put while the loops of `varying` and `var` move:
/// its terms over other variables (sorted by identity) and its constant.
std::pair<std::vector<std::pair<const VarNode *, int64_t>>, int64_t>
fixedPart(const Affine &f, const Var &var, const std::map<const VarNode *, int64_t> &varying) {
  std::vector<std::pair<const VarNode *, int64_t>> terms;
  for (const auto &[v, c] : f.terms)
    if (!(v == var) && !varying.count(v.get()) && c != 0)
      terms.emplace_back(v.get(), c);
  std::sort(terms.begin(), terms.end());
  return {terms, f.constant};
}

/// The range [lo, hi] of the varying terms of `f`; false when a varying extent is unknown.
bool varyingRange(const Affine &f, const Var &var,
                  const std::map<const VarNode *, int64_t> &varying, int64_t &lo, int64_t &hi) {
  lo = hi = 0;
  for (const auto &[v, c] : f.terms) {
    if (v == var)
      continue;
    auto it = varying.find(v.get());
    if (it == varying.end())
      continue;
    if (it->second < 1)
      return false;
    int64_t span = c * (it->second - 1);
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  }
  return true;
}

/// Whether the values of index expressions `ea` and `eb` differ in different iterations of
/// `var`: both `c·var + fixed + rest` with the same c ≠ 0 and `fixed`, the `rest`s within one
/// window narrower than |c|.
bool separatedAt(const Expr &ea, const Expr &eb, const Var &var,
                 const std::map<const VarNode *, int64_t> &varying) {
  std::optional<Affine> fa = affine(ea), fb = affine(eb);
  if (!fa || !fb)
    return false;
  int64_t c = fa->coeff(var);
  if (c == 0 || c != fb->coeff(var))
    return false;
  if (fixedPart(*fa, var, varying) != fixedPart(*fb, var, varying))
    return false;
  int64_t loA, hiA, loB, hiB;
  if (!varyingRange(*fa, var, varying, loA, hiA) || !varyingRange(*fb, var, varying, loB, hiB))
    return false;
  return std::max(hiA, hiB) - std::min(loA, loB) < std::abs(c);
}

/// An index read as one digit of a mixed-radix number plus a constant: `(base / lower) % extent
/// + offset` (no extent: no `%`, the leading digit). What fuse binds: `f / 6` is {f, 6, -},
/// `f % 6` is {f, 1, 6}, `f / K % N` is {f, K, N}; `f / 6 + 1` is {f, 6, -, 1}; any other
/// expression e is {e, 1, -}.
struct Digit {
  Expr base;
  std::string key; ///< the printed base, to compare bases
  Expr lower, extent;
  int64_t offset = 0;
};

/// The loops whose iterations are compared: `var` and the loops inside it.
struct Moving {
  const Var &var;
  const std::map<const VarNode *, int64_t> &varying;
  bool has(const VarNode *v) const { return v == var.get() || varying.count(v); }
};

/// A divisor that is the same in the iterations compared and not zero: a positive constant, or
/// a product of positive constants and variables other than the moving loops (shape variables:
/// a zero one leaves the fused loop empty).
bool fixedDivisor(const Expr &e, const Moving &m) {
  if (auto c = asConstInt(e))
    return *c > 0;
  if (auto *v = e.as<VarRef>())
    return !m.has(v->var.get());
  if (auto *p = e.as<Mul>())
    return fixedDivisor(p->a, m) && fixedDivisor(p->b, m);
  return false;
}

Digit digitOf(const Expr &e, const Moving &mv) {
  auto shifted = [&](const Expr &x, int64_t by) {
    Digit d = digitOf(x, mv);
    d.offset += by;
    return d;
  };
  if (auto *a = e.as<Add>()) {
    if (auto c = asConstInt(a->b))
      return shifted(a->a, *c);
    if (auto c = asConstInt(a->a))
      return shifted(a->b, *c);
  }
  if (auto *sb = e.as<Sub>())
    if (auto c = asConstInt(sb->b))
      return shifted(sb->a, -*c);
  if (auto *d = e.as<Div>(); d && fixedDivisor(d->b, mv)) {
    Digit in = digitOf(d->a, mv);
    if (!in.extent.defined() && in.offset == 0) // (x / a) / c == x / (a·c)
      return {in.base, in.key, simplify(in.lower * d->b), Expr()};
    return {d->a, toString(d->a), d->b, Expr()};
  }
  if (auto *m = e.as<Mod>(); m && fixedDivisor(m->b, mv)) {
    Digit in = digitOf(m->a, mv);
    if (!in.extent.defined() && in.offset == 0)
      return {in.base, in.key, in.lower, m->b};
    return {m->a, toString(m->a), intImm(1), m->b};
  }
  return {e, toString(e), intImm(1), Expr()};
}

bool sameExpr(const Expr &x, const Expr &y) {
  if (x.defined() != y.defined())
    return false;
  return !x.defined() || toString(x) == toString(y);
}

/// Index expressions equal exactly when the whole index tuples are: for each base whose
/// digits all appear among the dimensions of `a` — lower 1, each next lower the previous
/// lower·extent, the last without `%` — the base itself, paired with the base of `b` when `b`
/// has the same digits (and offsets) at the same dimensions. Since base == Σ digit·lower for floor
/// division and modulo, equal tuples have equal bases: distinct bases mean distinct elements. This
/// is how the iterations of a fused loop (`f / 6`, `f % 6`) are seen to touch distinct elements.
std::vector<std::pair<Expr, Expr>> recombined(const LoopAccess &a, const LoopAccess &b,
                                              const Moving &mv) {
  std::vector<std::pair<Expr, Expr>> out;
  size_t n = std::min(a.indices.size(), b.indices.size());
  std::vector<Digit> da, db;
  for (size_t d = 0; d < n; ++d) {
    da.push_back(digitOf(a.indices[d], mv));
    db.push_back(digitOf(b.indices[d], mv));
  }
  std::set<std::string> done;
  for (size_t start = 0; start < n; ++start) {
    const std::string &key = da[start].key;
    if (!done.insert(key).second)
      continue;
    // Follow the chain of digits of this base from lower 1 up to the leading digit.
    std::vector<size_t> chain;
    Expr lower = intImm(1);
    bool complete = false;
    while (true) {
      size_t next = n;
      for (size_t d = 0; d < n && next == n; ++d)
        if (da[d].key == key && sameExpr(da[d].lower, lower) &&
            std::find(chain.begin(), chain.end(), d) == chain.end())
          next = d;
      if (next == n)
        break;
      chain.push_back(next);
      if (!da[next].extent.defined()) {
        complete = true;
        break;
      }
      lower = simplify(lower * da[next].extent);
    }
    if (!complete || chain.size() < 2)
      continue; // one digit: the dimension itself is tested
    bool same = true;
    for (size_t d : chain)
      same = same && db[d].key == db[chain.front()].key && sameExpr(db[d].lower, da[d].lower) &&
             sameExpr(db[d].extent, da[d].extent) && db[d].offset == da[d].offset;
    if (same)
      out.emplace_back(da[chain.front()].base, db[chain.front()].base);
  }
  return out;
}

} // namespace

bool separatedBy(const LoopAccess &a, const LoopAccess &b, const Var &var,
                 const std::map<const VarNode *, int64_t> &varying) {
  for (size_t d = 0; d < a.indices.size() && d < b.indices.size(); ++d)
    if (separatedAt(a.indices[d], b.indices[d], var, varying))
      return true;
  for (const auto &[ea, eb] : recombined(a, b, Moving{var, varying}))
    if (separatedAt(ea, eb, var, varying))
      return true;
  return false;
}

void requireIndependentIterations(const For *loop, const Var &var,
                                  const std::map<const VarNode *, int64_t> &varying,
                                  bool allowSameIndexUpdates) {
  std::vector<LoopAccess> acc = accessesUnder(loop);
  // A buffer that a block under the loop allocates lives for one execution of that block, so
  // each iteration has its own: no iteration sees another's elements (a per-tile accumulator).
  std::vector<Buffer> private_;
  for (const Block *b : blocksIn(loop->body))
    private_.insert(private_.end(), b->allocBuffers.begin(), b->allocBuffers.end());
  auto isPrivate = [&](const Buffer &buf) {
    return std::any_of(private_.begin(), private_.end(),
                       [&](const Buffer &p) { return p.sameAs(buf); });
  };
  for (const LoopAccess &w : acc) {
    if (!w.write || isPrivate(w.buffer))
      continue;
    for (const LoopAccess &o : acc) {
      if (!o.buffer.sameAs(w.buffer))
        continue;
      if (allowSameIndexUpdates && o.block == w.block && o.indices.size() == w.indices.size() &&
          std::equal(o.indices.begin(), o.indices.end(), w.indices.begin(),
                     [](const Expr &x, const Expr &y) { return toString(x) == toString(y); }))
        continue;
      if (separatedBy(w, o, var, varying))
        continue;
      throw ScheduleError("iterations of loop '" + var.name() + "' depend on each other: block '" +
                              w.block->name + "' writes '" + w.buffer.name() + "' and block '" +
                              o.block->name + "' " + (o.write ? "writes" : "reads") +
                              " it at elements other iterations also touch",
                          o.block->loc, "block '" + o.block->name + "' is here");
    }
  }
}

} // namespace tdsl::schedule
