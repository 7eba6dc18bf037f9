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

#include "passes/graph/Graph.h"

#include "ir/StructuralEqual.h"
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

std::optional<Func> foldGraph(const GraphFunc &g) {
  std::set<const BufferNode *> kept; // results and dataflow outputs
  for (const Buffer &r : g.results)
    kept.insert(r.get());
  for (const GraphItem &item : g.body)
    if (const auto *df = std::get_if<DataflowBlock>(&item))
      for (const Buffer &o : df->outputs)
        kept.insert(o.get());
  // The first source of each reshape's value, and the values that are their source.
  std::map<const BufferNode *, Buffer> sourceOf, alias;
  for (const detail::PlacedBinding &p : detail::bindingsInOrder(g))
    if (const auto *r = std::get_if<ReshapeBinding>(&p.binding)) {
      auto it = sourceOf.find(r->source.get());
      Buffer first = it != sourceOf.end() ? it->second : r->source;
      sourceOf[r->target.get()] = first;
      if (!kept.count(r->target.get()) && sameShape(r->target, first))
        alias[r->target.get()] = first;
    }
  bool changed = !alias.empty();
  Func rewritten = detail::rewriteBindings(g, [&](const GraphBinding &b) {
    const auto *r = std::get_if<ReshapeBinding>(&b);
    if (!r)
      return std::vector<GraphBinding>{b};
    if (alias.count(r->target.get()))
      return std::vector<GraphBinding>{}; // its uses read the source
    ReshapeBinding folded = *r;
    folded.source = sourceOf.at(r->target.get());
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
      if (std::optional<Func> folded = foldGraph(*g))
        module.replace(*folded);
}

} // namespace tdsl::graph
