//===- tune/SearchStrategy.cpp - The search of one task's design space -----------------------===//

#include "tune/SearchStrategy.h"

#include "tune/Mutator.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

namespace tdsl::tune {

namespace {

/// One task's search: its pool of measured candidates (fastest first), the cost model's
/// training set, and the trials it has made.
class TaskSearch {
public:
  TaskSearch(Task &task, SearchContext &ctx, const SearchOptions &opts)
      : task_(task), ctx_(ctx), opts_(opts), model_(ctx.makeModel()) {}
  bool run(const std::function<bool()> &timeLeft, const std::function<bool()> &anyTimeLeft);

private:
  /// Measures `c` (null: the baseline) and commits the record; nullopt when the run must stop.
  std::optional<tuning::Record> trial(const Candidate *c);
  void learn(Candidate c, double seconds);
  std::optional<Candidate> pick(uint64_t &state, bool evolve, bool explore);
  bool remeasureBest(const std::function<bool()> &timeLeft, int64_t &n);

  Task &task_;
  SearchContext &ctx_;
  const SearchOptions &opts_;
  std::unique_ptr<CostModel> model_;
  std::vector<std::vector<float>> xs_;
  std::vector<float> ys_;
  std::vector<std::pair<double, Candidate>> pool_; // measured ok candidates, fastest first
  const char *phase_ = "random";
};

std::optional<tuning::Record> TaskSearch::trial(const Candidate *c) {
  tuning::Record r;
  r.func = task_.name;
  r.key = task_.key;
  r.target = ctx_.target;
  // The baseline (no candidate): the function's own schedule, a record of level -1 without
  // decisions.
  r.generated = c ? task_.generated : -1;
  if (c) {
    r.decisions = c->decisions;
    r.schedule = c->schedule;
  }
  Measurement m = ctx_.runner.run(
      task_, c, ctx_.context ? ctx_.context(task_) : std::vector<tuning::Record>{}, ctx_.serial++);
  if (m.environmentFailed) {
    std::cerr << "\ntdsl-tune: error: the measurement command did not run: " << m.error << "\n";
    return std::nullopt;
  }
  r.ok = m.ok;
  r.seconds = m.ok ? m.seconds : 0;
  r.error = m.ok ? "" : m.error;
  if (!ctx_.db.commit(r)) {
    std::cerr << "\ntdsl-tune: error: cannot write the tuning database\n";
    return std::nullopt;
  }
  ++ctx_.trialsDone;
  if (r.ok) {
    ++ctx_.trialsOk;
    if (task_.best == 0 || r.seconds < task_.best)
      task_.best = r.seconds;
  } else {
    ctx_.lastError = r.error;
  }
  return r;
}

void TaskSearch::learn(Candidate c, double seconds) {
  xs_.push_back(c.features);
  ys_.push_back(float(-std::log(seconds)));
  auto at = std::upper_bound(pool_.begin(), pool_.end(), seconds,
                             [](double s, const auto &p) { return s < p.first; });
  pool_.insert(at, {seconds, std::move(c)});
}

std::optional<Candidate> TaskSearch::pick(uint64_t &state, bool evolve, bool explore) {
  std::optional<Candidate> best;
  double bestScore = 0;
  int evaluated = 0;
  int population = explore || !evolve ? 1 : 48;
  for (int attempt = 0; attempt < (evolve ? 192 : 32) && evaluated < population; ++attempt) {
    std::optional<Candidate> c;
    if (evolve && schedule::nextRandom(state) % 4 != 0) {
      size_t top = std::min<size_t>(pool_.size(), 8);
      const Candidate &base = pool_[schedule::nextRandom(state) % top].second;
      std::vector<schedule::Decision> d = mutate(base, state);
      c = ctx_.builder.build(task_, &d, opts_.seed);
    } else {
      c = ctx_.builder.build(task_, nullptr, schedule::nextRandom(state));
    }
    if (!c || task_.measured.count(decisionsText(c->decisions)))
      continue;
    ++evaluated;
    double score = evolve && !explore ? model_->predict(c->features) : 0;
    if (!best || score > bestScore) {
      best = std::move(c);
      bestScore = score;
    }
  }
  return best;
}

bool TaskSearch::remeasureBest(const std::function<bool()> &timeLeft, int64_t &n) {
  // One measurement is often 5-10% off on a shared machine, and the fastest of hundreds of
  // candidates is also the luckiest: the four fastest by median are measured in turn until each
  // has three measurements; tuning::best ranks candidates by their median.
  for (; n < task_.trials && timeLeft(); ++n) {
    phase_ = "measuring the best again";
    std::optional<tuning::Record> again;
    size_t fewest = 3;
    std::vector<tuning::Measured> m =
        tuning::measuredCandidates(ctx_.db.records(), task_.key, ctx_.target);
    for (size_t i = 0; i < m.size() && i < 4; ++i) {
      const tuning::Record &r = *m[i].median;
      bool own = r.generated < 0 && r.decisions.empty() && !task_.plainFile.empty();
      bool candidate = r.generated == task_.generated && !(r.generated < 0 && r.decisions.empty());
      if ((own || candidate) && m[i].count < fewest) {
        fewest = m[i].count;
        again = r;
      }
    }
    if (!again)
      break;
    std::optional<Candidate> c;
    if (!again->decisions.empty() || again->generated >= 0) {
      c = ctx_.builder.build(task_, &again->decisions, opts_.seed);
      if (!c)
        break;
    }
    if (!trial(c ? &*c : nullptr))
      return false;
    if (ctx_.progress)
      ctx_.progress(phase_);
  }
  return true;
}

bool TaskSearch::run(const std::function<bool()> &timeLeft,
                     const std::function<bool()> &anyTimeLeft) {
  // The measurements of earlier runs seed the pool of parents and the cost model.
  std::vector<const tuning::Record *> earlier;
  for (const tuning::Record &r : ctx_.db.records())
    if (r.ok && r.key == task_.key && r.target == ctx_.target && r.generated == task_.generated)
      earlier.push_back(&r);
  std::stable_sort(
      earlier.begin(), earlier.end(),
      [](const tuning::Record *a, const tuning::Record *b) { return a->seconds < b->seconds; });
  if (earlier.size() > 256)
    earlier.resize(256);
  for (const tuning::Record *r : earlier)
    if (std::optional<Candidate> c = ctx_.builder.build(task_, &r->decisions, opts_.seed))
      learn(std::move(*c), r->seconds);
  model_->update(xs_, ys_);
  uint64_t state = schedule::siteSeed(opts_.seed, task_.key, 0);
  int64_t warmup = opts_.strategy == SearchOptions::Strategy::Random
                       ? INT64_MAX
                       : std::max<int64_t>(4, std::min<int64_t>(16, task_.trials / 4));
  int64_t n = 0;
  // The function's own schedule first (once per database): a generated schedule must beat it.
  bool baseline = opts_.baseline && !task_.plainFile.empty() &&
                  std::none_of(ctx_.db.records().begin(), ctx_.db.records().end(),
                               [&](const tuning::Record &r) {
                                 return r.key == task_.key && r.target == ctx_.target &&
                                        r.generated < 0 && r.decisions.empty();
                               });
  // (within the whole limit only: a task of one trial has almost no share of it)
  if (baseline && anyTimeLeft()) {
    if (!trial(nullptr))
      return false;
    ++n;
    if (ctx_.progress)
      ctx_.progress(phase_);
  }
  // The last twentieth of the trials (one of 8 to 39) measure the fastest candidates again.
  int64_t reserve = task_.trials >= 8 ? std::max<int64_t>(1, task_.trials / 20) : 0;
  for (; n < task_.trials - reserve; ++n) {
    if (!timeLeft())
      break;
    bool evolve = int64_t(pool_.size()) >= warmup;
    bool explore = evolve && double(schedule::nextRandom(state) >> 11) * 0x1p-53 < opts_.explore;
    phase_ = explore ? "exploring" : evolve ? "evolutionary" : "random";
    std::optional<Candidate> c = pick(state, evolve, explore);
    if (!c)
      break; // the space is exhausted (or nothing compiles)
    task_.measured.insert(decisionsText(c->decisions));
    std::optional<tuning::Record> r = trial(&*c);
    if (!r)
      return false;
    if (r->ok) {
      learn(std::move(*c), r->seconds);
      model_->update(xs_, ys_);
    }
    if (ctx_.progress)
      ctx_.progress(phase_);
  }
  if (!remeasureBest(timeLeft, n))
    return false;
  if (std::vector<tuning::Measured> m =
          tuning::measuredCandidates(ctx_.db.records(), task_.key, ctx_.target);
      !m.empty())
    task_.best = m[0].seconds;
  return true;
}

} // namespace

bool searchTask(Task &task, SearchContext &ctx, const SearchOptions &opts,
                const std::function<bool()> &timeLeft, const std::function<bool()> &anyTimeLeft) {
  return TaskSearch(task, ctx, opts).run(timeLeft, anyTimeLeft);
}

void resumeTasks(std::vector<Task> &tasks, const tuning::Database &db, const std::string &target) {
  for (Task &t : tasks)
    for (const tuning::Record &r : db.records())
      if (r.key == t.key && r.target == target) {
        bool candidate = r.generated == t.generated;
        bool baseline = r.generated < 0 && r.decisions.empty(); // the function's own schedule
        if (candidate)
          t.measured.insert(decisionsText(r.decisions));
        if ((candidate || baseline) && r.ok && (t.best == 0 || r.seconds < t.best))
          t.best = r.seconds;
      }
}

} // namespace tdsl::tune
