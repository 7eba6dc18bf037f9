//===- tune/Task.h - A tuning task and its candidates ----------------------------------------===//
//
// A task is one function and its design space (MetaSchedule's TuneContext): the sample_* sites of
// its own schedule, or the space passes/schedule/Sample.h generates at some level. A candidate is
// one point of that space as the builder compiled it.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "passes/schedule/Sample.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tdsl::tune {

/// One task: a function and its design space.
struct Task {
  std::string name;
  ir::Func unscheduled;
  std::string key; ///< tuning::functionKey of the unscheduled function
  /// A graph's callee on its own (MetaSchedule's extracted task): its unscheduled IR as a file
  /// of the work folder, compiled and measured alone. Empty: measured through the tuned file
  /// (the tuned function itself, or a callee with integer inputs, which random values could
  /// send out of bounds).
  std::string file;
  /// The function as its own (plain) schedule leaves it, as a file, or the input file when the
  /// task is the tuned function: measured once as the baseline (a record of level -1 without
  /// decisions: `--tuning-db` then keeps the plain schedule). Empty: none.
  std::string plainFile;
  int generated = -1; ///< the level of a generated space, or -1: the function's own
  double weight = 1;  ///< its FLOPs (the task scheduler's share)
  int64_t trials = 0; ///< given by the task scheduler
  std::vector<std::string> outputs;
  std::string reference;          ///< folder of the reference outputs (the runner's)
  std::set<std::string> measured; ///< decisionsText of every candidate measured
  double best = 0;                ///< seconds of the fastest measurement (0: none)
};

/// A candidate compiled by the builder: its decisions as used, their sites, the plain schedule
/// (no sample_*) and the features of the scheduled IR.
struct Candidate {
  std::vector<schedule::Decision> decisions;
  std::vector<schedule::SampleSite> sites;
  std::string schedule;
  std::vector<float> features;
};

/// The decisions as the key of a measured candidate.
inline std::string decisionsText(const std::vector<schedule::Decision> &ds) {
  return nlohmann::json(ds).dump();
}

} // namespace tdsl::tune
