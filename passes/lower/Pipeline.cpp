//===- passes/lower/Pipeline.cpp - The lowering pipeline ----------------------------------===//
#include "passes/lower/Pipeline.h"

#include "ir/IRMutator.h"
#include "passes/Simplify.h"
#include "passes/lower/FlattenBuffers.h"
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

} // namespace

const std::vector<std::string> &lowerStepNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Step &step : kSteps)
      out.push_back(step.name);
    return out;
  }();
  return names;
}

Func lowerPrimFunc(const Func &func, const StepCallback &afterStep) {
  TDSL_IR_CHECK(func.as<PrimFunc>() && func.as<PrimFunc>()->constVars.empty(),
                "lowerPrimFunc takes a PrimFunc without open generic constants");
  Func current = func;
  for (const Step &step : kSteps) {
    current = step.run(current);
    if (afterStep)
      afterStep(step.name, current);
  }
  return current;
}

} // namespace tdsl::lower
