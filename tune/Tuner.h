//===- tune/Tuner.h - A tuning run over tasks ------------------------------------------------===//
//
// A tuning run (MetaSchedule's tune_tasks): the tasks resume from the database, the task
// scheduler shares the trials and the time limit among them, each is searched in turn
// (tune/SearchStrategy.h), a progress line is kept up to date, and at the end the best schedule
// of each task can be written as plain schedule items (`tdsl-tune -o`).
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/SearchStrategy.h"

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace tdsl::tune {

struct TunerOptions {
  int64_t trials = 64;  ///< in all (0: no search)
  double timeLimit = 0; ///< seconds (0: none)
  SearchOptions search;
};

class Tuner {
public:
  /// `progress`: where the progress line goes (null: nowhere).
  Tuner(std::vector<Task> tasks, SearchContext &ctx, TunerOptions opts, std::ostream *progress);
  /// Searches every task; false, after printing why, when the run stopped or when every
  /// measurement failed (a database of errors is no result).
  bool run();
  const std::vector<Task> &tasks() const { return tasks_; }
  /// The best schedule of each task as plain schedule items, with comments (`-o`).
  std::string bestSchedules() const;

private:
  void progress(const char *phase, bool final = false);
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::vector<Task> tasks_;
  SearchContext &ctx_;
  TunerOptions opts_;
  std::ostream *progress_;
  const char *phase_ = "random"; ///< of the last trial, for the final progress line
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace tdsl::tune
