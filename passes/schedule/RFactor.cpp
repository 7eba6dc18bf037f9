//===- passes/schedule/RFactor.cpp ------------------------------------------------------------===//
//
// rfactor(loop, axis): a reduction split into partial results over `loop` and a
// final reduction of those.

#include "passes/schedule/Primitives.h"

#include "ir/Contains.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "passes/schedule/BufferUtils.h"
#include "passes/schedule/Dependence.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <limits>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// `B[idx] = B[idx] op rhs` with op commutative and associative.
struct Reduction {
  const BufferStore *update = nullptr;
  const BufferStore *init = nullptr;
  ExprKind op{};
  Expr rhs;
};

Expr combine(ExprKind op, Expr a, Expr b) {
  switch (op) {
  case ExprKind::Add:
    return Add::make(std::move(a), std::move(b));
  case ExprKind::Mul:
    return Mul::make(std::move(a), std::move(b));
  case ExprKind::Min:
    return Min::make(std::move(a), std::move(b));
  default:
    return Max::make(std::move(a), std::move(b));
  }
}

/// The neutral element of `op` on `type`: 0, 1, +inf / the highest value, -inf / the lowest.
Expr identity(ExprKind op, DType type) {
  double inf = std::numeric_limits<double>::infinity();
  switch (op) {
  case ExprKind::Add:
    return constant(type, 0);
  case ExprKind::Mul:
    return constant(type, 1);
  case ExprKind::Min:
    return type.isFloat() ? FloatImm::make(type, inf) : Call::make(type, Intrinsic::MaxValue, {});
  default:
    return type.isFloat() ? FloatImm::make(type, -inf) : Call::make(type, Intrinsic::MinValue, {});
  }
}

bool readsBuffer(const Expr &e, const Buffer &b) {
  return contains<BufferLoad>(e, [&](const BufferLoad *op) { return op->buffer == b; });
}

bool sameIndices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ir::equalExpr(a[i], b[i]))
      return false;
  return true;
}

std::optional<Reduction> matchReduction(const Block *block) {
  Reduction r;
  r.update = block->body.as<BufferStore>();
  r.init = block->init.as<BufferStore>();
  if (!r.update || !r.init || !(r.init->buffer == r.update->buffer) ||
      !sameIndices(r.init->indices, r.update->indices))
    return std::nullopt;
  if (!r.update->buffer.dtype().isFloat() && !r.update->buffer.dtype().isInteger())
    return std::nullopt;
  Expr a, b;
  const Expr &v = r.update->value;
  switch (v.kind()) {
#define TDSL_RF_CASE(NAME)                                                                         \
  case ExprKind::NAME:                                                                             \
    a = v.as<NAME>()->a;                                                                           \
    b = v.as<NAME>()->b;                                                                           \
    break;
    TDSL_RF_CASE(Add)
    TDSL_RF_CASE(Mul)
    TDSL_RF_CASE(Min)
    TDSL_RF_CASE(Max)
#undef TDSL_RF_CASE
  default:
    return std::nullopt;
  }
  r.op = v.kind();
  auto isSelf = [&](const Expr &e) {
    const auto *load = e.as<BufferLoad>();
    return load && load->buffer == r.update->buffer &&
           sameIndices(load->indices, r.update->indices);
  };
  if (isSelf(a))
    r.rhs = b;
  else if (isSelf(b))
    r.rhs = a;
  else
    return std::nullopt;
  if (readsBuffer(r.rhs, r.update->buffer) || readsBuffer(r.init->value, r.update->buffer))
    return std::nullopt;
  return r;
}

} // namespace

