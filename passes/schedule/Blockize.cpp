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
// Refused when: the subtree under `loop` is not a chain of loops ending in exactly one block;
// the block has a `where` (from a split that does not divide);
// a binding is not affine in the loop variables; its inner part does not range over [0, R)
// with R dividing the extent and the outer coefficients.

#include "passes/schedule/Primitives.h"

#include "ir/IRPrinter.h"
#include "passes/Simplify.h"

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
  // domains; TVM pads the outer block's domain then, which we do not support yet.
  if (!isConstInt(b->predicate, 1))
    throw ScheduleError("blockize of block '" + b->name +
                            "', which has a 'where' condition, is not supported",
                        b->loc, "block '" + b->name + "' is here");
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
    bool divides = ext && *ext % r == 0 && a->constant % r == 0;
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
    out.extent = intImm(*ext / r);
    out.binding = build(scaled, a->constant / r);
    out.loc = iv.loc;
    outerIters.push_back(out);
    Expr outerRef = VarRef::make(out.var);
    in.binding = simplify(r == 1 ? outerRef : outerRef * intImm(r) + build(innerTerms, 0));
    if (innerTerms.empty())
      in.binding = outerRef;
    innerIters.push_back(in);
  }

  // Step 3: rewrite — the inner block with new bindings, wrapped in the outer block.
  Stmt newInner = Block::make(b->name, innerIters, b->predicate, b->init, b->body, b->reads,
                              b->writes, b->allocBuffers, b->loc);
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
  Stmt outer = Block::make(name, outerIters, boolImm(true), Stmt(), body, {}, {}, {}, b->loc);
  // Step 4: replace.
  s.replace(loop, outer);
  return name;
}

} // namespace tdsl::schedule
