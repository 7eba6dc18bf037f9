//===- passes/graph/FoldViews.cpp - graph.fold-views: reshapes read their first source -------===//
//
// The importer writes each ONNX node over the views it needs (a MatMul on the [M, K] view of a
// [1, M, K] tensor, reshaped back to [1, M, N]; the Add after it on the [M, N] view of that),
// so that calls meet through chains of reshapes that fusion does not see through:
//
//   c = call nn.matmul(a2, w);           c = call nn.matmul(a2, w);
//   c3 = reshape(c, [1, M, N]);    -->   (dead: graph.dce removes it)
//   c2 = reshape(c3, [M, N]);            y = call nn.bias_add(c, b);
//   y = call nn.bias_add(c2, b);
//
// A reshape of a reshape becomes a reshape of the first one's source (the same elements in the
// same order), and a reshape to its source's own shape is that source: every use of its value
// reads the source instead. A value the graph returns or a dataflow block outputs keeps its
// binding (its name is the result's), as a reshape of the first source.
//
// An element-wise call (each tensor input read at the output's indices, docs/graphs.md) whose
// 2-D operands are all views of values of one other 2-D shape reads those values instead, and
// its result is viewed as before: `r = call nn.clip(reshape(y, [1, K * I]), 0.0, 6.0)` with y
// of shape [K, I] becomes `r_v = call nn.clip(y, 0.0, 6.0); r = reshape(r_v, [1, K * I])` —
// the same elements in the same order. Likewise nn.channel_bias_add on the [1, K, I] view of
// a [K, I] value is nn.row_bias_add of the value. Fusion then sees the call read its producer's
// result (a 1 x 1 convolution's product, graph.pack-weights). An element-wise call reading a
// value of rank 3 or more as one row ([1, N·C·H·W], which its schedule runs as one parallel
// iteration) reads it as [N·C, H·W] rows instead.

#include "passes/graph/Graph.h"

#include "ir/StructuralEqual.h"
#include "ir/Utils.h"
#include "passes/graph/GraphUtils.h"

#include <map>
#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

bool sameShape(const Buffer &a, const Buffer &b) {
  if (a.dtype() != b.dtype() || a.shape().size() != b.shape().size())
    return false;
  for (size_t d = 0; d < a.shape().size(); ++d)
    if (!structuralEqual(a.shape()[d], b.shape()[d]))
      return false;
  return true;
}

/// Whether `f` is element-wise in every tensor input, each of the output's rank-2 shape.
bool elementwise2d(const Func &f) {
  const auto *p = f.as<PrimFunc>();
  if (!p || p->outputs.size() != 1 || p->outputs[0].shape().size() != 2)
    return false;
  bool anyTensor = false;
  for (size_t k = 0; k < p->inputs.size(); ++k) {
    if (!p->inputs[k].isTensor())
      continue;
    anyTensor = true;
    if (!sameShape(p->inputs[k].buffer, p->outputs[0]) || !detail::isElementwise(*p, k))
      return false;
  }
  return anyTensor;
}

