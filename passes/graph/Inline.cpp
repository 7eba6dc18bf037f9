//===- passes/graph/Inline.cpp - graph.inline: calls of graphs replaced by their bodies ------===//
//
// Spec §8: a graph may call another graph; the call is inlined before the graph passes, so
// that fusion and memory planning see one graph. The callee's parameters become the call's
// arguments (its shape variables the arguments' dimensions, its constants the call's), its
// values fresh values of the caller, its results the call's targets. A call inside a dataflow
// block takes the callee's bindings into that block; a call outside takes its top-level
// bindings and its dataflow blocks as they are.
//
//===------------------------------------------------------------------------------------------===//

#include "passes/graph/Graph.h"
#include "passes/graph/GraphUtils.h"

#include "ir/Simplify.h"
#include "ir/Utils.h"

#include <unordered_map>

namespace tdsl::graph {

using namespace ir;

namespace {

class Inliner {
public:
  explicit Inliner(const Module &m) : m_(m) {}

  Func run(const GraphFunc &g) {
    std::vector<GraphItem> body;
    for (const GraphItem &item : g.body) {
      if (const auto *df = std::get_if<DataflowBlock>(&item)) {
        DataflowBlock out = *df;
        out.bindings.clear();
        for (const GraphBinding &b : df->bindings)
          expand(b, [&](GraphItem i) {
            if (auto *inner = std::get_if<DataflowBlock>(&i))
              for (const GraphBinding &ib : inner->bindings)
                out.bindings.push_back(ib);
            else if (auto *c = std::get_if<CallBinding>(&i))
              out.bindings.push_back(*c);
            else
              out.bindings.push_back(std::get<ReshapeBinding>(i));
          });
        body.push_back(out);
        continue;
      }
      GraphBinding b = std::holds_alternative<CallBinding>(item)
                           ? GraphBinding(std::get<CallBinding>(item))
                           : GraphBinding(std::get<ReshapeBinding>(item));
      expand(b, [&](GraphItem i) { body.push_back(std::move(i)); });
    }
    return detail::withBody(g, body);
  }

private:
  /// `b`, or the callee's items in its place when it calls a graph.
  void expand(const GraphBinding &b, const std::function<void(GraphItem)> &emit) {
    const auto *call = std::get_if<CallBinding>(&b);
    const GraphFunc *callee = call ? m_.lookup(call->callee).as<GraphFunc>() : nullptr;
    if (!callee) {
      if (call)
        emit(*call);
      else
        emit(std::get<ReshapeBinding>(b));
      return;
    }
    Func flat = Inliner(m_).run(*callee); // the callee's own graph calls first
    const GraphFunc &g = *flat.as<GraphFunc>();
    std::unordered_map<Var, Expr> vars;
    for (size_t i = 0; i < g.constVars.size() && i < call->constArgs.size(); ++i)
      vars[g.constVars[i]] = call->constArgs[i];
    std::unordered_map<const BufferNode *, Buffer> buffers;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const FuncParam &p = g.inputs[i];
      if (!p.isTensor()) {
        vars[p.scalar] = std::get<Expr>(call->args[i]);
        continue;
      }
      const Buffer &arg = std::get<Buffer>(call->args[i]);
      buffers[p.buffer.get()] = arg;
      for (size_t d = 0; d < p.buffer.rank(); ++d)
        if (auto *ref = p.buffer.shape()[d].as<VarRef>(); ref && !vars.count(ref->var))
          vars[ref->var] = arg.shape()[d];
    }
    // A result the callee defines becomes the call's target; one that is a parameter, a
    // constant or returned twice becomes a view of what it is.
    std::vector<ReshapeBinding> views;
    for (size_t i = 0; i < g.results.size(); ++i) {
      const Buffer &r = g.results[i];
      if (buffers.count(r.get()) || r.role() == BufferRole::Constant) {
        Buffer src = buffers.count(r.get()) ? buffers[r.get()] : r;
        views.push_back({call->targets[i], src, call->loc});
        continue;
      }
      buffers[r.get()] = call->targets[i];
    }
    auto value = [&](const Buffer &b) {
      auto it = buffers.find(b.get());
      if (it != buffers.end())
        return it->second;
      if (b.role() == BufferRole::Constant)
        return b;
      std::vector<Expr> shape;
      for (const Expr &d : b.shape())
        shape.push_back(simplify(substitute(d, vars)));
      Buffer fresh(b.name(), b.dtype(), shape, b.role(), b.scope(), {}, b->loc);
      buffers[b.get()] = fresh;
      return fresh;
    };
    auto binding = [&](const GraphBinding &inner) -> GraphItem {
      if (const auto *r = std::get_if<ReshapeBinding>(&inner)) {
        Buffer source = value(r->source);
        return ReshapeBinding{value(r->target), source, r->loc};
      }
      CallBinding c = std::get<CallBinding>(inner);
      for (GraphArg &a : c.args) {
        if (auto *buf = std::get_if<Buffer>(&a))
          a = value(*buf);
        else
          a = simplify(substitute(std::get<Expr>(a), vars));
      }
      for (Expr &e : c.constArgs)
        e = simplify(substitute(e, vars));
      for (Buffer &t : c.targets)
        t = value(t);
      return c;
    };
    for (const GraphItem &item : g.body) {
      if (const auto *df = std::get_if<DataflowBlock>(&item)) {
        DataflowBlock out;
        out.loc = df->loc;
        for (const GraphBinding &ib : df->bindings) {
          GraphItem i = binding(ib);
          if (auto *c = std::get_if<CallBinding>(&i))
            out.bindings.push_back(*c);
          else
            out.bindings.push_back(std::get<ReshapeBinding>(i));
        }
        for (const Buffer &o : df->outputs)
          out.outputs.push_back(value(o));
        emit(out);
        continue;
      }
      emit(binding(std::holds_alternative<CallBinding>(item)
                       ? GraphBinding(std::get<CallBinding>(item))
                       : GraphBinding(std::get<ReshapeBinding>(item))));
    }
    for (const ReshapeBinding &v : views)
      emit(v);
  }

  const Module &m_;
};

} // namespace

Func inlineGraphCalls(const Module &m, const GraphFunc &g) { return Inliner(m).run(g); }

void inlineGraphs(Module &m) {
  for (const Func &f : std::vector<Func>(m.functions()))
    if (auto *g = f.as<GraphFunc>())
      m.replace(inlineGraphCalls(m, *g));
}

} // namespace tdsl::graph
