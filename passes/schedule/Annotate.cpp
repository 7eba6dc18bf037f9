//===- passes/schedule/Annotate.cpp -----------------------------------------------------------===//
//
// parallel, vectorize, unroll, bind: change a loop's kind after checking that
// the loop may run that way.

#include "passes/schedule/Primitives.h"

#include "passes/schedule/Dependence.h"

#include "ir/Contains.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <cstdlib>
#include <map>
#include <set>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Refuses a loop bound to a reduce axis of a block under it (seen through the bindings of the
/// blocks around a nested block).
void checkSpatialOnly(const For *loop, const char *primitive) {
  struct V : IRVisitor {
    const For *loop;
    const char *primitive;
    std::vector<std::pair<Var, Expr>> bind;
    void visit(const Block *op) override {
      size_t saved = bind.size();
      std::vector<std::pair<Var, Expr>> own;
      for (const IterVar &iv : op->iterVars) {
        if (!iv.binding.defined())
          continue;
        Expr value = substitute(iv.binding, bind);
        own.emplace_back(iv.var, value);
        if (iv.kind == IterKind::Reduce && uses(value, loop->loopVar))
          throw ScheduleError(std::string(primitive) + " needs a spatial loop, but loop '" +
                                  loop->loopVar.name() + "' is bound to reduce axis '" +
                                  iv.var.name() + "' of block '" + op->name + "'",
                              op->loc, "block '" + op->name + "' is here");
      }
      bind.insert(bind.end(), own.begin(), own.end());
      IRVisitor::visit(op);
      bind.resize(saved);
    }
  } v;
  v.loop = loop;
  v.primitive = primitive;
  v.visitStmt(loop->body);
}

/// TVM's rule for parallel and vectorize (CheckLoopParallelizableInBlock and the compact
/// dataflow of the subtree): the loop binds spatial axes only, and its iterations touch
/// disjoint elements of every buffer written under it: each block's writes tell the iterations
/// apart (its bindings are quasi-affine and one-to-one in the loop: `f / 6`, `f % 6`), and a
/// block reading what another block under the loop writes reads it in the same iteration
/// (producer and consumer in one iteration, as compute_at makes).
void checkParallelizable(const For *loop, const char *primitive,
                         const std::vector<const For *> &outer) {
  checkSpatialOnly(loop, primitive);
  // A write also meets itself in another iteration.
  requireIndependentIterations(loop, loop->loopVar, innerLoops(loop),
                               /*allowSameIndexUpdates=*/false, outer);
}

/// Vector code is made of the innermost loop's body (lower.vectorize): an outer loop would be
/// printed `vectorized` and run as a plain loop. Unrolled loops inside are copies of their body
/// by then.
void requireInnermost(const For *loop) {
  struct Inner : IRVisitor {
    const For *found = nullptr;
    void visit(const For *op) override {
      if (!found && op->forKind != ForKind::Unrolled)
        found = op;
      IRVisitor::visit(op);
    }
  } inner;
  inner.visitStmt(loop->body);
  if (inner.found)
    throw ScheduleError("vectorize needs an innermost loop, but loop '" + loop->loopVar.name() +
                            "' holds loop '" + inner.found->loopVar.name() +
                            "' (vectorize that one, or move it outside with reorder)",
                        inner.found->loopVar->loc, "loop '" + inner.found->loopVar.name() + "'");
}

const For *constantExtentLoop(ScheduleState &s, const Var &v, const char *primitive) {
  const For *loop = s.loop(v);
  if (!asConstInt(loop->extent))
    throw ScheduleError(std::string(primitive) + " needs a constant extent, but loop '" + v.name() +
                            "' runs to " + toString(loop->extent),
                        v->loc, "loop declared here");
  return loop;
}

} // namespace

void parallel(ScheduleState &s, const Var &v) {
  const For *loop = s.loop(v);
  checkParallelizable(loop, "parallel", s.loopsAbove(loop));
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::Parallel, loop->body,
                            {}, loop->loc));
}

