//===- passes/graph/Passes.cpp ----------------------------------------------------------------===//
//
// The names of the graph passes, in the order the driver runs them; where the functions they
// make go in the module.

#include "passes/graph/Graph.h"

namespace tdsl::graph {

const std::vector<std::string> &graphPassNames() {
  static const std::vector<std::string> names = {
      "graph.fold-constants", "graph.pack-weights", "graph.fold-calls", "graph.instantiate",
      "graph.fold-views",     "graph.dce",          "graph.fuse",       "graph.plan-memory"};
  return names;
}

void placeDerived(ir::Module &module, const std::set<std::string> &made,
                  const std::vector<ir::Func> &derived) {
  ir::Module out;
  out.imports = module.imports;
  out.constants = module.constants;
  out.intrinsics = module.intrinsics;
  out.grads = module.grads;
  out.unscheduled = module.unscheduled;
  bool placed = false;
  for (const ir::Func &f : module.functions()) {
    if (made.count(f.name()))
      continue;
    if (!placed && f.as<ir::GraphFunc>() && isOwnName(f.name())) {
      for (const ir::Func &d : derived)
        out.add(d);
      placed = true;
    }
    out.add(f);
  }
  if (!placed)
    for (const ir::Func &d : derived)
      out.add(d);
  module = std::move(out);
}

} // namespace tdsl::graph
