//===- ir/StructuralEqual.cpp - Alpha-equivalence of IR -----------------------------------===//
#include "ir/StructuralEqual.h"

#include <cstring>
#include <unordered_map>

namespace tdsl::ir {
namespace {

/// A one-to-one correspondence between objects of the two sides.
template <typename T> class Bijection {
public:
  /// Whether `a` and `b` correspond; objects seen for the first time are paired.
  bool use(const T *a, const T *b) {
    auto forward = forward_.find(a);
    if (forward != forward_.end())
      return forward->second == b;
    if (backward_.count(b))
      return false;
    bind(a, b);
    return true;
  }

  /// Pairs `a` with `b` from now on, replacing earlier pairings of either.
  void bind(const T *a, const T *b) {
    if (auto it = forward_.find(a); it != forward_.end())
      backward_.erase(it->second);
    if (auto it = backward_.find(b); it != backward_.end())
      forward_.erase(it->second);
    forward_[a] = b;
    backward_[b] = a;
  }

private:
  std::unordered_map<const T *, const T *> forward_, backward_;
};

class Comparer {
public:
  Comparer() = default;
  /// Identity mode (equalExpr): Vars and Buffers must be the same objects (Vars after alias).
  explicit Comparer(const std::unordered_map<Var, Var> &alias) : alias_(&alias) {}

  bool expr(const Expr &a, const Expr &b);
  bool stmt(const Stmt &a, const Stmt &b);
  bool func(const Func &a, const Func &b);

private:
  Bijection<VarNode> vars_;
  Bijection<BufferNode> buffers_;
  const std::unordered_map<Var, Var> *alias_ = nullptr;

  Var canonical(const Var &v) const {
    auto it = alias_->find(v);
    return it == alias_->end() ? v : it->second;
  }

  bool exprs(const std::vector<Expr> &a, const std::vector<Expr> &b);
  bool defineVar(const Var &a, const Var &b);
  bool useVar(const Var &a, const Var &b);
  bool sameBufferType(const Buffer &a, const Buffer &b);
  bool defineBuffer(const Buffer &a, const Buffer &b);
  bool useBuffer(const Buffer &a, const Buffer &b);
  bool defineBuffers(const std::vector<Buffer> &a, const std::vector<Buffer> &b);
  bool defineVars(const std::vector<Var> &a, const std::vector<Var> &b);
  bool params(const std::vector<FuncParam> &a, const std::vector<FuncParam> &b);
  bool regions(const std::vector<BufferRegion> &a, const std::vector<BufferRegion> &b);
  bool block(const Block *a, const Block *b);
  bool callBinding(const CallBinding &a, const CallBinding &b);
  bool binding(const GraphBinding &a, const GraphBinding &b);
  bool graph(const GraphFunc *a, const GraphFunc *b);
};

bool Comparer::exprs(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!expr(a[i], b[i]))
      return false;
  return true;
}

bool Comparer::defineVar(const Var &a, const Var &b) {
  if (a.defined() != b.defined())
    return false;
  if (!a.defined())
    return true;
  if (a.dtype() != b.dtype())
    return false;
  vars_.bind(a.get(), b.get());
  return true;
}

bool Comparer::useVar(const Var &a, const Var &b) {
  if (a.defined() != b.defined())
    return false;
  if (!a.defined())
    return true;
  if (alias_)
    return canonical(a) == canonical(b);
  return a.dtype() == b.dtype() && vars_.use(a.get(), b.get());
}

bool Comparer::defineVars(const std::vector<Var> &a, const std::vector<Var> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!defineVar(a[i], b[i]))
      return false;
  return true;
}

bool Comparer::sameBufferType(const Buffer &a, const Buffer &b) {
  if (a.dtype() != b.dtype() || a.scope() != b.scope() || a.role() != b.role())
    return false;
  const auto &alignA = a->align, &alignB = b->align;
  if (alignA.size() != alignB.size())
    return false;
  for (size_t i = 0; i < alignA.size(); ++i)
    if (alignA[i].factor != alignB[i].factor || alignA[i].offset != alignB[i].offset)
      return false;
  return exprs(a.shape(), b.shape());
}

bool Comparer::defineBuffer(const Buffer &a, const Buffer &b) {
  if (a.defined() != b.defined())
    return false;
  if (!a.defined())
    return true;
  if (!sameBufferType(a, b))
    return false;
  buffers_.bind(a.get(), b.get());
  return true;
}

