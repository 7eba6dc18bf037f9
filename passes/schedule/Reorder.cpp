//===- passes/schedule/Reorder.cpp ------------------------------------------------------------===//
//
// reorder(l0, …, lk): permute loops of one perfectly nested chain.

#include "passes/schedule/Primitives.h"

#include "passes/schedule/Dependence.h"

#include <algorithm>
#include <map>
#include <set>

namespace tdsl::schedule {

using namespace ir;

void reorder(ScheduleState &s, const std::vector<Var> &order) {
  // Step 1: check — distinct loops on one chain, no block in between, no bound that depends
  // on a loop that would end up inside it.
  if (order.empty())
    throw ScheduleError("reorder needs at least one loop");
  std::set<const VarNode *> wanted;
  for (const Var &v : order) {
    s.loop(v);
    if (!wanted.insert(v.get()).second)
      throw ScheduleError("loop '" + v.name() + "' appears twice", v->loc, "loop declared here");
  }
  // The outermost given loop: the one none of the others encloses.
  const For *top = nullptr;
  for (const Var &v : order) {
    const For *f = s.loop(v);
    bool enclosed = false;
    for (const For *a : s.loopsAbove(f))
      enclosed |= wanted.count(a->loopVar.get()) != 0;
    if (!enclosed) {
      if (top)
        throw ScheduleError("loops '" + top->loopVar.name() + "' and '" + v.name() +
                                "' are not in one loop nest",
                            v->loc, "loop declared here");
      top = f;
    }
  }
  // Walk down the chain until every given loop has been seen.
  std::vector<const For *> chain;
  size_t seen = 0;
  const For *cur = top;
  while (true) {
    chain.push_back(cur);
    if (wanted.count(cur->loopVar.get()))
      ++seen;
    if (seen == wanted.size())
      break;
    const For *next = cur->body.as<For>();
    if (!next) {
      std::string what = cur->body.as<Block>() ? "block '" + cur->body.as<Block>()->name + "'"
                                               : "more than one statement";
      throw ScheduleError("the loops are not one perfectly nested chain: the body of '" +
                              cur->loopVar.name() + "' is " + what + ", not a single loop",
                          cur->loopVar->loc, "loop declared here");
    }
    cur = next;
  }
  // Step 2: the new chain: given loops fill the slots the given loops held, in the new order.
  std::vector<const For *> result = chain;
  size_t k = 0;
  for (const For *&slot : result)
    if (wanted.count(slot->loopVar.get()))
      slot = s.loop(order[k++]);
  for (size_t i = 0; i < result.size(); ++i)
    for (size_t j = i + 1; j < result.size(); ++j)
      if (uses(result[i]->min, result[j]->loopVar) || uses(result[i]->extent, result[j]->loopVar))
        throw ScheduleError("the bounds of loop '" + result[i]->loopVar.name() +
                                "' depend on loop '" + result[j]->loopVar.name() +
                                "', which would be inside it",
                            result[i]->loopVar->loc, "loop declared here");
  // A loop bound to both a spatial and a reduce axis of a block (what fusing the two makes)
  // interleaves reductions of different spatial points: moving it can run a reduction step of
  // a point before that point's init (which runs when the reduce axes are 0).
  for (size_t i = 0; i < result.size(); ++i) {
    if (result[i] == chain[i])
      continue;
    for (const Block *b : blocksIn(Stmt(chain.front()))) {
      const IterVar *sp = nullptr, *re = nullptr;
      for (const IterVar &iv : b->iterVars) {
        if (!iv.binding.defined() || !uses(iv.binding, result[i]->loopVar))
          continue;
        (iv.kind == IterKind::Spatial ? sp : re) = &iv;
      }
      if (sp && re)
        throw ScheduleError("loop '" + result[i]->loopVar.name() +
                                "' is bound to both spatial axis '" + sp->var.name() +
                                "' and reduce axis '" + re->var.name() + "' of block '" + b->name +
                                "'; moving it could run a reduction step before its init",
                            result[i]->loopVar->loc, "loop declared here");
    }
  }
  // A loop that changes place must not carry a dependence: its iterations would run in
  // another order relative to the loops it passes (a consumer reading what an earlier
  // iteration produced, `Y[vj - 1]`). A reduction's own update is no dependence.
  std::map<const VarNode *, LoopRange> varying = innerLoops(top);
  varying[top->loopVar.get()] = LoopRange{asConstInt(top->min), asConstInt(top->extent)};
  for (size_t i = 0; i < chain.size(); ++i) {
    if (result[i] == chain[i])
      continue;
    std::map<const VarNode *, LoopRange> others = varying;
    others.erase(chain[i]->loopVar.get());
    requireIndependentIterations(top, chain[i]->loopVar, others, /*allowSameIndexUpdates=*/true);
  }
  // Step 3: rebuild innermost first, then replace.
  Stmt body = chain.back()->body;
  for (size_t i = result.size(); i-- > 0;) {
    const For *f = result[i];
    body = For::make(f->loopVar, f->min, f->extent, f->forKind, body, f->threadTag, f->loc);
  }
  s.replace(top, body);
}

} // namespace tdsl::schedule
