//===- ir/Contains.h - Whether IR holds a node of a given kind ------------------------------===//
//
// contains<Node>(ir): whether an expression or a statement holds a node of type Node anywhere
// (`contains<For>(body)`, `contains<BufferLoad>(value)`).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IRVisitor.h"

#include <type_traits>

namespace tdsl::ir {

template <typename Node, typename IR> bool contains(const IR &ir) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit(const Node *) override { found = true; }
  } finder;
  if constexpr (std::is_same_v<IR, Expr>)
    finder.visitExpr(ir);
  else
    finder.visitStmt(ir);
  return finder.found;
}

} // namespace tdsl::ir
