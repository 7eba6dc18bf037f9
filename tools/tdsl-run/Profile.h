//===- tools/tdsl-run/Profile.h - tdsl-run --profile (spec §9) ----------------------------===//
//
// Where the time of a compiled function goes. The function is compiled with timed regions
// (passes/lower/Profile.h: one per call of a lowered graph, one per top-level loop nest of a
// func) whose timers are runtime/Profile.h's. After two warm-up calls, each of `repeat` calls
// records its regions' begin and end times; a row per region gives its median time per call,
// its share of the median call, and its GFLOP/s (FlopCount.h); the time outside the regions
// (a graph's allocation, copies and views; a func's allocations; the call itself) is a row of
// its own, per call the call's time less its regions'. The trace (--profile-json) holds one
// complete event per call of the function and one per region run, in microseconds from the first
// call (Chrome's trace event format, which Perfetto and chrome://tracing open).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "backends/llvm/JIT.h"

#include <map>
#include <ostream>
#include <string>

namespace tdsl {

struct ProfileOptions {
  std::string func;      ///< the function's name, for the report
  std::string route;     ///< "LLVM, -O2": how it was compiled, for the report
  int64_t repeat = 10;   ///< profiled calls (after 2 warm-up calls)
  std::string tracePath; ///< --profile-json FILE (empty: none)
};

/// Profiles `func` (compiled with timed regions) on `args`, printing the table on `out`.
/// `lowered`: every lowered function by name (a graph's callees, for their flop counts and
/// output shapes); `module`: the lowered module `func` belongs to. False with `error` set when
/// a call fails or the trace cannot be written.
bool profile(const ProfileOptions &options, const llvmgen::JitFunction &func,
             const ir::LoweredModule &module, const std::map<std::string, ir::Func> &lowered,
             llvmgen::JitArgs args, std::ostream &out, std::string &error);

} // namespace tdsl
