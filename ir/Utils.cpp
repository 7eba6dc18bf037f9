//===- ir/Utils.cpp - Small IR utilities shared by every pass -----------------------------===//
#include "ir/Utils.h"

#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

#include <algorithm>
#include <type_traits>

namespace tdsl::ir {

// ---------------------------------------------------------------------------------------------
// Variables
// ---------------------------------------------------------------------------------------------

namespace {

class Substituter : public IRMutator {
public:
  explicit Substituter(const std::function<Expr(const Var &)> &replace) : replace_(replace) {}

protected:
  Expr visit(const VarRef *op) override {
    Expr e = replace_(op->var);
    return e.defined() ? e : Expr(op);
  }

private:
  const std::function<Expr(const Var &)> &replace_;
};

/// Finds the uses of one variable, or collects every variable used.
struct VarUses : IRVisitor {
  const Var *wanted = nullptr;
  bool found = false;
  std::vector<Var> all;
  void visit(const VarRef *op) override {
    if (wanted) {
      found = found || op->var == *wanted;
      return;
    }
    if (std::find(all.begin(), all.end(), op->var) == all.end())
      all.push_back(op->var);
  }
};

std::function<Expr(const Var &)> lookup(const std::unordered_map<Var, Expr> &map) {
  return [&map](const Var &v) {
    auto it = map.find(v);
    return it == map.end() ? Expr() : it->second;
  };
}

} // namespace

Expr substitute(const Expr &e, const std::function<Expr(const Var &)> &replace) {
  return Substituter(replace).mutate(e);
}
Stmt substitute(const Stmt &s, const std::function<Expr(const Var &)> &replace) {
  return Substituter(replace).mutate(s);
}
Expr substitute(const Expr &e, const std::unordered_map<Var, Expr> &map) {
  return map.empty() ? e : substitute(e, lookup(map));
}
Stmt substitute(const Stmt &s, const std::unordered_map<Var, Expr> &map) {
  return map.empty() ? s : substitute(s, lookup(map));
}

Expr substituteLets(const Expr &e, const std::unordered_map<Var, Expr> &lets) {
  Expr out = e;
  for (size_t i = 0; i <= lets.size(); ++i) {
    Expr next = substitute(out, lets);
    if (next.sameAs(out))
      break;
    out = next;
  }
  return out;
}

/// The variables `node` (an Expr or a Stmt) uses, stopping at `wanted` when given.
template <typename Node> VarUses varUses(const Node &node, const Var *wanted) {
  VarUses uses;
  uses.wanted = wanted;
  if constexpr (std::is_same_v<Node, Expr>)
    uses.visitExpr(node);
  else
    uses.visitStmt(node);
  return uses;
}

bool usesVar(const Expr &e, const Var &var) { return varUses(e, &var).found; }
bool usesVar(const Stmt &s, const Var &var) { return varUses(s, &var).found; }
std::vector<Var> usedVars(const Expr &e) { return varUses(e, nullptr).all; }

namespace {

/// The operands of the chain of `Op` that `e` heads, appended to `out`.
template <typename Op> void operandsOf(const Expr &e, std::vector<Expr> &out) {
  if (const auto *op = e.as<Op>()) {
    operandsOf<Op>(op->a, out);
    operandsOf<Op>(op->b, out);
    return;
  }
  out.push_back(e);
}

} // namespace

std::pair<const Expr *, const Expr *> binaryOperands(const Expr &e) {
  switch (e.kind()) {
#define TDSL_IR_CASE(NAME)                                                                         \
  case ExprKind::NAME: {                                                                           \
    const auto *op = e.as<NAME>();                                                                 \
    return {&op->a, &op->b};                                                                       \
  }
    TDSL_FOR_EACH_BINARY_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  default:
    return {nullptr, nullptr};
  }
}

std::vector<Expr> conjuncts(const Expr &e) {
  std::vector<Expr> out;
  operandsOf<And>(e, out);
  return out;
}

std::vector<Expr> disjuncts(const Expr &e) {
  std::vector<Expr> out;
  operandsOf<Or>(e, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------------------------

std::vector<std::string> graphCallees(const GraphFunc &g) {
  std::vector<std::string> out;
  auto add = [&](const auto &binding) {
    const auto *c = std::get_if<CallBinding>(&binding);
    if (c && std::find(out.begin(), out.end(), c->callee) == out.end())
      out.push_back(c->callee);
  };
  for (const GraphItem &item : g.body) {
    add(item);
    if (const auto *df = std::get_if<DataflowBlock>(&item))
      std::for_each(df->bindings.begin(), df->bindings.end(), add);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rebuilding with one part changed
// ---------------------------------------------------------------------------------------------

namespace {

bool same(const Expr &a, const Expr &b) { return a.sameAs(b); }
bool same(const Stmt &a, const Stmt &b) { return a.sameAs(b); }
bool same(const Buffer &a, const Buffer &b) { return a.sameAs(b); }
bool same(const IterVar &a, const IterVar &b) {
  return a.var == b.var && a.kind == b.kind && a.extent.sameAs(b.extent) &&
         a.binding.sameAs(b.binding);
}
bool same(const Range &a, const Range &b) {
  return a.min.sameAs(b.min) && a.extent.sameAs(b.extent);
}
bool same(const BufferRegion &a, const BufferRegion &b);
template <typename T> bool same(const std::vector<T> &a, const std::vector<T> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const T &x, const T &y) { return same(x, y); });
}
bool same(const BufferRegion &a, const BufferRegion &b) {
  return a.buffer.sameAs(b.buffer) && same(a.region, b.region);
}

/// The parts of a Block that the helpers replace.
struct BlockParts {
  std::vector<IterVar> iterVars;
  Expr predicate;
  Stmt init, body;
  std::vector<BufferRegion> reads, writes;
  std::vector<Buffer> allocBuffers;

  explicit BlockParts(const Block *op)
      : iterVars(op->iterVars), predicate(op->predicate), init(op->init), body(op->body),
        reads(op->reads), writes(op->writes), allocBuffers(op->allocBuffers) {}
};

/// `op` itself when `value` is what `field` holds, else the block with `field` set to `value`.
template <typename T>
Stmt editBlock(const Block *op, T BlockParts::*field, T value, const T &current) {
  if (same(current, value))
    return op;
  BlockParts p(op);
  p.*field = std::move(value);
  return Block::make(op->name, std::move(p.iterVars), std::move(p.predicate), std::move(p.init),
                     std::move(p.body), std::move(p.reads), std::move(p.writes),
                     std::move(p.allocBuffers), op->loc);
}

const PrimFunc *primOf(const Func &func, const char *what) {
  const auto *op = func.as<PrimFunc>();
  TDSL_IR_CHECK(op, what);
  return op;
}

} // namespace

Stmt withBody(const For *op, Stmt body) {
  if (body.sameAs(op->body))
    return op;
  return For::make(op->loopVar, op->min, op->extent, op->forKind, std::move(body), op->threadTag,
                   op->loc);
}

Stmt withBody(const Block *op, Stmt body) {
  return editBlock(op, &BlockParts::body, std::move(body), op->body);
}
Stmt withPredicate(const Block *op, Expr predicate) {
  return editBlock(op, &BlockParts::predicate, std::move(predicate), op->predicate);
}
Stmt withIterVars(const Block *op, std::vector<IterVar> iterVars) {
  return editBlock(op, &BlockParts::iterVars, std::move(iterVars), op->iterVars);
}
Stmt withInit(const Block *op, Stmt init) {
  return editBlock(op, &BlockParts::init, std::move(init), op->init);
}
Stmt withRegions(const Block *op, std::vector<BufferRegion> reads,
                 std::vector<BufferRegion> writes) {
  Stmt s = editBlock(op, &BlockParts::reads, std::move(reads), op->reads);
  return editBlock(s.as<Block>(), &BlockParts::writes, std::move(writes), op->writes);
}
Stmt withAllocs(const Block *op, std::vector<Buffer> allocBuffers) {
  return editBlock(op, &BlockParts::allocBuffers, std::move(allocBuffers), op->allocBuffers);
}

Func withBody(const Func &func, Stmt body) {
  const PrimFunc *op = primOf(func, "withBody takes a PrimFunc");
  if (body.sameAs(op->body))
    return func;
  return PrimFunc::make(op->name, op->constVars, op->inputs, op->outputs, op->shapeVars,
                        op->allocBuffers, std::move(body), op->loc);
}

Func withAllocs(const Func &func, std::vector<Buffer> allocBuffers) {
  const PrimFunc *op = primOf(func, "withAllocs takes a PrimFunc");
  if (same(allocBuffers, op->allocBuffers))
    return func;
  return PrimFunc::make(op->name, op->constVars, op->inputs, op->outputs, op->shapeVars,
                        std::move(allocBuffers), op->body, op->loc);
}

Func mapBody(const Func &func, const char *what, const std::function<Stmt(const Stmt &)> &rewrite) {
  return withBody(func, rewrite(primOf(func, what)->body));
}

namespace {

bool loadsFrom(const Expr &e, const Buffer &buffer) {
  return e.defined() &&
         contains<BufferLoad>(e, [&](const BufferLoad *op) { return op->buffer == buffer; });
}

} // namespace

bool storesOnEveryPath(const Stmt &s, const Buffer &buffer) {
  if (!s.defined())
    return false;
  if (const auto *st = s.as<BufferStore>())
    return st->buffer == buffer;
  if (const auto *seq = s.as<SeqStmt>())
    return std::any_of(seq->seq.begin(), seq->seq.end(),
                       [&](const Stmt &x) { return storesOnEveryPath(x, buffer); });
  if (const auto *c = s.as<IfThenElse>())
    return storesOnEveryPath(c->thenCase, buffer) && storesOnEveryPath(c->elseCase, buffer);
  if (const auto *l = s.as<LetStmt>())
    return storesOnEveryPath(l->body, buffer);
  if (const auto *f = s.as<For>()) {
    std::optional<int64_t> n = asConstInt(f->extent);
    return n && *n > 0 && storesOnEveryPath(f->body, buffer);
  }
  return false;
}

const StmtNode *readBeforeWrite(const Stmt &s, const Buffer &buffer, bool written) {
  if (!s.defined() || written)
    return nullptr;
  if (const auto *st = s.as<BufferStore>()) {
    bool reads = loadsFrom(st->value, buffer);
    for (const Expr &i : st->indices)
      reads = reads || loadsFrom(i, buffer);
    return reads ? s.get() : nullptr;
  }
  if (const auto *seq = s.as<SeqStmt>()) {
    for (const Stmt &x : seq->seq) {
      if (const StmtNode *r = readBeforeWrite(x, buffer, written))
        return r;
      written = written || storesOnEveryPath(x, buffer);
    }
    return nullptr;
  }
  if (const auto *c = s.as<IfThenElse>()) {
    if (loadsFrom(c->condition, buffer))
      return s.get();
    if (const StmtNode *r = readBeforeWrite(c->thenCase, buffer))
      return r;
    return readBeforeWrite(c->elseCase, buffer);
  }
  if (const auto *l = s.as<LetStmt>())
    return loadsFrom(l->value, buffer) ? s.get() : readBeforeWrite(l->body, buffer);
  if (const auto *f = s.as<For>())
    return readBeforeWrite(f->body, buffer);
  if (const auto *b = s.as<Block>()) {
    if (storesOnEveryPath(b->init, buffer))
      return nullptr;
    if (const StmtNode *r = readBeforeWrite(b->init, buffer))
      return r;
    return readBeforeWrite(b->body, buffer);
  }
  // Anything else (a nested block, an evaluation): a read of the buffer at all.
  return contains<BufferLoad>(s, [&](const BufferLoad *op) { return op->buffer == buffer; })
             ? s.get()
             : nullptr;
}

const Block *readsInitialContents(const Func &func, const Buffer &buffer) {
  const auto *prim = func.as<PrimFunc>();
  if (!prim)
    return nullptr;
  bool written = false;
  const Block *found = nullptr;
  forEach<Block>(prim->body, [&](const Block *b) {
    if (found || written)
      return;
    bool writes =
        contains<BufferStore>(Stmt(b), [&](const BufferStore *op) { return op->buffer == buffer; });
    if (!storesOnEveryPath(b->init, buffer) &&
        (readBeforeWrite(b->init, buffer) || readBeforeWrite(b->body, buffer)))
      found = b;
    written = writes;
  });
  return found;
}

const std::vector<FuncParam> &calleeInputs(const Func &f) {
  if (auto *p = f.as<PrimFunc>())
    return p->inputs;
  if (auto *g = f.as<GraphFunc>())
    return g->inputs;
  return f.as<ExternFunc>()->inputs;
}

const std::vector<Buffer> &calleeOutputs(const Func &f) {
  if (auto *p = f.as<PrimFunc>())
    return p->outputs;
  if (auto *g = f.as<GraphFunc>())
    return g->results;
  return f.as<ExternFunc>()->outputs;
}

const std::vector<Var> &calleeShapeVars(const Func &f) {
  if (auto *p = f.as<PrimFunc>())
    return p->shapeVars;
  if (auto *g = f.as<GraphFunc>())
    return g->shapeVars;
  return f.as<ExternFunc>()->shapeVars;
}

Stmt explicitForm(const Stmt &s) {
  auto *b = s.as<Block>();
  if (!b)
    return s;
  // Named as the checker names them: loop `i`, axis `vi`.
  std::vector<IterVar> axes;
  std::vector<Var> loops;
  std::unordered_map<Var, Expr> toLoop, toAxis;
  for (IterVar iv : b->iterVars) {
    const std::string &name = iv.var.name();
    bool prefixed = name.size() > 1 && name[0] == 'v';
    Var loop(prefixed ? name.substr(1) : name, DType::i64(), iv.loc);
    Var axis(prefixed ? name : "v" + name, DType::i64(), iv.var->loc);
    toLoop[iv.var] = VarRef::make(loop);
    toAxis[iv.var] = VarRef::make(axis);
    iv.var = axis;
    iv.binding = VarRef::make(loop);
    loops.push_back(loop);
    axes.push_back(iv);
  }
  Stmt init = b->init.defined() ? substitute(b->init, toAxis) : Stmt();
  Stmt out = Block::make(b->name, axes, substitute(b->predicate, toLoop), init,
                         substitute(b->body, toAxis), b->reads, b->writes, b->allocBuffers, b->loc);
  for (size_t i = axes.size(); i-- > 0;)
    out = For::make(loops[i], intImm(0), axes[i].extent, ForKind::Serial, out, {}, b->loc);
  return out;
}

namespace {

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

} // namespace

int64_t unrolledSize(const Stmt &s) {
  if (!s.defined())
    return 0;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *f = s.as<For>();
    int64_t body = unrolledSize(f->body);
    std::optional<int64_t> extent = asConstInt(f->extent);
    if (f->forKind == ForKind::Unrolled && extent) {
      int64_t copies;
      if (__builtin_mul_overflow(body, std::max<int64_t>(*extent, 0), &copies))
        return INT64_MAX;
      return copies;
    }
    return saturatingAdd(body, 1);
  }
  case StmtKind::SeqStmt: {
    int64_t n = 0;
    for (const Stmt &x : s.as<SeqStmt>()->seq)
      n = saturatingAdd(n, unrolledSize(x));
    return n;
  }
  case StmtKind::Block: {
    const auto *b = s.as<Block>();
    return saturatingAdd(1, saturatingAdd(unrolledSize(b->init), unrolledSize(b->body)));
  }
  case StmtKind::IfThenElse: {
    const auto *i = s.as<IfThenElse>();
    return saturatingAdd(1, saturatingAdd(unrolledSize(i->thenCase), unrolledSize(i->elseCase)));
  }
  case StmtKind::LetStmt:
    return saturatingAdd(1, unrolledSize(s.as<LetStmt>()->body));
  case StmtKind::Allocate:
    return saturatingAdd(1, unrolledSize(s.as<Allocate>()->body));
  case StmtKind::AssertStmt:
    return saturatingAdd(1, unrolledSize(s.as<AssertStmt>()->body));
  case StmtKind::BufferView:
    return saturatingAdd(1, unrolledSize(s.as<BufferView>()->body));
  case StmtKind::ProfileRegion:
    return saturatingAdd(1, unrolledSize(s.as<ProfileRegion>()->body));
  default:
    return 1;
  }
}

} // namespace tdsl::ir
