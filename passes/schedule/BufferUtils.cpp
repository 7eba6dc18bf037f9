//===- passes/schedule/BufferUtils.cpp --------------------------------------------------------===//
//
// Implementation of passes/schedule/BufferUtils.h.

#include "passes/schedule/BufferUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <algorithm>
#include <set>

namespace tdsl::schedule {

using namespace ir;

// ---------------------------------------------------------------------------------------------
// Accesses
// ---------------------------------------------------------------------------------------------

std::vector<BufferAccess> accessesOf(const Block *block, const Buffer &buffer) {
  struct V : IRVisitor {
    const Buffer &buffer;
    std::vector<BufferAccess> out;
    explicit V(const Buffer &b) : buffer(b) {}
    void visit(const BufferLoad *op) override {
      if (op->buffer == buffer)
        out.push_back({op->indices, false});
      IRVisitor::visit(op);
    }
    void visit(const BufferStore *op) override {
      if (op->buffer == buffer)
        out.push_back({op->indices, true});
      IRVisitor::visit(op);
    }
  } v(buffer);
  v.visitStmt(block->init);
  v.visitStmt(block->body);
  return v.out;
}

bool blockReads(const Block *block, const Buffer &buffer) {
  for (const BufferAccess &a : accessesOf(block, buffer))
    if (!a.write)
      return true;
  return false;
}

bool blockWrites(const Block *block, const Buffer &buffer) {
  for (const BufferAccess &a : accessesOf(block, buffer))
    if (a.write)
      return true;
  return false;
}

std::vector<const Block *> writersOf(const ScheduleState &s, const Buffer &buffer) {
  std::vector<const Block *> out;
  for (const Block *b : s.blocks())
    if (blockWrites(b, buffer))
      out.push_back(b);
  return out;
}

Expr bindAxes(const Block *block, const Expr &e) {
  std::vector<std::pair<Var, Expr>> map;
  for (const IterVar &iv : block->iterVars)
    if (iv.binding.defined())
      map.emplace_back(iv.var, iv.binding);
  return simplify(substitute(e, map));
}

// ---------------------------------------------------------------------------------------------
// Buffers of the function
// ---------------------------------------------------------------------------------------------

void requireAlloc(const ScheduleState &s, const Buffer &buffer, const std::string &what) {
  if (buffer.role() == BufferRole::Alloc)
    return;
  std::string role = buffer.role() == BufferRole::Input ? "an input" : "an output";
  throw ScheduleError(what + " applies to intermediate buffers only, but '" + buffer.name() +
                          "' is " + role + " of '" + s.prim().name + "'",
                      buffer->loc, "'" + buffer.name() + "' declared here");
}

void requireWrites(const Block *block, const Buffer &buffer) {
  if (blockWrites(block, buffer))
    return;
  throw ScheduleError("block '" + block->name + "' does not write '" + buffer.name() + "'",
                      block->loc, "block '" + block->name + "' is here");
}

namespace {
struct BufferReplacer : IRMutator {
  const Buffer &old, &replacement;
  BufferReplacer(const Buffer &o, const Buffer &r) : old(o), replacement(r) {}
  Buffer mutateBuffer(const Buffer &b) override { return b == old ? replacement : b; }
};
} // namespace

void replaceBuffer(ScheduleState &s, const Buffer &old, const Buffer &replacement) {
  s.setFunc(BufferReplacer(old, replacement).mutateFunc(s.func()));
}

Stmt replaceBufferIn(const Stmt &stmt, const Buffer &old, const Buffer &replacement) {
  return BufferReplacer(old, replacement).mutate(stmt);
}

Buffer makeCacheBuffer(const ScheduleState &s, const Buffer &buffer, MemScope scope) {
  BufferSpec spec(buffer);
  spec.name = freshBufferName(s, buffer.name() + "_" + scopeName(scope));
  spec.role = BufferRole::Alloc;
  spec.scope = scope;
  spec.align.clear();
  return spec.make();
}

void addRootAlloc(ScheduleState &s, const Buffer &buffer) {
  const PrimFunc &p = s.prim();
  std::vector<Buffer> allocs = p.allocBuffers;
  allocs.push_back(buffer);
  s.setFunc(
      PrimFunc::make(p.name, p.constVars, p.inputs, p.outputs, p.shapeVars, allocs, p.body, p.loc));
}

std::string freshBlockName(const ScheduleState &s, const std::string &base) {
  std::set<std::string> taken;
  for (const Block *b : s.blocks())
    taken.insert(b->name);
  std::string name = base;
  for (int i = 1; taken.count(name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

std::string freshBufferName(const ScheduleState &s, const std::string &base) {
  std::set<std::string> taken;
  const PrimFunc &p = s.prim();
  for (const FuncParam &in : p.inputs)
    taken.insert(in.name());
  for (const Buffer &b : p.outputs)
    taken.insert(b.name());
  for (const Buffer &b : p.allocBuffers)
    taken.insert(b.name());
  for (const Block *blk : s.blocks())
    for (const Buffer &b : blk->allocBuffers)
      taken.insert(b.name());
  std::string name = base;
  for (int i = 1; taken.count(name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

namespace {

void insertNextTo(ScheduleState &s, const StmtNode *anchor, Stmt stmt, bool after) {
  std::vector<const StmtNode *> path = s.ancestors(anchor);
  if (!path.empty() && path.back()->kind == StmtKind::SeqStmt) {
    const auto *parent = static_cast<const SeqStmt *>(path.back());
    std::vector<Stmt> items;
    for (const Stmt &item : parent->seq) {
      if (item.get() == anchor && !after)
        items.push_back(stmt);
      items.push_back(item);
      if (item.get() == anchor && after)
        items.push_back(stmt);
    }
    s.replace(parent, seq(items));
    return;
  }
  Stmt self(anchor);
  s.replace(anchor, after ? seq({self, stmt}) : seq({stmt, self}));
}

} // namespace

std::vector<Var> varsInScope(const ScheduleState &s, const std::vector<const For *> &outer) {
  std::vector<Var> out = s.prim().shapeVars;
  out.insert(out.end(), s.prim().constVars.begin(), s.prim().constVars.end());
  for (const For *f : outer)
    out.push_back(f->loopVar);
  return out;
}

void insertBefore(ScheduleState &s, const StmtNode *anchor, Stmt stmt) {
  insertNextTo(s, anchor, std::move(stmt), false);
}
void insertAfter(ScheduleState &s, const StmtNode *anchor, Stmt stmt) {
  insertNextTo(s, anchor, std::move(stmt), true);
}

StagePoint stageBetween(const ScheduleState &s, const Block *producer, const Block *consumer) {
  std::vector<const StmtNode *> pp = s.ancestors(producer), pc = s.ancestors(consumer);
  pp.push_back(producer);
  pc.push_back(consumer);
  size_t common = 0;
  while (common < pp.size() && common < pc.size() && pp[common] == pc[common])
    ++common;
  TDSL_IR_CHECK(common < pc.size() && common < pp.size(), "a block encloses another block");
  StagePoint point;
  point.anchor = pc[common];
  for (size_t i = 0; i < pc.size(); ++i)
    if (pc[i]->kind == StmtKind::For)
      (i < common ? point.outer : point.inner).push_back(static_cast<const For *>(pc[i]));
  return point;
}

// ---------------------------------------------------------------------------------------------
// Regions
// ---------------------------------------------------------------------------------------------

namespace {

/// c + Σ coef·var, terms in order of first appearance (so printing is deterministic).
struct Linear {
  std::vector<std::pair<Var, int64_t>> terms;
  int64_t c = 0;

  void addTerm(const Var &v, int64_t k) {
    for (auto it = terms.begin(); it != terms.end(); ++it)
      if (it->first == v) {
        it->second += k;
        if (it->second == 0)
          terms.erase(it);
        return;
      }
    if (k != 0)
      terms.emplace_back(v, k);
  }
  bool isConst() const { return terms.empty(); }
  friend Linear operator+(Linear a, const Linear &b) {
    for (auto &[v, k] : b.terms)
      a.addTerm(v, k);
    a.c += b.c;
    return a;
  }
  friend Linear operator*(Linear a, int64_t k) {
    if (k == 0)
      return Linear{{}, 0};
    for (auto &t : a.terms)
      t.second *= k;
    a.c *= k;
    return a;
  }
  friend Linear operator-(const Linear &a, const Linear &b) { return a + b * -1; }
  static Linear constant(int64_t c) { return Linear{{}, c}; }

  /// Terms in order, then the constant: `j_0 * 4 - 1`, not `j_0 * 4 + -1`.
  Expr toExpr() const {
    Expr e;
    for (auto &[v, k] : terms) {
      int64_t mag = k < 0 && e.defined() ? -k : k;
      Expr t = mag == 1 ? Expr(VarRef::make(v)) : VarRef::make(v) * intImm(mag);
      if (!e.defined())
        e = t;
      else
        e = k < 0 ? e - t : e + t;
    }
    if (!e.defined())
      return intImm(c);
    if (c == 0)
      return e;
    return c < 0 ? e - intImm(-c) : e + intImm(c);
  }
};

/// The difference a - b when it is a constant.
std::optional<int64_t> constDiff(const Linear &a, const Linear &b) {
  Linear d = a - b;
  if (!d.isConst())
    return std::nullopt;
  return d.c;
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct Interval {
  Linear lo, hi;
};

/// Bounds of index expressions while `relaxed` loops run; other variables must be in `free`.
class Bounder {
public:
  Bounder(const std::vector<const For *> &relaxed, const std::set<const VarNode *> &free)
      : relaxed_(relaxed), free_(free) {}

  /// An exact linear form of `e` over free variables only.
  std::optional<Linear> exact(const Expr &e) {
    std::optional<Interval> r = bound(e);
    if (!r || !constDiff(r->hi, r->lo) || *constDiff(r->hi, r->lo) != 0)
      return std::nullopt;
    return r->lo;
  }

  std::optional<Interval> bound(const Expr &e) {
    if (!e.defined() || !e.dtype().isInt())
      return std::nullopt;
    switch (e.kind()) {
    case ExprKind::IntImm:
      return Interval{Linear::constant(e.as<IntImm>()->value),
                      Linear::constant(e.as<IntImm>()->value)};
    case ExprKind::VarRef: {
      const Var &v = e.as<VarRef>()->var;
      for (const For *f : relaxed_)
        if (f->loopVar == v) {
          std::optional<Linear> min = exact(f->min), extent = exact(f->extent);
          if (!min || !extent)
            return std::nullopt;
          return Interval{*min, *min + *extent - Linear::constant(1)};
        }
      if (!free_.count(v.get()))
        return std::nullopt;
      Linear l;
      l.addTerm(v, 1);
      return Interval{l, l};
    }
    case ExprKind::Add: {
      auto a = bound(e.as<Add>()->a), b = bound(e.as<Add>()->b);
      if (!a || !b)
        return std::nullopt;
      return Interval{a->lo + b->lo, a->hi + b->hi};
    }
    case ExprKind::Sub: {
      auto a = bound(e.as<Sub>()->a), b = bound(e.as<Sub>()->b);
      if (!a || !b)
        return std::nullopt;
      return Interval{a->lo - b->hi, a->hi - b->lo};
    }
    case ExprKind::Neg: {
      auto a = bound(e.as<Neg>()->a);
      if (!a)
        return std::nullopt;
      return Interval{a->hi * -1, a->lo * -1};
    }
    case ExprKind::Mul: {
      const auto *m = e.as<Mul>();
      std::optional<int64_t> k = asConstInt(m->b);
      Expr other = m->a;
      if (!k) {
        k = asConstInt(m->a);
        other = m->b;
      }
      if (!k)
        return std::nullopt;
      auto a = bound(other);
      if (!a)
        return std::nullopt;
      return *k >= 0 ? Interval{a->lo * *k, a->hi * *k} : Interval{a->hi * *k, a->lo * *k};
    }
    case ExprKind::Div: {
      const auto *d = e.as<Div>();
      std::optional<int64_t> k = asConstInt(d->b);
      auto a = bound(d->a);
      if (!k || *k <= 0 || !a)
        return std::nullopt;
      if (a->lo.isConst() && a->hi.isConst())
        return Interval{Linear::constant(floorDiv(a->lo.c, *k)),
                        Linear::constant(floorDiv(a->hi.c, *k))};
      // (k·X + c) / k == X + c / k when every coefficient is a multiple of k.
      if (Linear vars = a->lo - Linear::constant(a->lo.c);
          constDiff(a->hi, a->lo) && divisible(vars, *k)) {
        Linear q;
        for (auto &[v, c] : vars.terms)
          q.addTerm(v, c / *k);
        return Interval{q + Linear::constant(floorDiv(a->lo.c, *k)),
                        q + Linear::constant(floorDiv(a->hi.c, *k))};
      }
      return std::nullopt;
    }
    case ExprKind::Mod: {
      const auto *m = e.as<Mod>();
      std::optional<int64_t> k = asConstInt(m->b);
      if (!k || *k <= 0)
        return std::nullopt;
      Interval whole{Linear::constant(0), Linear::constant(*k - 1)};
      auto a = bound(m->a);
      if (!a)
        return whole;
      Linear vars = a->lo - Linear::constant(a->lo.c);
      if (!constDiff(a->hi, a->lo) || !divisible(vars, *k))
        return whole;
      int64_t lo = a->lo.c, hi = a->hi.c;
      if (floorDiv(lo, *k) != floorDiv(hi, *k))
        return whole;
      return Interval{Linear::constant(lo - floorDiv(lo, *k) * *k),
                      Linear::constant(hi - floorDiv(hi, *k) * *k)};
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      bool isMin = e.kind() == ExprKind::Min;
      Expr ea = isMin ? e.as<Min>()->a : e.as<Max>()->a,
           eb = isMin ? e.as<Min>()->b : e.as<Max>()->b;
      auto a = bound(ea), b = bound(eb);
      if (!a || !b)
        return std::nullopt;
      auto dl = constDiff(a->lo, b->lo), dh = constDiff(a->hi, b->hi);
      if (!dl || !dh)
        return std::nullopt;
      if (isMin)
        return Interval{*dl <= 0 ? a->lo : b->lo, *dh <= 0 ? a->hi : b->hi};
      return Interval{*dl >= 0 ? a->lo : b->lo, *dh >= 0 ? a->hi : b->hi};
    }
    case ExprKind::Select: {
      auto a = bound(e.as<Select>()->trueValue), b = bound(e.as<Select>()->falseValue);
      if (!a || !b)
        return std::nullopt;
      return unite(*a, *b);
    }
    default:
      return std::nullopt;
    }
  }

  static std::optional<Interval> unite(const Interval &a, const Interval &b) {
    auto dl = constDiff(a.lo, b.lo), dh = constDiff(a.hi, b.hi);
    if (!dl || !dh)
      return std::nullopt;
    return Interval{*dl <= 0 ? a.lo : b.lo, *dh >= 0 ? a.hi : b.hi};
  }

private:
  static bool divisible(const Linear &l, int64_t k) {
    for (auto &[v, c] : l.terms)
      if (c % k != 0)
        return false;
    return true;
  }

  const std::vector<const For *> &relaxed_;
  const std::set<const VarNode *> &free_;
};

} // namespace

Region relaxRegion(const ScheduleState &s, const Buffer &buffer,
                   const std::vector<std::vector<Expr>> &indices,
                   const std::vector<const For *> &relaxed, const std::vector<const For *> &outer) {
  std::set<const VarNode *> free, constantsOnly;
  for (const Var &v : varsInScope(s, outer))
    free.insert(v.get());
  for (const Var &v : varsInScope(s, {}))
    constantsOnly.insert(v.get());
  for (const For *f : relaxed)
    free.erase(f->loopVar.get());
  std::vector<const For *> everything = outer;
  everything.insert(everything.end(), relaxed.begin(), relaxed.end());
  Bounder bounder(relaxed, free), whole(everything, constantsOnly);

  // The union over the accesses of a dimension's interval, or nothing when unknown.
  auto unionOf = [&](Bounder &b, size_t d) -> std::optional<Interval> {
    std::optional<Interval> box;
    for (const auto &idx : indices) {
      std::optional<Interval> one = idx.size() == buffer.rank() ? b.bound(idx[d]) : std::nullopt;
      if (!one)
        return std::nullopt;
      box = box ? Bounder::unite(*box, *one) : one;
      if (!box)
        return std::nullopt;
    }
    return box;
  };

  Region r;
  for (size_t d = 0; d < buffer.rank(); ++d) {
    std::optional<Interval> box = indices.empty() ? std::nullopt : unionOf(bounder, d);
    std::optional<Interval> all = indices.empty() ? std::nullopt : unionOf(whole, d);
    std::optional<Linear> shape = bounder.exact(buffer.shape()[d]);
    bool guardLow = false, guardHigh = false;
    if (box) {
      // Clamp to [0, shape): a constant bound is clamped, a symbolic one that might leave the
      // buffer (over every iteration of the enclosing loops too) is guarded.
      if (box->lo.isConst() && box->lo.c < 0)
        box->lo = Linear::constant(0);
      else if (!box->lo.isConst())
        guardLow = !(all && all->lo.isConst() && all->lo.c >= 0);
      std::optional<int64_t> room =
          shape ? constDiff(*shape - Linear::constant(1), box->hi) : std::nullopt;
      std::optional<int64_t> roomAll =
          shape && all ? constDiff(*shape - Linear::constant(1), all->hi) : std::nullopt;
      if (room && *room < 0)
        box->hi = *shape - Linear::constant(1);
      else if (!room)
        guardHigh = !(roomAll && *roomAll >= 0);
      std::optional<int64_t> extent = constDiff(box->hi, box->lo);
      if (extent && *extent < 0)
        box.reset();
    }
    if (!box) {
      r.min.push_back(intImm(0));
      r.extent.push_back(buffer.shape()[d]);
      r.guardLow.push_back(false);
      r.guardHigh.push_back(false);
      continue;
    }
    r.min.push_back(box->lo.toExpr());
    r.extent.push_back((box->hi - box->lo + Linear::constant(1)).toExpr());
    r.guardLow.push_back(guardLow);
    r.guardHigh.push_back(guardHigh);
  }
  return r;
}

std::optional<Range> rangeOf(const ScheduleState &s, const Expr &e,
                             const std::vector<std::pair<Var, Expr>> &ranges) {
  std::vector<Stmt> holders;
  std::vector<const For *> loops;
  for (auto &[v, extent] : ranges) {
    holders.push_back(For::make(v, intImm(0), extent, ForKind::Serial, Evaluate::make(intImm(0))));
    loops.push_back(holders.back().as<For>());
  }
  std::set<const VarNode *> free;
  for (const Var &v : varsInScope(s, {}))
    free.insert(v.get());
  Bounder b(loops, free);
  std::optional<Interval> r = b.bound(e);
  if (!r)
    return std::nullopt;
  return Range{r->lo.toExpr(), (r->hi - r->lo + Linear::constant(1)).toExpr()};
}

Stmt copyNest(const std::string &blockName, const Buffer &src, const Buffer &dst,
              const Region &region, SourceLoc loc) {
  size_t rank = src.rank();
  std::vector<Var> loops, axes;
  std::vector<IterVar> iters;
  std::vector<Expr> idx;
  Expr predicate = boolImm(true);
  for (size_t d = 0; d < rank; ++d) {
    loops.push_back(freshVar("ax" + std::to_string(d), loc));
    axes.push_back(Var("v" + std::to_string(d), DType::i64(), loc));
    Expr binding = simplify(region.min[d] + VarRef::make(loops[d]));
    iters.push_back(IterVar{axes[d], IterKind::Spatial, src.shape()[d], binding, loc});
    idx.push_back(VarRef::make(axes[d]));
    if (region.guardLow[d])
      predicate = simplify(logicalAnd(predicate, ge(binding, intImm(0))));
    if (region.guardHigh[d])
      predicate = simplify(logicalAnd(predicate, lt(binding, src.shape()[d])));
  }
  Stmt body = BufferStore::make(dst, BufferLoad::make(src, idx, loc), idx, loc);
  Stmt nest = Block::make(blockName, iters, predicate, Stmt(), body, {}, {}, {}, loc);
  for (size_t d = rank; d-- > 0;)
    nest = For::make(loops[d], intImm(0), region.extent[d], ForKind::Serial, nest, {}, loc);
  return nest;
}

} // namespace tdsl::schedule
