//===- passes/schedule/DecomposeReduction.cpp -------------------------------------------------===//
//
// decompose_reduction(block, loop): a block's init becomes its own
// block, placed just before `loop`.

#include "passes/schedule/Primitives.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/schedule/BufferUtils.h"
#include "passes/schedule/Dependence.h"
#include "passes/schedule/Regions.h"

#include <algorithm>

namespace tdsl::schedule {

using namespace ir;

/// decompose_reduction(Y, k) (TVM's decompose_reduction): Y loses its init; a block Y_init
/// with Y's spatial axes runs the init, just before loop k, inside the loops above k. The loops
/// from k down to Y that the spatial axes use are copied above Y_init (`<loop>_init`, same range
/// and kind); the other loops at or below k are dropped. Y_init runs where Y's first reduction
/// step would (spec §5): Y's `where` with the dropped loops at their start, and each dropped
/// loop's extent positive (a reduction of extent 0 has no first step and no init).
///
///   for i in 0..128 { for j_0 in 0..32 { for k in 0..128 { for j_1 in 0..4 {
///     block Y(vi: spatial 128 = i, vj: spatial 128 = j_0 * 4 + j_1, vk: reduce 128 = k) {
///       init { Y[vi, vj] = 0.0; }
///       Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]; } } } } }
/// becomes
///   for i in 0..128 { for j_0 in 0..32 {
///     for j_1_init in 0..4 {
///       block Y_init(vi: spatial 128 = i, vj: spatial 128 = j_0 * 4 + j_1_init) { Y[vi, vj] = 0.0;
///       } }
///     for k in 0..128 { for j_1 in 0..4 {
///       block Y(vi: spatial 128 = i, vj: spatial 128 = j_0 * 4 + j_1, vk: reduce 128 = k) {
///         Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]; } } } } }
///
/// Refused when Y has no init, when k does not enclose Y, when a loop above k is bound to a
/// reduce axis of Y (the init would then run in the middle of the reduction), and when a loop
/// from k down is bound to no axis of Y (as compute_at makes when it recomputes a reduction:
/// every iteration of that loop needs the init again), when the bindings are not quasi-affine
/// and one-to-one in the reduce loops (`k * k / 2`), and when a reduce axis is not 0 at the
/// start of the dropped loops.
std::string decomposeReduction(ScheduleState &s, const std::string &blockName, const Var &loopVar) {
  requireNoNestedBlocks(s, "decompose_reduction");
  // Step 1: check.
  const Block *block = s.block(blockName);
  const For *loop = s.loop(loopVar);
  if (!block->init.defined())
    throw ScheduleError("block '" + blockName + "' has no init to decompose", block->loc,
                        "block '" + blockName + "' is here");
  for (const IterVar &iv : block->iterVars) {
    bool used = false;
    struct U : IRVisitor {
      const Var &v;
      bool &used;
      U(const Var &x, bool &u) : v(x), used(u) {}
      void visit(const VarRef *op) override { used |= op->var == v; }
    } u(iv.var, used);
    u.visitStmt(block->init);
    if (iv.kind == IterKind::Reduce && used)
      throw ScheduleError("the init of block '" + blockName + "' uses reduce axis '" +
                              iv.var.name() + "', which the init block would not have",
                          block->loc, "block '" + blockName + "' is here");
  }
  std::vector<const For *> loops = s.loopsAbove(block);
  auto at = std::find(loops.begin(), loops.end(), loop);
  if (at == loops.end())
    throw ScheduleError("loop '" + loopVar.name() + "' does not enclose block '" + blockName + "'",
                        loopVar->loc, "loop declared here");
  for (auto it = loops.begin(); it != at; ++it)
    for (const IterVar &iv : block->iterVars)
      if (iv.kind == IterKind::Reduce && iv.binding.defined() && uses(iv.binding, (*it)->loopVar))
        throw ScheduleError("loop '" + (*it)->loopVar.name() + "', above '" + loopVar.name() +
                                "', is bound to reduce axis '" + iv.var.name() + "' of block '" +
                                blockName + "'; the init must be placed above every reduce loop",
                            (*it)->loopVar->loc, "loop declared here");

  for (auto it = at; it != loops.end(); ++it) {
    bool bound = false;
    for (const IterVar &iv : block->iterVars)
      bound |= iv.binding.defined() && uses(iv.binding, (*it)->loopVar);
    if (!bound)
      throw ScheduleError(
          "loop '" + (*it)->loopVar.name() + "' is bound to no axis of block '" + blockName +
              "': each of its iterations redoes the reduction, which needs the init every time",
          (*it)->loopVar->loc, "loop declared here");
  }

  requireAffineReduceBindings(s, block, "decompose_reduction");

  // Step 2: the init block — the spatial axes, copied, with the same bindings.
  std::vector<IterVar> iters;
  std::vector<std::pair<Var, Expr>> axisMap;
  copySpatialAxes(block, iters, axisMap);
  Stmt initBody = substitute(block->init, axisMap);

  // Step 3: the loops from `loop` down that the spatial bindings use are copied; the others
  // are dropped, with the conjuncts of the predicate that use them.
  std::vector<const For *> chosen; // innermost first
  std::vector<Var> dropped;
  for (auto it = loops.end(); it != at;) {
    --it;
    bool used = false;
    for (const IterVar &iv : iters)
      used |= iv.binding.defined() && uses(iv.binding, (*it)->loopVar);
    if (used)
      chosen.push_back(*it);
    else
      dropped.push_back((*it)->loopVar);
  }
  // The init runs where the block's first reduction step would (spec §5: every reduce axis 0):
  // with one-to-one reduce bindings, at the start of the dropped loops, if they run at all
  // (a reduction of extent 0 has no first step, so no init) and the `where` holds there.
  std::vector<std::pair<Var, Expr>> atStart;
  for (auto it = loops.end(); it != at;) {
    --it;
    if (std::find(dropped.begin(), dropped.end(), (*it)->loopVar) == dropped.end())
      continue;
    atStart.emplace_back((*it)->loopVar, (*it)->min);
  }
  auto startOf = [&](const Expr &e) {
    Expr r = e;
    for (size_t k = 0; k <= atStart.size(); ++k)
      r = substitute(r, atStart); // a loop's min may name an outer dropped loop
    return simplify(r);
  };
  for (const IterVar &iv : block->iterVars)
    if (iv.kind == IterKind::Reduce && iv.binding.defined() && !isConstInt(startOf(iv.binding), 0))
      throw ScheduleError("reduce axis '" + iv.var.name() + "' of block '" + blockName +
                              "' is not 0 where the loops from '" + loopVar.name() +
                              "' start, so the init block could not run where the first "
                              "reduction step does",
                          block->loc, "block '" + blockName + "' is here");
  Expr predicate = boolImm(true);
  for (const Expr &c : conjuncts(block->predicate)) {
    Expr kept = startOf(c);
    if (!isConstInt(kept, 1))
      predicate = simplify(logicalAnd(predicate, kept));
  }
  for (auto it = at; it != loops.end(); ++it) {
    if (std::find(dropped.begin(), dropped.end(), (*it)->loopVar) == dropped.end())
      continue;
    Expr runs = simplify(gt(startOf((*it)->extent), intImm(0)));
    if (!isConstInt(runs, 1))
      predicate = simplify(logicalAnd(predicate, runs));
  }
  std::vector<std::pair<Var, Expr>> loopMap;
  std::vector<Var> newVars;
  for (const For *f : chosen) {
    newVars.push_back(freshVar(f->loopVar.name() + "_init", f->loopVar->loc));
    loopMap.emplace_back(f->loopVar, VarRef::make(newVars.back()));
  }
  for (IterVar &iv : iters)
    iv.binding = substitute(iv.binding, loopMap);
  predicate = substitute(predicate, loopMap);
  std::string initName = freshBlockName(s, blockName + "_init");
  Stmt nest = Block::make(initName, iters, predicate, Stmt(), initBody, {}, {}, {}, block->loc);
  for (size_t i = 0; i < chosen.size(); ++i) {
    const For *f = chosen[i];
    nest = For::make(newVars[i], substitute(f->min, loopMap), substitute(f->extent, loopMap),
                     f->forKind, nest, f->threadTag, f->loc);
  }

  // Step 4: replace — the init nest before `loop`, the block without its init.
  Stmt update = Block::make(block->name, block->iterVars, block->predicate, Stmt(), block->body,
                            block->reads, block->writes, block->allocBuffers, block->loc);
  insertBefore(s, loop, nest);
  s.replace(block, update);
  return initName;
}

} // namespace tdsl::schedule
