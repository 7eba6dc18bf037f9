//===- backends/dot/Dot.h - Graphviz pictures of the IR --------------------------------------===//
//
// `tdslc --emit=dot`: a module's own functions as one Graphviz digraph (dot text), one cluster
// per function. A graph is drawn as its dataflow: inputs and values (ellipses), calls (boxes;
// a fused function's call filled, with the blocks it computes), constant arguments (plain
// text), reshapes; each call is linked (dashed) to its callee's cluster when that is drawn too.
// A tensor function is drawn as its loop nest: loops (with their kind, extent and thread tag),
// blocks (axes, reads and writes), `if`s and allocations as a tree, its buffers as ellipses
// with dotted read and write edges. Render with `dot -Tsvg a.dot -o a.svg`.

#pragma once

#include "ir/IR.h"

#include <string>

namespace tdsl::dot {

struct DotOptions {
  std::string onlyFunc; ///< --func: draw this function only.
  std::string title;    ///< The digraph's label (the input file's name).
};

/// The module's own functions (those whose name has no `.`, as `--emit=ir` prints them).
std::string printModule(const ir::Module &module, const DotOptions &options = {});

} // namespace tdsl::dot
