//===- ir/IRVisitor.cpp - Read-only traversal of the IR -----------------------------------===//
#include "ir/IRVisitor.h"

namespace tdsl::ir {

void IRVisitor::visitExpr(const Expr &expr) {
  if (!expr.defined())
    return;
  dispatch(expr, [this](const auto *op) { visit(op); });
}

void IRVisitor::visitStmt(const Stmt &stmt) {
  if (!stmt.defined())
    return;
  dispatch(stmt, [this](const auto *op) { visit(op); });
}

void IRVisitor::visitRegions(const std::vector<BufferRegion> &regions) {
  for (const BufferRegion &region : regions) {
    for (const Range &range : region.region) {
      visitExpr(range.min);
      visitExpr(range.extent);
    }
  }
}

void IRVisitor::visit(const IntImm *) {}
void IRVisitor::visit(const FloatImm *) {}
void IRVisitor::visit(const VarRef *) {}
void IRVisitor::visit(const Cast *op) { visitExpr(op->value); }
void IRVisitor::visit(const Neg *op) { visitExpr(op->a); }

#define TDSL_IR_DEFINE_BINARY(NAME)                                                                \
  void IRVisitor::visit(const NAME *op) {                                                          \
    visitExpr(op->a);                                                                              \
    visitExpr(op->b);                                                                              \
  }
TDSL_FOR_EACH_BINARY_NODE(TDSL_IR_DEFINE_BINARY)
#undef TDSL_IR_DEFINE_BINARY

void IRVisitor::visit(const Not *op) { visitExpr(op->a); }

void IRVisitor::visit(const Select *op) {
  visitExpr(op->condition);
  visitExpr(op->trueValue);
  visitExpr(op->falseValue);
}

void IRVisitor::visit(const BufferLoad *op) {
  for (const Expr &index : op->indices)
    visitExpr(index);
}

void IRVisitor::visit(const Call *op) {
  for (const Expr &arg : op->args)
    visitExpr(arg);
}

void IRVisitor::visit(const Ramp *op) {
  visitExpr(op->base);
  visitExpr(op->stride);
}

void IRVisitor::visit(const Broadcast *op) { visitExpr(op->value); }

void IRVisitor::visit(const For *op) {
  visitExpr(op->min);
  visitExpr(op->extent);
  visitStmt(op->body);
}

void IRVisitor::visit(const Block *op) {
  for (const IterVar &iv : op->iterVars) {
    visitExpr(iv.extent);
    visitExpr(iv.binding);
  }
  visitExpr(op->predicate);
  visitRegions(op->reads);
  visitRegions(op->writes);
  visitStmt(op->init);
  visitStmt(op->body);
}

void IRVisitor::visit(const BufferStore *op) {
  visitExpr(op->value);
  for (const Expr &index : op->indices)
    visitExpr(index);
}

void IRVisitor::visit(const LetStmt *op) {
  visitExpr(op->value);
  visitStmt(op->body);
}

void IRVisitor::visit(const IfThenElse *op) {
  visitExpr(op->condition);
  visitStmt(op->thenCase);
  visitStmt(op->elseCase);
}

void IRVisitor::visit(const SeqStmt *op) {
  for (const Stmt &stmt : op->seq)
    visitStmt(stmt);
}

void IRVisitor::visit(const Evaluate *op) { visitExpr(op->value); }
void IRVisitor::visit(const Allocate *op) { visitStmt(op->body); }
void IRVisitor::visit(const AssertStmt *op) {
  visitExpr(op->condition);
  for (const Expr &arg : op->args)
    visitExpr(arg);
  visitStmt(op->body);
}
void IRVisitor::visit(const ProfileRegion *op) { visitStmt(op->body); }
void IRVisitor::visit(const BufferView *op) {
  visitExpr(op->byteOffset);
  visitStmt(op->body);
}
void IRVisitor::visit(const FuncCall *op) {
  for (const auto &arg : op->args)
    if (const auto *e = std::get_if<Expr>(&arg))
      visitExpr(*e);
}

} // namespace tdsl::ir
