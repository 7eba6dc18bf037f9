//===- passes/lower/LowerGraph.cpp - Graphs to loop-level functions ------------------------===//
#include "passes/lower/LowerGraph.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/graph/Graph.h"
#include "passes/graph/GraphUtils.h"

#include <algorithm>
#include <map>

namespace tdsl::lower {

using namespace ir;

namespace {

Buffer flatten(const Buffer &b, BufferRole role) {
  Expr n = intImm(1);
  for (const Expr &d : b.shape())
    n = n * d;
  return Buffer(b.name(), b.dtype(), {simplify(n)}, role, MemScope::Global, {}, b->loc);
}

/// `buffer` (flat) set to zero bytes, through a byte view of its storage.
Stmt zeroFill(const Buffer &buffer) {
  Expr bytes = simplify(buffer.shape()[0] * intImm((buffer.dtype().bits() + 7) / 8));
  Buffer view(buffer.name() + "_bytes", DType::u8(), {bytes}, BufferRole::Alloc);
  Var i("i");
  Stmt fill = For::make(i, intImm(0), bytes, ForKind::Serial,
                        BufferStore::make(view, IntImm::make(DType::u8(), 0), {Expr(i)}));
  return BufferView::make(view, buffer, intImm(0), fill);
}

} // namespace

Func graphSignature(const Func &f) {
  const auto *g = f.as<GraphFunc>();
  TDSL_IR_CHECK(g, "graphSignature takes a graph");
  std::vector<Buffer> outputs;
  for (const Buffer &r : g->results)
    outputs.emplace_back(r.name(), r.dtype(), r.shape(), BufferRole::Output, MemScope::Global,
                         std::vector<StorageAlign>{}, r->loc);
  return PrimFunc::make(g->name, g->constVars, g->inputs, outputs, g->shapeVars, {}, seq({}),
                        g->loc);
}

std::map<const BufferNode *, Buffer> flatConstants(const Module &module) {
  std::map<const BufferNode *, Buffer> out;
  for (const Constant &c : module.constants) {
    Buffer b = flatten(c.buffer, BufferRole::Constant);
    out[c.buffer.get()] = Buffer(c.name, b.dtype(), b.shape(), BufferRole::Constant,
                                 MemScope::Global, {}, c.buffer->loc);
  }
  return out;
}

std::vector<Buffer> constantsUsed(const GraphFunc &g) {
  std::vector<Buffer> out;
  auto use = [&](const Buffer &b) {
    if (b.defined() && b.role() == BufferRole::Constant &&
        std::find(out.begin(), out.end(), b) == out.end())
      out.push_back(b);
  };
  for (const graph::detail::PlacedBinding &pb : graph::detail::bindingsInOrder(g)) {
    if (const auto *reshape = std::get_if<ReshapeBinding>(&pb.binding)) {
      use(reshape->source);
      continue;
    }
    for (const GraphArg &a : std::get<CallBinding>(pb.binding).args)
      if (const auto *b = std::get_if<Buffer>(&a))
        use(*b);
  }
  for (const Buffer &r : g.results)
    use(r);
  return out;
}

Func lowerGraph(const Func &f, const Module &module,
                const std::map<const BufferNode *, Buffer> &constants) {
  const auto *g = f.as<GraphFunc>();
  TDSL_IR_CHECK(g && g->constVars.empty(), "lowerGraph takes a graph without open constants");
  MemoryPlan plan = g->plan ? *g->plan : graph::planGraph(*g, module);
  Func signature = graphSignature(f);
  const auto *sig = signature.as<PrimFunc>();

  // Flat storage of every value; constants are the module's.
  std::map<const BufferNode *, Buffer> flat;
  for (const Buffer &c : constantsUsed(*g)) {
    auto it = constants.find(c.get());
    flat[c.get()] = it != constants.end() ? it->second : flatten(c, BufferRole::Constant);
  }
  std::vector<FuncParam> inputs;
  for (const FuncParam &p : g->inputs) {
    if (!p.isTensor()) {
      inputs.push_back(p);
      continue;
    }
    Buffer b = flatten(p.buffer, BufferRole::Input);
    flat[p.buffer.get()] = b;
    inputs.push_back(FuncParam::tensor(b));
  }
  std::vector<Buffer> outputs;
  for (const Buffer &o : sig->outputs)
    outputs.push_back(flatten(o, BufferRole::Output));

  bool needArena = !isConstInt(plan.arenaBytes, 0);
  Buffer arena("arena", DType::u64(), {simplify((plan.arenaBytes + intImm(7)) / intImm(8))},
               BufferRole::Alloc);
  struct View {
    Buffer buffer, source;
    Expr offset;
  };
  std::vector<View> views;
  for (const PlannedValue &v : plan.values) {
    switch (v.kind) {
    case PlannedValue::Kind::Result:
      flat[v.value.get()] = outputs[v.result];
      break;
    case PlannedValue::Kind::Arena: {
      Buffer b = flatten(v.value, BufferRole::Alloc);
      views.push_back({b, arena, v.offset});
      flat[v.value.get()] = b;
      break;
    }
    case PlannedValue::Kind::View: {
      Buffer b = flatten(v.value, BufferRole::Alloc);
      views.push_back({b, flat.at(v.viewOf.get()), intImm(0)});
      flat[v.value.get()] = b;
      break;
    }
    }
  }

  std::vector<Stmt> body;
  for (const graph::detail::PlacedBinding &pb : graph::detail::bindingsInOrder(*g)) {
    const auto *call = std::get_if<CallBinding>(&pb.binding);
    if (!call)
      continue; // reshapes are views
    Func callee = module.lookup(call->callee);
    TDSL_IR_CHECK(callee.as<PrimFunc>() || callee.as<ExternFunc>(), "call of an unknown callee");
    std::vector<std::variant<Buffer, Expr>> args;
    for (const GraphArg &a : call->args) {
      if (const auto *b = std::get_if<Buffer>(&a))
        args.emplace_back(flat.at(b->get()));
      else
        args.emplace_back(std::get<Expr>(a));
    }
    // An output the callee reads before writing it (`y[i] = y[i] + x[i]`, a reduction without
    // `init`) starts from zeros, as in the interpreter, never from another value's bytes.
    const auto *prim = callee.as<PrimFunc>();
    for (size_t k = 0; k < call->targets.size(); ++k) {
      const Buffer &target = flat.at(call->targets[k].get());
      args.emplace_back(target);
      if (prim && k < prim->outputs.size() && readsInitialContents(callee, prim->outputs[k]))
        body.push_back(zeroFill(target));
    }
    for (const Expr &e : graph::detail::calleeShapeArgs(callee, *call))
      args.emplace_back(simplify(e));
    body.push_back(FuncCall::make(call->callee, std::move(args), call->loc));
  }
  // Results not computed in place (nor views of their own output) are copied.
  std::map<const BufferNode *, Buffer> viewedFrom;
  for (const View &v : views)
    if (isConstInt(v.offset, 0))
      viewedFrom[v.buffer.get()] = v.source;
  auto storage = [&](Buffer b) {
    for (auto it = viewedFrom.find(b.get()); it != viewedFrom.end(); it = viewedFrom.find(b.get()))
      b = it->second;
    return b;
  };
  for (size_t k = 0; k < g->results.size(); ++k) {
    const Buffer &source = flat.at(g->results[k].get());
    if (storage(source).sameAs(outputs[k]))
      continue;
    Var i("i");
    body.push_back(
        For::make(i, intImm(0), outputs[k].shape()[0], ForKind::Serial,
                  BufferStore::make(outputs[k], BufferLoad::make(source, {Expr(i)}), {Expr(i)})));
  }
  Stmt s = seq(body);
  for (size_t v = views.size(); v-- > 0;)
    s = BufferView::make(views[v].buffer, views[v].source, views[v].offset, s);
  if (needArena)
    s = Allocate::make(arena, s);
  return PrimFunc::make(g->name, {}, inputs, outputs, g->shapeVars, {}, s, g->loc);
}

std::vector<std::string> calledFunctions(const std::vector<ir::Func> &lowered) {
  struct Calls : ir::IRVisitor {
    std::vector<std::string> callees;
    void visit(const ir::FuncCall *op) override {
      if (std::find(callees.begin(), callees.end(), op->callee) == callees.end())
        callees.push_back(op->callee);
      ir::IRVisitor::visit(op);
    }
  } calls;
  for (const ir::Func &f : lowered)
    if (const auto *p = f.as<ir::PrimFunc>())
      calls.visitStmt(p->body);
  return calls.callees;
}

} // namespace tdsl::lower
