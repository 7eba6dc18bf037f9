//===- ir/Schedule.h - Schedule scripts as data ------------------------------------------===//
//
// A schedule script (spec §7) after the frontend has checked it: an ordered list of primitive
// calls whose arguments are plain values. Names stay names (a handle bound earlier in the
// script, a block name, or a buffer name) and are resolved when the script runs
// (passes/schedule); schedule parameters are already replaced by their integer values.
// A layout map may also use integers the script binds (sample_* results): those stay
// variables of the map until the script runs.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tdsl::ir {

/// One argument of a primitive call.
struct ScheduleArg {
  enum class Kind { Name, Int, Placeholder, String, List, Lambda, Float };
  Kind kind = Kind::Int;
  std::string name;               // Name; String (the text)
  int64_t value = 0;              // Int
  double real = 0;                // Float (sample_categorical's probabilities)
  std::vector<ScheduleArg> items; // List
  std::vector<Var> lambdaParams;  // Lambda: `(i, j) => (results…)`
  std::vector<Expr> lambdaResults;
  /// Lambda: integers bound earlier in the script (sample_* results) that the results use, as
  /// variables named like them; their values replace them when the script runs.
  std::vector<Var> lambdaInts;
  SourceLoc loc;
};

/// `a, b = primitive(args);` — `_` in `results` skips a handle.
struct ScheduleCall {
  std::vector<std::string> results;
  std::vector<SourceLoc> resultLocs;
  std::string primitive;
  std::vector<ScheduleArg> args;
  SourceLoc loc;
};

/// `schedule FUNC [for TARGET] { … }` for one function of the module.
struct ScheduleScript {
  std::string func;   // the scheduled function's name in the module
  std::string target; // "" (every target), "cpu" or "cuda"
  std::vector<ScheduleCall> calls;
  SourceLoc loc;
  /// From a --schedule file, for a function the source does not declare (one the graph passes
  /// make); `loc` is then the function's name. Unknown after the graph passes: an error.
  bool deferred = false;
  /// Written in an imported module (not the main file or a --schedule file): applied only when
  /// the compiled items reach its function (what is not compiled is not scheduled;
  /// docs/decisions.md, "Which imported schedules apply").
  bool imported = false;
  /// The parameters named like a generic constant of the function (`(WT = 7)` of
  /// `f<…, WT: i64>`): their defaults, replaced by an instance's values when the script is given
  /// to the instance. Statements name them (Kind::Name); their values replace them when the
  /// script runs.
  std::map<std::string, int64_t> constants;
};

} // namespace tdsl::ir