bool Comparer::useBuffer(const Buffer &a, const Buffer &b) {
  if (a.defined() != b.defined())
    return false;
  if (!a.defined())
    return true;
  if (alias_)
    return a == b;
  return buffers_.use(a.get(), b.get()) && sameBufferType(a, b);
}

bool Comparer::defineBuffers(const std::vector<Buffer> &a, const std::vector<Buffer> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!defineBuffer(a[i], b[i]))
      return false;
  return true;
}

bool Comparer::params(const std::vector<FuncParam> &a, const std::vector<FuncParam> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].isTensor() != b[i].isTensor())
      return false;
    bool same = a[i].isTensor() ? defineBuffer(a[i].buffer, b[i].buffer)
                                : defineVar(a[i].scalar, b[i].scalar);
    if (!same)
      return false;
  }
  return true;
}

bool Comparer::regions(const std::vector<BufferRegion> &a, const std::vector<BufferRegion> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!useBuffer(a[i].buffer, b[i].buffer) || a[i].region.size() != b[i].region.size())
      return false;
    for (size_t d = 0; d < a[i].region.size(); ++d)
      if (!expr(a[i].region[d].min, b[i].region[d].min) ||
          !expr(a[i].region[d].extent, b[i].region[d].extent))
        return false;
  }
  return true;
}

bool Comparer::expr(const Expr &a, const Expr &b) {
  // No shortcut for a.sameAs(b) unless Vars compare by identity: a shared subtree may still
  // mention Vars paired differently.
  if (alias_ && a.sameAs(b))
    return true;
  if (!a.defined() || !b.defined())
    return a.defined() == b.defined();
  if (a.kind() != b.kind() || a.dtype() != b.dtype())
    return false;

  switch (a.kind()) {
  case ExprKind::IntImm:
    return a.as<IntImm>()->value == b.as<IntImm>()->value;
  case ExprKind::FloatImm: {
    // Bitwise, so that 0.0 differs from -0.0 and a NaN equals itself.
    double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
    return std::memcmp(&x, &y, sizeof(double)) == 0;
  }
  case ExprKind::VarRef:
    return useVar(a.as<VarRef>()->var, b.as<VarRef>()->var);
  case ExprKind::Cast:
    return expr(a.as<Cast>()->value, b.as<Cast>()->value);
  case ExprKind::Neg:
    return expr(a.as<Neg>()->a, b.as<Neg>()->a);
  case ExprKind::Not:
    return expr(a.as<Not>()->a, b.as<Not>()->a);
#define TDSL_IR_CASE(NAME)                                                                         \
  case ExprKind::NAME: {                                                                           \
    const auto *x = a.as<NAME>(), *y = b.as<NAME>();                                               \
    return expr(x->a, y->a) && expr(x->b, y->b);                                                   \
  }
    TDSL_FOR_EACH_BINARY_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  case ExprKind::Select: {
    const auto *x = a.as<Select>(), *y = b.as<Select>();
    return expr(x->condition, y->condition) && expr(x->trueValue, y->trueValue) &&
           expr(x->falseValue, y->falseValue);
  }
  case ExprKind::BufferLoad: {
    const auto *x = a.as<BufferLoad>(), *y = b.as<BufferLoad>();
    return useBuffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
  }
  case ExprKind::Call: {
    const auto *x = a.as<Call>(), *y = b.as<Call>();
    return x->op == y->op && exprs(x->args, y->args);
  }
  case ExprKind::Ramp: {
    const auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
    return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
  }
  case ExprKind::Broadcast: {
    const auto *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
    return x->lanes == y->lanes && expr(x->value, y->value);
  }
  }
  return false;
}

bool Comparer::block(const Block *a, const Block *b) {
  if (a->name != b->name || a->iterVars.size() != b->iterVars.size())
    return false;
  // Extents, bindings and the predicate are over the surrounding scope.
  for (size_t i = 0; i < a->iterVars.size(); ++i) {
    const IterVar &x = a->iterVars[i], &y = b->iterVars[i];
    if (x.kind != y.kind || !expr(x.extent, y.extent) || !expr(x.binding, y.binding))
      return false;
  }
  if (!expr(a->predicate, b->predicate))
    return false;
  for (size_t i = 0; i < a->iterVars.size(); ++i)
    if (!defineVar(a->iterVars[i].var, b->iterVars[i].var))
      return false;
  return defineBuffers(a->allocBuffers, b->allocBuffers) && regions(a->reads, b->reads) &&
         regions(a->writes, b->writes) && stmt(a->init, b->init) && stmt(a->body, b->body);
}

