//===- tune/TaskScheduler.h - Trials and time shared among tasks -----------------------------===//
//
// A graph has several tasks (its callees after fusion); the task scheduler decides how many of
// the run's trials, and how much of its time limit, each one gets: shares by FLOPs, at least one
// trial each while the budget allows, never more in all than the budget.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/Task.h"

#include <cstdint>
#include <vector>

namespace tdsl::tune {

/// Sets each task's `trials`: one per task while `trials` allows (largest weight first), then
/// the rest by weight, rounded down, and one more to the largest remainders until the budget is
/// spent; their sum is min(trials, ...) and never above `trials`.
void allocateTrials(std::vector<Task> &tasks, int64_t trials);

/// When task `index` (searched after those before it) must stop under `timeLimit` seconds
/// from the start (0: no limit, returns 0): its share of the limit by trials, plus what the
/// tasks before it left.
double taskDeadline(const std::vector<Task> &tasks, size_t index, double timeLimit);

} // namespace tdsl::tune
