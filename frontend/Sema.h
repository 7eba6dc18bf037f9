//===- frontend/Sema.h ------------------------------------------------------------------------===//
//
// The semantic checker: checks the AST (spec §4, §5 rules 1–7, §6, §8) and builds
// the IR the rest of the compiler shares.

#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"
#include "ir/Schedule.h"
#include "support/Defines.h"
#include "support/Target.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tdsl {

class DiagnosticEngine;

/// Checks `modules` (the main module first, then its imports) and builds the IR of the main
/// module. Functions of imported modules are added under their qualified name (`nn.linear`)
/// so that graph calls find them; `Module::imports` lists the main module's import paths.
/// Every error of the phase is reported; the result is std::nullopt when there were errors.
std::optional<ir::Module> buildIR(const std::vector<ast::Module *> &modules,
                                  DiagnosticEngine &diags);

/// Spec §5 rules 6 and 7 on one function again, e.g. a generic func once instantiated.
void checkFunctionAccesses(const ir::Func &f, DiagnosticEngine &diags);

/// The schedule scripts that apply for `target`, from every module's
/// `schedule` items (imported functions' schedules under their qualified names) and the
/// --schedule files, which replace the source's schedule of the same function and target. A
/// targeted schedule wins over the untargeted one. Parameters take their defaults, overridden by
/// `-D NAME=V` / `-D FUNC.NAME=V` (the names used are added to `usedDefines`) in the schedules
/// of the functions `takesDefines` accepts (every function when it is empty). For a target other
/// than cuda, an `alloc … scope(shared)` in one of those functions is an error at the alloc.
/// `simdLanes` is the value of the built-in `simd_lanes` (the 32-bit lanes of the target's
/// vector registers; the driver asks the LLVM target), which `-D simd_lanes=V` overrides.
std::vector<ir::ScheduleScript>
buildSchedules(const std::vector<ast::Module *> &modules,
               const std::vector<ast::Module *> &scheduleFiles, Target target,
               const Defines &defines, std::set<std::string> &usedDefines, DiagnosticEngine &diags,
               const std::function<bool(const std::string &)> &takesDefines = {},
               int64_t simdLanes = 8);

/// "simd_lanes": the schedules' built-in constant.
extern const char *const kSimdLanes;

} // namespace tdsl
