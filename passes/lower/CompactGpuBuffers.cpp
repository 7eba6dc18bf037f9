//===- passes/lower/CompactGpuBuffers.cpp - Shared and local buffers shrunk to their tiles -===//
#include "passes/lower/CompactGpuBuffers.h"

#include "ir/Arith.h"
#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/lower/GpuAnalysis.h"
#include "passes/lower/LowerUtils.h"

#include <map>
#include <set>

namespace tdsl::lower {

using namespace ir;

namespace {

struct Access {
  std::vector<Expr> indices;
  std::vector<const For *> loops; ///< Enclosing loops, outermost first.
};

/// Every access to a Shared or Local buffer, with its enclosing loops.
class CollectAccesses : public AccessVisitor {
public:
  std::map<const BufferNode *, std::vector<Access>> accesses;
  std::vector<Buffer> order;                ///< Buffers in order of first access.
  std::unordered_map<Var, Var> threadAlias; ///< Each threadIdx loop var to one var per tag.
  std::set<const VarNode *> letVars;

  void visit(const LetStmt *op) override {
    letVars.insert(op->var.get());
    IRVisitor::visit(op);
  }

  void visit(const For *op) override {
    if (op->forKind == ForKind::ThreadBinding && isThreadIdxTag(op->threadTag)) {
      auto [it, fresh] = canonical_.emplace(op->threadTag, op->loopVar);
      threadAlias[op->loopVar] = it->second;
    }
    loops_.push_back(op);
    IRVisitor::visit(op);
    loops_.pop_back();
  }

private:
  void record(const Buffer &b, const std::vector<Expr> &indices) override {
    if (b.scope() == MemScope::Global || b.rank() == 0)
      return;
    auto &list = accesses[b.get()];
    if (list.empty())
      order.push_back(b);
    list.push_back({indices, loops_});
  }
  std::vector<const For *> loops_;
  std::map<std::string, Var> canonical_;
};

struct Plan {
  Buffer compact;
  const For *lca = nullptr;                  ///< nullptr: the function body.
  std::vector<std::vector<Expr>> newIndices; ///< Per access, in visiting order.
};

/// The compacted form of one buffer, or nullopt when the analysis cannot tell.
std::optional<Plan> planBuffer(const Buffer &b, const std::vector<Access> &accesses,
                               const std::unordered_map<Var, Var> &threadAlias,
                               const std::set<const VarNode *> &letVars) {
  bool shared = b.scope() == MemScope::Shared;
  // The LCA: the longest common prefix of the loop stacks.
  size_t common = accesses.front().loops.size();
  for (const Access &a : accesses) {
    size_t n = 0;
    while (n < common && n < a.loops.size() && a.loops[n] == accesses.front().loops[n])
      ++n;
    common = n;
  }
  std::set<const VarNode *> fixed;
  for (size_t i = 0; i < common; ++i) {
    const For *l = accesses.front().loops[i];
    if (!(shared && l->forKind == ForKind::ThreadBinding && isThreadIdxTag(l->threadTag)))
      fixed.insert(l->loopVar.get());
  }
  auto canon = [&](const Var &v) {
    auto it = threadAlias.find(v);
    return it == threadAlias.end() ? v : it->second;
  };
  auto isFixed = [&](const Var &v) {
    return fixed.count(v.get()) || (!shared && threadAlias.count(v));
  };

  size_t rank = b.rank();
  std::vector<int64_t> lo(rank, INT64_MAX), hi(rank, INT64_MIN);
  std::vector<std::vector<std::pair<Var, int64_t>>> outerOf(rank); // canonical, dim by dim
  std::vector<bool> outerSet(rank, false);
  struct Split {
    std::vector<std::pair<Var, int64_t>> innerTerms;
    std::vector<Expr> innerOpaque;
    int64_t constant = 0;
  };
  std::vector<std::vector<Split>> splits(accesses.size(), std::vector<Split>(rank));

  for (size_t k = 0; k < accesses.size(); ++k) {
    const Access &a = accesses[k];
    Domain ranges;
    for (const For *l : a.loops) {
      if (isFixed(l->loopVar))
        continue;
      auto mn = asConstInt(l->min), ext = asConstInt(l->extent);
      if (!mn || !ext || *ext <= 0)
        return std::nullopt;
      ranges.emplace_back(l->loopVar, Interval{intImm(*mn), intImm(*mn + *ext - 1)});
    }
    auto ranged = [&](const Var &v) {
      return std::any_of(ranges.begin(), ranges.end(), [&](const auto &r) { return r.first == v; });
    };
    for (size_t d = 0; d < rank; ++d) {
      auto form = affineForm(a.indices[d], NonAffine::Opaque);
      if (!form)
        return std::nullopt;
      std::vector<std::pair<Var, int64_t>> outer;
      Split &s = splits[k][d];
      s.constant = form->constant;
      for (const auto &[v, c] : form->terms) {
        if (letVars.count(v.get()))
          return std::nullopt;
        if (isFixed(v) || !ranged(v)) {
          // A loop var fixed here, or a variable defined outside every loop (shape variable):
          // part of the tile's position.
          if (!isFixed(v) && std::find_if(a.loops.begin(), a.loops.end(), [&](const For *l) {
                               return l->loopVar == v;
                             }) != a.loops.end())
            return std::nullopt;
          outer.emplace_back(canon(v), c);
        } else {
          s.innerTerms.emplace_back(v, c);
        }
      }
      for (const Expr &o : form->opaque) {
        for (const Var &v : usedVars(o))
          if (!ranged(v))
            return std::nullopt; // an opaque term of fixed variables: cannot rebase
        s.innerOpaque.push_back(o);
      }
      // The inner part's interval.
      Expr inner = intImm(s.constant);
      for (const auto &[v, c] : s.innerTerms)
        inner = inner + Expr(v) * intImm(c);
      for (const Expr &o : s.innerOpaque)
        inner = inner + o;
      Interval r = bound(inner, ranges);
      std::optional<int64_t> rlo = asConstInt(r.min), rhi = asConstInt(r.max);
      if (!rlo || !rhi)
        return std::nullopt;
      lo[d] = std::min(lo[d], *rlo);
      hi[d] = std::max(hi[d], *rhi);
      std::sort(outer.begin(), outer.end(),
                [](const auto &x, const auto &y) { return x.first.get() < y.first.get(); });
      if (!outerSet[d]) {
        outerOf[d] = outer;
        outerSet[d] = true;
      } else if (outerOf[d] != outer) {
        return std::nullopt;
      }
    }
  }

  Plan plan;
  plan.lca = common ? accesses.front().loops[common - 1] : nullptr;
  std::vector<Expr> shape;
  for (size_t d = 0; d < rank; ++d)
    shape.push_back(intImm(hi[d] - lo[d] + 1));
  plan.compact = Buffer(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
  for (size_t k = 0; k < accesses.size(); ++k) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < rank; ++d) {
      const Split &s = splits[k][d];
      Expr e = intImm(s.constant - lo[d]);
      for (const auto &[v, c] : s.innerTerms)
        e = e + (c == 1 ? Expr(v) : Expr(v) * intImm(c));
      for (const Expr &o : s.innerOpaque)
        e = e + o;
      idx.push_back(simplify(e));
    }
    plan.newIndices.push_back(std::move(idx));
  }
  return plan;
}

class Rewriter : public IRMutator {
public:
  /// `order`: the buffers in order of first access (allocations follow it).
  Rewriter(std::map<const BufferNode *, Plan> &plans, const std::vector<Buffer> &order)
      : plans_(plans) {
    for (const Buffer &b : order)
      if (auto it = plans.find(b.get()); it != plans.end())
        atLoop_[it->second.lca].push_back(it->second.compact);
  }
  Stmt rewriteBody(const Stmt &body) { return wrap(nullptr, mutate(body)); }

protected:
  Expr visit(const BufferLoad *op) override {
    auto it = plans_.find(op->buffer.get());
    if (it == plans_.end())
      return IRMutator::visit(op);
    std::vector<Expr> idx = next(it->second, op->buffer.get());
    return BufferLoad::make(it->second.compact, idx, op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    auto it = plans_.find(op->buffer.get());
    if (it == plans_.end())
      return IRMutator::visit(op);
    // The collector visited the store before its value: take the indices first.
    std::vector<Expr> idx = next(it->second, op->buffer.get());
    Expr value = mutate(op->value);
    return BufferStore::make(it->second.compact, value, idx, op->loc);
  }
  Stmt visit(const Allocate *op) override {
    if (plans_.count(op->buffer.get()))
      return mutate(op->body);
    return IRMutator::visit(op);
  }
  Stmt visit(const For *op) override {
    Stmt s = IRMutator::visit(op);
    auto it = atLoop_.find(op);
    if (it == atLoop_.end())
      return s;
    const auto *f = s.as<For>();
    return withBody(f, wrap(op, f->body));
  }

private:
  std::vector<Expr> next(Plan &p, const BufferNode *b) { return p.newIndices[counter_[b]++]; }
  Stmt wrap(const For *at, Stmt body) {
    auto it = atLoop_.find(at);
    if (it == atLoop_.end())
      return body;
    for (auto b = it->second.rbegin(); b != it->second.rend(); ++b)
      body = Allocate::make(*b, body, (*b)->loc);
    return body;
  }
  std::map<const BufferNode *, Plan> &plans_;
  std::map<const For *, std::vector<Buffer>> atLoop_;
  std::map<const BufferNode *, size_t> counter_;
};

} // namespace

Func compactGpuBuffers(const Func &func) {
  const auto *op = func.as<PrimFunc>();
  TDSL_IR_CHECK(op, "compactGpuBuffers takes a PrimFunc");
  CollectAccesses collect;
  collect.visitStmt(op->body);
  std::map<const BufferNode *, Plan> plans;
  for (const Buffer &b : collect.order)
    if (auto plan = planBuffer(b, collect.accesses[b.get()], collect.threadAlias, collect.letVars))
      plans.emplace(b.get(), std::move(*plan));
  if (plans.empty())
    return func;
  return withBody(func, Rewriter(plans, collect.order).rewriteBody(op->body));
}

} // namespace tdsl::lower
