//===- passes/lower/VectorizeLoops.cpp - Vectorized loops to vector code ------------------===//
#include "passes/lower/VectorizeLoops.h"

#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

namespace tdsl::lower {

using namespace ir;

namespace {

bool vectorElement(DType t) { return t == DType::f32() || t == DType::f64(); }

/// The most elements apart that consecutive lanes of a vectorized load may be.
constexpr int64_t kMaxLoadStride = 4;

/// A `case` of LoopVectorizer's expression rewriters for the binary node NAME: both operands
/// rewritten by the member OPERAND, then the node on them.
#define TDSL_VECTOR_BINARY_OF(NAME, OPERAND)                                                       \
  case ExprKind::NAME: {                                                                           \
    const auto *op = e.as<NAME>();                                                                 \
    Expr a = OPERAND(op->a), b = OPERAND(op->b);                                                   \
    if (failed)                                                                                    \
      return Expr();                                                                               \
    return NAME::make(a, b, op->loc);                                                              \
  }

/// Rewrites the body of one loop; `failed` is set when some part has no vector form.
class LoopVectorizer {
public:
  LoopVectorizer(const For *loop, int lanes) : loop_(loop), v_(loop->loopVar), lanes_(lanes) {}

  bool failed = false;

  Stmt store(const BufferStore *op) {
    if (!vectorElement(op->buffer.dtype()) || op->indices.size() != 1)
      return fail();
    Expr index = rampIndex(op->indices[0], /*maxStride=*/1);
    Expr value = vec(op->value);
    if (failed)
      return Stmt();
    return BufferStore::make(op->buffer, value, {index}, op->loc);
  }

private:
  Stmt fail() {
    failed = true;
    return Stmt();
  }
  Expr failExpr() {
    failed = true;
    return Expr();
  }

  /// `ramp(index at min, c, L)` for an index whose coefficient c is in 1..maxStride.
  Expr rampIndex(const Expr &index, int64_t maxStride) {
    std::optional<int64_t> c = coefficientOf(index, v_);
    if (!c || *c < 1 || *c > maxStride || index.dtype() != DType::i64())
      return failExpr();
    Expr base = simplify(substitute(index, {{v_, loop_->min}}));
    return Ramp::make(base, intImm(*c), lanes_, index->loc);
  }

  Expr vec(const Expr &e) {
    if (failed)
      return Expr();
    if (!usesVar(e, v_)) {
      if (!vectorElement(e.dtype()))
        return failExpr();
      return Broadcast::make(e, lanes_, e->loc);
    }
    if (!vectorElement(e.dtype()))
      return failExpr();
    switch (e.kind()) {
    case ExprKind::BufferLoad: {
      const auto *op = e.as<BufferLoad>();
      if (op->indices.size() != 1)
        return failExpr();
      // A load may step by up to kMaxLoadStride elements a lane (a stride-2 pooling window's
      // columns): the backends read the (L - 1)·c + 1 elements it spans at once and keep every
      // c-th (LLVM otherwise gathered them lane by lane, slow on AMD's cores).
      Expr index = rampIndex(op->indices[0], kMaxLoadStride);
      if (failed)
        return Expr();
      return BufferLoad::make(op->buffer, {index}, op->loc);
    }
#define TDSL_VECTOR_BINARY(NAME) TDSL_VECTOR_BINARY_OF(NAME, vec)
      TDSL_VECTOR_BINARY(Add)
      TDSL_VECTOR_BINARY(Sub)
      TDSL_VECTOR_BINARY(Mul)
      TDSL_VECTOR_BINARY(Div)
      TDSL_VECTOR_BINARY(Min)
      TDSL_VECTOR_BINARY(Max)
#undef TDSL_VECTOR_BINARY
    case ExprKind::Neg: {
      Expr a = vec(e.as<Neg>()->a);
      return failed ? Expr() : Neg::make(a, e->loc);
    }
    case ExprKind::Call: {
      // The element-wise float intrinsics (exp, erf, …): each lane is the scalar call. Both
      // backends call glibc's vector math (libmvec) for exp, erf, tanh, … and use vector
      // instructions for sqrt, abs, floor, ….
      const auto *op = e.as<Call>();
      if (op->op == Intrinsic::MinValue || op->op == Intrinsic::MaxValue || op->args.empty())
        return failExpr();
      std::vector<Expr> args;
      for (const Expr &a : op->args) {
        if (!vectorElement(a.dtype()))
          return failExpr();
        args.push_back(vec(a));
      }
      return failed ? Expr()
                    : Call::make(e.dtype().withLanes(static_cast<uint16_t>(lanes_)), op->op, args,
                                 e->loc);
    }
    case ExprKind::Cast: {
      const auto *op = e.as<Cast>();
      if (!vectorElement(op->value.dtype()))
        return failExpr();
      Expr a = vec(op->value);
      return failed ? Expr()
                    : Cast::make(e.dtype().withLanes(static_cast<uint16_t>(lanes_)), a, e->loc);
    }
    case ExprKind::Select: {
      // A condition the same for every lane stays scalar (the backends branch on it); one that
      // differs between lanes becomes a vector of bools (a padding guard: the lanes of a
      // pooling window's first columns that fall left of the input). Either way a branch's
      // loads read only the lanes that choose it: the backends mask them (backends/llvm:
      // masked loads; backends/cpp: lane by lane), so a guard keeps protecting its load.
      const auto *op = e.as<Select>();
      Expr c = usesVar(op->condition, v_) ? mask(op->condition) : op->condition;
      Expr a = vec(op->trueValue), b = vec(op->falseValue);
      return failed ? Expr() : Select::make(c, a, b, e->loc);
    }
    default:
      return failExpr();
    }
  }

