//===- tools/tdsl-run/CheckGrad.h - tdsl-run --check-grad (spec §13) --------------------------===//
//
// Checks the graph of `grad NAME = F wrt (P1, …)` against F by central differences: F run by
// the interpreter in f64 (the vector–Jacobian form's F replaced by Σ_r ⟨d_r, r⟩), 3 seeded unit
// directions per Pi, h = 1e-3 · max(1, max|Pi|), relative error |a − b| / max(|a|, |b|, 1e-6).
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "backends/interp/Interpreter.h"
#include "ir/IR.h"

#include <iosfwd>
#include <string>

namespace tdsl {

/// Compares the gradients NAME computed (in `nameArgs`, with the inputs it ran on) with central
/// differences of F in `plain` (the module without schedules or graph passes). Prints the
/// largest relative error per Pi on `out`; false when one is above 1e-2 (`failed` set) or F
/// cannot run (`error` set).
bool checkGrad(const ir::Module &plain, const ir::GradItem &item, const interp::ArgMap &nameArgs,
               const Defines &defines, uint64_t seed, std::ostream &out, bool &failed,
               std::string &error,
               const std::function<std::string(const SourceLoc &)> &locationText = {});

} // namespace tdsl
