//===- ir/FreshVarCopier.h - Copies of IR that give the variables they define fresh Vars ------===//
//
// FreshVarCopier: the base of the mutators that copy a statement somewhere else (unrolled
// iterations, an inlined micro-kernel, a fused function) and so must give every variable the
// copy defines (loop, let and block variables) a fresh Var of the same name, dtype and location.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IRMutator.h"

#include <map>
#include <string>
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

/// A deep copy of a function's body with fresh Vars and Buffers (a fused function's producer
/// and consumer, possibly the same function, share nothing; an adjoint shares nothing with its
/// function), some of them given in advance in `vars` and `buffers`; blocks renamed by
/// `blockNames`.
class DeepCopier : public FreshVarCopier {
public:
  std::map<const VarNode *, Expr> vars;
  std::map<const BufferNode *, Buffer> buffers;
  std::map<std::string, std::string> blockNames;

  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers.find(b.get());
    if (it != buffers.end())
      return it->second;
    std::vector<Expr> shape;
    for (const Expr &d : b.shape())
      shape.push_back(mutate(d));
    Buffer copy(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
    buffers[b.get()] = copy;
    return copy;
  }

protected:
  void bindFresh(const Var &v, const Var &fresh) override { vars[v.get()] = VarRef::make(fresh); }

  Expr visit(const VarRef *op) override {
    auto it = vars.find(op->var.get());
    return it == vars.end() ? Expr(op) : it->second;
  }
  Stmt visit(const Block *op) override {
    std::vector<IterVar> ivs;
    for (const IterVar &iv : op->iterVars)
      ivs.push_back(renewIterVar(iv));
    bool changed = false;
    std::vector<Buffer> allocs = mutateBuffers(op->allocBuffers, changed);
    std::vector<BufferRegion> reads = mutateRegions(op->reads, changed);
    std::vector<BufferRegion> writes = mutateRegions(op->writes, changed);
    auto it = blockNames.find(op->name);
    std::string name = it == blockNames.end() ? op->name : it->second;
    return Block::make(name, ivs, mutate(op->predicate), mutate(op->init), mutate(op->body), reads,
                       writes, allocs, op->loc);
  }
};

} // namespace tdsl::ir
