//===- passes/schedule/Fuse.cpp ---------------------------------------------------------------===//
//
// fuse(l0, …, lk): consecutive perfectly nested loops into one.

#include "passes/schedule/Primitives.h"

#include "ir/Simplify.h"

namespace tdsl::schedule {

using namespace ir;

Var fuse(ScheduleState &s, const std::vector<Var> &loopVars) {
  // Step 1: check — consecutive, perfectly nested, starting at 0.
  if (loopVars.size() < 2)
    throw ScheduleError("fuse needs at least two loops");
  std::vector<const For *> loops;
  for (const Var &v : loopVars)
    loops.push_back(s.loop(v));
  for (size_t i = 0; i + 1 < loops.size(); ++i) {
    if (!loops[i]->body.sameAs(Stmt(loops[i + 1])))
      throw ScheduleError("loops '" + loopVars[i].name() + "' and '" + loopVars[i + 1].name() +
                              "' are not consecutive and perfectly nested",
                          loopVars[i]->loc,
                          "the body of '" + loopVars[i].name() + "' is not just loop '" +
                              loopVars[i + 1].name() + "'");
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    if (!isConstInt(loops[i]->min, 0))
      throw ScheduleError("loop '" + loopVars[i].name() + "' does not start at 0", loopVars[i]->loc,
                          "loop declared here");
    for (size_t j = 0; j < i; ++j)
      if (uses(loops[i]->extent, loopVars[j]))
        throw ScheduleError("the extent of loop '" + loopVars[i].name() + "' depends on loop '" +
                                loopVars[j].name() + "'",
                            loopVars[i]->loc, "loop declared here");
  }
  // Step 2: rewrite — l_i = (f / (e_{i+1} * … * e_k)) % e_i.
  std::string name;
  for (const Var &v : loopVars)
    name += (name.empty() ? "" : "_") + v.name();
  Var fused = freshVar(name + "_fused", loopVars[0]->loc);
  std::vector<std::pair<Var, Expr>> map;
  Expr inner = intImm(1);
  for (size_t i = loops.size(); i-- > 0;) {
    Expr v = VarRef::make(fused);
    if (!isConstInt(inner, 1))
      v = v / inner;
    if (i != 0)
      v = v % loops[i]->extent;
    map.emplace_back(loopVars[i], simplify(v));
    inner = simplify(inner * loops[i]->extent);
  }
  Stmt body = simplify(substitute(loops.back()->body, map));
  // Step 3: replace.
  s.replace(loops.front(),
            For::make(fused, intImm(0), inner, ForKind::Serial, body, {}, loops.front()->loc));
  return fused;
}

} // namespace tdsl::schedule