std::optional<Func> foldGraph(const Module &module, const GraphFunc &g) {
  std::set<const BufferNode *> kept; // results and dataflow outputs
  for (const Buffer &b : detail::exportedValues(g))
    kept.insert(b.get());
  // Where each value is defined: its dataflow block (-1: outside any); a value local to a block
  // (not among its outputs) is not visible from another one, so no binding there may read it.
  std::vector<detail::PlacedBinding> placed = detail::bindingsInOrder(g);
  std::map<const BufferNode *, int> definedIn;
  for (const detail::PlacedBinding &p : placed)
    for (const Buffer &d : detail::definesOf(p.binding))
      definedIn[d.get()] = p.dataflow;
  auto visible = [&](const Buffer &b, int block) {
    auto it = definedIn.find(b.get());
    return it == definedIn.end() || it->second == -1 || it->second == block || kept.count(b.get());
  };
  // The first source of each reshape's value (as far as it is visible there), and the values
  // that are their source.
  std::map<const BufferNode *, Buffer> sourceOf, alias;
  for (const detail::PlacedBinding &p : placed)
    if (const auto *r = std::get_if<ReshapeBinding>(&p.binding)) {
      auto it = sourceOf.find(r->source.get());
      Buffer first =
          it != sourceOf.end() && visible(it->second, p.dataflow) ? it->second : r->source;
      sourceOf[r->target.get()] = first;
      if (!kept.count(r->target.get()) && sameShape(r->target, first))
        alias[r->target.get()] = first;
    }
  bool changed = !alias.empty();
  std::set<std::string> names;
  for (const detail::PlacedBinding &p : detail::bindingsInOrder(g))
    for (const Buffer &d : detail::definesOf(p.binding))
      names.insert(d.name());
  for (const FuncParam &in : g.inputs)
    names.insert(in.name());
  for (const Constant &c : module.constants)
    names.insert(c.name);
  auto fresh = [&](const std::string &hint) {
    std::string name = hint;
    for (int k = 2; names.count(name); ++k)
      name = hint + "_" + std::to_string(k);
    names.insert(name);
    return name;
  };
  int block = -1; // the dataflow block of the binding being rewritten
  auto first = [&](const Buffer &b) {
    auto it = sourceOf.find(b.get());
    return it == sourceOf.end() || !visible(it->second, block) ? b : it->second;
  };
  // The 2-D view with rows of a value of rank 3 or more (static), for an element-wise call that
  // reads it as one row ([1, n]: one parallel iteration): [N·C, H·W] of [N, C, H, W] (the
  // dimensions before the last two as rows; all but the last when those are 1), bound right
  // before the call.
  std::vector<GraphBinding> pending;
  auto rowView = [&](const Buffer &p) -> std::optional<Buffer> {
    std::vector<int64_t> dims;
    for (const Expr &d : p.shape()) {
      std::optional<int64_t> v = asConstInt(d);
      if (!v)
        return std::nullopt;
      dims.push_back(*v);
    }
    if (dims.size() < 3)
      return std::nullopt;
    int64_t n = 1, rows = 1;
    for (int64_t d : dims)
      n *= d;
    for (size_t k = 0; k + 2 < dims.size(); ++k)
      rows *= dims[k];
    if (rows == 1)
      rows *= dims[dims.size() - 2];
    if (rows <= 1 || n % rows != 0)
      return std::nullopt;
    Buffer view(fresh(p.name() + "_rows"), p.dtype(), {intImm(rows), intImm(n / rows)},
                BufferRole::Alloc, MemScope::Global, {}, p->loc);
    definedIn[view.get()] = block;
    sourceOf[view.get()] = p;
    pending.push_back(ReshapeBinding{view, p, p->loc});
    return view;
  };
  // `call` reading the first sources of its views, all of `shape` (2-D), with its result viewed
  // as before; nullopt when it does not apply.
  auto throughViews = [&](const CallBinding &call) -> std::optional<std::vector<GraphBinding>> {
    if (call.targets.size() != 1)
      return std::nullopt;
    Func callee = module.lookup(call.callee);
    CallBinding direct = call;
    std::optional<Buffer> shape;
    if (call.callee == "nn.channel_bias_add" && module.lookup("nn.row_bias_add").as<PrimFunc>() &&
        call.args.size() == 2) {
      // channel_bias_add(x: [1, K, I], b) on a view of a [K, I] value.
      const auto *v = std::get_if<Buffer>(&call.args[0]);
      if (!v || v->shape().size() != 3 || !isConstInt(v->shape()[0], 1))
        return std::nullopt;
      Buffer p = first(*v);
      if (p.shape().size() != 2 || p.dtype() != v->dtype() ||
          !structuralEqual(p.shape()[0], v->shape()[1]) ||
          !structuralEqual(p.shape()[1], v->shape()[2]))
        return std::nullopt;
      direct.callee = "nn.row_bias_add";
      direct.args[0] = p;
      shape = p;
    } else {
      if (!elementwise2d(callee) || call.targets[0].shape().size() != 2)
        return std::nullopt;
      for (GraphArg &a : direct.args) {
        auto *v = std::get_if<Buffer>(&a);
        if (!v)
          continue;
        Buffer p = first(*v);
        if (p.shape().size() != 2 && isConstInt(v->shape()[0], 1))
          if (std::optional<Buffer> rows = rowView(p))
            p = *rows;
        if (p.shape().size() != 2 || p.dtype() != v->dtype() || (shape && !sameShape(p, *shape)))
          return std::nullopt;
        shape = p;
        *v = p;
      }
      if (!shape || sameShape(*shape, call.targets[0]))
        return std::nullopt; // no view to see through
    }
    const Buffer &target = call.targets[0];
    Buffer t(fresh(target.name() + "_v"), target.dtype(), shape->shape(), BufferRole::Alloc,
             MemScope::Global, {}, call.loc);
    direct.targets = {t};
    definedIn[t.get()] = block;
    sourceOf[target.get()] = t;
    std::vector<GraphBinding> out = std::move(pending);
    pending.clear();
    out.push_back(direct);
    out.push_back(ReshapeBinding{target, t, call.loc});
    return out;
  };
  size_t position = 0; // rewriteBindings visits the bindings in bindingsInOrder's order
  Func rewritten = detail::rewriteBindings(g, [&](const GraphBinding &b) {
    block = placed[position++].dataflow;
    if (const auto *call = std::get_if<CallBinding>(&b)) {
      // Calls read views' first sources (alias or not) before the rewrites below.
      CallBinding renamed = *call;
      for (GraphArg &a : renamed.args)
        if (auto *v = std::get_if<Buffer>(&a); v && alias.count(v->get()))
          *v = alias.at(v->get());
      if (std::optional<std::vector<GraphBinding>> out = throughViews(renamed)) {
        changed = true;
        return *out;
      }
      pending.clear(); // views made for a call that then did not apply are not bound
      return std::vector<GraphBinding>{b};
    }
    const auto *r = std::get_if<ReshapeBinding>(&b);
    if (!r)
      return std::vector<GraphBinding>{b};
    if (alias.count(r->target.get()))
      return std::vector<GraphBinding>{}; // its uses read the source
    ReshapeBinding folded = *r;
    folded.source = first(r->source);
    sourceOf[r->target.get()] = folded.source;
    changed |= !folded.source.sameAs(r->source);
    return std::vector<GraphBinding>{folded};
  });
  if (!changed)
    return std::nullopt;
  return detail::renameBuffers(*rewritten.as<GraphFunc>(), alias);
}

} // namespace

void foldViews(Module &module) {
  for (const Func &f : std::vector<Func>(module.functions()))
    if (const auto *g = f.as<GraphFunc>(); g && isOwnName(g->name))
      // Each round sees the views the previous one made (a call's result viewed as before, a
      // reshape of it that is now its own shape); a few rounds reach the fixpoint.
      for (int round = 0; round < 16; ++round) {
        std::optional<Func> folded = foldGraph(module, *module.lookup(g->name).as<GraphFunc>());
        if (!folded)
          break;
        module.replace(*folded);
      }
}

} // namespace tdsl::graph
