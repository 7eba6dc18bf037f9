//===- passes/lower/LowerUtils.cpp - Helpers shared by the lowering steps -----------------===//
#include "passes/lower/LowerUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Utils.h"

namespace tdsl::lower {

using namespace ir;

namespace {

class LoopRewriter : public IRMutator {
public:
  LoopRewriter(ForKind kind, const std::function<Stmt(const For *, const Stmt &)> &rewrite)
      : kind_(kind), rewrite_(rewrite) {}

protected:
  Stmt visit(const For *op) override {
    Stmt s = IRMutator::visit(op);
    const auto *loop = s.as<For>();
    if (!loop || loop->forKind != kind_)
      return s;
    return rewrite_(loop, s);
  }

private:
  ForKind kind_;
  const std::function<Stmt(const For *, const Stmt &)> &rewrite_;
};

struct BufferUses : IRVisitor {
  explicit BufferUses(const Buffer &b) : buffer(b) {}
  void visit(const BufferLoad *op) override {
    found = found || op->buffer == buffer;
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    found = found || op->buffer == buffer;
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    found = found || op->buffer == buffer;
    IRVisitor::visit(op);
  }
  const Buffer &buffer;
  bool found = false;
};

/// Walks a statement with the domain of the loops inside it, recording the boxes of one
/// buffer's accesses.
class BoxCollector : public AccessVisitor {
public:
  BoxCollector(const Buffer &b, bool partial) : buffer_(b), partial_(partial) {}

  bool failed = false;
  std::vector<std::vector<Interval>> boxes;

  void visit(const For *op) override {
    visitExpr(op->min);
    visitExpr(op->extent);
    dom_.push_back({op->loopVar, Interval::ofRange(subst(op->min), subst(op->extent))});
    visitStmt(op->body);
    dom_.pop_back();
  }
  void visit(const LetStmt *op) override {
    visitExpr(op->value);
    lets_[op->var] = subst(op->value);
    visitStmt(op->body);
  }

private:
  Expr subst(const Expr &e) { return substituteLets(e, lets_); }

  void record(const Buffer &b, const std::vector<Expr> &indices) override {
    if (!(b == buffer_) || failed)
      return;
    std::vector<Interval> box;
    for (const Expr &index : indices) {
      struct HasLoad : IRVisitor {
        bool found = false;
        void visit(const BufferLoad *) override { found = true; }
      } loads;
      Expr i = subst(index);
      loads.visitExpr(i);
      if (loads.found || i.dtype() != DType::i64()) {
        failed = true;
        return;
      }
      Interval range = bound(i, dom_);
      if (!range.bounded() || definedInside(range.min) || definedInside(range.max)) {
        if (partial_) {
          box.push_back(Interval{});
          continue;
        }
        failed = true;
        return;
      }
      box.push_back(range);
    }
    boxes.push_back(std::move(box));
  }

  bool definedInside(const Expr &e) const {
    for (const auto &[v, range] : dom_)
      if (usesVar(e, v))
        return true;
    for (const auto &[v, value] : lets_)
      if (usesVar(e, v))
        return true;
    return false;
  }

  const Buffer &buffer_;
  bool partial_;
  Domain dom_;
  std::unordered_map<Var, Expr> lets_;
};

} // namespace

std::optional<std::vector<std::vector<Interval>>> accessBoxes(const Stmt &s, const Buffer &buffer,
                                                              bool partial) {
  BoxCollector collector(buffer, partial);
  collector.visitStmt(s);
  if (collector.failed)
    return std::nullopt;
  return collector.boxes;
}

Stmt seqOrNoOp(std::vector<Stmt> stmts) {
  if (stmts.empty())
    return Evaluate::make(intImm(0));
  return seq(std::move(stmts));
}

void AccessVisitor::visit(const BufferLoad *op) {
  record(op->buffer, op->indices);
  IRVisitor::visit(op);
}

void AccessVisitor::visit(const BufferStore *op) {
  record(op->buffer, op->indices);
  IRVisitor::visit(op);
}

bool usesBuffer(const Stmt &s, const Buffer &buffer) {
  BufferUses uses(buffer);
  uses.visitStmt(s);
  return uses.found;
}

bool usesBuffer(const Expr &e, const Buffer &buffer) {
  BufferUses uses(buffer);
  uses.visitExpr(e);
  return uses.found;
}

std::optional<int64_t> coefficientOf(const Expr &e, const Var &v) {
  if (!usesVar(e, v))
    return 0;
  Expr at1 = substitute(e, {{v, Expr(v) + intImm(1)}});
  Expr at2 = substitute(e, {{v, Expr(v) + intImm(2)}});
  std::optional<int64_t> d1 = constDiff(at1, e), d2 = constDiff(at2, e);
  if (!d1 || !d2 || *d2 != 2 * *d1)
    return std::nullopt;
  return d1;
}

Stmt rewriteLoops(const Stmt &body, ForKind kind,
                  const std::function<Stmt(const For *, const Stmt &)> &rewrite) {
  return LoopRewriter(kind, rewrite).mutate(body);
}

} // namespace tdsl::lower
