//===- passes/schedule/Dependence.cpp ---------------------------------------------------------===//
//
// Implementation of passes/schedule/Dependence.h.

#include "passes/schedule/Dependence.h"

#include "ir/Arith.h"
#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

std::vector<LoopAccess> accessesUnder(const For *loop) {
  // Indices are rewritten into loop variables: a block's own bindings, then those of the blocks
  // around it under `loop` (a nested block's body may name an outer block's axes), and the
  // values of `let` names.
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
    void visit(const LetStmt *op) override {
      visitExpr(op->value);
      bind.emplace_back(op->var, substitute(op->value, bind));
      visitStmt(op->body);
      bind.pop_back();
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

std::map<const VarNode *, LoopRange> innerLoops(const For *loop) {
  std::map<const VarNode *, LoopRange> out;
  struct V : IRVisitor {
    std::map<const VarNode *, LoopRange> &out;
    explicit V(std::map<const VarNode *, LoopRange> &o) : out(o) {}
    void visit(const For *op) override {
      out[op->loopVar.get()] = LoopRange{asConstInt(op->min), asConstInt(op->extent)};
      IRVisitor::visit(op);
    }
    void visit(const LetStmt *op) override {
      out[op->var.get()] = LoopRange{};
      IRVisitor::visit(op);
    }
    void visit(const Block *op) override {
      for (const IterVar &iv : op->iterVars)
        out[iv.var.get()] = LoopRange{};
      IRVisitor::visit(op);
    }
  } v(out);
  v.visitStmt(loop->body);
  return out;
}

namespace {

using Span = std::optional<std::pair<int64_t, int64_t>>;

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// The two iterations compared: `var` and the variables of `varying` take independent values in
/// each (within `ranges`); every other variable is the same in both.
struct Moving {
  const Var &var;
  const std::map<const VarNode *, LoopRange> &varying;
  const std::map<const VarNode *, LoopRange> &ranges;

  bool has(const VarNode *v) const { return v == var.get() || varying.count(v); }
  bool moves(const Expr &e) const {
    struct U : IRVisitor {
      const Moving &m;
      bool found = false;
      explicit U(const Moving &x) : m(x) {}
      void visit(const VarRef *op) override { found |= m.has(op->var.get()); }
    } u(*this);
    u.visitExpr(e);
    return u.found;
  }
  /// The values `e` takes over the moving variables' ranges; nothing when a variable it uses
  /// has no known range or the arithmetic overflows.
  Span range(const Expr &e) const {
    if (auto c = asConstInt(e))
      return std::pair{*c, *c};
    if (auto *v = e.as<VarRef>()) {
      auto it = ranges.find(v->var.get());
      if (!has(v->var.get()) || it == ranges.end() || !it->second.min || !it->second.extent)
        return std::nullopt;
      int64_t lo = *it->second.min, hi;
      if (__builtin_add_overflow(lo, std::max<int64_t>(*it->second.extent, 1) - 1, &hi))
        return std::nullopt;
      return std::pair{lo, hi};
    }
    auto add = [](Span a, Span b, bool sub) -> Span {
      if (!a || !b)
        return std::nullopt;
      int64_t lo, hi;
      bool bad = sub ? (__builtin_sub_overflow(a->first, b->second, &lo) |
                        __builtin_sub_overflow(a->second, b->first, &hi))
                     : (__builtin_add_overflow(a->first, b->first, &lo) |
                        __builtin_add_overflow(a->second, b->second, &hi));
      if (bad)
        return std::nullopt;
      return std::pair{lo, hi};
    };
    if (auto *a = e.as<Add>())
      return add(range(a->a), range(a->b), false);
    if (auto *sb = e.as<Sub>())
      return add(range(sb->a), range(sb->b), true);
    if (auto *n = e.as<Neg>())
      return add(std::pair<int64_t, int64_t>{0, 0}, range(n->a), true);
    if (auto *m = e.as<Mul>()) {
      auto c = asConstInt(m->b);
      Expr x = m->a;
      if (!c) {
        c = asConstInt(m->a);
        x = m->b;
      }
      Span r = c ? range(x) : std::nullopt;
      return r ? scaled(*r, *c) : std::nullopt;
    }
    if (auto *d = e.as<Div>()) {
      auto c = asConstInt(d->b);
      Span r = c && *c > 0 ? range(d->a) : std::nullopt;
      if (!r)
        return std::nullopt;
      return std::pair{floorDiv(r->first, *c), floorDiv(r->second, *c)};
    }
    if (auto *m = e.as<Mod>()) {
      auto c = asConstInt(m->b);
      if (!c || *c <= 0)
        return std::nullopt;
      Span r = range(m->a);
      if (r && r->first >= 0 && r->second < *c)
        return r;
      return std::pair<int64_t, int64_t>{0, *c - 1};
    }
    return std::nullopt;
  }
  static Span scaled(std::pair<int64_t, int64_t> r, int64_t c) {
    int64_t a, b;
    if (__builtin_mul_overflow(r.first, c, &a) || __builtin_mul_overflow(r.second, c, &b))
      return std::nullopt;
    return std::pair{std::min(a, b), std::max(a, b)};
  }
};

/// A quasi-affine form Σ coeff·atom + constant: the atoms are the sub-expressions that are not
/// sums, differences or products by constants (variables, `x / c`, `x % c`, loads, …).
struct Term {
  Expr atom;
  int64_t coeff;
};
struct Form {
  std::vector<Term> terms;
  int64_t constant = 0;
};

bool addTerm(Form &f, const Expr &atom, int64_t k) {
  for (Term &t : f.terms)
    if (equalExpr(t.atom, atom))
      return !__builtin_add_overflow(t.coeff, k, &t.coeff);
  f.terms.push_back({atom, k});
  return true;
}

/// Adds k·e to `f`; false when a coefficient overflows.
bool parseForm(const Expr &e, int64_t k, Form &f) {
  if (auto c = asConstInt(e)) {
    int64_t v;
    return !__builtin_mul_overflow(*c, k, &v) &&
           !__builtin_add_overflow(f.constant, v, &f.constant);
  }
  if (auto *a = e.as<Add>())
    return parseForm(a->a, k, f) && parseForm(a->b, k, f);
  if (auto *sb = e.as<Sub>()) {
    int64_t neg;
    return parseForm(sb->a, k, f) && !__builtin_mul_overflow(k, -1, &neg) &&
           parseForm(sb->b, neg, f);
  }
  if (auto *n = e.as<Neg>()) {
    int64_t neg;
    return !__builtin_mul_overflow(k, -1, &neg) && parseForm(n->a, neg, f);
  }
  if (auto *m = e.as<Mul>()) {
    int64_t scaled;
    if (auto c = asConstInt(m->b))
      return !__builtin_mul_overflow(k, *c, &scaled) && parseForm(m->a, scaled, f);
    if (auto c = asConstInt(m->a))
      return !__builtin_mul_overflow(k, *c, &scaled) && parseForm(m->b, scaled, f);
  }
  return addTerm(f, e, k);
}

std::optional<Form> formOf(const Expr &e) {
  Form f;
  if (!parseForm(e, 1, f))
    return std::nullopt;
  f.terms.erase(
      std::remove_if(f.terms.begin(), f.terms.end(), [](const Term &t) { return t.coeff == 0; }),
      f.terms.end());
  return f;
}

/// An atom read as one digit of a mixed-radix number: `(base / lower) % extent` (no extent: no
/// `%`, the leading digit). What fuse binds: `f / 6` is {f, 6, -}, `f % 6` is {f, 1, 6},
/// `f / K % N` is {f, K, N}.
struct Digit {
  Expr base, lower, extent;
};

/// A divisor that is the same in the iterations compared and not zero: a positive constant, or
/// a product of positive constants and variables that do not move (shape variables: a zero one
/// leaves the fused loop empty).
bool fixedDivisor(const Expr &e, const Moving &m) {
  if (auto c = asConstInt(e))
    return *c > 0;
  if (auto *v = e.as<VarRef>())
    return !m.has(v->var.get());
  if (auto *p = e.as<Mul>())
    return fixedDivisor(p->a, m) && fixedDivisor(p->b, m);
  return false;
}

std::optional<Digit> digitOf(const Expr &e, const Moving &mv) {
  if (auto *d = e.as<Div>(); d && fixedDivisor(d->b, mv)) {
    std::optional<Digit> in = digitOf(d->a, mv);
    if (in && !in->extent.defined()) // (x / a) / c == x / (a·c) for positive a, c
      return Digit{in->base, simplify(in->lower * d->b), Expr()};
    return Digit{d->a, d->b, Expr()};
  }
  if (auto *m = e.as<Mod>(); m && fixedDivisor(m->b, mv)) {
    std::optional<Digit> in = digitOf(m->a, mv);
    if (in && !in->extent.defined())
      return Digit{in->base, in->lower, m->b};
    return Digit{m->a, intImm(1), m->b};
  }
  return std::nullopt;
}

bool sameValue(const Expr &a, const Expr &b) {
  return equalExpr(a, b) || equalExpr(canonical(a), canonical(b));
}

/// The derivation: atoms known to have the same value in both iterations.
class Separation {
public:
  /// `assumedA`, `assumedB`: conditions that hold in the first and in the second iteration
  /// (the loops' symbolic bounds, and the conjuncts of the `where` of the block making the first
  /// access, resp. the second: a block writes or reads only where it holds).
  explicit Separation(const Moving &m, std::vector<Expr> assumedA = {},
                      std::vector<Expr> assumedB = {})
      : m_(m), assumedA_(std::move(assumedA)), assumedB_(std::move(assumedB)) {}

  /// Whether elements equal in every dimension of `dims` imply equal `var`.
  bool run(std::vector<std::pair<Expr, Expr>> work) {
    if (auto r = m_.ranges.find(m_.var.get());
        r != m_.ranges.end() && r->second.extent && *r->second.extent <= 1)
      return true; // at most one iteration
    while (!work.empty()) {
      auto [a, b] = work.back();
      work.pop_back();
      peel(a, b);
      for (const Expr &k : known_)
        if (auto *v = k.as<VarRef>(); v && v->var == m_.var)
          return true;
      for (const Expr &base : completeBases())
        if (std::none_of(done_.begin(), done_.end(),
                         [&](const Expr &d) { return equalExpr(d, base); })) {
          done_.push_back(base);
          if (auto *v = base.as<VarRef>(); v && v->var == m_.var)
            return true;
          work.emplace_back(base, base);
        }
    }
    return false;
  }

private:
  /// a == b as values: peels the largest moving term while both sides agree on it.
  void peel(const Expr &ea, const Expr &eb) {
    std::optional<Form> fa = formOf(ea), fb = formOf(eb);
    if (!fa || !fb)
      return;
    // The terms that do not move must be the same on both sides; they cancel.
    auto split = [&](Form &f, std::vector<Term> &fixed) {
      std::vector<Term> moving;
      for (const Term &t : f.terms)
        (m_.moves(t.atom) ? moving : fixed).push_back(t);
      f.terms = moving;
    };
    std::vector<Term> xa, xb;
    split(*fa, xa);
    split(*fb, xb);
    if (xa.size() != xb.size())
      return;
    for (const Term &t : xa)
      if (std::none_of(xb.begin(), xb.end(), [&](const Term &u) {
            return u.coeff == t.coeff && equalExpr(u.atom, t.atom);
          }))
        return;
    if (symbolicRadix(*fa, *fb))
      return;
    while (!fa->terms.empty() || !fb->terms.empty()) {
      const Term *top = nullptr;
      for (const Form *f : {&*fa, &*fb})
        for (const Term &t : f->terms)
          if (!top || magnitude(t.coeff) > magnitude(top->coeff))
            top = &t;
      Term chosen = *top;
      auto take = [&](Form &f) {
        for (auto it = f.terms.begin(); it != f.terms.end(); ++it)
          if (it->coeff == chosen.coeff && equalExpr(it->atom, chosen.atom)) {
            f.terms.erase(it);
            return true;
          }
        return false;
      };
      if (!take(*fa) || !take(*fb))
        return;
      Span wa = window(*fa, assumedA_), wb = window(*fb, assumedB_);
      if (!wa || !wb)
        return;
      uint64_t width = static_cast<uint64_t>(std::max(wa->second, wb->second)) -
                       static_cast<uint64_t>(std::min(wa->first, wb->first));
      if (width >= magnitude(chosen.coeff))
        return;
      known_.push_back(chosen.atom);
    }
  }

  /// A mixed-radix number whose lower digits are bounded by a condition rather than by their
  /// loops' ranges: a moving term `x·S` (S a constant of at least 2, or a positive factor that
  /// does not move, a shape variable or generic constant: `kb * KV`) beside moving terms whose
  /// sum r is at least 0 and, by an assumed condition `r < S`, below S, on both sides (`kb * 8 +
  /// kv_0 * 32 + kv_1` with `kv_0 * 32 + kv_1 < 8`). Then x·S + r = x'·S + r' gives x = x' (and
  /// r = r'), which it records.
  bool symbolicRadix(const Form &fa, const Form &fb) {
    for (const Term &t : fa.terms) {
      Expr x = t.atom, radix = intImm(t.coeff);
      if (auto *mul = t.atom.as<Mul>(); mul && t.coeff == 1) {
        x = mul->a;
        radix = mul->b;
        if (asConstInt(radix) || !fixedDivisor(radix, m_))
          std::swap(x, radix);
        if (asConstInt(radix) || !fixedDivisor(radix, m_))
          continue;
      } else if (t.coeff < 2) {
        continue;
      }
      if (!m_.moves(x))
        continue;
      auto rest = [&](const Form &f, Form &out) {
        bool found = false;
        out.constant = f.constant;
        for (const Term &u : f.terms)
          if (!found && u.coeff == t.coeff && equalExpr(u.atom, t.atom))
            found = true;
          else
            out.terms.push_back(u);
        return found;
      };
      Form ra, rb;
      if (!rest(fa, ra) || !rest(fb, rb) || !belowRadix(ra, radix, assumedA_) ||
          !belowRadix(rb, radix, assumedB_))
        continue;
      known_.push_back(x);
      return true;
    }
    return false;
  }

  /// Whether 0 <= f < radix: every term and the constant at least 0, and a condition `E < radix`
  /// of `assumed` with E the same sum.
  bool belowRadix(const Form &f, const Expr &radix, const std::vector<Expr> &assumed) const {
    if (f.constant < 0)
      return false;
    for (const Term &t : f.terms) {
      auto *v = t.atom.as<VarRef>();
      auto it = v ? m_.ranges.find(v->var.get()) : m_.ranges.end();
      if (t.coeff <= 0 || it == m_.ranges.end() || !it->second.min || *it->second.min < 0)
        return false;
    }
    for (const Expr &c : assumed) {
      auto *lt = c.as<LT>();
      if (!lt || !sameValue(lt->b, radix))
        continue;
      std::optional<Form> e = formOf(lt->a);
      if (e && e->constant == f.constant && e->terms.size() == f.terms.size() &&
          std::all_of(f.terms.begin(), f.terms.end(), [&](const Term &t) {
            return std::any_of(e->terms.begin(), e->terms.end(), [&](const Term &u) {
              return u.coeff == t.coeff && equalExpr(u.atom, t.atom);
            });
          }))
        return true;
    }
    return false;
  }

  static uint64_t magnitude(int64_t c) {
    return c < 0 ? uint64_t(0) - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
  }

  /// The values of Σ coeff·atom + constant over the moving ranges.
  Span window(const Form &f) const {
    std::pair<int64_t, int64_t> acc{f.constant, f.constant};
    for (const Term &t : f.terms) {
      Span r = m_.range(t.atom);
      if (!r)
        return std::nullopt;
      Span s = Moving::scaled(*r, t.coeff);
      if (!s || __builtin_add_overflow(acc.first, s->first, &acc.first) ||
          __builtin_add_overflow(acc.second, s->second, &acc.second))
        return std::nullopt;
    }
    return acc;
  }

  /// window(f), narrowed by a condition `E < c` of `assumed` (c a constant, E a sum of some of
  /// f's terms, each at least 0): E then spans at most [min E, c - 1] on every instance that
  /// runs. The lower digits of a merged index that a block's `where` bounds (`h_1 * 55 + w_0 * 7 +
  /// ax0` with `w_0 * 7 + ax0 < 55`: a tile of 7 columns over 55) stay below the next digit.
  Span window(const Form &f, const std::vector<Expr> &assumed) const {
    Span best = window(f);
    for (const Expr &c : assumed) {
      auto *lt = c.as<LT>();
      std::optional<int64_t> bound = lt ? asConstInt(lt->b) : std::nullopt;
      std::optional<Form> e = lt ? formOf(lt->a) : std::nullopt;
      if (!bound || !e || e->terms.empty())
        continue;
      std::vector<bool> used(f.terms.size(), false);
      bool subset = true;
      for (const Term &u : e->terms) {
        bool found = false;
        for (size_t i = 0; i < f.terms.size() && !found; ++i)
          if (!used[i] && f.terms[i].coeff == u.coeff && equalExpr(f.terms[i].atom, u.atom))
            used[i] = found = true;
        subset = subset && found;
      }
      if (!subset)
        continue;
      Form rest;
      if (__builtin_sub_overflow(f.constant, e->constant, &rest.constant))
        continue;
      for (size_t i = 0; i < f.terms.size(); ++i)
        if (!used[i])
          rest.terms.push_back(f.terms[i]);
      Span se = window(*e), sr = window(rest);
      if (!se || !sr || se->first < 0 || *bound - 1 < se->first)
        continue;
      std::pair<int64_t, int64_t> total;
      if (__builtin_add_overflow(sr->first, se->first, &total.first) ||
          __builtin_add_overflow(sr->second, std::min(se->second, *bound - 1), &total.second))
        continue;
      if (!best || total.second - total.first < best->second - best->first)
        best = total;
    }
    return best;
  }

  /// The bases whose digits are all known: lower 1, each next lower the previous lower·extent,
  /// up to a leading digit without `%` (or one whose `%` the base's range makes a no-op).
  std::vector<Expr> completeBases() const {
    std::vector<Digit> digits;
    for (const Expr &k : known_)
      if (std::optional<Digit> d = digitOf(k, m_))
        digits.push_back(*d);
    std::vector<Expr> out;
    for (const Digit &first : digits) {
      Expr lower = intImm(1);
      for (size_t steps = 0; steps <= digits.size(); ++steps) {
        const Digit *next = nullptr;
        for (const Digit &d : digits)
          if (equalExpr(d.base, first.base) && sameValue(d.lower, lower))
            next = &d;
        if (!next)
          break;
        if (!next->extent.defined()) {
          out.push_back(first.base);
          break;
        }
        lower = simplify(lower * next->extent);
        auto top = asConstInt(lower);
        Span r = m_.range(first.base);
        if (top && r && r->first >= 0 && r->second < *top) {
          out.push_back(first.base);
          break;
        }
      }
    }
    return out;
  }

  const Moving &m_;
  std::vector<Expr> assumedA_, assumedB_;
  std::vector<Expr> known_, done_;
};

} // namespace

bool separatedBy(const LoopAccess &a, const LoopAccess &b, const Var &var,
                 const std::map<const VarNode *, LoopRange> &varying,
                 const std::map<const VarNode *, LoopRange> &ranges,
                 const std::vector<Expr> &bounds) {
  std::vector<std::pair<Expr, Expr>> dims;
  for (size_t d = 0; d < a.indices.size() && d < b.indices.size(); ++d)
    dims.emplace_back(a.indices[d], b.indices[d]);
  Moving m{var, varying, ranges};
  std::vector<Expr> assumedA = bounds, assumedB = bounds;
  for (const Expr &c : conjuncts(a.block->predicate))
    assumedA.push_back(c);
  for (const Expr &c : conjuncts(b.block->predicate))
    assumedB.push_back(c);
  return Separation(m, std::move(assumedA), std::move(assumedB)).run(std::move(dims));
}

bool valuesDetermine(const std::vector<Expr> &values, const Var &var,
                     const std::map<const VarNode *, LoopRange> &varying) {
  std::vector<std::pair<Expr, Expr>> dims;
  for (const Expr &e : values)
    dims.emplace_back(e, e);
  Moving m{var, varying, varying};
  return Separation(m).run(std::move(dims));
}

void requireAffineReduceBindings(const ScheduleState &s, const Block *block,
                                 const std::string &primitive) {
  std::map<const VarNode *, LoopRange> loops;
  std::vector<const For *> above = s.loopsAbove(block);
  for (const For *f : above)
    loops[f->loopVar.get()] = LoopRange{asConstInt(f->min), asConstInt(f->extent)};
  std::vector<Expr> values;
  for (const IterVar &iv : block->iterVars)
    if (iv.binding.defined())
      values.push_back(iv.binding);
  for (const IterVar &iv : block->iterVars) {
    if (iv.kind != IterKind::Reduce || !iv.binding.defined())
      continue;
    for (const For *f : above)
      if (uses(iv.binding, f->loopVar) && !valuesDetermine(values, f->loopVar, loops))
        throw ScheduleError(primitive +
                                " needs quasi-affine, one-to-one bindings, but reduce axis '" +
                                iv.var.name() + "' of block '" + block->name + "' is bound to " +
                                toString(iv.binding) + ", from which loop '" + f->loopVar.name() +
                                "' cannot be told",
                            block->loc, "block '" + block->name + "' is here");
  }
}

namespace {

/// The elements each iteration of `loop` touches, by running the nest on constants: the exact
/// answer where the symbolic test is not (a `where` that narrows a tile's digits, a permutation
/// such as `(i + 3) % 16`). For a loop nest of constant extents whose indices do not depend on
/// data, with at most 4096 block instances under each point of the loops around it (2^17 in
/// all); nullopt otherwise. Accesses under a `select`
/// or an `if` count whichever way they go (conservative).
class Enumerator {
public:
  Enumerator(const For *loop, const std::vector<const For *> &outer) : loop_(loop), outer_(outer) {}

  /// Whether no element written in one iteration of the loop is touched in another
  /// (`allowSameIndexUpdates`: except by the same block at the same element, a reduction's
  /// update); nullopt when the nest cannot be run on constants.
  std::optional<bool> independent(const std::vector<Buffer> &privateBuffers,
                                  bool allowSameIndexUpdates) {
    private_ = &privateBuffers;
    allowSame_ = allowSameIndexUpdates;
    return outerPoints(0);
  }

private:
  /// Every point of the loops around `loop` (each a fixed value for the comparison).
  std::optional<bool> outerPoints(size_t k) {
    if (k == outer_.size())
      return iterations();
    std::optional<int64_t> lo = value(outer_[k]->min), n = value(outer_[k]->extent);
    if (!lo || !n || *n > kMaxPoints)
      return std::nullopt;
    for (int64_t i = *lo; i < *lo + *n; ++i) {
      env_[outer_[k]->loopVar] = intImm(i);
      std::optional<bool> r = outerPoints(k + 1);
      if (!r || !*r)
        return r;
    }
    env_.erase(outer_[k]->loopVar);
    return true;
  }

  std::optional<bool> iterations() {
    touches_.clear();
    instances_ = points_ = 0; // per point of the outer loops; total_ bounds them all
    std::optional<int64_t> lo = value(loop_->min), n = value(loop_->extent);
    if (!lo || !n || *n > kMaxPoints)
      return std::nullopt;
    for (int64_t i = *lo; i < *lo + *n; ++i) {
      iteration_ = i;
      env_[loop_->loopVar] = intImm(i);
      if (!walk(loop_->body))
        return std::nullopt;
    }
    bool allowSameIndexUpdates = allowSame_;
    std::map<std::pair<const BufferNode *, std::vector<int64_t>>, std::vector<const Touch *>> at;
    for (const Touch &t : touches_)
      at[{t.buffer, t.element}].push_back(&t);
    for (const auto &[element, list] : at)
      for (const Touch *w : list)
        if (w->write)
          for (const Touch *o : list)
            if (o->iteration != w->iteration && !(allowSameIndexUpdates && o->block == w->block))
              return false;
    return true;
  }

  static constexpr int64_t kMaxPoints = 1 << 12; ///< block instances per outer point
  static constexpr int64_t kMaxTotal = 1 << 17;  ///< block instances in all

  struct Touch {
    const BufferNode *buffer;
    std::vector<int64_t> element;
    int64_t iteration;
    const Block *block;
    bool write;
  };

  std::optional<int64_t> value(const Expr &e) {
    return evaluateInt(e, [&](const Var &v) -> std::optional<int64_t> {
      auto it = env_.find(v);
      return it == env_.end() ? std::nullopt : value(it->second);
    });
  }

  bool access(const Block *b, const Buffer &buffer, const std::vector<Expr> &indices, bool write) {
    for (const Buffer &p : *private_)
      if (p.sameAs(buffer))
        return true;
    Touch t{buffer.get(), {}, iteration_, b, write};
    for (const Expr &i : indices) {
      std::optional<int64_t> v = value(i);
      if (!v)
        return false;
      t.element.push_back(*v);
    }
    touches_.push_back(std::move(t));
    return ++points_ <= kMaxPoints * 4;
  }

  bool exprs(const Block *b, const Expr &e) {
    bool ok = true;
    forEach<BufferLoad>(
        e, [&](const BufferLoad *op) { ok = ok && access(b, op->buffer, op->indices, false); });
    return ok;
  }

  bool body(const Block *b, const Stmt &s) {
    if (!s.defined())
      return true;
    if (const auto *st = s.as<BufferStore>()) {
      for (const Expr &i : st->indices)
        if (!exprs(b, i))
          return false;
      return exprs(b, st->value) && access(b, st->buffer, st->indices, true);
    }
    if (const auto *l = s.as<LetStmt>()) {
      if (!exprs(b, l->value))
        return false;
      env_[l->var] = substitute(l->value, env_);
      return body(b, l->body);
    }
    if (const auto *c = s.as<IfThenElse>())
      return exprs(b, c->condition) && body(b, c->thenCase) && body(b, c->elseCase);
    if (const auto *seq = s.as<SeqStmt>()) {
      for (const Stmt &x : seq->seq)
        if (!body(b, x))
          return false;
      return true;
    }
    if (s.as<For>() || s.as<Block>())
      return walk(s);
    if (const auto *e = s.as<Evaluate>())
      return exprs(b, e->value);
    return false;
  }

  bool walk(const Stmt &s) {
    if (!s.defined())
      return true;
    if (const auto *f = s.as<For>()) {
      std::optional<int64_t> lo = value(f->min), n = value(f->extent);
      if (!lo || !n || *n > kMaxPoints)
        return false;
      for (int64_t i = *lo; i < *lo + *n; ++i) {
        env_[f->loopVar] = intImm(i);
        if (!walk(f->body))
          return false;
      }
      env_.erase(f->loopVar);
      return true;
    }
    if (const auto *b = s.as<Block>()) {
      if (++instances_ > kMaxPoints || ++total_ > kMaxTotal)
        return false;
      for (const IterVar &iv : b->iterVars) {
        if (!iv.binding.defined())
          return false;
        std::optional<int64_t> v = value(iv.binding);
        if (!v)
          return false;
        env_[iv.var] = intImm(*v);
      }
      std::optional<int64_t> run = value(b->predicate);
      if (!run)
        return false;
      if (!*run)
        return true;
      return body(b, b->init) && body(b, b->body);
    }
    if (const auto *seq = s.as<SeqStmt>()) {
      for (const Stmt &x : seq->seq)
        if (!walk(x))
          return false;
      return true;
    }
    if (const auto *l = s.as<LetStmt>()) {
      env_[l->var] = substitute(l->value, env_);
      return walk(l->body);
    }
    return false;
  }

  const For *loop_;
  std::vector<const For *> outer_;
  const std::vector<Buffer> *private_ = nullptr;
  bool allowSame_ = false;
  std::unordered_map<Var, Expr> env_;
  std::vector<Touch> touches_;
  int64_t iteration_ = 0, instances_ = 0, points_ = 0, total_ = 0;
};

/// `e` with each `x / c` and `x % c` (c a positive constant) resolved where the loops keep the
/// part of x that is not a multiple of c within [0, c): `(i_0 * 16 + a * 4 + b) / 4` is
/// `i_0 * 4 + a` and `… % 4` is `b` for b in 0..4 (the packed layouts of transform_layout).
Expr resolveDivMod(const Expr &e, const std::map<const VarNode *, LoopRange> &ranges) {
  struct R : IRMutator {
    const std::map<const VarNode *, LoopRange> &ranges;
    explicit R(const std::map<const VarNode *, LoopRange> &r) : ranges(r) {}
    Expr divMod(const Expr &a, const Expr &b, bool isDiv, const Expr &original) {
      std::optional<int64_t> c = asConstInt(b);
      std::optional<AffineForm> f = affineForm(a);
      if (!c || *c <= 0 || !f)
        return original;
      Expr quotient = intImm(floorDiv(f->constant, *c)), rest = intImm(floorMod(f->constant, *c));
      int64_t lo = floorMod(f->constant, *c), hi = lo;
      for (const auto &[v, k] : f->terms) {
        if (k % *c == 0) {
          quotient = quotient + intImm(k / *c) * Expr(v);
          continue;
        }
        auto it = ranges.find(v.get());
        if (it == ranges.end() || !it->second.min || !it->second.extent || *it->second.min < 0 ||
            *it->second.extent < 1 || k < 0)
          return original;
        int64_t top = *it->second.min + *it->second.extent - 1;
        if (__builtin_mul_overflow(k, top, &top) || __builtin_add_overflow(hi, top, &hi))
          return original;
        lo += k * *it->second.min;
        rest = rest + intImm(k) * Expr(v);
      }
      if (lo < 0 || hi >= *c)
        return original;
      return simplify(isDiv ? quotient : rest);
    }
    Expr visit(const Div *op) override {
      Expr a = mutate(op->a);
      return divMod(a, op->b, true, Div::make(a, op->b, op->loc));
    }
    Expr visit(const Mod *op) override {
      Expr a = mutate(op->a);
      return divMod(a, op->b, false, Mod::make(a, op->b, op->loc));
    }
  } r(ranges);
  return r.mutate(e);
}

} // namespace

void requireIndependentIterations(const For *loop, const Var &var,
                                  const std::map<const VarNode *, LoopRange> &varying,
                                  bool allowSameIndexUpdates,
                                  const std::vector<const For *> &outer) {
  std::vector<LoopAccess> acc = accessesUnder(loop);
  std::map<const VarNode *, LoopRange> ranges = innerLoops(loop);
  ranges[loop->loopVar.get()] = LoopRange{asConstInt(loop->min), asConstInt(loop->extent)};
  for (LoopAccess &a : acc)
    for (Expr &i : a.indices)
      if (contains<Div>(i) || contains<Mod>(i))
        i = resolveDivMod(i, ranges);
  // `v < E` for the loops from 0 to a symbolic extent E (the loop and those under it).
  std::vector<Expr> bounds;
  struct Bounds : IRVisitor {
    std::vector<Expr> &out;
    explicit Bounds(std::vector<Expr> &o) : out(o) {}
    void visit(const For *op) override {
      if (isConstInt(op->min, 0) && !asConstInt(op->extent))
        out.push_back(LT::make(VarRef::make(op->loopVar), op->extent, op->loc));
      IRVisitor::visit(op);
    }
  } collectBounds(bounds);
  collectBounds.visitStmt(Stmt(loop));
  // A buffer that a block under the loop allocates lives for one execution of that block, so
  // each iteration has its own: no iteration sees another's elements (a per-tile accumulator).
  std::vector<Buffer> private_;
  for (const Block *b : blocksIn(loop->body))
    private_.insert(private_.end(), b->allocBuffers.begin(), b->allocBuffers.end());
  auto isPrivate = [&](const Buffer &buf) {
    return std::any_of(private_.begin(), private_.end(),
                       [&](const Buffer &p) { return p.sameAs(buf); });
  };
  std::optional<bool> enumerated; // the exact test, run at most once
  for (const LoopAccess &w : acc) {
    if (!w.write || isPrivate(w.buffer))
      continue;
    for (const LoopAccess &o : acc) {
      if (!o.buffer.sameAs(w.buffer))
        continue;
      if (allowSameIndexUpdates && o.block == w.block && o.indices.size() == w.indices.size() &&
          std::equal(o.indices.begin(), o.indices.end(), w.indices.begin(),
                     [](const Expr &x, const Expr &y) { return equalExpr(x, y); }))
        continue;
      if (separatedBy(w, o, var, varying, ranges, bounds))
        continue;
      // The symbolic test could not tell: for the loop's own iterations, run the nest on
      // constants where it is small enough.
      // (Not for reorder's question, where a block may update its own elements in any order:
      // the exact test would have to tell such updates from a scan's reads.)
      if (var.sameAs(loop->loopVar) && !allowSameIndexUpdates) {
        if (!enumerated)
          enumerated = Enumerator(loop, outer).independent(private_, allowSameIndexUpdates);
        if (enumerated && *enumerated)
          return;
      }
      throw DependenceError(
          "iterations of loop '" + var.name() + "' depend on each other: block '" + w.block->name +
              "' writes '" + w.buffer.name() + "' and block '" + o.block->name + "' " +
              (o.write ? "writes" : "reads") + " it at elements other iterations also touch",
          o.block->loc, "block '" + o.block->name + "' is here", w.block->name, o.block->name,
          o.write);
    }
  }
}

} // namespace tdsl::schedule
