//===- passes/Pipeline.h - The module pipeline: checked IR to what the backends emit ---------===//
//
// One list of named steps (Halide's Lower.cpp is the model) takes the module the checker built
// to the lowered module every backend consumes:
//
//   sema                  the checked IR, as the frontend built it (the pipeline's input)
//   grad                  the graphs of `grad` items derived (passes/grad/Grad.h)
//   graph.inline          calls of graphs replaced by the callees' bindings (spec §8)
//   instantiate           generic funcs given all their constants by -D become their instances
//   graph.fold-constants  the graph passes before schedules (passes/graph/Graph.h)
//   graph.pack-weights
//   graph.fold-calls
//   graph.instantiate
//   graph.fold-views
//   graph.dce
//   graph.fuse
//   graph.specialize      (with tuning records only)
//   schedule              the scripts of the target applied (schedule.<primitive> after each
//                         call), then the fused functions scheduled from their producers'
//   graph.plan-memory     arena plans of the graphs
//   graph.bind-shapes     (Pipeline::lower, CPU) functions only graphs call, at one static
//                         shape: bound to it
//   lower                 CPU: lower.blocks ... lower.unroll (passes/lower/Pipeline.h) on
//                         every emitted PrimFunc; CUDA: the cuda steps with the target checks
//   lower.graph           graphs to loop-level functions (CPU only; passes/lower/LowerGraph.h)
//
// Each step's name is what --print-ir-after|before and --list-passes use; a step made of
// sub-steps (schedule, lower) is printed per sub-step.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/LoweredModule.h"
#include "ir/Schedule.h"
#include "support/Defines.h"
#include "support/Target.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tdsl::schedule {
struct SampleContext;
}

namespace tdsl {

class DiagnosticEngine;

/// What the frontend does for the pipeline (passes/ does not depend on frontend/).
struct FrontendHooks {
  /// Spec §5 rules 6 and 7 on a function the pipeline made (an instance).
  std::function<void(const ir::Func &, DiagnosticEngine &)> checkFunction;
  /// The schedule scripts of the target, -D applied to the schedules of the functions
  /// `takesDefines` accepts; the names of the -D used are added to `used`.
  std::function<std::vector<ir::ScheduleScript>(
      const std::function<bool(const std::string &)> &takesDefines, std::set<std::string> &used)>
      buildSchedules;
  /// graph.fold-calls: runs a call on graph constants at compile time (the tools give the
  /// reference interpreter). Unset: nothing is folded.
  std::function<std::optional<std::vector<std::vector<uint8_t>>>(
      const ir::Module &module, const ir::CallBinding &call, std::string &error)>
      evaluateCall;
};

/// The checks of a target, run while its functions are lowered (the tools give the CUDA
/// backend's). Each returns false after reporting an error; the function is then not lowered
/// further.
struct TargetChecks {
  /// On the scheduled function, before its lowering.
  std::function<bool(const ir::Func &scheduled)> beforeLowering;
  /// After each lowering step (`before` is the step's input).
  std::function<bool(const std::string &step, const ir::Func &before, const ir::Func &after)>
      afterStep;
  /// On the lowered function.
  std::function<bool(const ir::Func &lowered)> afterLowering;
};

struct PipelineOptions {
  Target target = Target::CPU;
  /// -D: generic constants of funcs, schedule parameters.
  Defines defines;
  /// --func: only this function (and what it calls) is compiled; empty: every one.
  std::string func;
  /// The file's own items (its funcs, graphs and externs, not those of the modules it imports
  /// nor the functions graph passes derive): what an object exports (spec §10). Unset: every
  /// function whose name has no '.' (imported ones are `nn.relu`).
  std::optional<std::set<std::string>> ownNames;
  bool noSchedule = false;
  /// false: graphs as checked, no graph pass (tdsl-run --check's reference).
  bool graphPasses = true;
  /// Run graph.specialize even without tuning records (a --schedule file names functions the
  /// source does not declare, e.g. tdsl-tune -o's specialized copies).
  bool specializeShapes = false;
  /// lower.bounds-check inserts run-time checks (--bounds-check).
  bool boundsCheck = false;
  /// tdsl-run --profile: the timed regions of passes/lower/Profile.h in function `func` (each
  /// top-level loop nest of a func before lowering, each call of a lowered graph).
  bool profile = false;
  /// Spells a source location for bounds-check messages ("file.tdsl:3:7").
  std::function<std::string(const SourceLoc &)> locationText;
  /// --print-ir-after-all, --print-ir-after=STEP, --print-ir-before=STEP, printed on
  /// `printStream` (nothing is printed when it is null).
  bool printAfterAll = false;
  std::vector<std::string> printAfter, printBefore;
  std::ostream *printStream = nullptr;
  TargetChecks checks;
  /// 32-bit lanes of the target's vector registers (the schedules' `simd_lanes`; the driver
  /// asks the LLVM target): graph.pack-weights sizes the convolution's channel block by it.
  int64_t simdLanes = 8;
  /// How sample_* calls are decided (--seed, --tuning-db, tdsl-tune); null: the seed 0 draw.
  /// A function without a schedule whose `lookup` record belongs to a generated design space
  /// gets that space (passes/schedule/Sample.h).
  schedule::SampleContext *sampling = nullptr;
};

/// The step names --print-ir-after|before and --list-passes know, in pipeline order: `sema`,
/// the graph passes, `schedule.<primitive>`, `schedule`, `graph.plan-memory`, the CPU lowering
/// steps, `lower.graph`, then the cuda lowering's own steps.
const std::vector<std::string> &passNames();

/// One run of the pipeline over a module. The two phases run in order; each reports every error
/// it finds to the engine (flushed) and returns nullopt after errors.
class Pipeline {
public:
  Pipeline(const PipelineOptions &options, DiagnosticEngine &diags);
  ~Pipeline();

  /// sema → instantiate → graph passes → schedule → graph.plan-memory: the scheduled module
  /// (what --emit=ir prints and the interpreter runs).
  std::optional<ir::Module> schedule(ir::Module checked, const FrontendHooks &frontend);

  /// lower (CPU or CUDA) → lower.graph: the functions a backend emits, lowered. CPU: every
  /// PrimFunc of `scheduled` without open constants, then its graphs (under --func, that
  /// function and the functions it calls). CUDA: the PrimFuncs reachable from the module's own
  /// items (or --func), after the target checks.
  std::optional<ir::LoweredModule> lower(const ir::Module &scheduled);

  /// The state of one phase and its steps (Pipeline.cpp).
  struct Run;

private:
  const PipelineOptions &options_;
  DiagnosticEngine &diags_;
};

/// `--emit=ir`: the module's own items — its import lines, then its functions (imported ones,
/// named `prefix.name` in the IR module, are not printed). `only`: that function and the
/// module's own functions its graph calls.
void printOwnItems(const ir::Module &m, std::ostream &os, const std::string &only = "");

} // namespace tdsl
