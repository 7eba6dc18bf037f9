//===- passes/graph/Passes.cpp ----------------------------------------------------------------===//
//
// The names of the graph passes, in the order the driver runs them.

#include "passes/graph/Graph.h"

namespace tdsl::graph {

const std::vector<std::string> &graphPassNames() {
  static const std::vector<std::string> names = {
      "graph.fold-constants", "graph.pack-weights", "graph.fold-calls", "graph.instantiate",
      "graph.fold-views",     "graph.dce",          "graph.fuse",       "graph.plan-memory"};
  return names;
}

} // namespace tdsl::graph