bool Comparer::stmt(const Stmt &a, const Stmt &b) {
  if (!a.defined() || !b.defined())
    return a.defined() == b.defined();
  if (a.kind() != b.kind())
    return false;

  switch (a.kind()) {
  case StmtKind::For: {
    const auto *x = a.as<For>(), *y = b.as<For>();
    return x->forKind == y->forKind && x->threadTag == y->threadTag && expr(x->min, y->min) &&
           expr(x->extent, y->extent) && defineVar(x->loopVar, y->loopVar) &&
           stmt(x->body, y->body);
  }
  case StmtKind::Block:
    return block(a.as<Block>(), b.as<Block>());
  case StmtKind::BufferStore: {
    const auto *x = a.as<BufferStore>(), *y = b.as<BufferStore>();
    return useBuffer(x->buffer, y->buffer) && exprs(x->indices, y->indices) &&
           expr(x->value, y->value);
  }
  case StmtKind::LetStmt: {
    const auto *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
    return expr(x->value, y->value) && defineVar(x->var, y->var) && stmt(x->body, y->body);
  }
  case StmtKind::IfThenElse: {
    const auto *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
    return expr(x->condition, y->condition) && stmt(x->thenCase, y->thenCase) &&
           stmt(x->elseCase, y->elseCase);
  }
  case StmtKind::SeqStmt: {
    const auto *x = a.as<SeqStmt>(), *y = b.as<SeqStmt>();
    if (x->seq.size() != y->seq.size())
      return false;
    for (size_t i = 0; i < x->seq.size(); ++i)
      if (!stmt(x->seq[i], y->seq[i]))
        return false;
    return true;
  }
  case StmtKind::Evaluate:
    return expr(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
  case StmtKind::Allocate: {
    const auto *x = a.as<Allocate>(), *y = b.as<Allocate>();
    return defineBuffer(x->buffer, y->buffer) && stmt(x->body, y->body);
  }
  case StmtKind::AssertStmt: {
    const auto *x = a.as<AssertStmt>(), *y = b.as<AssertStmt>();
    return x->message == y->message && expr(x->condition, y->condition) &&
           exprs(x->args, y->args) && stmt(x->body, y->body);
  }
  case StmtKind::ProfileRegion: {
    const auto *x = a.as<ProfileRegion>(), *y = b.as<ProfileRegion>();
    return x->id == y->id && x->label == y->label && stmt(x->body, y->body);
  }
  case StmtKind::BufferView: {
    const auto *x = a.as<BufferView>(), *y = b.as<BufferView>();
    return useBuffer(x->source, y->source) && expr(x->byteOffset, y->byteOffset) &&
           defineBuffer(x->buffer, y->buffer) && stmt(x->body, y->body);
  }
  case StmtKind::FuncCall: {
    const auto *x = a.as<FuncCall>(), *y = b.as<FuncCall>();
    if (x->callee != y->callee || x->args.size() != y->args.size())
      return false;
    for (size_t i = 0; i < x->args.size(); ++i) {
      const auto *bx = std::get_if<Buffer>(&x->args[i]);
      const auto *by = std::get_if<Buffer>(&y->args[i]);
      if (!bx != !by)
        return false;
      if (bx ? !useBuffer(*bx, *by) : !expr(std::get<Expr>(x->args[i]), std::get<Expr>(y->args[i])))
        return false;
    }
    return true;
  }
  }
  return false;
}

bool Comparer::callBinding(const CallBinding &a, const CallBinding &b) {
  if (a.callee != b.callee || a.annotated != b.annotated || a.args.size() != b.args.size() ||
      !exprs(a.constArgs, b.constArgs))
    return false;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const auto *bufferA = std::get_if<Buffer>(&a.args[i]);
    const auto *bufferB = std::get_if<Buffer>(&b.args[i]);
    if (!bufferA != !bufferB)
      return false;
    bool same = bufferA ? useBuffer(*bufferA, *bufferB)
                        : expr(std::get<Expr>(a.args[i]), std::get<Expr>(b.args[i]));
    if (!same)
      return false;
  }
  return defineBuffers(a.targets, b.targets);
}

