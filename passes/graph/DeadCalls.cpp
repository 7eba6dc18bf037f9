//===- passes/graph/DeadCalls.cpp -------------------------------------------------------------===//
//
// graph.dce: pure calls (and reshapes) whose results nothing uses are removed;
// impure extern calls always stay.

#include "passes/graph/Graph.h"

#include "passes/graph/GraphUtils.h"

#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

bool isPure(const Module &m, const GraphBinding &b) {
  const auto *call = std::get_if<CallBinding>(&b);
  if (!call)
    return true;
  Func callee = m.lookup(call->callee);
  if (const auto *x = callee.as<ExternFunc>())
    return x->pure;
  return callee.defined();
}

/// One sweep from the end: a binding is live when impure or when a result is used by a live
/// binding after it, returned, or exported from its dataflow block.
std::optional<Func> sweep(const Module &m, const GraphFunc &g) {
  std::set<const BufferNode *> used;
  for (const Buffer &b : detail::exportedValues(g))
    used.insert(b.get());
  std::vector<detail::PlacedBinding> all = detail::bindingsInOrder(g);
  std::set<size_t> dead;
  for (size_t i = all.size(); i-- > 0;) {
    const GraphBinding &b = all[i].binding;
    bool live = !isPure(m, b);
    for (const Buffer &d : detail::definesOf(b))
      live |= used.count(d.get()) != 0;
    if (!live) {
      dead.insert(i);
      continue;
    }
    for (const Buffer &r : detail::readsOf(b))
      used.insert(r.get());
  }
  if (dead.empty())
    return std::nullopt;
  size_t index = 0;
  return detail::rewriteBindings(g, [&](const GraphBinding &b) -> std::vector<GraphBinding> {
    return dead.count(index++) ? std::vector<GraphBinding>{} : std::vector<GraphBinding>{b};
  });
}

} // namespace

void eliminateDeadCalls(Module &module) {
  for (const Func &f : std::vector<Func>(module.functions()))
    if (const auto *g = f.as<GraphFunc>())
      if (std::optional<Func> out = sweep(module, *g))
        module.replace(*out);
}

} // namespace tdsl::graph
