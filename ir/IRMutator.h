//===- ir/IRMutator.h - Rebuilding traversal of the IR ------------------------------------===//
//
// IRMutator rewrites expressions and statements bottom-up. mutate() dispatches on the node
// kind to a visit(const Node *) method (generated from the node lists of ir/IR.h) that mutates
// the children and rebuilds the node only if a child changed: an unchanged subtree comes back
// as the very same handle, so untouched IR stays shared.
//
// Every buffer a node refers to (loads, stores, block regions and allocations, Allocate) goes
// through mutateBuffer(), the hook for passes that substitute buffers. Defining Vars (loop
// variables, iter vars, let variables) are kept; substitute uses by overriding
// visit(const VarRef *).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::ir {

class IRMutator {
public:
  virtual ~IRMutator() = default;

  /// Dispatches on the node kind. An undefined handle comes back undefined.
  Expr mutate(const Expr &expr);
  Stmt mutate(const Stmt &stmt);

  /// Mutates a PrimFunc's body and buffers; returns `func` itself when nothing changed, and
  /// other kinds of functions unchanged.
  Func mutateFunc(const Func &func);

  /// Replaces a buffer wherever the IR refers to it. Identity by default.
  virtual Buffer mutateBuffer(const Buffer &buffer) { return buffer; }

protected:
#define TDSL_IR_DECLARE_EXPR_VISIT(NAME) virtual Expr visit(const NAME *op);
#define TDSL_IR_DECLARE_STMT_VISIT(NAME) virtual Stmt visit(const NAME *op);
  TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_DECLARE_EXPR_VISIT)
  TDSL_FOR_EACH_STMT_NODE(TDSL_IR_DECLARE_STMT_VISIT)
#undef TDSL_IR_DECLARE_EXPR_VISIT
#undef TDSL_IR_DECLARE_STMT_VISIT

  /// Mutates each element; sets `changed` if any element changed.
  std::vector<Expr> mutateExprs(const std::vector<Expr> &exprs, bool &changed);
  std::vector<Buffer> mutateBuffers(const std::vector<Buffer> &buffers, bool &changed);
  std::vector<BufferRegion> mutateRegions(const std::vector<BufferRegion> &regions, bool &changed);
};

} // namespace tdsl::ir
