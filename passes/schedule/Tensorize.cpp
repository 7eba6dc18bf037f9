//===- passes/schedule/Tensorize.cpp ----------------------------------------------------------===//
//
// tensorize(loop, "NAME"): replaces the sub-tree under `loop` by the implementation of the
// tensor intrinsic NAME (`intrinsic NAME(DESC, IMPL);`, docs/schedules.md), as TVM does:
//
//   1. blockize(loop): the sub-tree becomes block B_o over a chain of loops and block B;
//   2. match B against the one block D of DESC: the same loop extents (in any order), the same
//      axes (kinds, in order), init on both or neither, and the same computation up to renaming
//      of variables and buffers, each buffer P of DESC standing for a buffer T of the function
//      of the same rank and dtype, accessed at DESC's indices plus an offset that depends on
//      B_o's axes only (the region's place in T; its strides are T's own);
//   3. B_o's body becomes a copy of IMPL's body (fresh variables, buffers and block names), each
//      access P[i…] rewritten T[i… + offset]; a block of the copy whose body then mentions an
//      axis of B_o gets an axis of that kind bound to it (a block body sees its own axes only).
//
// A block with a `where` (a split that does not divide: the last tile partial) is tensorized
// too: blockize keeps the bounds on the inner block; G, the condition that they hold for every
// iteration of the loops under `loop` (in B_o's axes), becomes a `where` of every block of
// IMPL's copy, and B_o's body is that copy followed by the original loops and B, B's `where`
// joined by not-G: full tiles run the micro-kernel and the partial one the original
// computation (lower.partition splits the loop that G depends on).
//
// Refused (each naming the rule): an unknown intrinsic; loops whose extents differ from DESC's;
// axes of other kinds or number; an init on one side only, or an init with B's reduction split
// across `loop` (decompose_reduction first); an access of another rank or dtype, or not DESC's
// plus an offset fixed by B_o's axes; any other difference in the computation; and whatever
// blockize refuses.

#include "passes/schedule/Primitives.h"

#include "ir/Arith.h"
#include "ir/FreshVarCopier.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"
#include "support/Join.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

namespace {

struct Access {
  Buffer buffer;
  std::vector<Expr> indices;
};

/// Every load and store, in traversal order.
struct AccessCollector : IRVisitor {
  std::vector<Access> accesses;
  void visit(const BufferLoad *op) override {
    accesses.push_back({op->buffer, op->indices});
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    accesses.push_back({op->buffer, op->indices});
    IRVisitor::visit(op);
  }
};

std::vector<Access> accessesOf(const Stmt &s) {
  AccessCollector c;
  if (s.defined())
    c.visitStmt(s);
  return c.accesses;
}

/// The computation without its indices: every index 0, buffers renamed by `buffers`, the
/// variables of `marks` replaced by distinct constants (so that they still compare by identity).
struct Skeleton : IRMutator {
  std::unordered_map<Buffer, Buffer> buffers;
  std::unordered_map<Var, Expr> marks;
  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers.find(b);
    return it == buffers.end() ? b : it->second;
  }
  std::vector<Expr> zeros(size_t n) { return std::vector<Expr>(n, intImm(0)); }

protected:
  Expr visit(const VarRef *op) override {
    auto it = marks.find(op->var);
    return it == marks.end() ? IRMutator::visit(op) : it->second;
  }
  Expr visit(const BufferLoad *op) override {
    return BufferLoad::make(mutateBuffer(op->buffer), zeros(op->indices.size()), op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    return BufferStore::make(mutateBuffer(op->buffer), mutate(op->value), zeros(op->indices.size()),
                             op->loc);
  }
};

std::string exprText(const Expr &e) { return toString(e); }

std::string bufferType(const Buffer &b) {
  return b.dtype().name() + "[" + join(b.shape(), ", ", exprText) + "]";
}

std::string accessString(const Buffer &b, const std::vector<Expr> &indices) {
  return b.name() + "[" + join(indices, ", ", exprText) + "]";
}

std::string extentList(const std::vector<int64_t> &extents) {
  return "[" + join(extents, ", ", [](int64_t n) { return std::to_string(n); }) + "]";
}

/// The loops of a chain from `s` down to its block, and that block (null when it is no chain).
const Block *chainOf(Stmt s, std::vector<const For *> &loops) {
  while (const For *f = s.as<For>()) {
    loops.push_back(f);
    s = f->body;
  }
  return s.as<Block>();
}

/// `a - b`, simplified: through the affine forms when both have one (so that `x * 2 + i - i`
/// is `x * 2`), else by the simplifier.
Expr offsetOf(const Expr &a, const Expr &b) {
  std::optional<Affine> fa = affine(a), fb = affine(b);
  if (!fa || !fb)
    return simplify(a - b);
  Affine diff = *fa;
  for (const auto &[v, c] : fb->terms)
    diff.add(v, -c);
  diff.constant -= fb->constant;
  Expr e;
  for (const auto &[v, c] : diff.terms) {
    if (c == 0)
      continue;
    Expr t = c == 1 ? Expr(VarRef::make(v)) : VarRef::make(v) * intImm(c);
    e = e.defined() ? e + t : t;
  }
  if (!e.defined())
    return intImm(diff.constant);
  return diff.constant ? simplify(e + intImm(diff.constant)) : e;
}

/// A region of a buffer of the function: what a parameter of the intrinsic stands for.
struct Binding {
  Buffer buffer;
  std::vector<Expr> offset;
};

/// The copy of the implementation's body placed in the outer block.
class Inliner : public FreshVarCopier {
public:
  /// `guard` (when defined): a condition on the outer block's axes that every block of the
  /// copy gets as a `where`.
  Inliner(const std::map<const BufferNode *, Binding> &params, const Block &outer,
          std::set<std::string> &taken, Expr guard)
      : params_(params), outer_(outer), taken_(taken), guard_(std::move(guard)) {}

