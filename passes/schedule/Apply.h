//===- passes/schedule/Apply.h ----------------------------------------------------------------===//
//
// Runs schedule scripts: resolves each call's arguments (handles bound earlier,
// block and buffer names), runs the primitive, binds the handles it returns, and reports a
// refusal at the call with a note at the loop or block concerned.

#pragma once

#include "ir/IR.h"
#include "ir/Schedule.h"

#include <functional>
#include <string>
#include <vector>

namespace tdsl {
class DiagnosticEngine;
namespace schedule {
struct SampleContext;
}

/// Called after each primitive with its step name (`schedule.split`) and the function.
using ScheduleStepCallback = std::function<void(const std::string &step, const ir::Func &func)>;

/// Applies every script to its function in `module` for `target`. Returns false when a
/// primitive was refused or an argument was wrong (all reported to `diags`); a refused script
/// leaves its function unscheduled. sample_* calls are decided by `sampling` (the seed 0
/// draw without one), which records what they became (passes/schedule/Sample.h).
bool applySchedules(ir::Module &module, const std::vector<ir::ScheduleScript> &scripts,
                    const std::string &target, DiagnosticEngine &diags,
                    const ScheduleStepCallback &onStep = {},
                    schedule::SampleContext *sampling = nullptr);

/// The primitive names `applySchedules` knows, in spec order.
const std::vector<std::string> &schedulePrimitiveNames();

} // namespace tdsl
