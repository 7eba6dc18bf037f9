//===- frontend/CheckAccesses.cpp -------------------------------------------------------------===//
//
// Spec §5 rules 6 and 7 on the built IR: provably out-of-bounds accesses
// (by interval analysis of block axes under `where`, `if` and `select` guards), alloc buffers
// read before any block writes them, and outputs never written (a warning).

#include "frontend/Sema.h"
#include "frontend/SemaInternal.h"

#include "ir/Arith.h"
#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/ShapeBounds.h"
#include "ir/Utils.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <map>
#include <set>

namespace tdsl::sema {

using namespace ir;

namespace {

constexpr int64_t kInf = INT64_MAX / 4;

/// Calls `onFor` / `onBlock` on the outermost loops and blocks of `s`, looking through
/// sequences, lets and both branches of ifs (the two checkers below walk a body this way).
template <typename OnFor, typename OnBlock>
void forLoopsAndBlocks(const Stmt &s, const OnFor &onFor, const OnBlock &onBlock) {
  if (!s.defined())
    return;
  if (auto *seqS = s.as<SeqStmt>()) {
    for (const Stmt &x : seqS->seq)
      forLoopsAndBlocks(x, onFor, onBlock);
  } else if (auto *f = s.as<For>()) {
    onFor(*f);
  } else if (auto *b = s.as<Block>()) {
    onBlock(*b);
  } else if (auto *l = s.as<ir::LetStmt>()) {
    forLoopsAndBlocks(l->body, onFor, onBlock);
  } else if (auto *i = s.as<IfThenElse>()) {
    forLoopsAndBlocks(i->thenCase, onFor, onBlock);
    forLoopsAndBlocks(i->elseCase, onFor, onBlock);
  }
}

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
      if (auto c = asConstInt(s->b); c && *c != INT64_MIN) {
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
    // In 128 bits, clamped: offsets are any i64.
    auto minus = [&](int64_t v, int64_t extra) { return clampInf(__int128(v) - off + extra); };
    switch (o) {
    case LT:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, minus(r.hi, -1));
      break;
    case LE:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, minus(r.hi, 0));
      break;
    case GT:
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, minus(r.lo, 1));
      break;
    case GE:
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, minus(r.lo, 0));
      break;
    case EQ:
      if (r.hi < kInf)
        x.hi = std::min(x.hi, minus(r.hi, 0));
      if (r.lo > -kInf)
        x.lo = std::max(x.lo, minus(r.lo, 0));
      break;
    case NE:
      break;
    }
  };
  static const Op mirror[] = {GT, GE, LT, LE, EQ, NE};
  apply(lhs, rhs, op);
  apply(rhs, lhs, mirror[op]);
}

