//===- test/unit/tune/SearchTest.cpp - The tune library's search, without compiling ----------===//
//
// The search of tune/ driven by a fake builder (a space of two perfect tilings, candidates
// without IR), a fake runner (a time that is a function of the decisions, no process) and an
// in-memory database, as TVM's search-strategy tests do: trial accounting, determinism per
// seed, resumption from a database, re-measurement of the best, the baseline, task allocation,
// and a runner that cannot run.
//
//===------------------------------------------------------------------------------------------===//
#include "tune/CostModel.h"
#include "tune/Database.h"
#include "tune/Mutator.h"
#include "tune/TaskScheduler.h"
#include "tune/Tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

using namespace tdsl;
using namespace tdsl::tune;

namespace {

schedule::SampleSite tiling(int64_t extent) {
  schedule::SampleSite s;
  s.kind = schedule::SampleSite::Kind::PerfectTile;
  s.extent = extent;
  s.n = 3;
  return s;
}

/// Candidates of two tilings of 64 and 256; `builds` counts the calls.
class FakeBuilder : public Builder {
public:
  std::optional<Candidate> build(const Task &, const std::vector<schedule::Decision> *decisions,
                                 uint64_t seed) override {
    ++builds;
    Candidate c;
    c.sites = {tiling(64), tiling(256)};
    if (decisions) {
      if (decisions->size() != c.sites.size())
        return std::nullopt;
      for (size_t i = 0; i < c.sites.size(); ++i)
        if (!schedule::fitsSite(c.sites[i], (*decisions)[i]))
          return std::nullopt;
      c.decisions = *decisions;
    } else {
      uint64_t state = seed;
      for (const schedule::SampleSite &s : c.sites)
        c.decisions.push_back(schedule::drawDecision(s, state));
    }
    for (const schedule::Decision &d : c.decisions)
      for (int64_t x : d)
        c.features.push_back(float(std::log2(double(x))));
    c.schedule = "schedule f { /* " + decisionsText(c.decisions) + " */ }\n";
    return c;
  }
  int64_t builds = 0;
};

/// Times from the decisions: fastest at innermost factors 8 and 16, the baseline 1 ms.
class FakeRunner : public Runner {
public:
  bool prepare(Task &task) override {
    prepared.insert(task.name);
    return true;
  }
  Measurement run(const Task &, const Candidate *c, const std::vector<tuning::Record> &,
                  int64_t) override {
    ++runs;
    Measurement m;
    if (failEnvironment) {
      m.environmentFailed = true;
      m.error = "exit status 127 (command not found)";
      return m;
    }
    if (!c) {
      ++baselines;
      m.ok = true;
      m.seconds = 1e-3;
      return m;
    }
    const std::vector<schedule::Decision> &d = c->decisions;
    m.ok = true;
    m.seconds = 1e-4 * (1 + std::abs(std::log2(double(d[0].back())) - 3) +
                        std::abs(std::log2(double(d[1].back())) - 4));
    return m;
  }
  int64_t runs = 0, baselines = 0;
  bool failEnvironment = false;
  std::set<std::string> prepared;
};

Task task(const std::string &name, double weight = 1, bool plain = false) {
  Task t;
  t.name = name;
  t.key = "key-" + name;
  t.weight = weight;
  t.generated = 0;
  if (plain)
    t.plainFile = name + ".plain.tdsl";
  return t;
}

struct TuningRun {
  FakeBuilder builder;
  FakeRunner runner;
  std::vector<tuning::Record> records;
  bool ok = false;
  int64_t trialsDone = 0;
  double best = 0;
};

/// A tuning run of `tasks` for `trials` on `db` with `seed` (random cost model unless `xgb`).
void tuneOnce(TuningRun &run, tuning::Database &db, std::vector<Task> tasks, int64_t trials,
              uint64_t seed, bool xgb = false, bool baseline = true) {
  SearchContext ctx(run.builder, run.runner, db, "cpu=fake;isa=;threads=1");
  if (!xgb)
    ctx.makeModel = [seed] { return makeRandomModel(seed); };
  TunerOptions opts;
  opts.trials = trials;
  opts.search.seed = seed;
  opts.search.baseline = baseline;
  Tuner tuner(std::move(tasks), ctx, opts, nullptr);
  run.ok = tuner.run();
  run.trialsDone = ctx.trialsDone;
  run.best = tuner.tasks().empty() ? 0 : tuner.tasks()[0].best;
  run.records = db.records();
}

std::vector<std::string> decisionSequence(const std::vector<tuning::Record> &records) {
  std::vector<std::string> out;
  for (const tuning::Record &r : records)
    out.push_back(r.func + ":" + decisionsText(r.decisions));
  return out;
}

} // namespace

