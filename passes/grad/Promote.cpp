//===- passes/grad/Promote.cpp - A module with every f32 value in f64 (--check-grad) --------===//
//
// promoteToF64 (passes/grad/Grad.h): tdsl-run --check-grad evaluates F in f64 (spec §13). Every
// f32 buffer, scalar, constant, cast and intrinsic of every function becomes f64; f16 and bf16
// stay storage types, so casts to them still round.
//
//===------------------------------------------------------------------------------------------===//

#include "passes/grad/Grad.h"

#include "ir/IRMutator.h"

#include <cstring>
#include <map>

namespace tdsl::grad {

using namespace ir;

namespace {

DType wide(DType t) { return t == DType::f32() ? DType::f64() : t; }

class Promoter : public IRMutator {
public:
  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end())
      return it->second;
    if (b.dtype() != DType::f32())
      return b;
    std::vector<Expr> shape;
    for (const Expr &d : b.shape())
      shape.push_back(mutate(d));
    Buffer w(b.name(), DType::f64(), shape, b.role(), b.scope(), b->align, b->loc);
    buffers_[b.get()] = w;
    return w;
  }

  Var var(const Var &v) {
    if (v.dtype() != DType::f32())
      return v;
    auto it = vars_.find(v.get());
    if (it != vars_.end())
      return it->second;
    Var w(v.name(), DType::f64(), v->loc);
    vars_[v.get()] = w;
    return w;
  }

  GraphArg arg(const GraphArg &a) {
    if (auto *b = std::get_if<Buffer>(&a))
      return mutateBuffer(*b);
    return mutate(std::get<Expr>(a));
  }

  GraphBinding binding(const GraphBinding &b) {
    if (auto *r = std::get_if<ReshapeBinding>(&b))
      return ReshapeBinding{mutateBuffer(r->target), mutateBuffer(r->source), r->loc};
    CallBinding c = std::get<CallBinding>(b);
    for (Buffer &t : c.targets)
      t = mutateBuffer(t);
    for (GraphArg &a : c.args)
      a = arg(a);
    return c;
  }

  Func func(const Func &f) {
    auto params = [&](const std::vector<FuncParam> &in) {
      std::vector<FuncParam> out;
      for (const FuncParam &p : in)
        out.push_back(p.isTensor() ? FuncParam::tensor(mutateBuffer(p.buffer))
                                   : FuncParam::scalarVar(var(p.scalar)));
      return out;
    };
    auto buffers = [&](const std::vector<Buffer> &in) {
      std::vector<Buffer> out;
      for (const Buffer &b : in)
        out.push_back(mutateBuffer(b));
      return out;
    };
    if (auto *p = f.as<PrimFunc>()) {
      std::vector<FuncParam> inputs = params(p->inputs);
      std::vector<Buffer> outputs = buffers(p->outputs), allocs = buffers(p->allocBuffers);
      return PrimFunc::make(p->name, p->constVars, inputs, outputs, p->shapeVars, allocs,
                            mutate(p->body), p->loc);
    }
    if (auto *g = f.as<GraphFunc>()) {
      std::vector<FuncParam> inputs = params(g->inputs);
      std::vector<GraphItem> body;
      for (const GraphItem &item : g->body) {
        if (auto *df = std::get_if<DataflowBlock>(&item)) {
          DataflowBlock out = *df;
          for (GraphBinding &b : out.bindings)
            b = binding(b);
          out.outputs = buffers(df->outputs);
          body.push_back(out);
        } else if (auto *c = std::get_if<CallBinding>(&item)) {
          body.push_back(std::get<CallBinding>(binding(*c)));
        } else {
          body.push_back(std::get<ReshapeBinding>(binding(std::get<ReshapeBinding>(item))));
        }
      }
      return GraphFunc::make(g->name, g->constVars, inputs, g->shapeVars, body, buffers(g->results),
                             g->loc);
    }
    auto *e = f.as<ExternFunc>();
    return ExternFunc::make(e->name, e->pure, params(e->inputs), buffers(e->outputs), e->shapeVars,
                            e->symbol, e->loc);
  }

protected:
  Expr visit(const FloatImm *op) override {
    return op->type == DType::f32() ? FloatImm::make(DType::f64(), op->value, op->loc) : Expr(op);
  }
  Expr visit(const VarRef *op) override {
    return op->var.dtype() == DType::f32() ? VarRef::make(var(op->var), op->loc) : Expr(op);
  }
  Expr visit(const Cast *op) override {
    return Cast::make(wide(op->type), mutate(op->value), op->loc);
  }
  Expr visit(const Call *op) override {
    std::vector<Expr> args;
    for (const Expr &a : op->args)
      args.push_back(mutate(a));
    return Call::make(wide(op->type), op->op, args, op->loc);
  }
  Stmt visit(const LetStmt *op) override {
    return LetStmt::make(var(op->var), mutate(op->value), mutate(op->body), op->loc);
  }

private:
  std::map<const BufferNode *, Buffer> buffers_;
  std::map<const VarNode *, Var> vars_;
};

} // namespace

Module promoteToF64(const Module &m) {
  Promoter p;
  Module out;
  out.imports = m.imports;
  out.intrinsics = m.intrinsics;
  out.grads = m.grads;
  for (const Constant &c : m.constants) {
    Constant w = c;
    w.buffer = p.mutateBuffer(c.buffer);
    if (c.buffer.dtype() == DType::f32()) {
      auto bytes = std::make_shared<std::vector<uint8_t>>(c.data->size() * 2);
      for (size_t i = 0; i < c.data->size() / 4; ++i) {
        float f;
        std::memcpy(&f, c.data->data() + 4 * i, 4);
        double d = f;
        std::memcpy(bytes->data() + 8 * i, &d, 8);
      }
      w.data = bytes;
      w.path.clear();
    }
    out.constants.push_back(w);
  }
  for (const Func &f : m.functions())
    out.add(p.func(f));
  return out;
}

} // namespace tdsl::grad
