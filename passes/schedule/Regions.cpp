//===- passes/schedule/Regions.cpp ------------------------------------------------------------===//
//
// Accesses and block surgery for the compute_at / compute_inline family (see Regions.h); the
// affine forms and interval bounds are ir/Arith.h's.

#include "passes/schedule/Regions.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"

#include <algorithm>

namespace tdsl::schedule {

using namespace ir;

// ---------------------------------------------------------------------------------------------
// Accesses
// ---------------------------------------------------------------------------------------------

namespace {

struct AccessCollector : IRVisitor {
  const Block *root;
  std::vector<Access> out;
  std::vector<std::pair<Var, Expr>> lets;
  std::vector<Expr> guards;

  explicit AccessCollector(const Block *r) : root(r) {}

  std::vector<Expr> withLets(const std::vector<Expr> &indices) const {
    std::vector<Expr> r;
    for (const Expr &e : indices)
      r.push_back(lets.empty() ? e : substitute(e, lets));
    return r;
  }
  void visit(const LetStmt *op) override {
    visitExpr(op->value);
    lets.emplace_back(op->var, lets.empty() ? op->value : substitute(op->value, lets));
    visitStmt(op->body);
    lets.pop_back();
  }
  void visit(const BufferLoad *op) override {
    out.push_back({op->buffer, withLets(op->indices), false, guards});
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    out.push_back({op->buffer, withLets(op->indices), true, guards});
    IRVisitor::visit(op);
  }
  void guarded(const Expr &condition, const Expr &branch) {
    guards.push_back(lets.empty() ? condition : substitute(condition, lets));
    visitExpr(branch);
    guards.pop_back();
  }
  void guarded(const Expr &condition, const Stmt &branch) {
    guards.push_back(lets.empty() ? condition : substitute(condition, lets));
    visitStmt(branch);
    guards.pop_back();
  }
  void visit(const Select *op) override {
    visitExpr(op->condition);
    guarded(op->condition, op->trueValue);
    guarded(logicalNot(op->condition), op->falseValue);
  }
  void visit(const IfThenElse *op) override {
    visitExpr(op->condition);
    guarded(op->condition, op->thenCase);
    if (op->elseCase.defined())
      guarded(logicalNot(op->condition), op->elseCase);
  }
  void visit(const Block *op) override {
    if (op != root)
      return;
    visitStmt(op->init);
    visitStmt(op->body);
  }
};

struct BufferUses : IRVisitor {
  std::unordered_set<Buffer> read, written;
  static BufferUses of(const Stmt &s) {
    BufferUses u;
    u.visitStmt(s);
    return u;
  }
  void visit(const BufferLoad *op) override {
    read.insert(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    written.insert(op->buffer);
    IRVisitor::visit(op);
  }
};

} // namespace

std::vector<Access> accessesOf(const Block *block) {
  AccessCollector c(block);
  c.visitStmt(Stmt(block));
  return c.out;
}

Domain narrowedByGuards(const Domain &dom, const std::vector<Expr> &guards) {
  Domain out = dom;
  for (const Expr &g : guards)
    for (const Expr &c : conjuncts(g)) {
      // `v >= e`, `v > e`, `v <= e`, `v < e` (and the same with the sides swapped).
      auto [pa, pb] = binaryOperands(c);
      if (!pa)
        continue;
      Expr a = *pa, b = *pb;
      ExprKind k = c.kind();
      if (!a.as<VarRef>() && b.as<VarRef>()) {
        std::swap(a, b);
        k = k == ExprKind::GE   ? ExprKind::LE
            : k == ExprKind::GT ? ExprKind::LT
            : k == ExprKind::LE ? ExprKind::GE
            : k == ExprKind::LT ? ExprKind::GT
                                : k;
      }
      const auto *v = a.as<VarRef>();
      if (!v)
        continue;
      for (auto &[var, range] : out) {
        if (!(var == v->var) || !range.bounded())
          continue;
        if (k == ExprKind::GE || k == ExprKind::GT) {
          Expr lo = k == ExprKind::GT ? canonical(b + 1) : canonical(b);
          if (std::optional<int64_t> d = constDiff(lo, range.min); d && *d > 0)
            range.min = lo;
        } else if (k == ExprKind::LE || k == ExprKind::LT) {
          Expr hi = k == ExprKind::LT ? canonical(b - 1) : canonical(b);
          if (std::optional<int64_t> d = constDiff(hi, range.max); d && *d < 0)
            range.max = hi;
        }
        break;
      }
    }
  return out;
}

std::unordered_set<Buffer> buffersRead(const Stmt &s) { return BufferUses::of(s).read; }
std::unordered_set<Buffer> buffersWritten(const Stmt &s) { return BufferUses::of(s).written; }

std::optional<std::vector<Interval>> accessRegion(const ScheduleState &s, const Block *block,
                                                  const Buffer &buffer, bool write,
                                                  const Domain &dom) {
  Domain d = dom;
  // The block's bindings, then those of the blocks around it (a blockized nest), innermost
  // first, so that indices end up in loop variables.
  std::vector<std::vector<std::pair<Var, Expr>>> levels(1);
  for (const IterVar &iv : block->iterVars) {
    if (iv.binding.defined())
      levels[0].emplace_back(iv.var, iv.binding);
    else
      d.emplace_back(iv.var, Interval::ofRange(intImm(0), iv.extent));
  }
  std::vector<const StmtNode *> above = s.ancestors(block);
  for (auto it = above.rbegin(); it != above.rend(); ++it) {
    if ((*it)->kind != StmtKind::Block)
      continue;
    levels.emplace_back();
    for (const IterVar &iv : static_cast<const Block *>(*it)->iterVars)
      if (iv.binding.defined())
        levels.back().emplace_back(iv.var, iv.binding);
  }
  std::optional<std::vector<Interval>> region;
  for (const Access &a : accessesOf(block)) {
    if (!(a.buffer == buffer) || a.write != write)
      continue;
    std::vector<Interval> r;
    for (const Expr &index : a.indices) {
      Expr e = index;
      for (const auto &level : levels)
        e = substitute(e, level);
      r.push_back(bound(e, d));
    }
    if (!region) {
      region = r;
      continue;
    }
    for (size_t i = 0; i < r.size() && i < region->size(); ++i)
      (*region)[i] = hull((*region)[i], r[i]);
  }
  return region;
}

Domain loopsBetween(const ScheduleState &s, const For *outer, const StmtNode *node) {
  Domain dom;
  bool inside = outer == nullptr;
  for (const For *f : s.loopsAbove(node)) {
    if (inside)
      addLoop(dom, f);
    if (f == outer)
      inside = true;
  }
  return dom;
}

Domain loopsAroundAndAt(const ScheduleState &s, const For *loop) {
  Domain dom;
  for (const For *f : s.loopsAbove(loop))
    addLoop(dom, f);
  addLoop(dom, loop);
  return dom;
}

std::optional<std::pair<size_t, Expr>> axisPlusOffset(const Block *block, const Expr &e) {
  std::vector<Var> axes;
  for (const IterVar &iv : block->iterVars)
    axes.push_back(iv.var);
  return ir::axisPlusOffset(axes, e);
}

std::vector<std::optional<Interval>> axisDomains(const Block *block,
                                                 const std::vector<Expr> &indices,
                                                 const std::vector<Interval> &region) {
  std::vector<std::optional<Interval>> out(block->iterVars.size());
  auto merge = [&](size_t k, const Interval &v) { out[k] = out[k] ? hull(*out[k], v) : v; };
  size_t n = std::min(indices.size(), region.size());
  for (size_t d = 0; d < n; ++d) {
    const Interval &r = region[d];
    if (!r.bounded())
      continue;
    if (std::optional<std::pair<size_t, Expr>> a = axisPlusOffset(block, indices[d])) {
      merge(a->first, {canonical(r.min - a->second), canonical(r.max - a->second)});
      continue;
    }
    // offset - axis
    if (std::optional<std::pair<size_t, Expr>> a =
            axisPlusOffset(block, canonical(Neg::make(indices[d])))) {
      merge(a->first,
            {canonical(Neg::make(a->second) - r.max), canonical(Neg::make(a->second) - r.min)});
      continue;
    }
  }
  // The digits `v / c` and `v % c` of one axis in two dimensions.
  auto digit = [&](const Expr &e, bool div) -> std::optional<std::pair<size_t, int64_t>> {
    const Expr *x = nullptr, *c = nullptr;
    if (auto *q = e.as<Div>(); q && div)
      x = &q->a, c = &q->b;
    if (auto *m = e.as<Mod>(); m && !div)
      x = &m->a, c = &m->b;
    if (!x)
      return std::nullopt;
    std::optional<size_t> k = plainAxis(block, *x);
    std::optional<int64_t> v = asConstInt(*c);
    if (!k || !v || *v <= 0)
      return std::nullopt;
    return std::pair{*k, *v};
  };
  for (size_t hi = 0; hi < n; ++hi)
    for (size_t lo = 0; lo < n; ++lo) {
      auto q = digit(indices[hi], true), m = digit(indices[lo], false);
      if (!q || !m || q->first != m->first || q->second != m->second)
        continue;
      const Interval &rq = region[hi], &rm = region[lo];
      if (!rq.bounded() || !rm.bounded())
        continue;
      Expr c = intImm(q->second);
      std::optional<int64_t> low = constDiff(rm.min, intImm(0)),
                             high = constDiff(rm.max, intImm(q->second - 1));
      if (low && high && *low <= 0 && *high >= 0)
        merge(q->first, {canonical(rq.min * c), canonical(rq.max * c + c - 1)});
      else if (std::optional<int64_t> same = constDiff(rq.max, rq.min); same && *same == 0)
        merge(q->first, {canonical(rq.min * c + rm.min), canonical(rq.min * c + rm.max)});
    }
  return out;
}

std::optional<size_t> plainAxis(const Block *block, const Expr &e) {
  auto *v = e.as<VarRef>();
  if (!v)
    return std::nullopt;
  for (size_t i = 0; i < block->iterVars.size(); ++i)
    if (block->iterVars[i].var == v->var)
      return i;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// `where` conditions
// ---------------------------------------------------------------------------------------------

namespace {

/// A side of a comparison that equals a binding becomes that iter var.
Expr toAxis(const Block *block, const Expr &side) {
  if (side.dtype() != DType::i64())
    return side;
  Expr c = canonical(side);
  for (const IterVar &iv : block->iterVars)
    if (iv.binding.defined() && equalExpr(c, canonical(iv.binding)))
      return VarRef::make(iv.var);
  return side;
}

/// Whether `cond` (in iter vars) holds on the whole domain of the block's axes.
bool impliedByDomain(const Block *block, const Expr &cond) {
  Domain dom;
  for (const IterVar &iv : block->iterVars)
    dom.emplace_back(iv.var, Interval::ofRange(intImm(0), iv.extent));
  auto proves = [&](const Expr &lo, const Expr &hi, int64_t slack) {
    return proveLE(lo + slack, hi, dom);
  };
  if (auto *n = cond.as<LT>())
    return proves(n->a, n->b, 1);
  if (auto *n = cond.as<LE>())
    return proves(n->a, n->b, 0);
  if (auto *n = cond.as<GT>())
    return proves(n->b, n->a, 1);
  if (auto *n = cond.as<GE>())
    return proves(n->b, n->a, 0);
  return false;
}

} // namespace

std::vector<Expr> predicateInAxes(const ScheduleState &s, const Block *block,
                                  const std::string &why) {
  std::vector<Expr> parts = conjuncts(block->predicate), kept;
  std::vector<Var> loopVars;
  struct LoopVars : IRVisitor {
    std::vector<Var> &out;
    explicit LoopVars(std::vector<Var> &o) : out(o) {}
    void visit(const For *op) override {
      out.push_back(op->loopVar);
      IRVisitor::visit(op);
    }
  } collect(loopVars);
  collect.visitStmt(s.prim().body);
  for (const Expr &part : parts) {
    if (isConstInt(part, 1))
      continue; // no `where`
    Expr c = part;
#define TDSL_REWRITE_CMP(NAME)                                                                     \
  if (auto *n = part.as<NAME>())                                                                   \
    c = NAME::make(toAxis(block, n->a), toAxis(block, n->b), part->loc);
    TDSL_FOR_EACH_CMP_NODE(TDSL_REWRITE_CMP)
#undef TDSL_REWRITE_CMP
    if (impliedByDomain(block, c))
      continue;
    for (const Var &v : loopVars)
      if (uses(c, v))
        throw ScheduleError("the 'where' condition '" + toString(part) + "' of block " +
                                quoted(block->name) + " depends on loop '" + v.name() +
                                "' in a way that is not a bound of its axes; " + why,
                            block->loc, "block " + quoted(block->name) + " is here");
    kept.push_back(c);
  }
  return kept;
}

// ---------------------------------------------------------------------------------------------
// Moving blocks
// ---------------------------------------------------------------------------------------------

Stmt makeLoopNest(const Block *block, const std::vector<Interval> &domains,
                  const std::vector<Expr> &extra, const Domain &outer, bool preserveUnitLoops) {
  TDSL_IR_CHECK(domains.size() == block->iterVars.size(), "one domain per iter var");
  std::vector<IterVar> ivs = block->iterVars;
  std::vector<std::pair<Var, Expr>> loops, bindings;
  Domain inner = outer;
  for (size_t k = 0; k < ivs.size(); ++k) {
    TDSL_IR_CHECK(domains[k].bounded(), "the domain of a moved block is bounded");
    Expr extent = domains[k].extent();
    Expr value;
    if (isConstInt(extent, 1) && !preserveUnitLoops) {
      value = canonical(domains[k].min);
    } else {
      Var ax = freshVar("ax" + std::to_string(loops.size()), block->loc);
      loops.emplace_back(ax, extent);
      inner.emplace_back(ax, Interval::ofRange(intImm(0), extent));
      value = canonical(domains[k].min + VarRef::make(ax));
    }
    ivs[k].binding = value;
    bindings.emplace_back(ivs[k].var, value);
  }
  Expr pred;
  auto conj = [&](const Expr &c) { pred = pred.defined() ? logicalAnd(pred, c) : c; };
  for (const Expr &c : extra)
    conj(simplify(substitute(c, bindings)));
  for (size_t k = 0; k < ivs.size(); ++k) {
    const Expr &value = ivs[k].binding;
    if (!proveLE(intImm(0), value, inner))
      conj(ge(value, intImm(0)));
    if (!proveLE(value, canonical(ivs[k].extent - 1), inner))
      conj(lt(value, ivs[k].extent));
  }
  Stmt body =
      Block::make(block->name, ivs, pred.defined() ? pred : boolImm(true), block->init, block->body,
                  block->reads, block->writes, block->allocBuffers, block->loc);
  for (size_t i = loops.size(); i-- > 0;)
    body = For::make(loops[i].first, intImm(0), loops[i].second, ForKind::Serial, body, {},
                     block->loc);
  return body;
}

namespace {

/// The innermost block around `node` (the scope it belongs to), or null at the top level.
const Block *scopeOf(const ScheduleState &s, const StmtNode *node) {
  std::vector<const StmtNode *> above = s.ancestors(node);
  for (auto it = above.rbegin(); it != above.rend(); ++it)
    if ((*it)->kind == StmtKind::Block)
      return static_cast<const Block *>(*it);
  return nullptr;
}

} // namespace

MovedBlock checkMovedBlock(ScheduleState &s, const std::string &primitive, const std::string &name,
                           const Var &loopVar) {
  MovedBlock m;
  m.block = s.block(name);
  m.loop = s.loop(loopVar);
  m.blockName = quoted(name);
  m.loopName = quoted(loopVar.name());
  m.note = "block " + m.blockName + " is here";
  checkLoopOutsideBlock(s, m.block, m.loop);
  // Blocks nested by blockize: the other blocks (the consumers or producers) may be nested,
  // but the moved block must be a leaf, and it moves among the loops of its own scope (TVM
  // refuses a loop of another scope too).
  for (const Stmt &part : {m.block->init, m.block->body})
    if (std::vector<const Block *> inner = blocksIn(part); !inner.empty())
      throw ScheduleError(primitive + " does not move a block that contains blocks yet (block " +
                              m.blockName + " contains block " + quoted(inner.front()->name) + ")",
                          m.block->loc, m.note);
  const Block *scope = scopeOf(s, m.block), *loopScope = scopeOf(s, m.loop);
  if (scope != loopScope) {
    const Block *other = loopScope ? loopScope : scope;
    throw ScheduleError((loopScope
                             ? "loop " + m.loopName + " is inside block " +
                                   quoted(loopScope->name) + " and block " + m.blockName + " is not"
                             : "block " + m.blockName + " is inside block " + quoted(scope->name) +
                                   " and loop " + m.loopName + " is not") +
                            "; " + primitive + " moves a block among the loops of its own scope",
                        other->loc, "block " + quoted(other->name) + " is here");
  }
  for (const IterVar &iv : m.block->iterVars)
    m.reduction |= iv.kind == IterKind::Reduce;
  if (m.reduction && !m.block->init.defined())
    throw ScheduleError("block " + m.blockName +
                            " has reduce axes but no init, so it is not a reduction block that "
                            "can be recomputed under a loop",
                        m.block->loc, m.note);
  m.written = buffersWritten(Stmt(m.block));
  m.read = buffersRead(Stmt(m.block));
  if (!m.reduction && !common(m.read, m.written).empty())
    throw ScheduleError("block " + m.blockName + " reads " +
                            bufferNames(common(m.read, m.written)) +
                            ", which it writes, so it is neither a complete block nor a "
                            "reduction block",
                        m.block->loc, m.note);
  return m;
}

void MovedBlock::refusePast(const Block *other, const std::unordered_set<Buffer> &clash,
                            const char *otherUses, const char *blockUses, const char *what) const {
  throw ScheduleError("block " + quoted(other->name) + " " + otherUses + " " + bufferNames(clash) +
                          ", which block " + blockName + " " + blockUses + "; moving " + blockName +
                          " under loop " + loopName + " would change " + what,
                      other->loc, "block " + quoted(other->name) + " is here");
}

std::unordered_map<Buffer, std::vector<Interval>>
regionInOneIteration(const ScheduleState &s, const For *loop,
                     const std::vector<const Block *> &blocks,
                     const std::unordered_set<Buffer> &buffers, bool write) {
  std::unordered_map<Buffer, std::vector<Interval>> region;
  for (const Block *b : blocks) {
    Domain dom = loopsBetween(s, loop, b);
    for (const Buffer &buf : buffers) {
      std::optional<std::vector<Interval>> r = accessRegion(s, b, buf, write, dom);
      if (!r)
        continue;
      auto [it, fresh] = region.emplace(buf, *r);
      if (!fresh)
        for (size_t d = 0; d < r->size(); ++d)
          it->second[d] = hull(it->second[d], (*r)[d]);
    }
  }
  return region;
}

std::vector<Interval>
domainsCovering(const Block *block, const std::vector<Access> &accesses,
                const std::unordered_map<Buffer, std::vector<Interval>> &region, bool write) {
  std::vector<std::optional<Interval>> demand(block->iterVars.size());
  for (const Access &a : accesses) {
    auto it = region.find(a.buffer);
    if (a.write != write || it == region.end())
      continue;
    std::vector<std::optional<Interval>> domains = axisDomains(block, a.indices, it->second);
    for (size_t k = 0; k < domains.size(); ++k) {
      if (!domains[k] || block->iterVars[k].kind != IterKind::Spatial)
        continue;
      std::optional<Interval> &slot = demand[k];
      slot = slot ? hull(*slot, *domains[k]) : *domains[k];
    }
  }
  std::vector<Interval> domains;
  for (size_t k = 0; k < demand.size(); ++k) {
    Interval whole = Interval::ofRange(intImm(0), block->iterVars[k].extent);
    if (!demand[k] || !demand[k]->bounded()) {
      domains.push_back(whole);
      continue;
    }
    // An axis takes no value outside its domain: a demand past it (`j` up to 16 for a read of
    // `Q[i, j - 1]` where Q has 16 columns, under `select(j >= 1, …)`) is clipped to it.
    Interval d = *demand[k];
    if (std::optional<int64_t> below = constDiff(d.min, whole.min); below && *below < 0)
      d.min = whole.min;
    if (std::optional<int64_t> above = constDiff(d.max, whole.max); above && *above > 0)
      d.max = whole.max;
    domains.push_back(d);
  }
  return domains;
}

const StmtNode *subtreeOf(const ScheduleState &s, const Block *block) {
  std::vector<const StmtNode *> path = s.ancestors(block);
  const StmtNode *cur = block;
  for (size_t i = path.size(); i-- > 0;) {
    const StmtNode *parent = path[i];
    if (parent->kind == StmtKind::For) {
      cur = parent;
      continue;
    }
    if (auto *sq = Stmt(parent).as<SeqStmt>(); sq && sq->seq.size() == 1) {
      cur = parent;
      continue;
    }
    break;
  }
  return cur;
}

std::vector<Stmt> bodyItems(const For *loop) {
  if (auto *sq = loop->body.as<SeqStmt>())
    return sq->seq;
  return {loop->body};
}

namespace {

struct Mover : IRMutator {
  const StmtNode *remove = nullptr;
  const For *target = nullptr;
  size_t position = 0;
  Stmt insert;

  Stmt visit(const SeqStmt *op) override {
    if (op == remove)
      return SeqStmt::make({});
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt &item : op->seq) {
      if (item.get() == remove) {
        changed = true;
        continue;
      }
      Stmt m = mutate(item);
      changed |= !m.sameAs(item);
      out.push_back(m);
    }
    return changed ? seq(std::move(out)) : Stmt(op);
  }
  Stmt visit(const For *op) override {
    if (op == remove)
      return SeqStmt::make({});
    if (op != target)
      return IRMutator::visit(op);
    std::vector<Stmt> items = bodyItems(op);
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(std::min(position, items.size())),
                 insert);
    return For::make(op->loopVar, op->min, op->extent, op->forKind, seq(std::move(items)),
                     op->threadTag, op->loc);
  }
  Stmt visit(const Block *op) override {
    if (op == remove)
      return SeqStmt::make({});
    return IRMutator::visit(op);
  }
};

} // namespace

void removeAndInsert(ScheduleState &s, const StmtNode *remove, const For *loop, size_t position,
                     const Stmt &insert) {
  Mover m;
  m.remove = remove;
  m.target = loop;
  m.position = position;
  m.insert = insert;
  s.setBody(m.mutate(s.prim().body));
}

const BufferStore *singleStore(const Block *block) { return block->body.as<BufferStore>(); }

const IterVar *firstReduceAxis(const Block *block) {
  for (const IterVar &iv : block->iterVars)
    if (iv.kind == IterKind::Reduce)
      return &iv;
  return nullptr;
}

void copySpatialAxes(const Block *block, std::vector<IterVar> &iters,
                     std::vector<std::pair<Var, Expr>> &axisMap) {
  for (const IterVar &iv : block->iterVars) {
    if (iv.kind != IterKind::Spatial)
      continue;
    Var copy(iv.var.name(), iv.var.dtype(), iv.var->loc);
    iters.push_back(IterVar{copy, IterKind::Spatial, iv.extent, iv.binding, iv.loc});
    axisMap.emplace_back(iv.var, VarRef::make(copy));
  }
}

namespace {

struct DropBuffer : IRMutator {
  Buffer buffer;
  static std::vector<BufferRegion> without(const std::vector<BufferRegion> &regions,
                                           const Buffer &b, bool &changed) {
    std::vector<BufferRegion> out;
    for (const BufferRegion &r : regions) {
      if (r.buffer == b)
        changed = true;
      else
        out.push_back(r);
    }
    return out;
  }
  Stmt visit(const Block *op) override {
    Stmt s = IRMutator::visit(op);
    auto *n = s.as<Block>();
    bool changed = false;
    std::vector<BufferRegion> reads = without(n->reads, buffer, changed),
                              writes = without(n->writes, buffer, changed);
    std::vector<Buffer> allocs;
    for (const Buffer &b : n->allocBuffers) {
      if (b == buffer)
        changed = true;
      else
        allocs.push_back(b);
    }
    if (!changed)
      return s;
    return Block::make(n->name, n->iterVars, n->predicate, n->init, n->body, reads, writes, allocs,
                       n->loc);
  }
};

} // namespace

void dropAllocation(ScheduleState &s, const Buffer &buffer) {
  DropBuffer d;
  d.buffer = buffer;
  s.setBody(d.mutate(s.prim().body));
  const PrimFunc &p = s.prim();
  std::vector<Buffer> allocs;
  for (const Buffer &b : p.allocBuffers)
    if (!(b == buffer))
      allocs.push_back(b);
  if (allocs.size() != p.allocBuffers.size())
    s.setFunc(PrimFunc::make(p.name, p.constVars, p.inputs, p.outputs, p.shapeVars, allocs, p.body,
                             p.loc));
}

size_t programIndex(const ScheduleState &s, const Block *block) {
  std::vector<const Block *> all = s.blocks();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == block)
      return i;
  TDSL_IR_CHECK(false, "block not in the function");
  return 0;
}

