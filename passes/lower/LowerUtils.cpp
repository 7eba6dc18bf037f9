//===- passes/lower/LowerUtils.cpp - Helpers shared by the lowering steps -----------------===//
#include "passes/lower/LowerUtils.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "passes/schedule/Regions.h"

namespace tdsl::lower {

using namespace ir;

namespace {

class Substituter : public IRMutator {
public:
  explicit Substituter(const std::unordered_map<Var, Expr> &map) : map_(map) {}

protected:
  Expr visit(const VarRef *op) override {
    auto it = map_.find(op->var);
    return it == map_.end() ? Expr(op) : it->second;
  }

private:
  const std::unordered_map<Var, Expr> &map_;
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

struct VarUses : IRVisitor {
  explicit VarUses(const Var &v) : var(v) {}
  void visit(const VarRef *op) override { found = found || op->var == var; }
  const Var &var;
  bool found = false;
};

/// Walks a statement with the domain of the loops inside it, recording the boxes of one
/// buffer's accesses.
class BoxCollector : public AccessVisitor {
public:
  explicit BoxCollector(const Buffer &b) : buffer_(b) {}

  bool failed = false;
  std::vector<std::vector<schedule::Interval>> boxes;

  void visit(const For *op) override {
    visitExpr(op->min);
    visitExpr(op->extent);
    dom_.push_back({op->loopVar, schedule::Interval::ofRange(subst(op->min), subst(op->extent))});
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
    std::vector<schedule::Interval> box;
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
      schedule::Interval range = schedule::bound(i, dom_);
      if (!range.bounded() || definedInside(range.min) || definedInside(range.max)) {
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
  schedule::Domain dom_;
  std::unordered_map<Var, Expr> lets_;
};

} // namespace

std::optional<std::vector<std::vector<schedule::Interval>>> accessBoxes(const Stmt &s,
                                                                        const Buffer &buffer) {
  BoxCollector collector(buffer);
  collector.visitStmt(s);
  if (collector.failed)
    return std::nullopt;
  return collector.boxes;
}

Expr substitute(const Expr &e, const std::unordered_map<Var, Expr> &map) {
  return map.empty() ? e : Substituter(map).mutate(e);
}

Stmt substitute(const Stmt &s, const std::unordered_map<Var, Expr> &map) {
  return map.empty() ? s : Substituter(map).mutate(s);
}

Func withBody(const Func &func, const Stmt &body) {
  const auto *op = func.as<PrimFunc>();
  TDSL_IR_CHECK(op, "withBody takes a PrimFunc");
  if (body.sameAs(op->body))
    return func;
  return PrimFunc::make(op->name, op->constVars, op->inputs, op->outputs, op->shapeVars,
                        op->allocBuffers, body, op->loc);
}

Expr substituteLets(const Expr &e, const std::unordered_map<Var, Expr> &lets) {
  Expr out = e;
  for (size_t i = 0; i <= lets.size(); ++i) {
    Expr next = substitute(out, lets);
    if (next.sameAs(out))
      break;
    out = next;
  }
  return out;
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

bool usesVar(const Expr &e, const Var &var) {
  VarUses uses(var);
  uses.visitExpr(e);
  return uses.found;
}

std::optional<int64_t> coefficientOf(const Expr &e, const Var &v) {
  if (!usesVar(e, v))
    return 0;
  Expr at1 = substitute(e, {{v, Expr(v) + intImm(1)}});
  Expr at2 = substitute(e, {{v, Expr(v) + intImm(2)}});
  std::optional<int64_t> d1 = schedule::constDiff(at1, e), d2 = schedule::constDiff(at2, e);
  if (!d1 || !d2 || *d2 != 2 * *d1)
    return std::nullopt;
  return d1;
}

} // namespace tdsl::lower
