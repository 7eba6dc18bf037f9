//===- tools/driver/ToolOptions.h - The options every tool reads alike ------------------------===//
//
// What tdslc, tdsl-run and the tools to come take from their command lines the same way
// (tools/driver/CommandLine.h reads them): the input, the target, -D, the import paths, --func,
// --no-schedule, -O, --via, --ffp-contract, --seed and --tuning-db.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "frontend/ModuleLoader.h"
#include "support/Defines.h"
#include "support/Target.h"

#include <string>
#include <vector>

namespace tdsl {

/// How CPU code is made: the LLVM backend, or the emitted C++ compiled by the Clang libraries.
enum class Via { LLVM, Cpp };

/// The options every tool reads alike.
struct ToolOptions {
  /// The tool's name, the prefix of its messages that have no source position
  /// ("tdslc: error: …").
  std::string tool = "tdslc";
  std::string input;
  Target target = Target::CPU;
  /// -D NAME=VALUE, in command-line order.
  Defines defines;
  std::vector<std::string> includeDirs;
  std::string stdlibDir; ///< found from the executable unless set
  std::string func;      ///< --func: only this function (and what it calls)
  bool noSchedule = false;
  int optLevel = 2; ///< -O0..-O3
  Via via = Via::LLVM;
  /// --ffp-contract=on|off (spec §11): fuse `a * b + c` into one multiply-add.
  bool fpContract = true;
  /// --seed N: draws the sample_* decisions of schedules (spec §7); tdsl-run's random inputs.
  uint64_t seed = 0;
  /// --tuning-db FILE: the decisions and schedules recorded by tdsl-tune (spec §7, §12).
  std::string tuningDb;

  // The code generation options of tdslc and tdsl-run (cl::addCompileOptions, spec §9).
  std::string triple;                     ///< tdslc --triple ("": the host's)
  std::string mcpu = "native", mattr;     ///< --mcpu, --mattr
  bool fastMath = false;                  ///< --ffast-math
  std::vector<std::string> scheduleFiles; ///< --schedule FILE (repeatable)
  bool boundsCheck = false;               ///< --bounds-check
  bool profile = false;                   ///< tdsl-run --profile (PipelineOptions::profile)
};

} // namespace tdsl
