//===- ir/IRVisitor.h - Read-only traversal of the IR -------------------------------------===//
//
// IRVisitor walks expressions and statements: visitExpr()/visitStmt() dispatch on the node kind
// to a visit(const Node *) method, generated from the node lists of ir/IR.h, which visits the
// node's children by default. Override the ones a pass cares about and call the base method
// to keep recursing.
//
// Children are the Expr and Stmt fields of a node: for a Block, the iter var extents and
// bindings, the predicate, init, body and the read/write region bounds. Buffer shapes and
// Var objects are not children (they belong to the definitions, not to each use).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::ir {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;

  /// Dispatches on the node kind. An undefined handle is ignored.
  void visitExpr(const Expr &expr);
  void visitStmt(const Stmt &stmt);

#define TDSL_IR_DECLARE_VISIT(NAME) virtual void visit(const NAME *op);
  TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_DECLARE_VISIT)
  TDSL_FOR_EACH_STMT_NODE(TDSL_IR_DECLARE_VISIT)
#undef TDSL_IR_DECLARE_VISIT

protected:
  void visitRegions(const std::vector<BufferRegion> &regions);
};

} // namespace tdsl::ir