TEST(TuneSearch, SpendsExactlyTheTrials) {
  for (int64_t trials : {1, 7, 8, 40}) {
    tuning::MemoryDatabase db;
    TuningRun run;
    tuneOnce(run, db, {task("f")}, trials, 3);
    EXPECT_TRUE(run.ok);
    EXPECT_EQ(run.trialsDone, trials);
    EXPECT_EQ(run.runner.runs, trials);
    EXPECT_EQ(int64_t(run.records.size()), trials);
    for (const tuning::Record &r : run.records) {
      EXPECT_TRUE(r.ok);
      EXPECT_EQ(r.key, "key-f");
      EXPECT_EQ(r.target, "cpu=fake;isa=;threads=1");
    }
  }
}

TEST(TuneSearch, SameSeedSameCandidates) {
  for (bool xgb : {false, true}) {
    tuning::MemoryDatabase a, b, c;
    TuningRun ra, rb, rc;
    tuneOnce(ra, a, {task("f")}, 30, 11, xgb);
    tuneOnce(rb, b, {task("f")}, 30, 11, xgb);
    tuneOnce(rc, c, {task("f")}, 30, 12, xgb);
    EXPECT_EQ(decisionSequence(ra.records), decisionSequence(rb.records));
    EXPECT_NE(decisionSequence(ra.records), decisionSequence(rc.records));
  }
}

TEST(TuneSearch, NewTrialsMeasureNewCandidates) {
  tuning::MemoryDatabase db;
  TuningRun run;
  tuneOnce(run, db, {task("f")}, 40, 5);
  // 38 new candidates, then 40 / 20 = 2 measurements of the fastest again.
  std::set<std::string> seen;
  for (size_t i = 0; i < 38; ++i)
    EXPECT_TRUE(seen.insert(decisionsText(run.records[i].decisions)).second) << "trial " << i;
  for (size_t i = 38; i < 40; ++i)
    EXPECT_TRUE(seen.count(decisionsText(run.records[i].decisions))) << "trial " << i;
}

TEST(TuneSearch, MeasuresTheFastestAgain) {
  tuning::MemoryDatabase db;
  TuningRun run;
  tuneOnce(run, db, {task("f")}, 60, 2);
  std::vector<tuning::Record> first(run.records.begin(), run.records.end() - 3);
  std::vector<tuning::Measured> m = tuning::measuredCandidates(first, "key-f", first[0].target);
  std::set<std::string> fastest;
  for (size_t i = 0; i < 4 && i < m.size(); ++i)
    fastest.insert(decisionsText(m[i].median->decisions));
  for (size_t i = run.records.size() - 3; i < run.records.size(); ++i)
    EXPECT_TRUE(fastest.count(decisionsText(run.records[i].decisions))) << "trial " << i;
}

TEST(TuneSearch, ResumesFromTheDatabase) {
  tuning::MemoryDatabase db;
  TuningRun first, second;
  tuneOnce(first, db, {task("f")}, 20, 4);
  std::set<std::string> before;
  for (const tuning::Record &r : first.records)
    before.insert(decisionsText(r.decisions));
  tuneOnce(second, db, {task("f")}, 20, 4);
  ASSERT_EQ(second.records.size(), 40u);
  EXPECT_EQ(second.trialsDone, 20);
  // The second run measures no candidate of the first as a new trial (the last one, 20 / 20,
  // measures a fast one again), and its best is no slower.
  for (size_t i = 20; i < 39; ++i)
    EXPECT_FALSE(before.count(decisionsText(second.records[i].decisions))) << "trial " << i;
  EXPECT_LE(second.best, first.best);
  // The earlier records trained the model and filled the pool: the builder rebuilt them.
  EXPECT_GE(second.builder.builds, 20);
}

TEST(TuneSearch, BaselineOncePerDatabase) {
  tuning::MemoryDatabase db;
  TuningRun first, second, none;
  tuneOnce(first, db, {task("f", 1, true)}, 10, 1);
  EXPECT_EQ(first.runner.baselines, 1);
  EXPECT_TRUE(first.records[0].decisions.empty());
  EXPECT_EQ(first.records[0].generated, -1);
  tuneOnce(second, db, {task("f", 1, true)}, 10, 1);
  EXPECT_EQ(second.runner.baselines, 0);
  tuning::MemoryDatabase fresh;
  tuneOnce(none, fresh, {task("f", 1, true)}, 10, 1, false, /*baseline=*/false);
  EXPECT_EQ(none.runner.baselines, 0);
}

TEST(TuneSearch, EvolutionFindsTheFastRegion) {
  // The fastest candidate (innermost 8 and 16) is 1e-4 s; random draws alone rarely hit it.
  tuning::MemoryDatabase db;
  TuningRun run;
  tuneOnce(run, db, {task("f")}, 120, 9, /*xgb=*/true);
  EXPECT_LE(run.best, 1.5e-4);
}

TEST(TuneSearch, RunnerThatCannotRunStops) {
  tuning::MemoryDatabase db;
  TuningRun run;
  run.runner.failEnvironment = true;
  tuneOnce(run, db, {task("f")}, 10, 1);
  EXPECT_FALSE(run.ok);
  EXPECT_EQ(run.runner.runs, 1);
  EXPECT_TRUE(db.records().empty());
}