/// rfactor(k_1, 0) (TVM's rfactor): the reduction block C under loop k_1 becomes C_rf, which
/// accumulates partial results into a new buffer C_rf with k_1's range inserted at dimension
/// `axis`: one spatial axis for k_1, C's spatial axes, and one reduce axis per other loop bound
/// to C's reduce axes. After the nest of C (the outermost loop holding only C) comes a nest
/// computing C itself: C's init, then the partial results combined over k_1, over the loops
/// bound to C's spatial axes and k_1 (copied). Its `where` keeps C's conditions with the
/// dropped loops at their start (the partial results whose first step ran). When a split did
/// not divide, C_rf's update is guarded by `if` so its accesses stay provably in bounds.
///
///   for i in 0..128 { for k_0 in 0..32 { for k_1 in 0..4 {
///     block C(vi: spatial 128 = i, vk: reduce 128 = k_0 * 4 + k_1) {
///       init { C[vi] = 0.0; }
///       C[vi] = C[vi] + A[vi, vk]; } } } }
/// becomes
///   alloc C_rf: f32[4, 128];
///   for i in 0..128 {
///     for k_0 in 0..32 { for k_1 in 0..4 {
///       block C_rf(vk_1: spatial 4 = k_1, vi: spatial 128 = i, vk_0: reduce 32 = k_0) {
///         init { C_rf[vk_1, vi] = 0.0; }
///         C_rf[vk_1, vi] = C_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]; } } }
///     for k_1_1 in 0..4 {
///       block C(vk_1: reduce 4 = k_1_1, vi: spatial 128 = i) {
///         init { C[vi] = 0.0; }
///         C[vi] = C[vi] + C_rf[vk_1, vi]; } } }
///
/// When the factored loop is the only reduce loop, C_rf has no reduce axis: it stores each term
/// (`C_rf[vk, vi] = A[vi, vk];`) and has no init.
///
/// Refused when the loop does not hold exactly one block, is not bound to a reduce axis of it
/// or is bound to a spatial one; when a loop is bound to both kinds of axes, or a reduce loop
/// holds other blocks; when the block is not `init { B[…] = e0; } B[…] = B[…] op e` with op
/// one of + * min max; and when `axis` is out of range.
std::string rfactor(ScheduleState &s, const Var &loopVar, int64_t axis) {
  requireNoNestedBlocks(s, "rfactor");
  // Step 1: check.
  const For *rfLoop = s.loop(loopVar);
  std::vector<const Block *> under = blocksIn(rfLoop->body);
  if (under.size() != 1)
    throw ScheduleError("rfactor needs exactly one block under loop '" + loopVar.name() +
                            "', found " + std::to_string(under.size()),
                        loopVar->loc, "loop declared here");
  const Block *block = under.front();
  const std::string name = block->name;
  for (const IterVar &iv : block->iterVars)
    if (!iv.binding.defined())
      throw ScheduleError("block '" + name + "' has unbound axes", block->loc,
                          "block '" + name + "' is here");
  auto touches = [&](const For *f, IterKind kind) -> const IterVar * {
    for (const IterVar &iv : block->iterVars)
      if (iv.kind == kind && uses(iv.binding, f->loopVar))
        return &iv;
    return nullptr;
  };
  if (const IterVar *iv = touches(rfLoop, IterKind::Spatial))
    throw ScheduleError("loop '" + loopVar.name() + "' is bound to spatial axis '" +
                            iv->var.name() + "' of block '" + name +
                            "'; rfactor needs a loop bound to reduce axes only",
                        block->loc, "block '" + name + "' is here");
  if (!touches(rfLoop, IterKind::Reduce))
    throw ScheduleError("loop '" + loopVar.name() + "' is not bound to a reduce axis of block '" +
                            name + "'",
                        block->loc, "block '" + name + "' is here");
  std::optional<Reduction> red = matchReduction(block);
  if (!red)
    throw ScheduleError(
        "block '" + name +
            "' is not a reduction rfactor can split: it must be `init { B[...] = e0; }` "
            "and one update `B[...] = B[...] op e` with op one of +, *, min, max",
        block->loc, "block '" + name + "' is here");
  requireAffineReduceBindings(s, block, "rfactor");
  const Buffer &buffer = red->update->buffer;
  int64_t rank = static_cast<int64_t>(buffer.rank());
  if (axis < 0)
    axis += rank + 1;
  if (axis < 0 || axis > rank)
    throw ScheduleError("axis " + std::to_string(axis < 0 ? axis - rank - 1 : axis) +
                        " is out of range: '" + buffer.name() + "' has " + std::to_string(rank) +
                        " dimension" + (rank == 1 ? "" : "s") +
                        ", so the factored one goes at 0.." + std::to_string(rank));
  std::vector<const For *> loops = s.loopsAbove(block);
  for (const For *f : loops) {
    const IterVar *sp = touches(f, IterKind::Spatial), *re = touches(f, IterKind::Reduce);
    if (sp && re)
      throw ScheduleError("loop '" + f->loopVar.name() + "' is bound to both spatial axis '" +
                              sp->var.name() + "' and reduce axis '" + re->var.name() +
                              "' of block '" + name + "'",
                          f->loopVar->loc, "loop declared here");
    if (!re)
      continue;
    // The other reduce loops stay reduce loops of the partial-result block: their iterations
    // update the same partial result, so they cannot run at once.
    if (f != rfLoop && f->forKind != ForKind::Serial && f->forKind != ForKind::Unrolled)
      throw ScheduleError("loop '" + f->loopVar.name() + "' is bound to reduce axis '" +
                              re->var.name() + "' of block '" + name + "' but is not serial (" +
                              forKindName(f->forKind) +
                              "): its iterations update one result and cannot run at once",
                          f->loopVar->loc, "loop declared here");
    if (blocksIn(f->body).size() != 1)
      throw ScheduleError("reduce loop '" + f->loopVar.name() + "' holds blocks other than '" +
                              name + "'",
                          f->loopVar->loc, "loop declared here");
    for (const For *g : loops)
      if (uses(f->min, g->loopVar) || uses(f->extent, g->loopVar))
        throw ScheduleError("the range of reduce loop '" + f->loopVar.name() +
                                "' depends on loop '" + g->loopVar.name() + "'",
                            f->loopVar->loc, "loop declared here");
  }
  // The nest to follow with the write-back: the outermost loop holding only the block.
  const For *top = nullptr;
  for (const For *f : loops)
    if (!top && blocksIn(Stmt(f)).size() == 1)
      top = f;
  std::vector<const For *> nest(std::find(loops.begin(), loops.end(), top), loops.end());

  // Step 2: the partial-result buffer and block.
  std::vector<Expr> rfShape = buffer.shape();
  rfShape.insert(rfShape.begin() + axis, rfLoop->extent);
  Buffer rfBuffer(freshBufferName(s, buffer.name() + "_rf"), buffer.dtype(), rfShape,
                  BufferRole::Alloc, buffer.scope(), {}, buffer->loc);
  std::vector<IterVar> rfIters;
  std::vector<std::pair<Var, Expr>> loopToAxis, rfMap;
  Var rfAxis("v" + loopVar.name(), DType::i64(), loopVar->loc);
  rfIters.push_back(IterVar{rfAxis, IterKind::Spatial, rfLoop->extent,
                            simplify(VarRef::make(loopVar) - rfLoop->min), loopVar->loc});
  loopToAxis.emplace_back(loopVar, simplify(VarRef::make(rfAxis) + rfLoop->min));
  copySpatialAxes(block, rfIters, rfMap);
  for (const For *f : loops) {
    if (f == rfLoop || !touches(f, IterKind::Reduce))
      continue;
    Var v("v" + f->loopVar.name(), DType::i64(), f->loopVar->loc);
    rfIters.push_back(IterVar{v, IterKind::Reduce, f->extent,
                              simplify(VarRef::make(f->loopVar) - f->min), f->loc});
    loopToAxis.emplace_back(f->loopVar, simplify(VarRef::make(v) + f->min));
  }
  for (const IterVar &iv : block->iterVars)
    if (iv.kind == IterKind::Reduce)
      rfMap.emplace_back(iv.var, simplify(substitute(iv.binding, loopToAxis)));
  // A reduce axis becomes an expression of the new axes; where that may leave the axis's range
  // (a split that does not divide, guarded by `where` over the loops), guard the update so the
  // checker sees the access in bounds.
  std::vector<std::pair<Var, Expr>> axisRanges;
  for (const IterVar &iv : rfIters)
    axisRanges.emplace_back(iv.var, iv.extent);
  Expr guard = boolImm(true);
  for (const IterVar &iv : block->iterVars) {
    if (iv.kind != IterKind::Reduce)
      continue;
    Expr e;
    for (auto &[v, x] : rfMap)
      if (v == iv.var)
        e = x;
    std::optional<Range> range = rangeOf(s, e, axisRanges);
    std::optional<int64_t> low = range ? asConstInt(range->min) : std::nullopt;
    std::optional<int64_t> room =
        range ? asConstInt(simplify(iv.extent - (range->min + range->extent))) : std::nullopt;
    if (!low || *low < 0)
      guard = simplify(logicalAnd(guard, ge(e, intImm(0))));
    if (!room || *room < 0)
      guard = simplify(logicalAnd(guard, lt(e, iv.extent)));
  }
  std::vector<Expr> rfIndices;
  for (const Expr &e : red->update->indices)
    rfIndices.push_back(substitute(e, rfMap));
  rfIndices.insert(rfIndices.begin() + axis, VarRef::make(rfAxis));
  Expr rhs = simplify(substitute(red->rhs, rfMap));
  // With no other reduce loop each partial result is a single term: a plain store, no init
  // (a block without reduce axes has none).
  bool reduces = false;
  for (const IterVar &iv : rfIters)
    reduces |= iv.kind == IterKind::Reduce;
  Stmt rfInit = reduces ? BufferStore::make(rfBuffer, identity(red->op, buffer.dtype()), rfIndices,
                                            red->init->loc)
                        : Stmt();
  Stmt rfUpdate = BufferStore::make(
      rfBuffer, reduces ? combine(red->op, BufferLoad::make(rfBuffer, rfIndices), rhs) : rhs,
      rfIndices, red->update->loc);
  if (!isConstInt(guard, 1))
    rfUpdate = IfThenElse::make(guard, rfUpdate);
  std::string rfName = freshBlockName(s, name + "_rf");
  Stmt rfBlock = Block::make(rfName, rfIters, block->predicate, rfInit, rfUpdate, {}, {},
                             block->allocBuffers, block->loc);

  // Step 3: the write-back nest: copies of the loops of the nest bound to spatial axes, and
  // of the rfactor loop; the conjuncts of the predicate over the dropped loops go.
  std::vector<std::pair<Var, Expr>> loopMap;
  std::vector<Var> dropped;
  std::vector<std::pair<const For *, Var>> kept;
  for (const For *f : nest) {
    if (f != rfLoop && !touches(f, IterKind::Spatial)) {
      dropped.push_back(f->loopVar);
      continue;
    }
    for (const Var &d : dropped)
      if (uses(f->min, d) || uses(f->extent, d))
        throw ScheduleError("the range of loop '" + f->loopVar.name() + "' depends on loop '" +
                                d.name() + "', which the final reduction does not keep",
                            f->loopVar->loc, "loop declared here");
    Var copy = freshVar(f->loopVar.name(), f->loopVar->loc);
    kept.emplace_back(f, copy);
    loopMap.emplace_back(f->loopVar, VarRef::make(copy));
  }
  std::vector<IterVar> wbIters;
  std::vector<std::pair<Var, Expr>> wbMap;
  Var wbAxis("v" + loopVar.name(), DType::i64(), loopVar->loc);
  wbIters.push_back(IterVar{wbAxis, IterKind::Reduce, rfLoop->extent,
                            simplify(substitute(VarRef::make(loopVar) - rfLoop->min, loopMap)),
                            loopVar->loc});
  for (const IterVar &iv : block->iterVars) {
    if (iv.kind != IterKind::Spatial)
      continue;
    Var copy(iv.var.name(), iv.var.dtype(), iv.var->loc);
    wbIters.push_back(
        IterVar{copy, IterKind::Spatial, iv.extent, substitute(iv.binding, loopMap), iv.loc});
    wbMap.emplace_back(iv.var, VarRef::make(copy));
  }
  std::vector<Expr> parts = conjuncts(block->predicate);
  Expr predicate = boolImm(true);
  // A conjunct over dropped loops holds at their start exactly when the partial result had its
  // first step (where its init ran), for the affine guards split makes: keep it there.
  std::vector<std::pair<Var, Expr>> atStart;
  for (const For *f : nest)
    if (f != rfLoop && !touches(f, IterKind::Spatial))
      atStart.emplace_back(f->loopVar, f->min);
  for (const Expr &c : parts) {
    Expr kept = simplify(substitute(substitute(c, atStart), loopMap));
    if (!isConstInt(kept, 1))
      predicate = simplify(logicalAnd(predicate, kept));
  }
  std::vector<Expr> wbIndices, partIndices;
  for (const Expr &e : red->update->indices)
    wbIndices.push_back(substitute(e, wbMap));
  partIndices = wbIndices;
  partIndices.insert(partIndices.begin() + axis, VarRef::make(wbAxis));
  Stmt wbInit = substitute(Stmt(red->init), wbMap);
  Stmt wbUpdate = BufferStore::make(buffer,
                                    combine(red->op, BufferLoad::make(buffer, wbIndices),
                                            BufferLoad::make(rfBuffer, partIndices)),
                                    wbIndices, red->update->loc);
  Stmt wb = Block::make(name, wbIters, predicate, wbInit, wbUpdate, {}, {}, {}, block->loc);
  for (size_t i = kept.size(); i-- > 0;) {
    const For *f = kept[i].first;
    // The copy of the rfactor loop runs the final reduction: serial whatever the loop was.
    bool reduces = f == rfLoop;
    wb = For::make(kept[i].second, substitute(f->min, loopMap), substitute(f->extent, loopMap),
                   reduces ? ForKind::Serial : f->forKind, wb, reduces ? "" : f->threadTag, f->loc);
  }

  // Step 4: replace — the write-back after the nest, the partial-result block for the block.
  insertAfter(s, top, wb);
  s.replace(block, rfBlock);
  addRootAlloc(s, rfBuffer);
  return rfName;
}

} // namespace tdsl::schedule
