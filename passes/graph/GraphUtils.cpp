//===- passes/graph/GraphUtils.cpp - Helpers shared by the graph passes (see GraphUtils.h) ----===//

#include "passes/graph/GraphUtils.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <set>

namespace tdsl::graph::detail {

using namespace ir;

std::vector<PlacedBinding> bindingsInOrder(const GraphFunc &g) {
  std::vector<PlacedBinding> out;
  int dataflow = 0;
  for (const GraphItem &item : g.body) {
    if (const auto *df = std::get_if<DataflowBlock>(&item)) {
      for (const GraphBinding &b : df->bindings)
        out.push_back({b, dataflow});
      ++dataflow;
    } else if (const auto *call = std::get_if<CallBinding>(&item)) {
      out.push_back({*call, -1});
    } else {
      out.push_back({std::get<ReshapeBinding>(item), -1});
    }
  }
  return out;
}

std::vector<Buffer> readsOf(const GraphBinding &b) {
  if (const auto *r = std::get_if<ReshapeBinding>(&b))
    return {r->source};
  std::vector<Buffer> out;
  for (const GraphArg &a : std::get<CallBinding>(b).args)
    if (const auto *buf = std::get_if<Buffer>(&a))
      out.push_back(*buf);
  return out;
}

std::vector<Buffer> definesOf(const GraphBinding &b) {
  if (const auto *r = std::get_if<ReshapeBinding>(&b))
    return {r->target};
  return std::get<CallBinding>(b).targets;
}

Func withBody(const GraphFunc &g, std::vector<GraphItem> body) {
  return GraphFunc::make(g.name, g.constVars, g.inputs, g.shapeVars, std::move(body), g.results,
                         g.loc);
}

Func rewriteBindings(const GraphFunc &g,
                     const std::function<std::vector<GraphBinding>(const GraphBinding &)> &fn) {
  std::vector<GraphItem> body;
  auto emitTop = [&](const std::vector<GraphBinding> &bs) {
    for (const GraphBinding &b : bs) {
      if (const auto *c = std::get_if<CallBinding>(&b))
        body.emplace_back(*c);
      else
        body.emplace_back(std::get<ReshapeBinding>(b));
    }
  };
  for (const GraphItem &item : g.body) {
    if (const auto *df = std::get_if<DataflowBlock>(&item)) {
      DataflowBlock out;
      out.loc = df->loc;
      out.outputs = df->outputs;
      for (const GraphBinding &b : df->bindings)
        for (GraphBinding &r : fn(b))
          out.bindings.push_back(std::move(r));
      body.emplace_back(std::move(out));
    } else if (const auto *call = std::get_if<CallBinding>(&item)) {
      emitTop(fn(*call));
    } else {
      emitTop(fn(std::get<ReshapeBinding>(item)));
    }
  }
  return withBody(g, std::move(body));
}

void rewriteCalls(Module &module,
                  const std::function<std::optional<CallBinding>(const CallBinding &)> &fn) {
  for (const Func &f : std::vector<Func>(module.functions())) {
    const auto *g = f.as<GraphFunc>();
    if (!g)
      continue;
    module.replace(rewriteBindings(*g, [&](const GraphBinding &b) -> std::vector<GraphBinding> {
      const auto *call = std::get_if<CallBinding>(&b);
      std::optional<CallBinding> replaced = call ? fn(*call) : std::nullopt;
      return {replaced ? GraphBinding(*replaced) : b};
    }));
  }
}

Func renameBuffers(const GraphFunc &g, const std::map<const BufferNode *, Buffer> &map) {
  auto rename = [&](const Buffer &b) {
    auto it = map.find(b.get());
    return it == map.end() ? b : it->second;
  };
  auto fixBinding = [&](GraphBinding b) {
    if (auto *r = std::get_if<ReshapeBinding>(&b)) {
      r->source = rename(r->source);
      r->target = rename(r->target);
      return b;
    }
    auto &c = std::get<CallBinding>(b);
    for (GraphArg &a : c.args)
      if (auto *buf = std::get_if<Buffer>(&a))
        *buf = rename(*buf);
    for (Buffer &t : c.targets)
      t = rename(t);
    return b;
  };
  std::vector<GraphItem> body;
  for (const GraphItem &item : g.body) {
    if (const auto *df = std::get_if<DataflowBlock>(&item)) {
      DataflowBlock out = *df;
      for (GraphBinding &b : out.bindings)
        b = fixBinding(b);
      for (Buffer &o : out.outputs)
        o = rename(o);
      body.emplace_back(std::move(out));
    } else if (const auto *call = std::get_if<CallBinding>(&item)) {
      body.emplace_back(std::get<CallBinding>(fixBinding(*call)));
    } else {
      body.emplace_back(std::get<ReshapeBinding>(fixBinding(std::get<ReshapeBinding>(item))));
    }
  }
  std::vector<Buffer> results;
  for (const Buffer &r : g.results)
    results.push_back(rename(r));
  return GraphFunc::make(g.name, g.constVars, g.inputs, g.shapeVars, std::move(body),
                         std::move(results), g.loc);
}

std::vector<Expr> calleeShapeArgs(const Func &callee, const CallBinding &call) {
  const std::vector<FuncParam> &inputs = calleeInputs(callee);
  std::vector<Expr> out;
  for (const Var &v : calleeShapeVars(callee)) {
    Expr value;
    for (size_t k = 0; k < inputs.size() && k < call.args.size() && !value.defined(); ++k) {
      const auto *actual = std::get_if<Buffer>(&call.args[k]);
      if (!inputs[k].isTensor() || !actual)
        continue;
      const Buffer &param = inputs[k].buffer;
      for (size_t d = 0; d < param.rank() && d < actual->rank(); ++d)
        if (const auto *ref = param.shape()[d].as<VarRef>(); ref && ref->var == v) {
          value = actual->shape()[d];
          break;
        }
    }
    TDSL_IR_CHECK(value.defined(), "a callee shape variable appears as no whole input dimension");
    out.push_back(value);
  }
  return out;
}

std::string freshFuncName(const Module &m, const std::string &base) {
  std::string name = base;
  for (int i = 2; m.lookup(name).defined(); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

Expr byteSize(const Buffer &b) {
  // The constant factors first: `128 * B` rather than `4 * B * 32`.
  int64_t constant = b.dtype().storageBytes();
  Expr n;
  for (const Expr &d : b.shape()) {
    if (auto v = asConstInt(d)) {
      constant *= *v;
      continue;
    }
    n = n.defined() ? n * d : d;
  }
  return n.defined() ? simplify(intImm(constant) * n) : intImm(constant);
}

std::vector<Buffer> exportedValues(const GraphFunc &g) {
  std::vector<Buffer> out(g.results.begin(), g.results.end());
  for (const GraphItem &item : g.body)
    if (const auto *df = std::get_if<DataflowBlock>(&item))
      out.insert(out.end(), df->outputs.begin(), df->outputs.end());
  return out;
}

int64_t constantFactor(const Buffer &b) {
  int64_t constant = b.dtype().storageBytes();
  for (const Expr &d : b.shape())
    if (auto v = asConstInt(d))
      constant *= *v;
  return constant;
}

std::vector<const Block *> blocksOf(const Stmt &s) {
  struct Collect : IRVisitor {
    std::vector<const Block *> blocks;
    void visit(const Block *op) override {
      blocks.push_back(op);
      IRVisitor::visit(op);
    }
  } c;
  c.visitStmt(s);
  return c.blocks;
}

bool isElementwise(const PrimFunc &consumer, size_t k) {
  if (!consumer.constVars.empty() || !consumer.allocBuffers.empty() ||
      consumer.outputs.size() != 1 || k >= consumer.inputs.size() || !consumer.inputs[k].isTensor())
    return false;
  std::vector<const Block *> blocks = blocksOf(consumer.body);
  if (blocks.size() != 1)
    return false;
  const Block &b = *blocks.front();
  if (b.init.defined() || !isConstInt(b.predicate, 1) || !b.allocBuffers.empty())
    return false;
  std::set<const VarNode *> axes;
  for (const IterVar &iv : b.iterVars) {
    if (iv.kind != IterKind::Spatial)
      return false;
    axes.insert(iv.var.get());
  }
  const auto *store = b.body.as<BufferStore>();
  if (!store || !store->buffer.sameAs(consumer.outputs.front()) ||
      store->indices.size() != b.iterVars.size())
    return false;
  for (size_t d = 0; d < store->indices.size(); ++d) {
    const auto *ref = store->indices[d].as<VarRef>();
    if (!ref || ref->var != b.iterVars[d].var)
      return false;
  }
  struct Loads : IRVisitor {
    const Buffer *param;
    const BufferStore *store;
    const std::set<const VarNode *> *axes;
    bool ok = true;
    void visit(const BufferLoad *op) override {
      IRVisitor::visit(op);
      if (op->buffer.sameAs(*param)) {
        if (op->indices.size() != store->indices.size()) {
          ok = false;
          return;
        }
        for (size_t d = 0; d < op->indices.size(); ++d) {
          const auto *a = op->indices[d].as<VarRef>();
          if (!a || a->var != store->indices[d].as<VarRef>()->var)
            ok = false;
        }
        return;
      }
      for (const Expr &i : op->indices) {
        const auto *a = i.as<VarRef>();
        if (!(a && axes->count(a->var.get())) && !asConstInt(i))
          ok = false;
      }
    }
  } loads;
  loads.param = &consumer.inputs[k].buffer;
  loads.store = store;
  loads.axes = &axes;
  loads.visitExpr(store->value);
  return loads.ok;
}

} // namespace tdsl::graph::detail
