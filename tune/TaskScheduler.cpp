//===- tune/TaskScheduler.cpp - Trials and time shared among tasks ---------------------------===//

#include "tune/TaskScheduler.h"

#include <algorithm>
#include <utility>

namespace tdsl::tune {

void allocateTrials(std::vector<Task> &tasks, int64_t trials) {
  double total = 0;
  for (const Task &t : tasks)
    total += t.weight;
  int64_t base = std::min<int64_t>(trials, int64_t(tasks.size()));
  std::vector<size_t> byWeight(tasks.size());
  for (size_t i = 0; i < byWeight.size(); ++i)
    byWeight[i] = i;
  std::stable_sort(byWeight.begin(), byWeight.end(),
                   [&](size_t a, size_t b) { return tasks[a].weight > tasks[b].weight; });
  for (size_t k = 0; k < byWeight.size(); ++k)
    tasks[byWeight[k]].trials = int64_t(k) < base ? 1 : 0;
  int64_t rest = trials - base, given = 0;
  std::vector<std::pair<double, size_t>> remainders;
  for (size_t i = 0; i < tasks.size(); ++i) {
    double share = total > 0 ? double(rest) * tasks[i].weight / total : 0;
    tasks[i].trials += int64_t(share);
    given += int64_t(share);
    remainders.emplace_back(share - double(int64_t(share)), i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (size_t k = 0; given < rest && k < remainders.size(); ++k, ++given)
    ++tasks[remainders[k].second].trials;
}

double taskDeadline(const std::vector<Task> &tasks, size_t index, double timeLimit) {
  int64_t before = 0, all = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    all += tasks[i].trials;
    if (i <= index)
      before += tasks[i].trials;
  }
  return all > 0 ? timeLimit * double(before) / double(all) : timeLimit;
}

} // namespace tdsl::tune