TEST(TuneSearch, EveryTaskSearchedWithItsShare) {
  tuning::MemoryDatabase db;
  TuningRun run;
  tuneOnce(run, db, {task("a", 1), task("b", 3)}, 40, 6);
  std::map<std::string, int> perTask;
  for (const tuning::Record &r : run.records)
    ++perTask[r.func];
  // One trial each, the other 38 by FLOPs (9.5 and 28.5), the half trial to the first.
  EXPECT_EQ(perTask["a"], 11);
  EXPECT_EQ(perTask["b"], 29);
  EXPECT_EQ(run.runner.prepared, (std::set<std::string>{"a", "b"}));
}

TEST(TuneTaskScheduler, SharesByWeight) {
  std::vector<Task> tasks = {task("a", 1), task("b", 2), task("c", 7)};
  allocateTrials(tasks, 10);
  EXPECT_EQ(tasks[0].trials + tasks[1].trials + tasks[2].trials, 10);
  for (const Task &t : tasks)
    EXPECT_GE(t.trials, 1);
  EXPECT_GT(tasks[2].trials, tasks[1].trials);
  allocateTrials(tasks, 2); // fewer trials than tasks: the largest get one each
  EXPECT_EQ(tasks[0].trials, 0);
  EXPECT_EQ(tasks[1].trials, 1);
  EXPECT_EQ(tasks[2].trials, 1);
  allocateTrials(tasks, 1000);
  EXPECT_EQ(tasks[0].trials + tasks[1].trials + tasks[2].trials, 1000);
  EXPECT_NEAR(double(tasks[2].trials) / 1000, 0.7, 0.01);
  // The time limit follows the trials: the last task ends at the limit.
  EXPECT_DOUBLE_EQ(taskDeadline(tasks, 2, 60), 60);
  EXPECT_NEAR(taskDeadline(tasks, 0, 60), 60 * double(tasks[0].trials) / 1000, 1e-9);
}

TEST(TuneCostModel, RandomModelIsSeeded) {
  std::unique_ptr<CostModel> a = makeRandomModel(1), b = makeRandomModel(1), c = makeRandomModel(2);
  std::vector<float> x = {1, 2};
  double a0 = a->predict(x), b0 = b->predict(x), c0 = c->predict(x);
  EXPECT_EQ(a0, b0);
  EXPECT_NE(a0, c0);
  EXPECT_GE(a0, 0);
  EXPECT_LT(a0, 1);
}

TEST(TuneCostModel, XGBoostRanksByItsSamples) {
  std::unique_ptr<CostModel> m = makeXGBoostModel();
  EXPECT_EQ(m->predict({1, 1}), 0); // untrained
  std::vector<std::vector<float>> xs;
  std::vector<float> ys;
  for (int i = 0; i < 32; ++i) {
    xs.push_back({float(i % 8), float(i / 8)});
    ys.push_back(float(i % 8)); // faster (higher score) with the first feature
  }
  m->update(xs, ys);
  EXPECT_GT(m->predict({7, 1}), m->predict({0, 1}));
}

TEST(TuneMutator, MutationsStayInTheSpace) {
  FakeBuilder b;
  Task t = task("f");
  std::optional<Candidate> c = b.build(t, nullptr, 42);
  ASSERT_TRUE(c);
  uint64_t state = 5;
  int changed = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<schedule::Decision> d = mutate(*c, state);
    ASSERT_EQ(d.size(), 2u);
    for (size_t k = 0; k < d.size(); ++k)
      EXPECT_TRUE(schedule::fitsSite(c->sites[k], d[k]));
    changed += d != c->decisions;
  }
  EXPECT_GT(changed, 150);
}

TEST(TuneDatabase, JsonDatabaseRefusesWhatIsNotOne) {
  std::string file = ::testing::TempDir() + "tune-db-test.txt";
  {
    std::ofstream os(file);
    os << "not a record\n";
  }
  tuning::JsonDatabase db;
  std::string error;
  EXPECT_FALSE(db.open(file, error));
  EXPECT_NE(error.find("is not a tuning database: line 1"), std::string::npos) << error;
  std::string fresh = ::testing::TempDir() + "tune-db-test.jsonl";
  std::remove(fresh.c_str());
  ASSERT_TRUE(db.open(fresh, error)) << error;
  tuning::Record r;
  r.func = "f";
  r.key = "k";
  r.target = "t";
  r.ok = true;
  r.seconds = 0.5;
  ASSERT_TRUE(db.commit(r));
  tuning::JsonDatabase again;
  ASSERT_TRUE(again.open(fresh, error)) << error;
  ASSERT_EQ(again.records().size(), 1u);
  EXPECT_EQ(again.records()[0].seconds, 0.5);
  std::remove(file.c_str());
  std::remove(fresh.c_str());
}
