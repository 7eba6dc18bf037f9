//===- passes/schedule/Blockize.cpp -----------------------------------------------------------===//
//
// blockize(loop): makes the subtree under `loop` one block.
//
// for i_0 in 0..4 {                      for i_0 in 0..4 {
// for i_1 in 0..4 {                      block B_o(vi_o: spatial 4 = i_0) {
// block B(vi: spatial 16      -->        for i_1 in 0..4 {
// = i_0 * 4 + i_1) {…}             block B(vi: spatial 16 = vi_o * 4 + i_1) {…}
//
// Each binding of the inner block splits into an outer part (loops outside `loop`) and an
// inner part (loops from `loop` down): `outer * R + inner` with `inner` in [0, R). The outer
// block gets an axis `vi_o = outer` of extent extent / R with the inner axis' kind; the inner
// binding becomes `vi_o * R + inner`. An axis bound only by inner loops gets no outer axis.
//
// A `where` made of bounds of the axes (a split that does not divide: `i_0 * 6 + i_1 < 16`) is
// kept on the inner block, rewritten `vi_o * 6 + i_1 < 16`; an axis so guarded may have an
// extent R does not divide (its outer axis then has extent ceil(extent / R), the last outer
// iteration partial), as TVM pads the outer block's domain; where the loops run past that
// domain, the outer block gets the bound of its axis as its `where`.
//
// Refused when: the subtree under `loop` is not a chain of loops ending in exactly one block;
// the block has a `where` that depends on the loops other than through the bounds of its axes;
// a binding is not affine in the loop variables; its inner part does not range over [0, R)
// with R dividing the outer coefficients, and the extent too unless the `where` bounds the
// axis.

#include "passes/schedule/Primitives.h"
#include "passes/schedule/Regions.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"

#include <map>
#include <set>

