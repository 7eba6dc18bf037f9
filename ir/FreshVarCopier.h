//===- ir/FreshVarCopier.h - Copies of IR that give the variables they define fresh Vars ------===//
//
// FreshVarCopier: the base of the mutators that copy a statement somewhere else (unrolled
// iterations, an inlined micro-kernel, a fused function) and so must give every variable the
// copy defines (loop, let and block variables) a fresh Var of the same name, dtype and location.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IRMutator.h"

#include <unordered_map>

namespace tdsl::ir {

class FreshVarCopier : public IRMutator {
public:
  /// A fresh Var like `v`; the copy's references to `v` become it (see bindFresh).
  Var renew(const Var &v) {
    Var fresh(v.name(), v.dtype(), v->loc);
    bindFresh(v, fresh);
    return fresh;
  }

  /// The copy's buffer for `buffer`: the one `buffers_` maps it to, or itself.
  Buffer mutateBuffer(const Buffer &buffer) override {
    auto it = buffers_.find(buffer);
    return it == buffers_.end() ? buffer : it->second;
  }

protected:
  /// Records that the references to `v` met from now on become `fresh` (the derived class's
  /// visit(const VarRef *) looks it up).
  virtual void bindFresh(const Var &v, const Var &fresh) = 0;

  /// A block variable of the copy: `iv` with its binding and extent copied and a fresh Var.
  IterVar renewIterVar(const IterVar &iv) {
    IterVar n = iv;
    n.binding = mutate(iv.binding);
    n.extent = mutate(iv.extent);
    n.var = renew(iv.var);
    return n;
  }

  Stmt visit(const For *op) override {
    Var v = renew(op->loopVar);
    return For::make(v, mutate(op->min), mutate(op->extent), op->forKind, mutate(op->body),
                     op->threadTag, op->loc);
  }
  Stmt visit(const LetStmt *op) override {
    Expr value = mutate(op->value);
    Var v = renew(op->var);
    return LetStmt::make(v, value, mutate(op->body), op->loc);
  }
  using IRMutator::visit;

  /// The buffers the copy defines afresh (allocations), by the original.
  std::unordered_map<Buffer, Buffer> buffers_;
};

} // namespace tdsl::ir
