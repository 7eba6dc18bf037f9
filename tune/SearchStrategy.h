//===- tune/SearchStrategy.h - The search of one task's design space -------------------------===//
//
// The search spends a task's trials (MetaSchedule's SearchStrategy): the function's own
// schedule first (a generated one must beat it), then random candidates, then, once enough are
// measured, an evolutionary search — the best predicted member of a population mutated from the
// fastest measured candidates, one trial in eight (`explore`) measuring a new member whatever
// the cost model says (epsilon-greedy) — and last, a twentieth of the trials measuring the
// fastest candidates again, so that the best is not merely the luckiest. Earlier records of the
// database for the same task and target seed the pool and the cost model (resumption), and a
// candidate measured before is never measured again as a new trial.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/Builder.h"
#include "tune/CostModel.h"
#include "tune/Database.h"
#include "tune/Runner.h"
#include "tune/Task.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tdsl::tune {

struct SearchOptions {
  enum class Strategy { Evolutionary, Random };
  Strategy strategy = Strategy::Evolutionary;
  uint64_t seed = 0;      ///< same seed, database and measurements: same candidates
  double explore = 0.125; ///< share of the evolutionary trials that explore
  bool baseline = true;   ///< measure the function's own schedule first
};

/// What the searches of one tuning run share.
struct SearchContext {
  SearchContext(Builder &builder, Runner &runner, tuning::Database &db, std::string target)
      : builder(builder), runner(runner), db(db), target(std::move(target)) {}
  Builder &builder;
  Runner &runner;
  tuning::Database &db;
  std::string target; ///< tuning::targetKey of the records
  std::function<std::unique_ptr<CostModel>()> makeModel = makeXGBoostModel;
  /// Records for the other tasks while `task` is measured (a graph's: their best so far).
  std::function<std::vector<tuning::Record>(const Task &task)> context;
  /// Called after every trial with the search's phase ("random", "evolutionary", ...).
  std::function<void(const char *phase)> progress;
  int64_t serial = 0; ///< numbers the measurements (Runner::run)
  int64_t trialsDone = 0, trialsOk = 0;
  std::string lastError; ///< of the last failed measurement
};

/// Searches `task` for its `trials`, while `timeLeft()` (the baseline: while `anyTimeLeft()`);
/// false, after printing why, when the run must stop (the measurement did not run at all, or
/// the database could not be written).
bool searchTask(Task &task, SearchContext &ctx, const SearchOptions &opts,
                const std::function<bool()> &timeLeft, const std::function<bool()> &anyTimeLeft);

/// The tasks' `measured` sets and `best` times from the records already in `db` for `target`.
void resumeTasks(std::vector<Task> &tasks, const tuning::Database &db, const std::string &target);

} // namespace tdsl::tune