bool Comparer::binding(const GraphBinding &a, const GraphBinding &b) {
  if (a.index() != b.index())
    return false;
  if (const auto *x = std::get_if<CallBinding>(&a))
    return callBinding(*x, std::get<CallBinding>(b));
  const auto &x = std::get<ReshapeBinding>(a), &y = std::get<ReshapeBinding>(b);
  return useBuffer(x.source, y.source) && defineBuffer(x.target, y.target);
}

bool Comparer::graph(const GraphFunc *a, const GraphFunc *b) {
  if (!defineVars(a->constVars, b->constVars) || !defineVars(a->shapeVars, b->shapeVars) ||
      !params(a->inputs, b->inputs) || a->body.size() != b->body.size())
    return false;
  for (size_t i = 0; i < a->body.size(); ++i) {
    const GraphItem &x = a->body[i], &y = b->body[i];
    if (x.index() != y.index())
      return false;
    if (const auto *call = std::get_if<CallBinding>(&x)) {
      if (!callBinding(*call, std::get<CallBinding>(y)))
        return false;
      continue;
    }
    if (const auto *reshape = std::get_if<ReshapeBinding>(&x)) {
      if (!binding(*reshape, std::get<ReshapeBinding>(y)))
        return false;
      continue;
    }
    const auto &dx = std::get<DataflowBlock>(x), &dy = std::get<DataflowBlock>(y);
    if (dx.bindings.size() != dy.bindings.size() || dx.outputs.size() != dy.outputs.size())
      return false;
    for (size_t j = 0; j < dx.bindings.size(); ++j)
      if (!binding(dx.bindings[j], dy.bindings[j]))
        return false;
    for (size_t j = 0; j < dx.outputs.size(); ++j)
      if (!useBuffer(dx.outputs[j], dy.outputs[j]))
        return false;
  }
  if (a->results.size() != b->results.size())
    return false;
  for (size_t i = 0; i < a->results.size(); ++i)
    if (!useBuffer(a->results[i], b->results[i]))
      return false;
  return true;
}

bool Comparer::func(const Func &a, const Func &b) {
  if (!a.defined() || !b.defined())
    return a.defined() == b.defined();
  if (a.kind() != b.kind() || a.name() != b.name())
    return false;

  switch (a.kind()) {
  case FuncKind::PrimFunc: {
    const auto *x = a.as<PrimFunc>(), *y = b.as<PrimFunc>();
    return defineVars(x->constVars, y->constVars) && defineVars(x->shapeVars, y->shapeVars) &&
           params(x->inputs, y->inputs) && defineBuffers(x->outputs, y->outputs) &&
           defineBuffers(x->allocBuffers, y->allocBuffers) && stmt(x->body, y->body);
  }
  case FuncKind::GraphFunc:
    return graph(a.as<GraphFunc>(), b.as<GraphFunc>());
  case FuncKind::ExternFunc: {
    const auto *x = a.as<ExternFunc>(), *y = b.as<ExternFunc>();
    return x->pure == y->pure && x->symbol == y->symbol && defineVars(x->shapeVars, y->shapeVars) &&
           params(x->inputs, y->inputs) && defineBuffers(x->outputs, y->outputs);
  }
  }
  return false;
}

} // namespace

bool structuralEqual(const Expr &a, const Expr &b) { return Comparer().expr(a, b); }
bool structuralEqual(const Stmt &a, const Stmt &b) { return Comparer().stmt(a, b); }
bool structuralEqual(const Func &a, const Func &b) { return Comparer().func(a, b); }

bool equalExpr(const Expr &a, const Expr &b, const std::unordered_map<Var, Var> &alias) {
  return Comparer(alias).expr(a, b);
}

bool structuralEqual(const Module &a, const Module &b) {
  if (a.imports != b.imports || a.functions().size() != b.functions().size() ||
      a.intrinsics.size() != b.intrinsics.size())
    return false;
  for (size_t i = 0; i < a.intrinsics.size(); ++i)
    if (a.intrinsics[i].name != b.intrinsics[i].name ||
        a.intrinsics[i].desc != b.intrinsics[i].desc ||
        a.intrinsics[i].impl != b.intrinsics[i].impl)
      return false;
  for (size_t i = 0; i < a.functions().size(); ++i)
    if (!structuralEqual(a.functions()[i], b.functions()[i]))
      return false;
  return true;
}

} // namespace tdsl::ir