namespace tdsl::schedule {

using namespace ir;

namespace {

Expr build(const std::vector<std::pair<Var, int64_t>> &terms, int64_t constant) {
  Expr e;
  for (const auto &[v, c] : terms) {
    if (c == 0)
      continue;
    Expr t = c == 1 ? Expr(VarRef::make(v)) : VarRef::make(v) * intImm(c);
    e = e.defined() ? e + t : t;
  }
  if (!e.defined())
    return intImm(constant);
  return constant ? simplify(e + intImm(constant)) : e;
}

} // namespace

std::string blockize(ScheduleState &s, const Var &loopVar) {
  // Step 1: check — a chain of loops from `loop` down to exactly one block.
  const For *loop = s.loop(loopVar);
  std::vector<const Block *> inner = blocksIn(Stmt(loop));
  if (inner.size() != 1)
    throw ScheduleError("blockize needs exactly one block under loop '" + loopVar.name() +
                            "', found " + std::to_string(inner.size()),
                        loopVar->loc, "loop declared here");
  const Block *b = inner.front();
  // A `where` (a split that does not divide) lets the outer loops run past the outer axes'
  // domains: the outer block's domain is padded and the inner block keeps the bounds. Other
  // conditions on the loops cannot be rewritten in terms of the outer block's axes.
  bool guarded = !isConstInt(b->predicate, 1);
  std::vector<Expr> extraConds;
  if (guarded)
    extraConds = predicateInAxes(s, b, "blockize keeps only bounds of the axes");
  std::set<const VarNode *> innerLoops;
  for (const For *f = loop;;) {
    innerLoops.insert(f->loopVar.get());
    if (f->body.as<Block>())
      break;
    const For *next = f->body.as<For>();
    if (!next)
      throw ScheduleError("the loops under '" + loopVar.name() +
                              "' must form one chain down to block '" + b->name + "'",
                          f->loopVar->loc, "the body of this loop is not a single loop or block");
    f = next;
  }
  std::map<const VarNode *, int64_t> extents;
  for (const For *f = loop;; f = f->body.as<For>()) {
    auto ext = asConstInt(f->extent);
    if (!isConstInt(f->min, 0) || !ext)
      throw ScheduleError("loop '" + f->loopVar.name() +
                              "' under the blockized loop needs a constant extent from 0",
                          f->loopVar->loc, "loop declared here");
    extents[f->loopVar.get()] = *ext;
    if (f->body.as<Block>())
      break;
  }

  // Step 2: split each binding into outer * R + inner.
  std::vector<IterVar> outerIters, innerIters;
  std::vector<std::pair<Var, Expr>> outerBindings;
  // The outer block's `where`: under a `where` the loops may run past an outer axis' domain
  // (a split by 5 of 7 rows in tiles of 2: i_0 reaches 4, the outer axis has 4 values).
  Expr outerPredicate;
  std::vector<const For *> allLoops;
  {
    struct Loops : IRVisitor {
      std::vector<const For *> &out;
      explicit Loops(std::vector<const For *> &o) : out(o) {}
      void visit(const For *op) override {
        out.push_back(op);
        IRVisitor::visit(op);
      }
    } collect(allLoops);
    collect.visitStmt(s.prim().body);
  }
  auto maxOver = [&](const Expr &e) -> std::optional<int64_t> {
    std::optional<Affine> a = affine(e);
    if (!a)
      return std::nullopt;
    int64_t max = a->constant;
    for (const auto &[v, c] : a->terms) {
      std::optional<int64_t> ext;
      for (const For *f : allLoops)
        if (f->loopVar == v && isConstInt(f->min, 0))
          ext = asConstInt(f->extent);
      if (!ext || c < 0)
        return std::nullopt;
      max += c * (*ext - 1);
    }
    return max;
  };
  for (const IterVar &iv : b->iterVars) {
    std::optional<Affine> a = affine(iv.binding);
    if (!a)
      throw ScheduleError("the binding of axis '" + iv.var.name() + "' (" + toString(iv.binding) +
                              ") is not affine in the loop variables",
                          b->loc, "block '" + b->name + "' is here");
    std::vector<std::pair<Var, int64_t>> outerTerms, innerTerms;
    int64_t innerMax = 0;
    for (const auto &[v, c] : a->terms) {
      if (!innerLoops.count(v.get())) {
        outerTerms.emplace_back(v, c);
        continue;
      }
      if (c < 0)
        throw ScheduleError("the binding of axis '" + iv.var.name() + "' decreases with loop '" +
                                v.name() + "'",
                            b->loc, "block '" + b->name + "' is here");
      innerTerms.emplace_back(v, c);
      innerMax += c * (extents[v.get()] - 1);
    }
    IterVar in = iv;
    if (outerTerms.empty()) { // bound by inner loops only
      innerIters.push_back(in);
      continue;
    }
    int64_t r = innerTerms.empty() ? 1 : innerMax + 1;
    auto ext = asConstInt(iv.extent);
    bool divides = ext && (*ext % r == 0 || guarded) && a->constant % r == 0;
    for (const auto &[v, c] : outerTerms)
      divides &= c % r == 0;
    if (!divides)
      throw ScheduleError("the binding of axis '" + iv.var.name() + "' (" + toString(iv.binding) +
                              ") does not split into an outer part times " + std::to_string(r) +
                              " plus an inner part in [0, " + std::to_string(r) + ")",
                          b->loc, "block '" + b->name + "' is here");
    std::vector<std::pair<Var, int64_t>> scaled;
    for (const auto &[v, c] : outerTerms)
      scaled.emplace_back(v, c / r);
    IterVar out;
    out.var = Var(iv.var.name() + "_o", DType::i64(), iv.var->loc);
    out.kind = iv.kind;
    out.extent = intImm((*ext + r - 1) / r);
    out.binding = build(scaled, a->constant / r);
    out.loc = iv.loc;
    if (guarded) {
      std::optional<int64_t> max = maxOver(out.binding);
      if (!max || *max >= *asConstInt(out.extent)) {
        Expr bound = LT::make(out.binding, out.extent);
        outerPredicate = outerPredicate.defined() ? logicalAnd(outerPredicate, bound) : bound;
      }
    }
    outerIters.push_back(out);
    Expr outerRef = VarRef::make(out.var);
    in.binding = simplify(r == 1 ? outerRef : outerRef * intImm(r) + build(innerTerms, 0));
    if (innerTerms.empty())
      in.binding = outerRef;
    innerIters.push_back(in);
  }

  // The inner block's `where`: each axis whose new binding can pass its extent bounded, and the
  // conditions on the axes themselves, in terms of the new bindings.
  Expr predicate = b->predicate;
  if (guarded) {
    predicate = Expr();
    std::unordered_map<Var, Expr> toBinding;
    for (size_t k = 0; k < innerIters.size(); ++k) {
      toBinding[innerIters[k].var] = innerIters[k].binding;
      auto ext = asConstInt(innerIters[k].extent);
      std::optional<Affine> a = affine(innerIters[k].binding);
      bool within = ext && a && a->constant >= 0;
      int64_t max = a ? a->constant : 0;
      for (size_t t = 0; within && t < a->terms.size(); ++t) {
        const auto &[v, c] = a->terms[t];
        int64_t extent = -1;
        if (extents.count(v.get()))
          extent = extents[v.get()];
        for (const IterVar &o : outerIters)
          if (o.var == v)
            extent = *asConstInt(o.extent);
        within = extent > 0 && c >= 0;
        max += c * (extent - 1);
      }
      if (within && max < *ext)
        continue;
      Expr bound = LT::make(innerIters[k].binding, innerIters[k].extent);
      predicate = predicate.defined() ? logicalAnd(predicate, bound) : bound;
    }
    for (const Expr &c : extraConds) {
      Expr e = substitute(c, toBinding);
      predicate = predicate.defined() ? logicalAnd(predicate, e) : e;
    }
    if (!predicate.defined())
      predicate = boolImm(true);
  }

  // Step 3: rewrite — the inner block with new bindings, wrapped in the outer block.
  Stmt newInner = Block::make(b->name, innerIters, predicate, b->init, b->body, b->reads, b->writes,
                              b->allocBuffers, b->loc);
  // Rebuild the loop chain around the new inner block.
  std::vector<const For *> chain;
  for (const For *f = loop;; f = f->body.as<For>()) {
    chain.push_back(f);
    if (f->body.as<Block>())
      break;
  }
  Stmt body = newInner;
  for (size_t i = chain.size(); i-- > 0;)
    body = For::make(chain[i]->loopVar, chain[i]->min, chain[i]->extent, chain[i]->forKind, body,
                     chain[i]->threadTag, chain[i]->loc);
  std::string name = b->name + "_o";
  for (const Block *other : s.blocks())
    if (other->name == name)
      throw ScheduleError("a block named '" + name + "' already exists");
  Stmt outer =
      Block::make(name, outerIters, outerPredicate.defined() ? outerPredicate : boolImm(true),
                  Stmt(), body, {}, {}, {}, b->loc);
  // Step 4: replace.
  s.replace(loop, outer);
  return name;
}

} // namespace tdsl::schedule