  /// Fresh copies of the implementation's root allocations.
  std::vector<Buffer> copyAllocs(const std::vector<Buffer> &allocs) {
    std::vector<Buffer> out;
    for (const Buffer &b : allocs)
      out.push_back(renew(b));
    return out;
  }

protected:
  Expr visit(const VarRef *op) override {
    auto it = vars_.find(op->var);
    return it == vars_.end() ? IRMutator::visit(op) : Expr(VarRef::make(it->second, op->loc));
  }
  Expr visit(const BufferLoad *op) override {
    std::vector<Expr> idx;
    for (const Expr &e : op->indices)
      idx.push_back(mutate(e));
    auto it = params_.find(op->buffer.get());
    if (it == params_.end())
      return BufferLoad::make(mutateBuffer(op->buffer), idx, op->loc);
    return BufferLoad::make(it->second.buffer, shifted(idx, it->second.offset), op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    std::vector<Expr> idx;
    for (const Expr &e : op->indices)
      idx.push_back(mutate(e));
    Expr value = mutate(op->value);
    auto it = params_.find(op->buffer.get());
    if (it == params_.end())
      return BufferStore::make(mutateBuffer(op->buffer), value, idx, op->loc);
    return BufferStore::make(it->second.buffer, value, shifted(idx, it->second.offset), op->loc);
  }
  Stmt visit(const Block *op) override {
    std::vector<IterVar> ivs;
    for (const IterVar &iv : op->iterVars)
      ivs.push_back(renewIterVar(iv));
    std::vector<Buffer> allocs;
    for (const Buffer &b : op->allocBuffers)
      allocs.push_back(renew(b));
    Expr pred = mutate(op->predicate);
    Stmt init = mutate(op->init);
    Stmt body = mutate(op->body);
    // The offsets name the outer block's axes: give this block an axis for each it uses.
    std::unordered_map<Var, Expr> toAxis;
    for (const IterVar &o : outer_.iterVars) {
      if (!usesVar(body, o.var) && !(init.defined() && usesVar(init, o.var)) &&
          !usesVar(pred, o.var))
        continue;
      IterVar n;
      n.var = Var(o.var.name(), o.var.dtype(), o.var->loc);
      n.kind = o.kind;
      n.extent = o.extent;
      n.binding = VarRef::make(o.var);
      n.loc = o.loc;
      ivs.push_back(n);
      toAxis[o.var] = VarRef::make(n.var);
    }
    if (!toAxis.empty()) {
      body = substitute(body, toAxis);
      if (init.defined())
        init = substitute(init, toAxis);
      pred = substitute(pred, toAxis);
    }
    // The guard is a condition on the enclosing scope (the outer block's axes), as every `where`.
    if (guard_.defined())
      pred = isConstInt(pred, 1) ? guard_ : logicalAnd(pred, guard_);
    std::string name = outer_.name + "_" + op->name;
    for (int i = 1; taken_.count(name); ++i)
      name = outer_.name + "_" + op->name + "_" + std::to_string(i);
    taken_.insert(name);
    return Block::make(name, ivs, pred, init, body, {}, {}, allocs, op->loc);
  }

  void bindFresh(const Var &v, const Var &fresh) override { vars_[v] = fresh; }

private:
  using FreshVarCopier::renew;
  Buffer renew(const Buffer &b) {
    std::vector<Expr> shape;
    for (const Expr &e : b.shape())
      shape.push_back(mutate(e));
    Buffer fresh(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
    buffers_[b] = fresh;
    return fresh;
  }
  static std::vector<Expr> shifted(const std::vector<Expr> &idx, const std::vector<Expr> &off) {
    std::vector<Expr> out;
    for (size_t i = 0; i < idx.size(); ++i)
      out.push_back(isConstInt(off[i], 0) ? idx[i] : simplify(idx[i] + off[i]));
    return out;
  }

  const std::map<const BufferNode *, Binding> &params_;
  const Block &outer_;
  std::set<std::string> &taken_;
  Expr guard_;
  std::unordered_map<Var, Var> vars_;
};

} // namespace

void tensorize(ScheduleState &s, const Var &loopVar, const std::string &name) {
  // Step 1: the intrinsic, and the loops against the description's before blockize.
  const Module *module = s.module();
  const TensorIntrin *intrin = module ? module->lookupIntrinsic(name) : nullptr;
  if (!intrin) {
    std::string known;
    if (module)
      for (const TensorIntrin &t : module->intrinsics)
        known += (known.empty() ? "" : ", ") + t.name;
    throw ScheduleError("unknown intrinsic '" + name + "'" +
                            (known.empty()
                                 ? std::string("; declare one with 'intrinsic NAME(DESC, "
                                               "IMPL);' or import one (import \"intrin\")")
                                 : "; known: " + known),
                        loopVar->loc, "loop declared here");
  }
  const PrimFunc *desc = module->lookup(intrin->desc).as<PrimFunc>();
  const PrimFunc *impl = module->lookup(intrin->impl).as<PrimFunc>();
  if (!desc || !impl)
    throw ScheduleError("intrinsic '" + name + "' names '" + (desc ? intrin->impl : intrin->desc) +
                            "', which is not a func of this compilation",
                        loopVar->loc, "loop declared here");
  std::string what = "intrinsic '" + name + "' (description '" + desc->name + "')";
  std::vector<const For *> descLoops;
  const Block *d = chainOf(desc->body, descLoops);
  TDSL_IR_CHECK(d, "an intrinsic's description is not one block under loops");
  {
    std::vector<const For *> loops;
    chainOf(Stmt(s.loop(loopVar)), loops);
    std::vector<int64_t> have, want;
    for (const For *f : loops)
      if (auto e = asConstInt(f->extent))
        have.push_back(*e);
    for (const For *f : descLoops)
      want.push_back(*asConstInt(f->extent));
    std::vector<int64_t> a = have, b = want;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (have.size() == loops.size() && a != b)
      throw ScheduleError("the loops under '" + loopVar.name() + "' have extents " +
                              extentList(have) + ", " + what + " has " + extentList(want),
                          loopVar->loc, "loop declared here");
  }

  // Step 2: blockize, then match the inner block against the description's.
  std::string outerName = blockize(s, loopVar);
  const Block *outer = s.block(outerName);
  std::vector<const For *> loops;
  const Block *b = chainOf(outer->body, loops);
  TDSL_IR_CHECK(b, "blockize made no chain of loops");
  auto refuse = [&](const std::string &why) -> ScheduleError {
    return ScheduleError("block '" + b->name + "' does not match " + what + ": " + why,
                         loopVar->loc, "loop declared here");
  };
  auto kinds = [](const Block *blk) {
    std::string out;
    for (const IterVar &iv : blk->iterVars)
      out += std::string(out.empty() ? "" : ", ") +
             (iv.kind == IterKind::Spatial ? "spatial" : "reduce");
    return "(" + out + ")";
  };
  if (b->iterVars.size() != d->iterVars.size() || kinds(b) != kinds(d))
    throw refuse("its axes are " + kinds(b) + ", the description's " + kinds(d));
  if (b->init.defined() != d->init.defined())
    throw refuse(b->init.defined() ? "it has an init and the description has none (apply "
                                     "decompose_reduction first)"
                                   : "the description has an init and it has none");
  std::unordered_map<Var, Expr> outerZero;
  for (const IterVar &o : outer->iterVars)
    outerZero[o.var] = intImm(0);
  if (b->init.defined())
    for (const IterVar &iv : b->iterVars)
      for (const IterVar &o : outer->iterVars)
        if (iv.kind == IterKind::Reduce && uses(iv.binding, o.var))
          throw refuse("its reduction over axis '" + iv.var.name() +
                       "' is split across the tensorized loop and it has an init (apply "
                       "decompose_reduction first)");

  // The loops: paired through the bindings (the same axis bound to one loop on each side),
  // else in order.
  std::unordered_map<Var, Var> loopMap;
  std::set<const VarNode *> usedTarget;
  for (size_t i = 0; i < d->iterVars.size(); ++i) {
    Expr tb = simplify(substitute(b->iterVars[i].binding, outerZero));
    auto *dv = d->iterVars[i].binding.as<VarRef>();
    auto *tv = tb.as<VarRef>();
    if (!dv || !tv || loopMap.count(dv->var) || usedTarget.count(tv->var.get()))
      continue;
    loopMap[dv->var] = tv->var;
    usedTarget.insert(tv->var.get());
  }
  bool paired = loops.size() == descLoops.size();
  for (const For *f : descLoops)
    paired &= loopMap.count(f->loopVar) != 0;
  if (!paired) {
    loopMap.clear();
    for (size_t i = 0; i < std::min(loops.size(), descLoops.size()); ++i)
      loopMap[descLoops[i]->loopVar] = loops[i]->loopVar;
  }
  {
    std::vector<int64_t> have, want;
    for (const For *f : loops)
      have.push_back(asConstInt(f->extent).value_or(-1));
    for (const For *f : descLoops)
      want.push_back(*asConstInt(f->extent));
    bool same = loops.size() == descLoops.size();
    for (const For *f : descLoops)
      for (const For *g : loops)
        if (same && loopMap.count(f->loopVar) && loopMap[f->loopVar] == g->loopVar)
          same = asConstInt(g->extent) == asConstInt(f->extent);
    if (!same)
      throw refuse("the loops under '" + loopVar.name() + "' have extents " + extentList(have) +
                   ", the description's " + extentList(want));
  }

  // A `where` on B (bounds of its axes, kept by blockize): the condition under which it holds
  // for every iteration of the loops, each conjunct `x < y` / `x <= y` at the loops' worst
  // case (x - y affine in them).
  Expr guard;
  if (!isConstInt(b->predicate, 1)) {
    std::vector<Expr> parts;
    for (const Expr &c : conjuncts(b->predicate)) {
      Expr lhs, rhs;
      bool strict = true;
      if (auto *lt = c.as<LT>())
        lhs = lt->a, rhs = lt->b;
      else if (auto *le = c.as<LE>())
        lhs = le->a, rhs = le->b, strict = false;
      std::optional<Affine> diff = lhs.defined() ? affine(lhs - rhs) : std::nullopt;
      if (!diff)
        throw refuse("its 'where' condition '" + toString(c) +
                     "' is not a bound ('<' or '<=', affine in the loops under '" + loopVar.name() +
                     "'): only whole tiles run the micro-kernel");
      std::unordered_map<Var, Expr> worst;
      for (const For *f : loops) {
        int64_t c0 = diff->coeff(f->loopVar);
        worst[f->loopVar] = c0 > 0 ? simplify(f->min + f->extent - intImm(1)) : simplify(f->min);
      }
      Expr w = simplify(substitute(lhs, worst));
      Expr r = simplify(substitute(rhs, worst));
      // On one variable, solved for it (`vi_o < 170` rather than `vi_o * 6 + 5 < 1024`): the
      // form in which the checks of a parsed `where` narrow the axis bound to it.
      std::optional<Affine> g = affine(w - r);
      if (g && g->terms.size() == 1 && g->terms[0].second > 0) {
        int64_t c0 = g->terms[0].second, k = -g->constant; // c0 * x < k (or <=)
        auto floorDiv = [](int64_t a, int64_t d) { return a / d - (a % d != 0 && a < 0); };
        Expr x = VarRef::make(g->terms[0].first);
        parts.push_back(strict ? LT::make(x, intImm(-floorDiv(-k, c0)))
                               : LE::make(x, intImm(floorDiv(k, c0))));
        continue;
      }
      parts.push_back(strict ? LT::make(w, r) : LE::make(w, r));
    }
    for (const Expr &p : parts)
      guard = guard.defined() ? logicalAnd(guard, p) : p;
  }

  // Both blocks in terms of the target's loops (and the outer block's axes).
  std::unordered_map<Var, Expr> targetAxes, descAxes, descLoopRefs;
  for (const auto &[dv, tv] : loopMap)
    descLoopRefs[dv] = VarRef::make(tv);
  for (size_t i = 0; i < b->iterVars.size(); ++i) {
    targetAxes[b->iterVars[i].var] = b->iterVars[i].binding;
    descAxes[d->iterVars[i].var] = substitute(d->iterVars[i].binding, descLoopRefs);
  }
  // Floor divisions and modulos that the loops resolve (a B packed by transform_layout read as
  // B_global[(vj_o * 16 + j) / 16, k, (vj_o * 16 + j) % 16]) become their quotient and rest.
  auto resolved = [&](const Stmt &st) {
    Stmt wrapped = st;
    for (size_t i = loops.size(); i-- > 0;)
      wrapped =
          For::make(loops[i]->loopVar, loops[i]->min, loops[i]->extent, ForKind::Serial, wrapped);
    wrapped = resolveDivMod(wrapped);
    for (size_t i = 0; i < loops.size(); ++i)
      wrapped = wrapped.as<For>()->body;
    return wrapped;
  };
  Stmt tBody = resolved(substitute(b->body, targetAxes)), dBody = substitute(d->body, descAxes);
  Stmt tInit = b->init.defined() ? resolved(substitute(b->init, targetAxes)) : Stmt();
  Stmt dInit = d->init.defined() ? substitute(d->init, descAxes) : Stmt();

  // The regions: each parameter of the description is one buffer at one offset.
  std::vector<Access> ta = accessesOf(tInit), da = accessesOf(dInit);
  for (const Access &a : accessesOf(tBody))
    ta.push_back(a);
  for (const Access &a : accessesOf(dBody))
    da.push_back(a);
  auto computes = [](const Block *blk) {
    std::string text = toString(blk->body);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    size_t start = text.find_first_not_of(' ');
    return "'" + text.substr(start == std::string::npos ? 0 : start) + "'";
  };
  auto differs = [&] {
    return refuse("it computes " + computes(b) + ", the description " + computes(d));
  };
  if (ta.size() != da.size())
    throw differs();
  std::map<const BufferNode *, Binding> params;
  for (size_t i = 0; i < ta.size(); ++i) {
    const Access &t = ta[i], &p = da[i];
    if (p.buffer.dtype() != t.buffer.dtype())
      throw refuse("'" + t.buffer.name() + "' is " + bufferType(t.buffer) + " where '" +
                   p.buffer.name() + "' of the description is " + bufferType(p.buffer) +
                   " (another dtype)");
    if (p.buffer.rank() != t.buffer.rank())
      throw refuse("'" + t.buffer.name() + "' has rank " + std::to_string(t.buffer.rank()) +
                   " where '" + p.buffer.name() + "' of the description has rank " +
                   std::to_string(p.buffer.rank()));
    std::vector<Expr> offset;
    for (size_t k = 0; k < t.indices.size(); ++k) {
      Expr off = offsetOf(t.indices[k], p.indices[k]);
      for (const For *f : loops)
        if (uses(off, f->loopVar))
          throw refuse("the access " + accessString(t.buffer, t.indices) +
                       " is not the description's " + accessString(p.buffer, p.indices) +
                       " plus an offset fixed outside the loops");
      offset.push_back(off);
    }
    auto [it, inserted] = params.emplace(p.buffer.get(), Binding{t.buffer, offset});
    if (inserted)
      continue;
    bool same = it->second.buffer == t.buffer;
    for (size_t k = 0; same && k < offset.size(); ++k)
      same = equalExpr(it->second.offset[k], offset[k]);
    if (!same)
      throw refuse("'" + p.buffer.name() + "' of the description stands for two regions (" +
                   accessString(it->second.buffer, it->second.offset) + " and " +
                   accessString(t.buffer, offset) + ")");
  }
  std::vector<Buffer> descParams;
  for (const FuncParam &p : desc->inputs)
    descParams.push_back(p.buffer);
  descParams.insert(descParams.end(), desc->outputs.begin(), desc->outputs.end());
  for (const Buffer &p : descParams)
    if (!params.count(p.get()))
      throw refuse("the description never accesses its parameter '" + p.name() + "'");

  // The computation: the same once indices are set aside.
  Skeleton tk, dk;
  int64_t mark = 1000003;
  for (const For *f : loops) {
    tk.marks[f->loopVar] = dk.marks[f->loopVar] = intImm(mark++);
  }
  for (const IterVar &o : outer->iterVars)
    tk.marks[o.var] = dk.marks[o.var] = intImm(mark++);
  for (const auto &[p, binding] : params)
    dk.buffers[Buffer(p)] = binding.buffer;
  if (!structuralEqual(tk.mutate(tBody), dk.mutate(dBody)))
    throw differs();
  if (tInit.defined() && !structuralEqual(tk.mutate(tInit), dk.mutate(dInit)))
    throw refuse("its init " + toString(b->init) + " is not the description's " +
                 toString(d->init));

  // Step 3: the outer block runs the implementation on the matched regions.
  std::map<const BufferNode *, Binding> implParams;
  std::vector<Buffer> implTensors;
  for (const FuncParam &p : impl->inputs)
    implTensors.push_back(p.buffer);
  implTensors.insert(implTensors.end(), impl->outputs.begin(), impl->outputs.end());
  for (size_t i = 0; i < implTensors.size(); ++i)
    implParams[implTensors[i].get()] = params.at(descParams[i].get());
  std::set<std::string> taken;
  for (const Block *blk : s.blocks())
    taken.insert(blk->name);
  Inliner inliner(implParams, *outer, taken, guard);
  std::vector<Buffer> allocs = outer->allocBuffers;
  for (const Buffer &a : inliner.copyAllocs(impl->allocBuffers))
    allocs.push_back(a);
  Stmt body = inliner.mutate(impl->body);
  if (guard.defined()) {
    // The partial tiles: B where not G.
    Expr notGuard;
    for (const Expr &c : conjuncts(guard)) {
      Expr n = c.as<LT>() ? GE::make(c.as<LT>()->a, c.as<LT>()->b, c->loc)
                          : GT::make(c.as<LE>()->a, c.as<LE>()->b, c->loc);
      notGuard = notGuard.defined() ? logicalOr(notGuard, n) : n;
    }
    Stmt rest = Block::make(b->name, b->iterVars, logicalAnd(b->predicate, notGuard), b->init,
                            b->body, b->reads, b->writes, b->allocBuffers, b->loc);
    for (size_t i = loops.size(); i-- > 0;)
      rest = For::make(loops[i]->loopVar, loops[i]->min, loops[i]->extent, loops[i]->forKind, rest,
                       loops[i]->threadTag, loops[i]->loc);
    body = seq({body, rest}); // flat, as the parser builds it (the round trip, spec §6)
  }
  Stmt replaced = Block::make(outer->name, outer->iterVars, outer->predicate, Stmt(), body, {}, {},
                              allocs, outer->loc);
  // Step 4: replace.
  s.replace(outer, replaced);
}

} // namespace tdsl::schedule
