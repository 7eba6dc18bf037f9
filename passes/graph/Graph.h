//===- passes/graph/Graph.h - Graph-level passes (spec §8) ----------------------------------===//
//
// The passes over the graphs of a module, run by the driver after the checker, in this order
// (each printable with --print-ir-after=<name>):
//
//   graph.inline          inlineGraphs       calls of graphs replaced by their bodies
//   graph.fold-constants  foldConstants      scalar call arguments and shapes folded
//   graph.pack-weights    packConvolutionWeights  nn.conv2d on a constant weight: packed call;
//                                                 depthwise nn.conv2d_ext: nn.conv2d_depthwise
//                                            (CPU target)
//   graph.fold-calls      foldConstantCalls  calls on graph constants evaluated (spec §8)
//   graph.instantiate     instantiateCallees generic callees become concrete instances
//   graph.fold-views      foldViews          reshape chains read their first source
//   graph.dce             eliminateDeadCalls pure calls whose results are unused removed
//   graph.fuse            fuseElementwise    element-wise consumers fused into producers
//   graph.specialize      specializeCallees  callees copied at the graph's static shapes
//                                            (only with tuning records: --tuning-db, tdsl-tune)
//   (schedules; fused functions and instances get their producer's / generic's script)
//   graph.plan-memory     planMemory         intermediates placed in one arena
//   graph.bind-shapes     bindStaticShapes   (lowering, CPU) a function only graphs call, at
//                                            one static shape, bound to it in place
//
// Naming (docs/graphs.md): the instance of `nn.conv2d<1, 1>` is `nn_conv2d_1_1` (dots become
// '_', each constant appended, a negative one as `m3`); fusing `linear` then `relu` gives
// `fused_linear_relu` (the callees' names after their last '.', joined by '_'). A name already
// taken by another function gets a `_2`, `_3`... suffix.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Schedule.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tdsl::graph {

/// A function a graph pass made, and where its schedule comes from.
struct DerivedFunc {
  std::string name;
  /// The function whose schedule script applies to this one: the generic function of an
  /// instance, the (first) producer of a fused function. Empty: none.
  std::string scheduleFrom;
  /// Fused functions: the block that writes the fused intermediate (in the producer's part)
  /// and the consumer blocks to place after the producer's schedule ran, in order.
  std::string producerBlock;
  std::vector<std::string> consumerBlocks;
  /// Instances: the values of the generic function's constants, by name (a schedule parameter
  /// named like one takes its value; ir::ScheduleScript::constants).
  std::map<std::string, int64_t> constants;
};

/// `script` (of `d.scheduleFrom`) given to `d`: its parameters named like a generic constant
/// take `d`'s values (ir::ScheduleScript::constants).
inline void takeConstants(ir::ScheduleScript &script, const DerivedFunc &d) {
  for (auto &[name, value] : script.constants)
    if (auto it = d.constants.find(name); it != d.constants.end())
      value = it->second;
}

/// graph.inline (spec §8, before the other graph passes and run without them too): every call of
/// a graph is replaced by the callee's bindings, the callee's parameters by the call's arguments,
/// its values by fresh values, its results by the call's targets (a result that is a parameter
/// or a constant by a view of it). Callees are inlined with their own graph calls inlined.
void inlineGraphs(ir::Module &module);
/// The same for one graph of `module`.
ir::Func inlineGraphCalls(const ir::Module &module, const ir::GraphFunc &g);

/// `module` without the functions named in `made`, then `derived` (functions a pass made, to
/// keep) placed before the module's first own graph, where a re-parse of the printed IR puts
/// them (funcs and externs first, then graphs), so that the round trip prints the same text.
void placeDerived(ir::Module &module, const std::set<std::string> &made,
                  const std::vector<ir::Func> &derived);

/// The pass names, in order ("graph.fold-constants", ...).
const std::vector<std::string> &graphPassNames();

/// graph.fold-constants: scalar call arguments that are constant expressions become constants
/// (`2.0 * 0.5` → `1.0`, with the dtype's IEEE arithmetic), and the shape expressions of the
/// values graphs define are simplified (`B * 1` → `B`).
void foldConstants(ir::Module &module);

/// Whether `name` is one of the module's own items (an imported one is qualified: `nn.relu`).
inline bool isOwnName(const std::string &name) { return name.find('.') == std::string::npos; }