/// The environments of the two branches of `cond`: `env` narrowed by `cond` holding, and by it
/// not holding.
std::pair<Env, Env> branchEnvs(const Expr &cond, const Env &env) {
  Env taken = env, other = env;
  refine(cond, false, taken);
  refine(cond, true, other);
  return {taken, other};
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

// ---------------------------------------------------------------------------------------------
// Bindings (spec §6), loop kinds over reduce axes (spec §7) and shapes of instances (spec §4)
// ---------------------------------------------------------------------------------------------

/// Σ coefficient · symbol + constant, over symbols fixed for a call (shape variables, generic
/// constants). Arithmetic is checked: an overflow makes the form unknown.
struct Affine {
  std::map<const VarNode *, int64_t> terms;
  int64_t constant = 0;
  bool isConstant() const { return terms.empty(); }
};

std::optional<Affine> affineAdd(const Affine &a, const Affine &b, int64_t sign = 1) {
  Affine out = a;
  std::optional<int64_t> c =
      sign > 0 ? checkedAdd(a.constant, b.constant) : checkedSub(a.constant, b.constant);
  if (!c)
    return std::nullopt;
  out.constant = *c;
  for (auto [v, k] : b.terms) {
    std::optional<int64_t> n = sign > 0 ? checkedAdd(out.terms[v], k) : checkedSub(out.terms[v], k);
    if (!n)
      return std::nullopt;
    if (*n == 0)
      out.terms.erase(v);
    else
      out.terms[v] = *n;
  }
  return out;
}

std::optional<Affine> affineScale(const Affine &a, int64_t k) {
  Affine out;
  std::optional<int64_t> c = checkedMul(a.constant, k);
  if (!c)
    return std::nullopt;
  out.constant = *c;
  for (auto [v, x] : a.terms) {
    std::optional<int64_t> n = checkedMul(x, k);
    if (!n)
      return std::nullopt;
    if (*n != 0)
      out.terms[v] = *n;
  }
  return out;
}

Affine affineConst(int64_t c) {
  Affine a;
  a.constant = c;
  return a;
}

std::string affineString(const Affine &a) {
  std::vector<std::pair<std::string, int64_t>> terms;
  for (auto [v, k] : a.terms)
    terms.emplace_back(v->name, k);
  std::sort(terms.begin(), terms.end());
  std::string out;
  for (auto [name, k] : terms) {
    if (out.empty())
      out = k == 1 ? name : k == -1 ? "-" + name : std::to_string(k) + " * " + name;
    else
      out += (k < 0 ? " - " : " + ") +
             (k == 1 || k == -1 ? name : std::to_string(k < 0 ? -k : k) + " * " + name);
  }
  if (out.empty())
    return std::to_string(a.constant);
  if (a.constant != 0)
    out += (a.constant < 0 ? " - " : " + ") +
           (a.constant == INT64_MIN ? std::string("9223372036854775808")
                                    : std::to_string(a.constant < 0 ? -a.constant : a.constant));
  return out;
}

/// The value of an integer or bool expression at a point (every variable it reads given), with
/// the semantics of spec §11; std::nullopt when some variable is missing or an i64 operation
/// overflows.
std::optional<int64_t> evalAt(const Expr &e, const std::map<const VarNode *, int64_t> &at) {
  if (auto c = asConstInt(e))
    return c;
  if (auto *v = e.as<VarRef>()) {
    auto it = at.find(v->var.get());
    return it == at.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  if (auto *c = e.as<Cast>()) {
    if (!c->type.isInteger() || !c->value.dtype().isInteger())
      return std::nullopt;
    std::optional<int64_t> v = evalAt(c->value, at);
    return v ? asConstInt(IntImm::make(c->type, *v)) : std::nullopt;
  }
  if (auto *n = e.as<Not>()) {
    std::optional<int64_t> v = evalAt(n->a, at);
    return v ? std::optional<int64_t>(!*v) : std::nullopt;
  }
  if (auto *s = e.as<Select>()) {
    std::optional<int64_t> c = evalAt(s->condition, at);
    if (!c)
      return std::nullopt;
    return evalAt(*c ? s->trueValue : s->falseValue, at);
  }
  if (auto *n = e.as<Neg>()) {
    std::optional<int64_t> v = evalAt(n->a, at);
    return v ? checkedSub(0, *v) : std::nullopt;
  }
  if (auto *a = e.as<And>()) {
    std::optional<int64_t> x = evalAt(a->a, at);
    if (x && !*x)
      return 0;
    std::optional<int64_t> y = evalAt(a->b, at);
    if (!x || !y)
      return std::nullopt;
    return *y != 0;
  }
  if (auto *o = e.as<Or>()) {
    std::optional<int64_t> x = evalAt(o->a, at);
    if (x && *x)
      return 1;
    std::optional<int64_t> y = evalAt(o->b, at);
    if (!x || !y)
      return std::nullopt;
    return *y != 0;
  }
  const Expr *l = nullptr, *r = nullptr;
  enum { Add_, Sub_, Mul_, Div_, Mod_, Min_, Max_, LT_, LE_, GT_, GE_, EQ_, NE_ } op;
#define TDSL_CASE(NODE, OP) else if (auto *b = e.as<NODE>()) l = &b->a, r = &b->b, op = OP;
  if (false) {
  }
  TDSL_CASE(Add, Add_)
  TDSL_CASE(Sub, Sub_)
  TDSL_CASE(Mul, Mul_)
  TDSL_CASE(Div, Div_)
  TDSL_CASE(Mod, Mod_)
  TDSL_CASE(Min, Min_)
  TDSL_CASE(Max, Max_)
  TDSL_CASE(ir::LT, LT_)
  TDSL_CASE(ir::LE, LE_)
  TDSL_CASE(ir::GT, GT_)
  TDSL_CASE(ir::GE, GE_)
  TDSL_CASE(ir::EQ, EQ_)
  TDSL_CASE(ir::NE, NE_)
#undef TDSL_CASE
  if (!l || !l->dtype().isInt())
    return std::nullopt;
  std::optional<int64_t> x = evalAt(*l, at), y = evalAt(*r, at);
  if (!x || !y)
    return std::nullopt;
  switch (op) {
  case Add_:
    return checkedAdd(*x, *y);
  case Sub_:
    return checkedSub(*x, *y);
  case Mul_:
    return checkedMul(*x, *y);
  case Div_:
    return checkedFloorDiv(*x, *y);
  case Mod_:
    return checkedFloorMod(*x, *y);
  case Min_:
    return std::min(*x, *y);
  case Max_:
    return std::max(*x, *y);
  case LT_:
    return *x < *y;
  case LE_:
    return *x <= *y;
  case GT_:
    return *x > *y;
  case GE_:
    return *x >= *y;
  case EQ_:
    return *x == *y;
  case NE_:
    return *x != *y;
  }
  return std::nullopt;
}

/// Walks a PrimFunc with the loops and block axes around each block, and checks each binding:
/// a binding whose value leaves 0..EXTENT at some point of the loops' ranges that the block's
/// `where` admits is an error (spec §6). The check looks for a witness point: for bindings
/// where every loop variable appears once and the operations are monotone (+, -, * by a
/// constant, / and % by a positive constant, min, max), the extremes are reached at corners of
/// the loops' ranges (narrowed by the `where` conditions on single variables), found exactly,
/// symbolically where the ranges are affine in shape variables and constants. A point the
/// `where` cannot be evaluated at, and any binding outside that class, is accepted.
/// Also: a parallel, vectorized or thread-bound loop bound to a reduce axis (spec §7's rule for
/// those primitives: its iterations would race), and the shapes and extents of the function
/// (spec §4), which matter for instances of generic functions.
class BindingChecker {
public:
  BindingChecker(const PrimFunc &f, DiagnosticEngine &diags, bool instance)
      : f_(f), diags_(diags), instance_(instance) {
    for (const Var &v : f.shapeVars)
      shapeVars_.insert(v.get());
  }

  void run() {
    for (const FuncParam &p : f_.inputs)
      if (p.isTensor())
        shape(p.buffer);
    for (const Buffer &b : f_.outputs)
      shape(b);
    for (const Buffer &b : f_.allocBuffers)
      shape(b);
    stmt(f_.body);
  }

private:
  struct Dom {
    std::optional<Affine> lo, hi; // the first and last value (inclusive), when affine
  };
  struct Point {
    Affine value;
    std::map<const VarNode *, Affine> at;
  };
  struct Extremes {
    Point lo, hi;
  };
  struct LoopCtx {
    const For *loop;
  };

  std::string suffix() const {
    return instance_ ? " (in '" + f_.name + "' once its generic constants are given)" : "";
  }

  void shape(const Buffer &b) {
    bool ok = true;
    for (size_t d = 0; d < b.rank(); ++d) {
      const Expr &dim = b.shape()[d];
      SourceLoc at = dim->loc.valid() ? dim->loc : b->loc;
      ok &= checkExtent(dim, SourceRange(at),
                        "dimension " + std::to_string(d) + " of '" + b.name() + "'", diags_,
                        suffix());
    }
    if (ok)
      checkElementCount(b.dtype(), b.shape(), SourceRange(b->loc), "'" + b.name() + "'", diags_,
                        suffix());
  }

  void stmt(const Stmt &s) {
    auto onFor = [this](const For &f) { loop(f); };
    auto onBlock = [this](const Block &b) { block(b); };
    forLoopsAndBlocks(s, onFor, onBlock);
  }

  void loop(const For &f) {
    // A short-form loop (its variable declared where the loop is) shares its extent with its
    // axis, checked there under the name written.
    bool shortForm = f.loopVar->loc == f.loc;
    for (const Expr &e : {f.min, f.extent}) {
      if (shortForm)
        break;
      ConstResult r = evalConstant(e);
      if (r.kind == ConstResult::DivByZero || r.kind == ConstResult::Overflow)
        diags_.error(SourceRange(r.at.valid() ? r.at : f.loc),
                     "bound of loop '" + f.loopVar.name() + "' " +
                         (r.kind == ConstResult::DivByZero ? "divides by zero" : "overflows i64") +
                         suffix());
    }
    Dom dom;
    std::optional<Affine> lo = affine(f.min), ext = affine(f.extent);
    if (lo && ext) {
      dom.lo = lo;
      if (auto last = affineAdd(*lo, *ext))
        dom.hi = affineAdd(*last, affineConst(1), -1);
    }
    loops_.push_back(&f);
    doms_[f.loopVar.get()] = dom;
    stmt(f.body);
    doms_.erase(f.loopVar.get());
    loops_.pop_back();
  }

  void block(const Block &b) {
    bool extentsOk = true;
    for (const IterVar &iv : b.iterVars) {
      // A short-form axis `i` is `vi` bound to loop `i`: named as written.
      auto *loop = iv.binding.as<VarRef>();
      std::string name = loop && loop->var->loc == iv.var->loc ? loop->var.name() : iv.var.name();
      extentsOk &=
          checkExtent(iv.extent, SourceRange(iv.extent->loc.valid() ? iv.extent->loc : iv.loc),
                      "extent of axis '" + name + "'", diags_, suffix());
    }
    for (const Buffer &a : b.allocBuffers)
      shape(a);
    raceCheck(b);
    if (extentsOk)
      for (const IterVar &iv : b.iterVars)
        if (iv.binding.defined())
          bindingCheck(b, iv);
    // Nested blocks (blockize) see the axes as variables ranging over their domains.
    std::vector<const VarNode *> pushed;
    for (const IterVar &iv : b.iterVars) {
      Dom dom;
      if (auto ext = affine(iv.extent)) {
        dom.lo = affineConst(0);
        dom.hi = affineAdd(*ext, affineConst(1), -1);
      }
      doms_[iv.var.get()] = dom;
      pushed.push_back(iv.var.get());
    }
    std::vector<const For *> outer;
    outer.swap(loops_); // loops outside a block do not iterate its inner blocks' bindings
    stmt(b.body);
    loops_.swap(outer);
    for (const VarNode *v : pushed)
      doms_.erase(v);
  }

  /// A parallel, vectorized or thread-bound loop that a reduce axis binds: its iterations
  /// would update the same elements at once.
  void raceCheck(const Block &b) {
    for (const IterVar &iv : b.iterVars) {
      if (iv.kind != IterKind::Reduce || !iv.binding.defined())
        continue;
      std::vector<Var> vars;
      collectVars(iv.binding, vars);
      for (const For *l : loops_) {
        if (l->forKind != ForKind::Parallel && l->forKind != ForKind::Vectorized &&
            l->forKind != ForKind::ThreadBinding)
          continue;
        if (std::find(vars.begin(), vars.end(), l->loopVar) == vars.end() ||
            !reportedLoops_.insert(l).second)
          continue;
        const char *kind = l->forKind == ForKind::Parallel     ? "parallel"
                           : l->forKind == ForKind::Vectorized ? "vectorized"
                                                               : "thread-bound";
        diags_
            .error(SourceRange(l->loc), std::string(kind) + " loop '" + l->loopVar.name() +
                                            "' is bound to reduce axis '" + iv.var.name() +
                                            "' of block '" + b.name +
                                            "': its iterations would update the same elements "
                                            "at once; only spatial axes may bind such a loop")
            .note(SourceRange(iv.loc),
                  "'" + iv.var.name() + "' is a reduce axis of block '" + b.name + "'");
      }
    }
  }

  /// `e` as an affine form over symbols (variables that are neither loop variables nor axes).
  std::optional<Affine> affine(const Expr &e) const {
    if (!e.defined())
      return std::nullopt;
    if (auto c = asConstInt(e))
      return affineConst(*c);
    if (auto *v = e.as<VarRef>()) {
      if (doms_.count(v->var.get()) || !v->var.dtype().isInteger())
        return std::nullopt;
      Affine a;
      a.terms[v->var.get()] = 1;
      return a;
    }
    if (auto *c = e.as<Cast>())
      return c->type == DType::i64() && c->value.dtype() == DType::i64() ? affine(c->value)
                                                                         : std::nullopt;
    if (auto *n = e.as<Neg>()) {
      auto a = affine(n->a);
      return a ? affineScale(*a, -1) : std::nullopt;
    }
    if (auto *b = e.as<Add>()) {
      auto x = affine(b->a), y = affine(b->b);
      return x && y ? affineAdd(*x, *y) : std::nullopt;
    }
    if (auto *b = e.as<Sub>()) {
      auto x = affine(b->a), y = affine(b->b);
      return x && y ? affineAdd(*x, *y, -1) : std::nullopt;
    }
    if (auto *b = e.as<Mul>()) {
      auto x = affine(b->a), y = affine(b->b);
      if (!x || !y)
        return std::nullopt;
      if (y->isConstant())
        return affineScale(*x, y->constant);
      if (x->isConstant())
        return affineScale(*y, x->constant);
      return std::nullopt;
    }
    return std::nullopt;
  }

  static std::optional<std::map<const VarNode *, Affine>>
  merge(const std::map<const VarNode *, Affine> &a, const std::map<const VarNode *, Affine> &b) {
    std::map<const VarNode *, Affine> out = a;
    for (const auto &[v, x] : b)
      if (!out.emplace(v, x).second)
        return std::nullopt; // a variable read twice: its extremes are not independent
    return out;
  }

  static std::optional<Point> combine(const Point &a, const Point &b, int64_t sign) {
    auto at = merge(a.at, b.at);
    auto value = affineAdd(a.value, b.value, sign);
    if (!at || !value)
      return std::nullopt;
    return Point{*value, *at};
  }

  static std::optional<int64_t> constantOf(const Extremes &x) {
    if (x.lo.value.isConstant() && x.hi.value.isConstant() && x.lo.at.empty() && x.hi.at.empty() &&
        x.lo.value.constant == x.hi.value.constant)
      return x.lo.value.constant;
    return std::nullopt;
  }

  static std::optional<int64_t> constDiff(const Affine &a, const Affine &b) {
    auto d = affineAdd(a, b, -1);
    if (!d || !d->isConstant())
      return std::nullopt;
    return d->constant;
  }

  /// The least and greatest values of `e` over the domains, each with a point reaching it.
  std::optional<Extremes> extremes(const Expr &e) const {
    if (auto c = asConstInt(e)) {
      Point p{affineConst(*c), {}};
      return Extremes{p, p};
    }
    if (auto *v = e.as<VarRef>()) {
      auto it = doms_.find(v->var.get());
      if (it == doms_.end()) {
        auto a = affine(e);
        if (!a)
          return std::nullopt;
        Point p{*a, {}};
        return Extremes{p, p};
      }
      if (!it->second.lo || !it->second.hi)
        return std::nullopt;
      return Extremes{Point{*it->second.lo, {{v->var.get(), *it->second.lo}}},
                      Point{*it->second.hi, {{v->var.get(), *it->second.hi}}}};
    }
    if (auto *c = e.as<Cast>())
      return c->type == DType::i64() && c->value.dtype() == DType::i64() ? extremes(c->value)
                                                                         : std::nullopt;
    if (auto *n = e.as<Neg>()) {
      auto x = extremes(n->a);
      if (!x)
        return std::nullopt;
      auto lo = affineScale(x->hi.value, -1), hi = affineScale(x->lo.value, -1);
      if (!lo || !hi)
        return std::nullopt;
      return Extremes{Point{*lo, x->hi.at}, Point{*hi, x->lo.at}};
    }
    if (auto *b = e.as<Add>()) {
      auto x = extremes(b->a), y = extremes(b->b);
      if (!x || !y)
        return std::nullopt;
      auto lo = combine(x->lo, y->lo, 1), hi = combine(x->hi, y->hi, 1);
      return lo && hi ? std::optional<Extremes>(Extremes{*lo, *hi}) : std::nullopt;
    }
    if (auto *b = e.as<Sub>()) {
      auto x = extremes(b->a), y = extremes(b->b);
      if (!x || !y)
        return std::nullopt;
      auto lo = combine(x->lo, y->hi, -1), hi = combine(x->hi, y->lo, -1);
      return lo && hi ? std::optional<Extremes>(Extremes{*lo, *hi}) : std::nullopt;
    }
    if (auto *b = e.as<Mul>()) {
      auto x = extremes(b->a), y = extremes(b->b);
      if (!x || !y)
        return std::nullopt;
      std::optional<int64_t> k = constantOf(*y);
      const Extremes *other = &*x;
      if (!k) {
        k = constantOf(*x);
        other = &*y;
      }
      if (k) {
        auto lo = affineScale(other->lo.value, *k), hi = affineScale(other->hi.value, *k);
        if (!lo || !hi)
          return std::nullopt;
        if (*k >= 0)
          return Extremes{Point{*lo, other->lo.at}, Point{*hi, other->hi.at}};
        return Extremes{Point{*hi, other->hi.at}, Point{*lo, other->lo.at}};
      }
      // Two varying factors: the extremes are at corners when both ranges are constant.
      std::optional<Extremes> out;
      for (const Point *p : {&x->lo, &x->hi})
        for (const Point *q : {&y->lo, &y->hi}) {
          if (!p->value.isConstant() || !q->value.isConstant())
            return std::nullopt;
          auto v = checkedMul(p->value.constant, q->value.constant);
          auto at = merge(p->at, q->at);
          if (!v || !at)
            return std::nullopt;
          Point r{affineConst(*v), *at};
          if (!out)
            out = Extremes{r, r};
          if (*v < out->lo.value.constant)
            out->lo = r;
          if (*v > out->hi.value.constant)
            out->hi = r;
        }
      return out;
    }
    if (auto *b = e.as<Div>()) {
      auto x = extremes(b->a), y = extremes(b->b);
      std::optional<int64_t> k = y ? constantOf(*y) : std::nullopt;
      if (!x || !k || *k <= 0 || !x->lo.value.isConstant() || !x->hi.value.isConstant())
        return std::nullopt;
      Point lo{affineConst(floorDiv(x->lo.value.constant, *k)), x->lo.at};
      Point hi{affineConst(floorDiv(x->hi.value.constant, *k)), x->hi.at};
      return Extremes{lo, hi};
    }
    if (auto *b = e.as<Mod>()) {
      auto x = extremes(b->a), y = extremes(b->b);
      std::optional<int64_t> k = y ? constantOf(*y) : std::nullopt;
      if (!x || !k || *k <= 0 || !x->lo.value.isConstant() || !x->hi.value.isConstant())
        return std::nullopt;
      int64_t q = floorDiv(x->lo.value.constant, *k);
      if (q != floorDiv(x->hi.value.constant, *k))
        return std::nullopt;
      Point lo{affineConst(x->lo.value.constant - q * *k), x->lo.at};
      Point hi{affineConst(x->hi.value.constant - q * *k), x->hi.at};
      return Extremes{lo, hi};
    }
    bool isMin = e.as<Min>() != nullptr;
    if (isMin || e.as<Max>()) {
      const Expr &l = isMin ? e.as<Min>()->a : e.as<Max>()->a;
      const Expr &r = isMin ? e.as<Min>()->b : e.as<Max>()->b;
      auto x = extremes(l), y = extremes(r);
      if (!x || !y)
        return std::nullopt;
      auto pick = [&](const Point &p, const Point &q) -> std::optional<Point> {
        std::optional<int64_t> d = constDiff(p.value, q.value);
        auto at = merge(p.at, q.at);
        if (!d || !at)
          return std::nullopt;
        bool first = isMin ? *d <= 0 : *d >= 0;
        return Point{first ? p.value : q.value, *at};
      };
      auto lo = pick(x->lo, y->lo), hi = pick(x->hi, y->hi);
      return lo && hi ? std::optional<Extremes>(Extremes{*lo, *hi}) : std::nullopt;
    }
    return std::nullopt;
  }

  /// True when `a` > 0 for every value of its symbols: a positive constant plus shape
  /// variables (never negative) with non-negative coefficients.
  bool provablyPositive(const Affine &a) const {
    if (a.constant <= 0)
      return false;
    for (auto [v, k] : a.terms)
      if (k < 0 || !shapeVars_.count(v))
        return false;
    return true;
  }

  void bindingCheck(const Block &b, const IterVar &iv) {
    // Narrow constant loop ranges by the `where` conditions on single variables.
    std::map<const VarNode *, Dom> saved = doms_;
    bool hasWhere = b.predicate.defined() && !isConstInt(b.predicate, 1);
    if (hasWhere) {
      Env env;
      for (const auto &[v, d] : doms_)
        if (d.lo && d.hi && d.lo->isConstant() && d.hi->isConstant())
          env[v] = Interval{d.lo->constant, d.hi->constant};
      refine(b.predicate, false, env);
      for (const auto &[v, i] : env.vars) {
        doms_[v].lo = affineConst(i.lo);
        doms_[v].hi = affineConst(i.hi);
      }
    }
    report(b, iv, hasWhere);
    doms_ = saved;
  }

  void report(const Block &b, const IterVar &iv, bool hasWhere) {
    // No point at all when some range is empty.
    for (const auto &[v, d] : doms_)
      if (d.lo && d.hi && d.lo->isConstant() && d.hi->isConstant() &&
          d.lo->constant > d.hi->constant)
        return;
    std::optional<Extremes> x = extremes(iv.binding);
    std::optional<Affine> ext = affine(iv.extent);
    if (!x || !ext)
      return;
    const Point *witness = nullptr;
    auto last = affineAdd(*ext, affineConst(1), -1);
    if (auto over = last ? affineAdd(x->hi.value, *last, -1) : std::nullopt;
        over && provablyPositive(*over))
      witness = &x->hi;
    else if (auto under = affineScale(x->lo.value, -1); under && provablyPositive(*under))
      witness = &x->lo;
    if (!witness)
      return;
    if (hasWhere && !admitted(b.predicate, *witness))
      return;
    std::vector<std::pair<std::string, std::string>> coords;
    for (const auto &[v, a] : witness->at)
      coords.emplace_back(v->name, affineString(a));
    std::sort(coords.begin(), coords.end());
    std::string at;
    for (const auto &[name, value] : coords)
      at += (at.empty() ? " at " : ", ") + name + " = " + value;
    diags_.error(SourceRange(iv.binding->loc.valid() ? iv.binding->loc : iv.loc),
                 "binding of " + std::string(iv.kind == IterKind::Reduce ? "reduce" : "spatial") +
                     " axis '" + iv.var.name() + "' leaves its domain 0.." + affineString(*ext) +
                     ": " + toString(iv.binding) + " is " + affineString(witness->value) + at +
                     (hasWhere ? ", which the block's 'where' admits" : "") + suffix());
  }

  /// Whether the `where` holds at the witness point, the loop variables it does not fix taken
  /// at the first value of their (narrowed) ranges; false when that cannot be evaluated.
  bool admitted(const Expr &pred, const Point &p) const {
    std::map<const VarNode *, int64_t> at;
    for (const auto &[v, a] : p.at) {
      if (!a.isConstant())
        return false;
      at[v] = a.constant;
    }
    for (const auto &[v, d] : doms_)
      if (!at.count(v) && d.lo && d.lo->isConstant())
        at[v] = d.lo->constant;
    std::optional<int64_t> holds = evalAt(pred, at);
    return holds && *holds;
  }

  const PrimFunc &f_;
  DiagnosticEngine &diags_;
  bool instance_;
  std::set<const VarNode *> shapeVars_;
  std::map<const VarNode *, Dom> doms_; // loop variables and enclosing axes
  std::vector<const For *> loops_;      // loops around the current point, inside its block
  std::set<const For *> reportedLoops_;
};

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
    forLoopsAndBlocks(
        s, [this](const For &f) { stmt(f.body); }, [this](const Block &b) { block(b); });
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
      auto [t, e] = branchEnvs(i->condition, env);
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
      auto [t, f] = branchEnvs(s->condition, env);
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
      // A constant dimension, literal or not (`f32[6 - 4]`).
      std::optional<int64_t> extent = evalAt(b.shape()[d], {});
      if (!extent)
        continue;
      Interval r = eval(indices[d], env);
      if (r.empty())
        continue; // guarded away entirely
      std::vector<Var> vs;
      collectVars(indices[d], vs);
      // A variable the guards leave no value (`where vk_o < 0` of a tile past a short
      // reduction): the access never runs, whatever the arithmetic made of the empty range.
      if (std::any_of(vs.begin(), vs.end(), [&](const Var &v) {
            auto it = env.find(v.get());
            return it != env.end() && it->second.empty();
          }))
        continue;
      bool below = r.lo > -kInf && r.lo < 0 && r.hi > -kInf;
      bool above = r.hi < kInf && r.hi >= *extent && r.lo < kInf;
      // Only a provable violation is an error: both ends known, or the offending end known.
      if (!(below && r.lo > -kInf) && !(above && r.hi < kInf))
        continue;
      if ((below && r.hi == kInf) || (above && r.lo == -kInf))
        continue;
      std::string vars;
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
  if (auto *p = f.as<ir::PrimFunc>()) {
    unsigned before = diags.errorCount();
    sema::BindingChecker(*p, diags, /*instance=*/true).run();
    if (diags.errorCount() == before)
      sema::AccessChecker(*p, diags).run();
  }
}

namespace tdsl::sema {

/// Rule 6 against symbolic shapes (ir/ShapeBounds.h): an access out of bounds for every value
/// of the shape variables is an error; one neither proven nor refuted is checked at run time.
void checkSymbolicAccesses(const PrimFunc &p, const Func &f, DiagnosticEngine &diags) {
  std::set<std::pair<uint32_t, uint32_t>> reported; // one error per access
  ShapeBounds bounds = analyzeShapeBounds(f);
  if (bounds.violations.empty())
    return;
  // Messages use the names the user wrote: a short-form axis `i` is loop `i` and axis `vi`.
  std::unordered_map<Var, Expr> written;
  forEach<Block>(p.body, [&](const Block *blk) {
    for (const IterVar &iv : blk->iterVars)
      if (auto *loop = iv.binding.as<VarRef>(); loop && loop->var->loc == iv.var->loc)
        written[iv.var] = Expr(loop);
  });
  for (const ShapeBound &b : bounds.violations) {
    if (!reported.insert({b.loc.line, b.loc.col}).second)
      continue;
    std::string vars;
    for (const Var &v : p.shapeVars)
      if (usesVar(b.extreme, v) || usesVar(b.extent, v))
        vars += (vars.empty() ? "" : ", ") + v.name();
    diags
        .error(SourceRange(b.loc),
               "out-of-bounds access to '" + b.buffer.name() + "': index " + std::to_string(b.dim) +
                   " (" + toString(substitute(b.index, written)) + ") " +
                   (b.upper ? "reaches " : "goes down to ") + toString(b.extreme) +
                   ", but dimension " + std::to_string(b.dim) + " has extent " +
                   toString(b.extent) + ", for every value of " +
                   (vars.empty() ? std::string("the shapes") : vars))
        .note(SourceRange(b.buffer->loc), "'" + b.buffer.name() + "' declared here");
  }
}

void checkAccesses(const Module &m, DiagnosticEngine &diags) {
  for (const Func &f : m.functions())
    if (auto *p = f.as<PrimFunc>()) {
      unsigned before = diags.errorCount();
      BindingChecker(*p, diags, /*instance=*/false).run();
      // Rule 6 assumes every axis stays in its domain.
      if (diags.errorCount() == before) {
        AccessChecker(*p, diags).run();
        checkSymbolicAccesses(*p, f, diags);
      }
    }
}

} // namespace tdsl::sema
