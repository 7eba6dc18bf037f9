//===- passes/lower/Pipeline.cpp - The lowering pipeline ----------------------------------===//
#include "passes/lower/Pipeline.h"

#include "ir/Arith.h"
#include "ir/Simplify.h"
#include "passes/lower/BoundsCheck.h"
#include "passes/lower/CompactBuffers.h"
#include "passes/lower/CompactGpuBuffers.h"
#include "passes/lower/FlattenBuffers.h"
#include "passes/lower/InsertSyncs.h"
#include "passes/lower/LowerBlocks.h"
#include "passes/lower/LowerUtils.h"
#include "passes/lower/PartitionLoops.h"
#include "passes/lower/PlaceAllocations.h"
#include "passes/lower/UnrollLoops.h"
#include "passes/lower/VectorizeLoops.h"

namespace tdsl::lower {

using namespace ir;

namespace {

Func simplifyFunc(const Func &func) {
  const auto *op = func.as<PrimFunc>();
  Stmt body = simplify(ir::resolveDivMod(simplify(op->body)));
  return withBody(func, body);
}

struct Step {
  const char *name;
  std::function<Func(const Func &, const LowerOptions &)> run;
};

/// The pipeline, one line per step.
const std::vector<Step> &steps() {
  auto plain = [](Func (*pass)(const Func &)) {
    return [pass](const Func &f, const LowerOptions &) { return pass(f); };
  };
  static const std::vector<Step> kSteps = {
      {"lower.blocks", plain(lowerBlocks)},
      {"lower.bounds-check",
       [](const Func &f, const LowerOptions &o) {
         // Data-dependent indices always; every access not proven in bounds with
         // --bounds-check.
         return insertShapeChecks(insertBoundsChecks(f, o.locationText, !o.boundsCheck),
                                  o.shapeChecks, o.extentChecks, o.locationText);
       }},
      {"lower.place-allocs", plain(placeAllocations)},
      {"lower.compact", plain(compactBuffers)},
      {"lower.flatten", plain(flattenBuffers)},
      {"lower.simplify", plain(simplifyFunc)},
      {"lower.partition", plain(partitionLoops)},
      {"lower.vectorize", plain(vectorizeLoops)},
      {"lower.unroll", plain(unrollLoops)},
  };
  return kSteps;
}

/// The cuda target's pipeline: the GPU kernels keep the basic CPU steps (no CPU vectorization,
/// allocation placement or partitioning) plus two GPU steps.
const std::vector<Step> &cudaSteps() {
  auto plain = [](Func (*pass)(const Func &)) {
    return [pass](const Func &f, const LowerOptions &) { return pass(f); };
  };
  static const std::vector<Step> kCudaSteps = {
      {"lower.blocks", plain(lowerBlocks)},     {"lower.cuda-compact", plain(compactGpuBuffers)},
      {"lower.flatten", plain(flattenBuffers)}, {"lower.simplify", plain(simplifyFunc)},
      {"lower.cuda-syncs", plain(insertSyncs)},
  };
  return kCudaSteps;
}

std::vector<std::string> namesOf(const std::vector<Step> &steps) {
  std::vector<std::string> out;
  for (const Step &step : steps)
    out.push_back(step.name);
  return out;
}

Func run(const std::vector<Step> &steps, const Func &func, const LowerOptions &options) {
  TDSL_IR_CHECK(func.as<PrimFunc>() && func.as<PrimFunc>()->constVars.empty(),
                "lowering takes a PrimFunc without open generic constants");
  Func current = func;
  for (const Step &step : steps) {
    if (options.beforeStep)
      options.beforeStep(step.name, current);
    Func next = step.run(current, options);
    if (options.afterStep)
      options.afterStep(step.name, next);
    if (options.check && !options.check(step.name, current, next))
      return Func();
    current = next;
  }
  return current;
}

} // namespace

const std::vector<std::string> &lowerStepNames() {
  static const std::vector<std::string> names = namesOf(steps());
  return names;
}

const std::vector<std::string> &cudaLowerStepNames() {
  static const std::vector<std::string> names = namesOf(cudaSteps());
  return names;
}

Func lowerPrimFunc(const Func &func, const LowerOptions &options) {
  return run(steps(), func, options);
}

Func lowerPrimFuncForCuda(const Func &func, const LowerOptions &options) {
  return run(cudaSteps(), func, options);
}

} // namespace tdsl::lower
