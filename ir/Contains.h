//===- ir/Contains.h - Whether IR holds a node of a given kind ------------------------------===//
//
// contains<Node>(ir): whether an expression or a statement holds a node of type Node anywhere
// (`contains<For>(body)`, `contains<BufferLoad>(value)`); contains<Node>(ir, pred): one for
// which pred(node) holds (`contains<BufferLoad>(e, [&](auto *op) { return op->buffer == b; })`);
// forEach<Node>(ir, f): f(node) for each; forEachBufferRef(ir, f): f(buffer) for every buffer
// the IR names.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IRVisitor.h"

#include <type_traits>
#include <variant>

namespace tdsl::ir {

/// `visitor` run over `ir`, an Expr or a Stmt.
template <typename IR> void visitIR(IRVisitor &visitor, const IR &ir) {
  if constexpr (std::is_same_v<IR, Expr>)
    visitor.visitExpr(ir);
  else
    visitor.visitStmt(ir);
}

template <typename Node, typename IR, typename Pred> bool contains(const IR &ir, Pred pred) {
  struct Finder : IRVisitor {
    Pred &pred;
    bool found = false;
    explicit Finder(Pred &p) : pred(p) {}
    void visit(const Node *op) override {
      found = found || pred(op);
      if (!found)
        IRVisitor::visit(op);
    }
  } finder(pred);
  visitIR(finder, ir);
  return finder.found;
}

template <typename Node, typename IR> bool contains(const IR &ir) {
  return contains<Node>(ir, [](const Node *) { return true; });
}

/// Calls `f(node)` for every Node in `ir`, in visiting order.
template <typename Node, typename IR, typename F> void forEach(const IR &ir, F f) {
  struct Walker : IRVisitor {
    F &f;
    explicit Walker(F &g) : f(g) {}
    void visit(const Node *op) override {
      f(op);
      IRVisitor::visit(op);
    }
  } walker(f);
  visitIR(walker, ir);
}

namespace detail {

/// The visitor of forEachBufferRef.
template <typename F> class BufferRefs : public IRVisitor {
public:
  explicit BufferRefs(F &f) : f_(f) {}

  void visit(const BufferLoad *op) override { ref(op, op->buffer); }
  void visit(const BufferStore *op) override { ref(op, op->buffer); }
  void visit(const BufferView *op) override { ref(op, op->source); }
  void visit(const FuncCall *op) override {
    for (const auto &arg : op->args)
      if (const auto *b = std::get_if<Buffer>(&arg))
        f_(*b);
    IRVisitor::visit(op);
  }
  using IRVisitor::visit;

private:
  /// `buffer`, named by `op`; then what is inside `op`.
  template <typename Node> void ref(const Node *op, const Buffer &buffer) {
    f_(buffer);
    IRVisitor::visit(op);
  }

  F &f_;
};

} // namespace detail

/// Calls `f(buffer)` for every buffer `ir` names, in visiting order: those loaded and stored,
/// the source of a view, and the buffer arguments of a call.
template <typename IR, typename F> void forEachBufferRef(const IR &ir, F f) {
  detail::BufferRefs<F> refs(f);
  visitIR(refs, ir);
}

} // namespace tdsl::ir
