// Annotate.cpp — parallel, vectorize, unroll, bind: change a loop's kind after checking that
// the loop may run that way.
#include "passes/schedule/Primitives.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <cstdlib>
#include <map>
#include <set>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// Refuses a loop bound to a reduce axis of a block under it.
void checkSpatialOnly(const For *loop, const char *primitive) {
  for (const Block *b : blocksIn(loop->body))
    for (const IterVar &iv : b->iterVars)
      if (iv.kind == IterKind::Reduce && iv.binding.defined() && uses(iv.binding, loop->loopVar))
        throw ScheduleError(std::string(primitive) + " needs a spatial loop, but loop '" + loop->loopVar.name() +
                                "' is bound to reduce axis '" + iv.var.name() + "' of block '" + b->name + "'",
                            b->loc, "block '" + b->name + "' is here");
}

const For *constantExtentLoop(ScheduleState &s, const Var &v, const char *primitive) {
  const For *loop = s.loop(v);
  if (!asConstInt(loop->extent))
    throw ScheduleError(std::string(primitive) + " needs a constant extent, but loop '" + v.name() + "' runs to " +
                            toString(loop->extent),
                        v->loc, "loop declared here");
  return loop;
}

struct Access {
  const Block *block;
  Buffer buffer;
  std::vector<Expr> indices; // in terms of the surrounding loops (bindings substituted)
  bool write;
};

std::vector<Access> accessesUnder(const For *loop) {
  std::vector<Access> out;
  for (const Block *b : blocksIn(loop->body)) {
    std::vector<std::pair<Var, Expr>> bind;
    for (const IterVar &iv : b->iterVars)
      if (iv.binding.defined()) bind.emplace_back(iv.var, iv.binding);
    struct V : IRVisitor {
      std::vector<Access> &out;
      const Block *b;
      const std::vector<std::pair<Var, Expr>> &bind;
      V(std::vector<Access> &o, const Block *blk, const std::vector<std::pair<Var, Expr>> &m) : out(o), b(blk), bind(m) {}
      std::vector<Expr> sub(const std::vector<Expr> &idx) {
        std::vector<Expr> r;
        for (const Expr &e : idx) r.push_back(substitute(e, bind));
        return r;
      }
      void visit(const BufferLoad *op) override {
        out.push_back({b, op->buffer, sub(op->indices), false});
        IRVisitor::visit(op);
      }
      void visit(const BufferStore *op) override {
        out.push_back({b, op->buffer, sub(op->indices), true});
        IRVisitor::visit(op);
      }
      void visit(const Block *op) override {
        if (op == b) IRVisitor::visit(op);
      }
    } v(out, b, bind);
    v.visitStmt(Stmt(b));
  }
  return out;
}

/// Two accesses touch disjoint elements in different iterations of `var` when some dimension
/// is the same expression in both, `a·var + rest` with `rest` varying by less than |a| over
/// the loops inside the iteration (`inner`, with their extents): each iteration then owns its
/// own slice of that dimension. (`i + j` with j inside is not separated; `i * 4 + j` with j
/// in [0, 4) is.)
bool separatedBy(const Access &a, const Access &b, const Var &var,
                 const std::map<const VarNode *, int64_t> &inner) {
  for (size_t d = 0; d < a.indices.size() && d < b.indices.size(); ++d) {
    if (!uses(a.indices[d], var) || toString(a.indices[d]) != toString(b.indices[d])) continue;
    std::optional<Affine> f = affine(a.indices[d]);
    if (!f) continue;
    int64_t coeff = f->coeff(var), spread = 0;
    bool bounded = coeff != 0;
    for (const auto &[v, c] : f->terms) {
      if (v == var) continue;
      auto it = inner.find(v.get());
      if (it == inner.end()) continue; // a loop outside: fixed during the parallel loop
      if (it->second < 0) bounded = false;
      else spread += std::abs(c) * (it->second - 1);
    }
    if (bounded && spread < std::abs(coeff)) return true;
  }
  return false;
}

/// The loops inside `loop` with their constant extents (-1 when not constant).
std::map<const VarNode *, int64_t> innerLoops(const For *loop) {
  std::map<const VarNode *, int64_t> out;
  struct V : IRVisitor {
    std::map<const VarNode *, int64_t> &out;
    explicit V(std::map<const VarNode *, int64_t> &o) : out(o) {}
    void visit(const For *op) override {
      auto e = asConstInt(op->extent);
      out[op->loopVar.get()] = e ? *e : -1;
      IRVisitor::visit(op);
    }
  } v(out);
  v.visitStmt(loop->body);
  return out;
}

} // namespace

void parallel(ScheduleState &s, const Var &v) {
  const For *loop = s.loop(v);
  checkSpatialOnly(loop, "parallel");
  std::vector<Access> acc = accessesUnder(loop);
  std::map<const VarNode *, int64_t> inner = innerLoops(loop);
  for (const Access &w : acc) {
    if (!w.write) continue;
    for (const Access &o : acc) {
      if (!o.buffer.sameAs(w.buffer)) continue; // a write also meets itself in another iteration
      if (separatedBy(w, o, v, inner)) continue;
      throw ScheduleError("iterations of loop '" + v.name() + "' depend on each other: block '" + w.block->name +
                              "' writes '" + w.buffer.name() + "' and block '" + o.block->name + "' " +
                              (o.write ? "writes" : "reads") + " it at elements other iterations also touch",
                          o.block->loc, "block '" + o.block->name + "' is here");
    }
  }
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::Parallel, loop->body, {}, loop->loc));
}

void vectorize(ScheduleState &s, const Var &v) {
  const For *loop = constantExtentLoop(s, v, "vectorize");
  checkSpatialOnly(loop, "vectorize");
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::Vectorized, loop->body, {}, loop->loc));
}

void unroll(ScheduleState &s, const Var &v) {
  const For *loop = constantExtentLoop(s, v, "unroll");
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::Unrolled, loop->body, {}, loop->loc));
}

void bind(ScheduleState &s, const Var &v, const std::string &tag) {
  if (s.target() != "cuda")
    throw ScheduleError("bind applies to the cuda target only; use 'schedule " + s.prim().name +
                        " for cuda' and --target=cuda");
  static const std::set<std::string> tags = {"blockIdx.x", "blockIdx.y", "blockIdx.z",
                                             "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  if (!tags.count(tag)) throw ScheduleError("unknown thread tag \"" + tag + "\"; expected blockIdx.x|y|z or threadIdx.x|y|z");
  const For *loop = s.loop(v);
  checkSpatialOnly(loop, "bind");
  for (const For *a : s.loopsAbove(loop))
    if (a->forKind == ForKind::ThreadBinding && a->threadTag == tag)
      throw ScheduleError("\"" + tag + "\" is already bound to loop '" + a->loopVar.name() + "' in this nest",
                          a->loopVar->loc, "bound here");
  struct Inner : IRVisitor {
    const std::string &tag;
    const For *found = nullptr;
    explicit Inner(const std::string &t) : tag(t) {}
    void visit(const For *op) override {
      if (op->forKind == ForKind::ThreadBinding && op->threadTag == tag && !found) found = op;
      IRVisitor::visit(op);
    }
  } inner(tag);
  inner.visitStmt(loop->body);
  if (inner.found)
    throw ScheduleError("\"" + tag + "\" is already bound to loop '" + inner.found->loopVar.name() + "' in this nest",
                        inner.found->loopVar->loc, "bound here");
  s.replace(loop, For::make(loop->loopVar, loop->min, loop->extent, ForKind::ThreadBinding, loop->body, tag, loop->loc));
}

} // namespace tdsl::schedule