/// graph.pack-weights: in the module's own graphs, a call `nn.conv2d<S, P>(x, w)` whose weight
/// is a graph constant (or the result of funcs called on constants only, which graph.fold-calls
/// folds) with a static f32 shape [K, C, R, Q] becomes
/// `w_packed = call nn.conv2d_pack_weight<KV>(w)` then `nn.conv2d_packed<S, P, K, KV, WT>(x,
/// w_packed)` (the same result; `w_packed` named after the weight, suffixed when taken; KV is
/// `channelBlock`, convolutionChannelBlock of the target; WT convolutionTileWidth), so that
/// graph.fold-calls packs the weight at compile time. A depthwise call
/// `nn.conv2d_ext<S, S, P, P, P, P, 1, 1, C>(x, w)` (x with C channels, w of static shape
/// [C, 1, R, R], constant or not) becomes `nn.conv2d_depthwise<P, R>(x, w)` when S = 1, else
/// `nn.conv2d_depthwise_strided<S, P, R>(x, w)`. A 1 x 1
/// call `nn.conv2d<1, 0>(x, w)` on one image (x of static shape [1, C, H, W], w constant
/// [K, C, 1, 1]) whose H·W columns fill nn.matmul's tiles of `matmulColumns` (2·simd_lanes) to
/// at least seven eighths becomes the product `nn.matmul(w2, x2)` of the [K, C] and [C, H·W]
/// views, reshaped to [1, K, H, W] (`nn.matmul_rows` where C < `matmulColumns`). A call
/// `nn.swap_axes(x)` on x of static shape [1, M, N, 1] becomes `nn.transpose2d` of the [M, N] view.
/// Nothing when the module lacks those functions (no `import "nn"`); other calls stay.
void packConvolutionWeights(ir::Module &module, int64_t channelBlock = 8,
                            int64_t matmulColumns = 16);

/// The output channels of nn.conv2d_packed's register tile, the packing's block, for a target
/// whose vector registers hold `simdLanes` floats: 8 (one ymm register with AVX2, whose 16 ymm
/// registers hold the 7 accumulators of the 7-column tile but not 14), or 32 with AVX-512 (two
/// zmm registers; 32 of them) — the default KT of nn.conv2d_packed's schedule
/// (docs/decisions.md, "Convolution weights packed at compile time").
int64_t convolutionChannelBlock(int64_t simdLanes);

/// The output columns of nn.conv2d_packed's register tile (its constant WT) for a call with a
/// [R, Q] window, stride S and padding P on an input `width` columns wide: 14 where the tile
/// has 32 channels (AVX-512), the window more than one element and 14 divides the output width
/// (the 14 x 32 tile's 28 accumulators load each weight vector for 14 columns: half the weight
/// traffic of 7 x 32, which held ResNet-18's 3 x 3 layers at 0.75-0.9x oneDNN on one core);
/// else 7, which divides every ResNet width (7 x 7 layers; a tile wider than the output runs
/// guarded columns, about twice as slow) and suits 1 x 1 windows (their weight block stays in
/// cache). docs/decisions.md, "The register tile's width per call".
int64_t convolutionTileWidth(int64_t channelBlock, int64_t filterHeight, int64_t filterWidth,
                             int64_t stride, int64_t pad, std::optional<int64_t> width);

/// Evaluates a call whose tensor arguments are graph constants of `module` and whose other
/// arguments are literals: the bytes of each output (storage of spec §10), or nullopt with
/// `error` set. The tools give the reference interpreter's.
using CallEvaluator = std::function<std::optional<std::vector<std::vector<uint8_t>>>(
    const ir::Module &module, const ir::CallBinding &call, std::string &error)>;

/// graph.fold-calls (constant folding, spec §8): in the module's own graphs, a call of a func
/// whose tensor arguments are all graph constants (at least one), whose scalar and generic
/// arguments are literals and whose results have static shapes is evaluated by `evaluate` and
/// removed; each result becomes a new graph constant (Module::constants, no file: --emit=ir
/// prints its bytes as hex) named after the value (`wt`, else `wt_1`, ... when a function or
/// constant has the name), and every use of the value uses it. In execution order, so chains
/// fold. A call that fails to evaluate stays (reported through `warn`). Nothing without
/// `evaluate`.
void foldConstantCalls(
    ir::Module &module, const CallEvaluator &evaluate,
    const std::function<void(const SourceLoc &, const std::string &)> &warn = {});