  /// A lane-dependent condition as a vector of bools: `&&`, `||` and `!` of comparisons, of
  /// vectorizable floats or of i64 expressions affine in the loop variable (a ramp of their
  /// values on the lanes).
  Expr mask(const Expr &e) {
    if (failed)
      return Expr();
    if (!usesVar(e, v_))
      return Broadcast::make(e, lanes_, e->loc);
    switch (e.kind()) {
      TDSL_VECTOR_BINARY_OF(And, mask)
      TDSL_VECTOR_BINARY_OF(Or, mask)
    case ExprKind::Not: {
      Expr a = mask(e.as<Not>()->a);
      return failed ? Expr() : Not::make(a, e->loc);
    }
#define TDSL_VECTOR_CMP(NAME) TDSL_VECTOR_BINARY_OF(NAME, operand)
      TDSL_FOR_EACH_CMP_NODE(TDSL_VECTOR_CMP)
#undef TDSL_VECTOR_CMP
    default:
      return failExpr();
    }
  }

  /// An operand of a lane-dependent comparison as a vector.
  Expr operand(const Expr &e) {
    if (vectorElement(e.dtype()))
      return vec(e);
    if (e.dtype() != DType::i64() || contains<BufferLoad>(e))
      return failExpr();
    if (!usesVar(e, v_))
      return Broadcast::make(e, lanes_, e->loc);
    std::optional<int64_t> c = coefficientOf(e, v_);
    if (!c)
      return failExpr();
    return Ramp::make(simplify(substitute(e, {{v_, loop_->min}})), intImm(*c), lanes_, e->loc);
  }