std::string quoted(const std::string &name) { return "'" + name + "'"; }

// ---------------------------------------------------------------------------------------------
// Checks shared by the primitives
// ---------------------------------------------------------------------------------------------

bool isWithin(const ScheduleState &s, const StmtNode *inner, const StmtNode *outer) {
  if (inner == outer)
    return true;
  for (const StmtNode *a : s.ancestors(inner))
    if (a == outer)
      return true;
  return false;
}

void checkLoopOutsideBlock(const ScheduleState &s, const Block *block, const For *loop) {
  const std::string &l = loop->loopVar.name();
  if (isWithin(s, block, loop))
    throw ScheduleError("block " + quoted(block->name) + " is already under loop " + quoted(l),
                        loop->loopVar->loc, "loop " + quoted(l) + " declared here");
  if (isWithin(s, loop, block))
    throw ScheduleError("loop " + quoted(l) + " is inside block " + quoted(block->name),
                        loop->loopVar->loc, "loop " + quoted(l) + " declared here");
}

void checkOnlyWriter(const ScheduleState &s, const Block *block,
                     const std::unordered_set<Buffer> &buffers) {
  for (const Block *other : s.blocks()) {
    if (isWithin(s, other, block))
      continue;
    std::unordered_set<Buffer> both = common(buffersWritten(Stmt(other)), buffers);
    if (both.empty())
      continue;
    throw ScheduleError("buffer " + bufferNames(both) + " is written by block " +
                            quoted(block->name) + " and by block " + quoted(other->name) +
                            "; the block must be its only producer",
                        other->loc, "block " + quoted(other->name) + " also writes it");
  }
}

std::string bufferNames(const std::unordered_set<Buffer> &buffers) {
  std::vector<std::string> names;
  for (const Buffer &b : buffers)
    names.push_back(quoted(b.name()));
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::unordered_set<Buffer> common(const std::unordered_set<Buffer> &a,
                                  const std::unordered_set<Buffer> &b) {
  std::unordered_set<Buffer> out;
  for (const Buffer &x : a)
    if (b.count(x))
      out.insert(x);
  return out;
}

} // namespace tdsl::schedule