/// graph.instantiate: every call of a generic callee with constants (`nn.conv2d<1, 1>`) calls
/// a new PrimFunc, one per distinct (callee, constants), added to the module. Generic callees
/// are left in the module. Returns the instances made.
///
/// Appends to `scripts` a copy of the script of each instance's generic function, for the
/// instance (an instance is scheduled like the function it was made from), unless `scripts`
/// has one for the instance already.
void addInstanceScripts(std::vector<ir::ScheduleScript> &scripts,
                        const std::vector<DerivedFunc> &instances);

/// `generics`: the generic form of functions that -D instantiated in place (by name); a call
/// with constants instantiates those instead of the module's (already concrete) function.
std::vector<DerivedFunc> instantiateCallees(ir::Module &module,
                                            const std::map<std::string, ir::Func> &generics = {});

/// graph.fold-views: in the module's own graphs, a reshape of a reshape reads the first one's
/// source, and a reshape to its source's own shape (not a result or a dataflow output) is
/// removed, its uses reading the source; the reshapes left without uses go in graph.dce.
void foldViews(ir::Module &module);

/// graph.dce: removes call bindings none of whose results is used later, returned or exported
/// by `output` (repeatedly, so chains of dead calls go). Only calls of PrimFuncs and pure
/// externs; an impure extern call always stays. Unused reshapes go too.
void eliminateDeadCalls(ir::Module &module);

/// graph.fuse: inside a dataflow block, a call of an element-wise callee (rules in
/// docs/graphs.md) whose argument is the single-use, single output of an earlier call of a
/// PrimFunc in the same block becomes, with that producer, one call of a new fused PrimFunc:
/// the producer's blocks, then the consumer's, the intermediate an `alloc` of the fused
/// function. Repeats until no pair fuses. `known` (instances) says where schedules come from;
/// returns the fused functions made.
std::vector<DerivedFunc> fuseElementwise(ir::Module &module, const std::vector<DerivedFunc> &known);

/// graph.specialize: a call whose callee (a PrimFunc without constants) has shape variables
/// that the static shapes of the call's tensor arguments and targets all fix calls a copy of the
/// callee with the values in place of the variables, named after the callee and the values
/// (`nn.linear` at B=1, K=512, N=1000: `nn_linear_1x512x1000`), one per distinct (callee,
/// values). Each copy is appended to `instances` (scheduled by the callee's script) or, for a
/// fused callee, to `fused` (its producer's script, then its consumers placed); returns them.
std::vector<DerivedFunc> specializeCallees(ir::Module &module, std::vector<DerivedFunc> &instances,
                                           std::vector<DerivedFunc> &fused);

/// graph.bind-shapes (the first step of Pipeline::lower): a scheduled PrimFunc that only the
/// module's graphs call (not `exported`), whose calls all give its shape variables the same static
/// values (the graph's shapes at the call), becomes that function at those values, in place: its
/// loops get constant extents and its shape checks fold, and the calls pass no shape arguments. The
/// schedule ran on the generic form, so binding changes no decision, only what the backends see.
void bindStaticShapes(ir::Module &module, const std::function<bool(const std::string &)> &exported);

/// After the producer's schedule script ran on fused function `f`, moves each consumer block
/// next to the producer: reverse_compute_inline where legal, else reverse_compute_at at the
/// innermost loop of the producer block that the primitive accepts, else left where it is.
/// Never changes what the function computes (each step is a checked schedule primitive).
ir::Func placeFusedConsumers(const ir::Func &f, const DerivedFunc &fused,
                             const std::string &target);

/// graph.plan-memory: records in every graph the MemoryPlan of ir/IR.h (see planGraph).
void planMemory(ir::Module &module);

/// The plan of one graph. A value returned by the graph and defined by a call is computed in
/// the caller's output (the first result naming it); a reshape is a view of its source; every
/// other call result gets arena bytes (64-byte aligned). Values are placed in definition order
/// into slots, first fit: a slot is reused when all its values died before the definition and
/// its size provably covers the value (or can provably grow to it); symbolic sizes that cannot
/// be compared get a slot of their own (a conservative, correct plan).
ir::MemoryPlan planGraph(const ir::GraphFunc &graph, const ir::Module &module);

} // namespace tdsl::graph