  const For *loop_;
  Var v_;
  int lanes_;
};

#undef TDSL_VECTOR_BINARY_OF

/// Every access of a buffer the body stores to must be at that store's index: then each
/// iteration touches its own element of it, and running the statements one after the other
/// over all lanes gives what the loop gave.
bool independentLanes(const std::vector<const BufferStore *> &stores) {
  struct Accesses : IRVisitor {
    std::vector<std::pair<Buffer, Expr>> all;
    void visit(const BufferLoad *op) override {
      all.push_back({op->buffer, op->indices[0]});
      IRVisitor::visit(op);
    }
  } accesses;
  for (const BufferStore *s : stores) {
    accesses.all.push_back({s->buffer, s->indices[0]});
    accesses.visitExpr(s->value);
    accesses.visitExpr(s->indices[0]);
  }
  for (const BufferStore *s : stores)
    for (const auto &[buffer, index] : accesses.all)
      if (buffer == s->buffer && !equalExpr(index, s->indices[0]))
        return false;
  return true;
}

Stmt vectorizeLoop(const For *loop, const Stmt &s);

/// The number of leading lanes for which the lane-dependent conjunct `c` holds, when it bounds
/// the loop variable from above (`v + d < b`, `v + d <= b`, `b > v + d`, `b >= v + d`, d and b
/// free of v and of loads): clamp(b - d - min, 0, L) as an expression; nullopt otherwise.
std::optional<Expr> leadingLanes(const Expr &c, const For *loop, int64_t lanes) {
  const Var &v = loop->loopVar;
  Expr lhs, rhs;
  int64_t inclusive = 0;
  if (const auto *op = c.as<LT>())
    lhs = op->a, rhs = op->b;
  else if (const auto *op = c.as<LE>())
    lhs = op->a, rhs = op->b, inclusive = 1;
  else if (const auto *op = c.as<GT>())
    lhs = op->b, rhs = op->a;
  else if (const auto *op = c.as<GE>())
    lhs = op->b, rhs = op->a, inclusive = 1;
  else
    return std::nullopt;
  if (lhs.dtype() != DType::i64() || usesVar(rhs, v) || contains<BufferLoad>(rhs) ||
      contains<BufferLoad>(lhs) || coefficientOf(lhs, v) != std::optional<int64_t>(1))
    return std::nullopt;
  Expr d = simplify(substitute(lhs, {{v, intImm(0)}}));
  Expr m = rhs - d - loop->min + intImm(inclusive);
  return simplify(Min::make(Max::make(m, intImm(0)), intImm(lanes)));
}

/// `for v vectorized { if c { body } }` whose condition bounds the lanes from above (c: lane-
/// invariant conjuncts and `v + d < b` ones; the valid lanes are the first m): `if m == L {
/// the loop without the guard } else { … }` with, for each power of two w < L, `if m / w % 2 ==
/// 1 { for v' in 0..w vectorized { body at v = min + m / (2w) · 2w + v' } }`, under the
/// invariant conjuncts, each piece vectorized again. The valid lanes run
/// in order, as unguarded vectors of 16, 8, …, 1 lanes instead of one lane at a time (the last,
/// partial column block of a register tile: a 10-wide output in a 32-wide tile). nullopt when
/// the loop is not of that form.
std::optional<Stmt> vectorizeLeadingLanes(const For *loop, int64_t lanes) {
  const auto *branch = loop->body.as<IfThenElse>();
  if (!branch || branch->elseCase.defined())
    return std::nullopt;
  std::vector<Expr> invariant;
  std::optional<Expr> count;
  for (const Expr &c : conjuncts(branch->condition)) {
    if (!usesVar(c, loop->loopVar)) {
      if (contains<BufferLoad>(c))
        return std::nullopt;
      invariant.push_back(c);
      continue;
    }
    std::optional<Expr> m = leadingLanes(c, loop, lanes);
    if (!m)
      return std::nullopt;
    count = count ? simplify(Min::make(*count, *m)) : *m;
  }
  if (!count)
    return std::nullopt;
  Var m(loop->loopVar.name() + "_lanes", DType::i64(), loop->loc);
  auto piece = [&](int64_t w, const Expr &offset) {
    Var lane(loop->loopVar.name(), DType::i64(), loop->loc);
    Stmt body = substitute(branch->thenCase, {{loop->loopVar, offset + Expr(lane)}});
    Stmt p = For::make(lane, intImm(0), intImm(w), w > 1 ? ForKind::Vectorized : ForKind::Serial,
                       body, loop->threadTag, loop->loc);
    return w > 1 ? vectorizeLoop(p.as<For>(), p) : p;
  };
  // All lanes (the common case: one test), else the pieces of m < L lanes.
  Stmt full = piece(lanes, loop->min);
  if (full.as<For>())
    return std::nullopt; // no vector form for the body: the loop stays as it was
  std::vector<Stmt> pieces;
  for (int64_t w = lanes / 2; w >= 1; w /= 2)
    pieces.push_back(
        IfThenElse::make(simplify(EQ::make(Expr(m) / intImm(w) % intImm(2), intImm(1))),
                         piece(w, simplify(loop->min + Expr(m) / intImm(2 * w) * intImm(2 * w))),
                         Stmt(), branch->loc));
  Stmt out = LetStmt::make(
      m, *count,
      IfThenElse::make(EQ::make(Expr(m), intImm(lanes)), full, seq(std::move(pieces)), branch->loc),
      loop->loc);
  for (size_t i = invariant.size(); i-- > 0;)
    out = IfThenElse::make(invariant[i], out, Stmt(), branch->loc);
  return out;
}

/// A vectorized loop as vector stores of its lanes; the loop itself where its body is not a
/// list of independent single-index stores.
Stmt vectorizeLoop(const For *loop, const Stmt &s) {
  std::optional<int64_t> extent = asConstInt(loop->extent);
  if (!extent || *extent < 2 || *extent > 64 || (*extent & (*extent - 1)) != 0)
    return s;
  // `for v vectorized { if c { body } }` with c the same for every lane (no v, no load: the
  // body cannot change it) is `if c { for v vectorized { body } }`: one branch, then the
  // vector code (the guards of a register tile's columns in a partitioned tail; LLVM would
  // mask every lane's loads and stores).
  if (const auto *branch = loop->body.as<IfThenElse>();
      branch && !branch->elseCase.defined() && !usesVar(branch->condition, loop->loopVar) &&
      !contains<BufferLoad>(branch->condition)) {
    Stmt inner = For::make(loop->loopVar, loop->min, loop->extent, loop->forKind, branch->thenCase,
                           loop->threadTag, loop->loc);
    return IfThenElse::make(branch->condition, vectorizeLoop(inner.as<For>(), inner), Stmt(),
                            branch->loc);
  }
  if (std::optional<Stmt> pieces = vectorizeLeadingLanes(loop, *extent))
    return *pieces;
  std::vector<Stmt> items;
  if (const auto *block = loop->body.as<SeqStmt>())
    items = block->seq;
  else
    items.push_back(loop->body);
  std::vector<const BufferStore *> stores;
  for (const Stmt &item : items) {
    const auto *store = item.as<BufferStore>();
    if (!store || store->indices.size() != 1)
      return s;
    stores.push_back(store);
  }
  if (!independentLanes(stores))
    return s;
  LoopVectorizer lv(loop, static_cast<int>(*extent));
  std::vector<Stmt> out;
  for (const BufferStore *store : stores) {
    Stmt v = lv.store(store);
    if (lv.failed)
      return s;
    out.push_back(v);
  }
  return seq(std::move(out));
}

} // namespace

Func vectorizeLoops(const Func &func) {
  return mapBody(func, "vectorizeLoops takes a PrimFunc", [](const Stmt &body) {
    return rewriteLoops(body, ForKind::Vectorized, vectorizeLoop);
  });
}

} // namespace tdsl::lower
