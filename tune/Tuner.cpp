//===- tune/Tuner.cpp - A tuning run over tasks ----------------------------------------------===//

#include "tune/Tuner.h"

#include "tune/TaskScheduler.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tdsl::tune {

Tuner::Tuner(std::vector<Task> tasks, SearchContext &ctx, TunerOptions opts, std::ostream *progress)
    : tasks_(std::move(tasks)), ctx_(ctx), opts_(opts), progress_(progress) {}

void Tuner::progress(const char *phase, bool final) {
  if (!progress_)
    return;
  std::ostringstream os;
  os << "tdsl-tune: " << ctx_.trialsDone << "/" << opts_.trials << " trials (" << phase << ")";
  for (const Task &t : tasks_) {
    os << ", " << t.name << ": ";
    if (t.best > 0)
      os << std::fixed << std::setprecision(3) << t.best * 1e3 << " ms";
    else
      os << "-";
  }
  os << std::fixed << std::setprecision(0) << ", " << elapsed() << " s";
  if (opts_.timeLimit > 0)
    os << " (" << std::max(0.0, opts_.timeLimit - elapsed()) << " s left)";
  *progress_ << "\r" << os.str() << (final ? "\n" : "") << std::flush;
}

bool Tuner::run() {
  resumeTasks(tasks_, ctx_.db, ctx_.target);
  if (opts_.trials > 0) {
    allocateTrials(tasks_, opts_.trials);
    // The other tasks of a graph measured in it run with their best schedule so far.
    ctx_.context = [this](const Task &task) {
      std::vector<tuning::Record> out;
      for (const Task &other : tasks_)
        if (&other != &task)
          if (const tuning::Record *b = tuning::best(ctx_.db.records(), other.key, ctx_.target))
            out.push_back(*b);
      return out;
    };
    ctx_.progress = [this](const char *p) {
      phase_ = p;
      progress(p);
    };
    for (size_t i = 0; i < tasks_.size(); ++i) {
      Task &t = tasks_[i];
      if (t.trials == 0)
        continue; // --trials fewer than the tasks: the smallest get none
      double deadline = taskDeadline(tasks_, i, opts_.timeLimit);
      auto timeLeft = [&] { return opts_.timeLimit <= 0 || elapsed() <= deadline; };
      auto anyTimeLeft = [&] { return opts_.timeLimit <= 0 || elapsed() <= opts_.timeLimit; };
      if (!ctx_.runner.prepare(t))
        continue;
      if (!searchTask(t, ctx_, opts_.search, timeLeft, anyTimeLeft))
        return false;
    }
    progress(phase_, true);
  }
  if (ctx_.trialsDone > 0 && ctx_.trialsOk == 0) {
    std::cerr << "tdsl-tune: error: none of the " << ctx_.trialsDone
              << " measurements succeeded; the last one: " << ctx_.lastError << "\n";
    return false;
  }
  return true;
}

std::string Tuner::bestSchedules() const {
  std::ostringstream os;
  os << "// Tuned by tdsl-tune for " << ctx_.target << ".\n";
  for (const Task &t : tasks_) {
    std::vector<tuning::Measured> m =
        tuning::measuredCandidates(ctx_.db.records(), t.key, ctx_.target);
    os << "\n";
    if (m.empty()) {
      os << "// " << t.name << ": no successful measurement\n";
      continue;
    }
    const tuning::Record *b = m[0].median;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4f", m[0].seconds * 1e3);
    os << "// " << t.name << ": " << buf << " ms per call";
    if (m[0].count > 1)
      os << " (median of " << m[0].count << " measurements)";
    if (b->generated < 0 && b->decisions.empty() && t.generated >= 0)
      os << ", its own schedule (no tuned one was faster): none written\n";
    else
      os << "\n" << b->schedule;
  }
  return os.str();
}

} // namespace tdsl::tune
