//===- passes/lower/Pipeline.cpp - The lowering pipeline ----------------------------------===//
#include "passes/lower/Pipeline.h"

#include "ir/IRMutator.h"
#include "passes/Simplify.h"
#include "passes/lower/CompactGpuBuffers.h"
#include "passes/lower/FlattenBuffers.h"
#include "passes/lower/InsertSyncs.h"
#include "passes/lower/LowerBlocks.h"

namespace tdsl::lower {

using namespace ir;

namespace {

Func simplifyFunc(const Func &func) {
  const auto *op = func.as<PrimFunc>();
  Stmt body = simplify(op->body);
  if (body.sameAs(op->body))
    return func;
  return PrimFunc::make(op->name, op->constVars, op->inputs, op->outputs, op->shapeVars,
                        op->allocBuffers, body, op->loc);
}

struct Step {
  const char *name;
  Func (*run)(const Func &);
};

const Step kSteps[] = {
    {"lower.blocks", lowerBlocks},
    {"lower.flatten", flattenBuffers},
    {"lower.simplify", simplifyFunc},
};

const Step kCudaSteps[] = {
    {"lower.blocks", lowerBlocks},
    {"lower.cuda_compact", compactGpuBuffers},
    {"lower.flatten", flattenBuffers},
    {"lower.simplify", simplifyFunc},
    {"lower.cuda_syncs", insertSyncs},
};

template <size_t N> std::vector<std::string> namesOf(const Step (&steps)[N]) {
  std::vector<std::string> out;
  for (const Step &step : steps)
    out.push_back(step.name);
  return out;
}

template <size_t N>
Func run(const Step (&steps)[N], const Func &func, const StepCallback &afterStep) {
  TDSL_IR_CHECK(func.as<PrimFunc>() && func.as<PrimFunc>()->constVars.empty(),
                "lowering takes a PrimFunc without open generic constants");
  Func current = func;
  for (const Step &step : steps) {
    current = step.run(current);
    if (afterStep)
      afterStep(step.name, current);
  }
  return current;
}

} // namespace

const std::vector<std::string> &lowerStepNames() {
  static const std::vector<std::string> names = namesOf(kSteps);
  return names;
}

const std::vector<std::string> &cudaLowerStepNames() {
  static const std::vector<std::string> names = namesOf(kCudaSteps);
  return names;
}

Func lowerPrimFunc(const Func &func, const StepCallback &afterStep) {
  return run(kSteps, func, afterStep);
}

Func lowerPrimFuncForCuda(const Func &func, const StepCallback &afterStep) {
  return run(kCudaSteps, func, afterStep);
}

} // namespace tdsl::lower