void checkLoopKinds(const Func &func,
                    const std::function<void(const For *, const ScheduleError &)> &report) {
  const auto *prim = func.as<PrimFunc>();
  if (!prim)
    return;
  std::vector<const For *> above;
  std::function<void(const Stmt &)> walk = [&](const Stmt &s) {
    if (!s.defined())
      return;
    if (const auto *loop = s.as<For>()) {
      const char *primitive = loop->forKind == ForKind::Parallel     ? "parallel"
                              : loop->forKind == ForKind::Vectorized ? "vectorize"
                                                                     : nullptr;
      if (primitive) {
        try {
          if (loop->forKind == ForKind::Vectorized && !asConstInt(loop->extent))
            throw ScheduleError("a vectorized loop needs a constant extent, but loop '" +
                                loop->loopVar.name() + "' runs to " + toString(loop->extent));
          checkParallelizable(loop, primitive, above);
        } catch (const ScheduleError &e) {
          report(loop, e);
        }
      }
      above.push_back(loop);
      walk(loop->body);
      above.pop_back();
      return;
    }
    if (const auto *seq = s.as<SeqStmt>())
      for (const Stmt &x : seq->seq)
        walk(x);
    else if (const auto *b = s.as<Block>())
      walk(b->body);
    else if (const auto *l = s.as<LetStmt>())
      walk(l->body);
    else if (const auto *c = s.as<IfThenElse>()) {
      walk(c->thenCase);
      walk(c->elseCase);
    }
  };
  walk(prim->body);
}

void requireNoRacingCopies(ScheduleState &s, const Func &before, const std::string &block) {
  checkLoopKinds(s.func(), [&](const For *loop, const ScheduleError &e) {
    const auto *d = dynamic_cast<const DependenceError *>(&e);
    if (!d || !d->otherWrites || d->writer != block || d->other != block)
      return;
    s.setFunc(before); // refused: the function as it was
    throw ScheduleError(
        "afterwards, several iterations of loop '" + loop->loopVar.name() + "', which is " +
            (loop->forKind == ForKind::Parallel ? "parallel" : "vectorized") +
            ", would write the same elements of block '" + block + "' at once (" + e.what() + ")",
        e.noteAt, e.note);
  });
}

void vectorize(ScheduleState &s, const Var &v) {
  const For *loop = constantExtentLoop(s, v, "vectorize");
  requireInnermost(loop);
  checkParallelizable(loop, "vectorize", s.loopsAbove(loop));
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::Vectorized, loop->body,
                            {}, loop->loc));
}

void unroll(ScheduleState &s, const Var &v) {
  const For *loop = constantExtentLoop(s, v, "unroll");
  Stmt unrolled = For::make(loop->loopVar, loop->min, loop->extent, ForKind::Unrolled, loop->body,
                            {}, loop->loc);
  // The copies count where the loop sits: unrolled loops around it multiply them.
  int64_t copies = unrolledSize(unrolled);
  for (const For *a : s.loopsAbove(loop))
    if (a->forKind == ForKind::Unrolled)
      if (auto e = asConstInt(a->extent);
          e && __builtin_mul_overflow(copies, std::max<int64_t>(*e, 0), &copies))
        copies = INT64_MAX;
  if (copies > kMaxUnrolledStatements)
    throw ScheduleError(
        "unrolling loop '" + v.name() + "' would make " +
            (copies == INT64_MAX ? std::string("more than 2^63") : std::to_string(copies)) +
            " statements, above the limit of " + std::to_string(kMaxUnrolledStatements) +
            " (unroll an inner loop, or split this one first)",
        v->loc, "loop declared here");
  s.replace(loop, unrolled);
}

void bind(ScheduleState &s, const Var &v, const std::string &tag) {
  if (s.target() != "cuda")
    throw ScheduleError("bind applies to the cuda target only; use 'schedule " + s.prim().name +
                        " for cuda' and --target=cuda");
  static const std::set<std::string> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  if (!tags.count(tag))
    throw ScheduleError("unknown thread tag \"" + tag +
                        "\"; expected blockIdx.x|y|z or threadIdx.x|y|z");
  const For *loop = s.loop(v);
  checkSpatialOnly(loop, "bind");
  for (const For *a : s.loopsAbove(loop))
    if (a->forKind == ForKind::ThreadBinding && a->threadTag == tag)
      throw ScheduleError("\"" + tag + "\" is already bound to loop '" + a->loopVar.name() +
                              "' in this nest",
                          a->loopVar->loc, "bound here");
  struct Inner : IRVisitor {
    const std::string &tag;
    const For *found = nullptr;
    explicit Inner(const std::string &t) : tag(t) {}
    void visit(const For *op) override {
      if (op->forKind == ForKind::ThreadBinding && op->threadTag == tag && !found)
        found = op;
      IRVisitor::visit(op);
    }
  } inner(tag);
  inner.visitStmt(loop->body);
  if (inner.found)
    throw ScheduleError("\"" + tag + "\" is already bound to loop '" + inner.found->loopVar.name() +
                            "' in this nest",
                        inner.found->loopVar->loc, "bound here");
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::ThreadBinding,
                            loop->body, tag, loop->loc));
}

} // namespace tdsl::schedule
