//===- passes/graph/GraphUtils.h --------------------------------------------------------------===//
//
// Helpers the graph passes share: walking and rebuilding a graph's bindings,
// renaming buffers, and the shape-variable values a call passes to its callee.

#pragma once

#include "ir/IR.h"
#include "ir/Utils.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tdsl::graph::detail {

/// One binding of a graph, with the dataflow block it is in (-1: none).
struct PlacedBinding {
  ir::GraphBinding binding;
  int dataflow = -1;
};

/// Every binding of `g` in execution order (dataflow bindings inline), copied.
std::vector<PlacedBinding> bindingsInOrder(const ir::GraphFunc &g);

/// Values a binding reads (tensor arguments, reshape source) and defines.
std::vector<ir::Buffer> readsOf(const ir::GraphBinding &b);
std::vector<ir::Buffer> definesOf(const ir::GraphBinding &b);

/// The values `g` hands on: its results and every dataflow block's outputs, each once per
/// mention (a value returned and output twice appears three times).
std::vector<ir::Buffer> exportedValues(const ir::GraphFunc &g);

/// `g` with a new body (plan dropped unless given).
ir::Func withBody(const ir::GraphFunc &g, std::vector<ir::GraphItem> body);

/// Rewrites each binding of `g`: `fn` returns the bindings that replace it (none removes it).
/// Dataflow blocks keep their place; an emptied dataflow block stays (with its outputs).
ir::Func
rewriteBindings(const ir::GraphFunc &g,
                const std::function<std::vector<ir::GraphBinding>(const ir::GraphBinding &)> &fn);

/// Rewrites the call bindings of every graph of `module`: `fn` returns the call that replaces
/// one (another callee, say), or nullopt to keep it. `fn` may add functions to the module.
void rewriteCalls(ir::Module &module,
                  const std::function<std::optional<ir::CallBinding>(const ir::CallBinding &)> &fn);

/// Replaces buffers in every argument, reshape source, dataflow output and result of `g`.
ir::Func renameBuffers(const ir::GraphFunc &g,
                       const std::map<const ir::BufferNode *, ir::Buffer> &map);

/// The values of `callee`'s shape variables at `call`, in the callee's shapeVars order,
/// as expressions of the caller's shape variables (from the tensor arguments' shapes).
std::vector<ir::Expr> calleeShapeArgs(const ir::Func &callee, const ir::CallBinding &call);

using ir::calleeInputs;
using ir::calleeOutputs;
using ir::calleeShapeVars;

/// `base`, or `base_2`, `base_3`... : the first name no function of `m` has.
std::string freshFuncName(const ir::Module &m, const std::string &base);

/// Byte size of `b` as an i64 expression (simplified).
ir::Expr byteSize(const ir::Buffer &b);
/// The product of the constant factors of byteSize(b) (the element size included).
int64_t constantFactor(const ir::Buffer &b);

/// The blocks of `s`, in pre-order.
std::vector<const ir::Block *> blocksOf(const ir::Stmt &s);

/// Whether `consumer`, reading parameter `k`, is element-wise in it (docs/graphs.md): one block,
/// all axes spatial, no init, no `where`, no allocation; its body a single store into the
/// only output at exactly the block's axes, in order; parameter k read only at those same
/// indices; every other load indexed by axes or constants (a broadcast).
bool isElementwise(const ir::PrimFunc &consumer, size_t k);

} // namespace tdsl::graph::detail
