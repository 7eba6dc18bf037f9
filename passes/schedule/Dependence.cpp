#include "passes/schedule/Dependence.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <algorithm>
#include <cstdlib>

namespace tdsl::schedule {

using namespace ir;

std::vector<LoopAccess> accessesUnder(const For *loop) {
  // Indices are rewritten into loop variables: a block's own bindings, then those of the blocks
  // around it under `loop` (a nested block's body may name an outer block's axes).
  struct V : IRVisitor {
    std::vector<LoopAccess> out;
    const Block *current = nullptr;
    std::vector<std::pair<Var, Expr>> bind;
    std::vector<Expr> sub(const std::vector<Expr> &idx) {
      std::vector<Expr> r;
      for (const Expr &e : idx) r.push_back(substitute(e, bind));
      return r;
    }
    void visit(const BufferLoad *op) override {
      if (current) out.push_back({current, op->buffer, sub(op->indices), false});
      IRVisitor::visit(op);
    }
    void visit(const BufferStore *op) override {
      if (current) out.push_back({current, op->buffer, sub(op->indices), true});
      IRVisitor::visit(op);
    }
    void visit(const Block *op) override {
      const Block *savedBlock = current;
      size_t savedSize = bind.size();
      std::vector<std::pair<Var, Expr>> own;
      for (const IterVar &iv : op->iterVars)
        if (iv.binding.defined()) own.emplace_back(iv.var, substitute(iv.binding, bind));
      bind.insert(bind.end(), own.begin(), own.end());
      current = op;
      IRVisitor::visit(op);
      current = savedBlock;
      bind.resize(savedSize);
    }
  } v;
  v.visitStmt(loop->body);
  return std::move(v.out);
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


namespace {

/// The part of an affine index that stays put while the loops of `varying` and `var` move:
/// its terms over other variables (sorted by identity) and its constant.
std::pair<std::vector<std::pair<const VarNode *, int64_t>>, int64_t>
fixedPart(const Affine &f, const Var &var, const std::map<const VarNode *, int64_t> &varying) {
  std::vector<std::pair<const VarNode *, int64_t>> terms;
  for (const auto &[v, c] : f.terms)
    if (!(v == var) && !varying.count(v.get()) && c != 0) terms.emplace_back(v.get(), c);
  std::sort(terms.begin(), terms.end());
  return {terms, f.constant};
}

/// The range [lo, hi] of the varying terms of `f`; false when a varying extent is unknown.
bool varyingRange(const Affine &f, const Var &var, const std::map<const VarNode *, int64_t> &varying,
                  int64_t &lo, int64_t &hi) {
  lo = hi = 0;
  for (const auto &[v, c] : f.terms) {
    if (v == var) continue;
    auto it = varying.find(v.get());
    if (it == varying.end()) continue;
    if (it->second < 1) return false;
    int64_t span = c * (it->second - 1);
    lo += std::min<int64_t>(0, span);
    hi += std::max<int64_t>(0, span);
  }
  return true;
}

} // namespace

bool separatedBy(const LoopAccess &a, const LoopAccess &b, const Var &var,
                 const std::map<const VarNode *, int64_t> &varying) {
  for (size_t d = 0; d < a.indices.size() && d < b.indices.size(); ++d) {
    std::optional<Affine> fa = affine(a.indices[d]), fb = affine(b.indices[d]);
    if (!fa || !fb) continue;
    int64_t c = fa->coeff(var);
    if (c == 0 || c != fb->coeff(var)) continue;
    if (fixedPart(*fa, var, varying) != fixedPart(*fb, var, varying)) continue;
    int64_t loA, hiA, loB, hiB;
    if (!varyingRange(*fa, var, varying, loA, hiA) || !varyingRange(*fb, var, varying, loB, hiB)) continue;
    if (std::max(hiA, hiB) - std::min(loA, loB) < std::abs(c)) return true;
  }
  return false;
}

void requireIndependentIterations(const For *loop, const Var &var,
                                  const std::map<const VarNode *, int64_t> &varying,
                                  bool allowSameIndexUpdates) {
  std::vector<LoopAccess> acc = accessesUnder(loop);
  // A buffer that a block under the loop allocates lives for one execution of that block, so
  // each iteration has its own: no iteration sees another's elements (a per-tile accumulator).
  std::vector<Buffer> private_;
  for (const Block *b : blocksIn(loop->body))
    private_.insert(private_.end(), b->allocBuffers.begin(), b->allocBuffers.end());
  auto isPrivate = [&](const Buffer &buf) {
    return std::any_of(private_.begin(), private_.end(), [&](const Buffer &p) { return p.sameAs(buf); });
  };
  for (const LoopAccess &w : acc) {
    if (!w.write || isPrivate(w.buffer)) continue;
    for (const LoopAccess &o : acc) {
      if (!o.buffer.sameAs(w.buffer)) continue;
      if (allowSameIndexUpdates && o.block == w.block && o.indices.size() == w.indices.size() &&
          std::equal(o.indices.begin(), o.indices.end(), w.indices.begin(),
                     [](const Expr &x, const Expr &y) { return toString(x) == toString(y); }))
        continue;
      if (separatedBy(w, o, var, varying)) continue;
      throw ScheduleError("iterations of loop '" + var.name() + "' depend on each other: block '" + w.block->name +
                              "' writes '" + w.buffer.name() + "' and block '" + o.block->name + "' " +
                              (o.write ? "writes" : "reads") + " it at elements other iterations also touch",
                          o.block->loc, "block '" + o.block->name + "' is here");
    }
  }
}

} // namespace tdsl::schedule
