//===- ir/IRMutator.cpp - Rebuilding traversal of the IR ----------------------------------===//
#include "ir/IRMutator.h"

namespace tdsl::ir {

Expr IRMutator::mutate(const Expr &expr) {
  if (!expr.defined())
    return expr;
  return dispatch(expr, [this](const auto *op) { return visit(op); });
}

Stmt IRMutator::mutate(const Stmt &stmt) {
  if (!stmt.defined())
    return stmt;
  return dispatch(stmt, [this](const auto *op) { return visit(op); });
}

std::vector<Expr> IRMutator::mutateExprs(const std::vector<Expr> &exprs, bool &changed) {
  std::vector<Expr> result;
  result.reserve(exprs.size());
  for (const Expr &expr : exprs) {
    result.push_back(mutate(expr));
    changed |= !result.back().sameAs(expr);
  }
  return result;
}

std::vector<Buffer> IRMutator::mutateBuffers(const std::vector<Buffer> &buffers, bool &changed) {
  std::vector<Buffer> result;
  result.reserve(buffers.size());
  for (const Buffer &buffer : buffers) {
    result.push_back(mutateBuffer(buffer));
    changed |= !result.back().sameAs(buffer);
  }
  return result;
}

std::vector<BufferRegion> IRMutator::mutateRegions(const std::vector<BufferRegion> &regions,
                                                   bool &changed) {
  std::vector<BufferRegion> result;
  result.reserve(regions.size());
  for (const BufferRegion &region : regions) {
    BufferRegion mutated{mutateBuffer(region.buffer), {}};
    changed |= !mutated.buffer.sameAs(region.buffer);
    for (const Range &range : region.region) {
      Range r{mutate(range.min), mutate(range.extent)};
      changed |= !r.min.sameAs(range.min) || !r.extent.sameAs(range.extent);
      mutated.region.push_back(std::move(r));
    }
    result.push_back(std::move(mutated));
  }
  return result;
}

Func IRMutator::mutateFunc(const Func &func) {
  const auto *op = func.as<PrimFunc>();
  if (!op)
    return func;
  bool changed = false;
  std::vector<FuncParam> inputs;
  for (const FuncParam &param : op->inputs) {
    if (!param.isTensor()) {
      inputs.push_back(param);
      continue;
    }
    inputs.push_back(FuncParam::tensor(mutateBuffer(param.buffer)));
    changed |= !inputs.back().buffer.sameAs(param.buffer);
  }
  std::vector<Buffer> outputs = mutateBuffers(op->outputs, changed);
  std::vector<Buffer> allocs = mutateBuffers(op->allocBuffers, changed);
  Stmt body = mutate(op->body);
  if (!changed && body.sameAs(op->body))
    return func;
  return PrimFunc::make(op->name, op->constVars, std::move(inputs), std::move(outputs),
                        op->shapeVars, std::move(allocs), std::move(body), op->loc);
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

Expr IRMutator::visit(const IntImm *op) { return op; }
Expr IRMutator::visit(const FloatImm *op) { return op; }
Expr IRMutator::visit(const VarRef *op) { return op; }

Expr IRMutator::visit(const Cast *op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Cast::make(op->type, std::move(value), op->loc);
}

Expr IRMutator::visit(const Neg *op) {
  Expr a = mutate(op->a);
  if (a.sameAs(op->a))
    return op;
  return Neg::make(std::move(a), op->loc);
}

#define TDSL_IR_DEFINE_BINARY(NAME)                                                                \
  Expr IRMutator::visit(const NAME *op) {                                                          \
    Expr a = mutate(op->a);                                                                        \
    Expr b = mutate(op->b);                                                                        \
    if (a.sameAs(op->a) && b.sameAs(op->b))                                                        \
      return op;                                                                                   \
    return NAME::make(std::move(a), std::move(b), op->loc);                                        \
  }
TDSL_FOR_EACH_BINARY_NODE(TDSL_IR_DEFINE_BINARY)
#undef TDSL_IR_DEFINE_BINARY

Expr IRMutator::visit(const Not *op) {
  Expr a = mutate(op->a);
  if (a.sameAs(op->a))
    return op;
  return Not::make(std::move(a), op->loc);
}

Expr IRMutator::visit(const Select *op) {
  Expr condition = mutate(op->condition);
  Expr trueValue = mutate(op->trueValue);
  Expr falseValue = mutate(op->falseValue);
  if (condition.sameAs(op->condition) && trueValue.sameAs(op->trueValue) &&
      falseValue.sameAs(op->falseValue))
    return op;
  return Select::make(std::move(condition), std::move(trueValue), std::move(falseValue), op->loc);
}

Expr IRMutator::visit(const BufferLoad *op) {
  bool changed = false;
  Buffer buffer = mutateBuffer(op->buffer);
  changed |= !buffer.sameAs(op->buffer);
  std::vector<Expr> indices = mutateExprs(op->indices, changed);
  if (!changed)
    return op;
  return BufferLoad::make(std::move(buffer), std::move(indices), op->loc);
}

Expr IRMutator::visit(const Call *op) {
  bool changed = false;
  std::vector<Expr> args = mutateExprs(op->args, changed);
  if (!changed)
    return op;
  return Call::make(op->type, op->op, std::move(args), op->loc);
}

Expr IRMutator::visit(const Ramp *op) {
  Expr base = mutate(op->base);
  Expr stride = mutate(op->stride);
  if (base.sameAs(op->base) && stride.sameAs(op->stride))
    return op;
  return Ramp::make(std::move(base), std::move(stride), op->lanes, op->loc);
}

Expr IRMutator::visit(const Broadcast *op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Broadcast::make(std::move(value), op->lanes, op->loc);
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

Stmt IRMutator::visit(const For *op) {
  Expr min = mutate(op->min);
  Expr extent = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (min.sameAs(op->min) && extent.sameAs(op->extent) && body.sameAs(op->body))
    return op;
  return For::make(op->loopVar, std::move(min), std::move(extent), op->forKind, std::move(body),
                   op->threadTag, op->loc);
}

Stmt IRMutator::visit(const Block *op) {
  bool changed = false;
  std::vector<IterVar> iterVars;
  iterVars.reserve(op->iterVars.size());
  for (const IterVar &iv : op->iterVars) {
    IterVar mutated = iv;
    mutated.extent = mutate(iv.extent);
    mutated.binding = mutate(iv.binding);
    changed |= !mutated.extent.sameAs(iv.extent) || !mutated.binding.sameAs(iv.binding);
    iterVars.push_back(std::move(mutated));
  }
  Expr predicate = mutate(op->predicate);
  changed |= !predicate.sameAs(op->predicate);
  std::vector<BufferRegion> reads = mutateRegions(op->reads, changed);
  std::vector<BufferRegion> writes = mutateRegions(op->writes, changed);
  std::vector<Buffer> allocs = mutateBuffers(op->allocBuffers, changed);
  Stmt init = mutate(op->init);
  Stmt body = mutate(op->body);
  changed |= !init.sameAs(op->init) || !body.sameAs(op->body);
  if (!changed)
    return op;
  return Block::make(op->name, std::move(iterVars), std::move(predicate), std::move(init),
                     std::move(body), std::move(reads), std::move(writes), std::move(allocs),
                     op->loc);
}

Stmt IRMutator::visit(const BufferStore *op) {
  bool changed = false;
  Buffer buffer = mutateBuffer(op->buffer);
  changed |= !buffer.sameAs(op->buffer);
  Expr value = mutate(op->value);
  changed |= !value.sameAs(op->value);
  std::vector<Expr> indices = mutateExprs(op->indices, changed);
  if (!changed)
    return op;
  return BufferStore::make(std::move(buffer), std::move(value), std::move(indices), op->loc);
}

Stmt IRMutator::visit(const LetStmt *op) {
  Expr value = mutate(op->value);
  Stmt body = mutate(op->body);
  if (value.sameAs(op->value) && body.sameAs(op->body))
    return op;
  return LetStmt::make(op->var, std::move(value), std::move(body), op->loc);
}

Stmt IRMutator::visit(const IfThenElse *op) {
  Expr condition = mutate(op->condition);
  Stmt thenCase = mutate(op->thenCase);
  Stmt elseCase = mutate(op->elseCase);
  if (condition.sameAs(op->condition) && thenCase.sameAs(op->thenCase) &&
      elseCase.sameAs(op->elseCase))
    return op;
  return IfThenElse::make(std::move(condition), std::move(thenCase), std::move(elseCase), op->loc);
}

Stmt IRMutator::visit(const SeqStmt *op) {
  bool changed = false;
  std::vector<Stmt> stmts;
  stmts.reserve(op->seq.size());
  for (const Stmt &stmt : op->seq) {
    stmts.push_back(mutate(stmt));
    changed |= !stmts.back().sameAs(stmt);
  }
  if (!changed)
    return op;
  return SeqStmt::make(std::move(stmts), op->loc);
}

Stmt IRMutator::visit(const Evaluate *op) {
  Expr value = mutate(op->value);
  if (value.sameAs(op->value))
    return op;
  return Evaluate::make(std::move(value), op->loc);
}

Stmt IRMutator::visit(const Allocate *op) {
  Buffer buffer = mutateBuffer(op->buffer);
  Stmt body = mutate(op->body);
  if (buffer.sameAs(op->buffer) && body.sameAs(op->body))
    return op;
  return Allocate::make(std::move(buffer), std::move(body), op->loc);
}

Stmt IRMutator::visit(const AssertStmt *op) {
  Expr condition = mutate(op->condition);
  bool changed = false;
  std::vector<Expr> args = mutateExprs(op->args, changed);
  Stmt body = mutate(op->body);
  if (!changed && condition.sameAs(op->condition) && body.sameAs(op->body))
    return op;
  return AssertStmt::make(std::move(condition), op->message, std::move(args), std::move(body),
                          op->loc);
}

Stmt IRMutator::visit(const ProfileRegion *op) {
  Stmt body = mutate(op->body);
  if (body.sameAs(op->body))
    return op;
  return ProfileRegion::make(op->id, op->label, std::move(body), op->loc);
}

Stmt IRMutator::visit(const BufferView *op) {
  Buffer buffer = mutateBuffer(op->buffer);
  Buffer source = mutateBuffer(op->source);
  Expr offset = mutate(op->byteOffset);
  Stmt body = mutate(op->body);
  if (buffer.sameAs(op->buffer) && source.sameAs(op->source) && offset.sameAs(op->byteOffset) &&
      body.sameAs(op->body))
    return op;
  return BufferView::make(std::move(buffer), std::move(source), std::move(offset), std::move(body),
                          op->loc);
}

Stmt IRMutator::visit(const FuncCall *op) {
  bool changed = false;
  std::vector<std::variant<Buffer, Expr>> args;
  for (const auto &arg : op->args) {
    if (const auto *b = std::get_if<Buffer>(&arg)) {
      args.emplace_back(mutateBuffer(*b));
      changed |= !std::get<Buffer>(args.back()).sameAs(*b);
      continue;
    }
    const Expr &e = std::get<Expr>(arg);
    args.emplace_back(mutate(e));
    changed |= !std::get<Expr>(args.back()).sameAs(e);
  }
  if (!changed)
    return op;
  return FuncCall::make(op->callee, std::move(args), op->loc);
}

} // namespace tdsl::ir
