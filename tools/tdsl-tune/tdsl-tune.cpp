//===- tools/tdsl-tune/tdsl-tune.cpp - Searches schedules by measuring them -------------------===//
//
// `tdsl-tune FILE.tdsl --func NAME` (spec §12, docs/tuning.md): the design space of each task
// (a function with sample_* statements, or the space passes/schedule/Sample.h generates for
// one whose schedule has none, or that has no schedule) is searched by compiling candidates
// in-process (checked, traced, featurized) and timing them in separate processes (tdsl-run, under a
// timeout and an optional runner command), each compared with the unscheduled function on the same
// inputs first. Random search first, then an evolutionary search guided by an XGBoost cost model.
// Every measurement is a line of the database (tools/driver/TuningDb.h); -o writes the best
// schedules.
//
//===------------------------------------------------------------------------------------------===//

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/schedule/Sample.h"
#include "runtime/Compare.h"
#include "runtime/Npy.h"
#include "runtime/Tensor.h"
#include "tools/driver/CommandLine.h"
#include "tools/driver/Driver.h"
#include "tools/driver/TuningDb.h"

#include <xgboost/c_api.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace tdsl;

namespace {

const char *kHelp = R"(usage: tdsl-tune FILE.tdsl --func NAME [options]

Searches schedules for NAME (for a graph: for every function it calls) by compiling and timing
candidates, each checked against the unscheduled function first (spec §12, docs/tuning.md).

  --func NAME              the function or graph to tune (required)
  -D NAME=VALUE            a generic constant or schedule parameter (as tdslc)
  --trials N               candidates to measure in all (default 64; 0: only write -o)
  --time-limit SECONDS     stop after this long (0, the default: no limit)
  --db FILE                the tuning database, JSON lines (default FILE.tuning.jsonl);
                           a later run resumes from it
  -o OUT.tdsl              write the best schedule of each function as plain schedule items
                           (where the function's own schedule was fastest: a comment)
  --seed N                 seed of the search (default 0): same seed and database, same
                           candidates
  --threads T              OpenMP threads of the measured runs (default: one per core)
  --runner 'CMD'           run each measurement through /bin/sh as `CMD COMMAND`, or with
                           CMD's `{}` replaced by the quoted command (e.g. `srun -n1`,
                           `ssh host {}`); the work folder must be shared
  --repeat N               timed calls per measurement, the fastest counts (default 10)
  --timeout SECONDS        a measurement that runs longer fails (default 60)
  --work DIR               folder of the candidates' files (default: a fresh one in /tmp)
  --no-baseline            do not measure the functions' own (plain) schedules first: only
                           generated candidates compete
  --explore P              share of the evolutionary trials that measure a new candidate
                           whatever the cost model predicts (default 0.125; 0 to 1)
  -I DIR, --stdlib DIR     as tdslc
  -h, --help               print this help and exit
)";

struct TuneOptions : DriverOptions {
  int64_t trials = 64;
  double timeLimit = 0;
  std::string db, out, runner, work;
  int threads = 0;
  int64_t repeat = 10;
  double timeout = 60;
  std::string self;       // argv[0]
  bool baseline = true;   // measure each function's own schedule first (--no-baseline: not)
  double explore = 0.125; // share of the evolutionary trials that explore (--explore)
};

int usageError(const std::string &m) { return cl::usageError("tdsl-tune", m); }

/// The function's features for the cost model: the decisions (log2) and loop statistics of the
/// scheduled IR (parallel extent, vector lanes, unrolled extent, innermost extent, local bytes).
struct LoopStats : ir::IRVisitor {
  double parallel = 1, vector = 1, unrolled = 1, innermost = 1, localBytes = 0, loops = 0;
  double depth = 0, maxDepth = 0;
  void visit(const ir::For *op) override {
    int64_t e = 1;
    if (auto *c = op->extent.as<ir::IntImm>())
      e = c->value;
    loops += 1;
    if (op->forKind == ir::ForKind::Parallel)
      parallel *= double(e);
    if (op->forKind == ir::ForKind::Vectorized)
      vector *= double(e);
    if (op->forKind == ir::ForKind::Unrolled)
      unrolled *= double(e);
    if (!op->body.as<ir::For>())
      innermost = double(e);
    depth += 1;
    maxDepth = std::max(maxDepth, depth);
    ir::IRVisitor::visit(op);
    depth -= 1;
  }
  void visit(const ir::Block *op) override {
    for (const ir::Buffer &b : op->allocBuffers)
      addBuffer(b);
    ir::IRVisitor::visit(op);
  }
  void addBuffer(const ir::Buffer &b) {
    if (b->scope != ir::MemScope::Local)
      return;
    double n = b->dtype.storageBytes();
    for (const ir::Expr &e : b->shape)
      if (auto *c = e.as<ir::IntImm>())
        n *= double(c->value);
    localBytes += n;
  }
};

/// One task: a function and its design space.
struct Task {
  std::string name;
  ir::Func unscheduled;
  std::string key;
  /// A graph's callee on its own (MetaSchedule's extracted task): its unscheduled IR as a file
  /// of the work folder, compiled and measured alone. Empty: through FILE --func NAME (the
  /// tuned function itself, or a callee with integer inputs, which random values could send
  /// out of bounds).
  std::string file;
  /// The function as its own (plain) schedule leaves it, as a file (explicit loops), or the
  /// input file when the task is the tuned function: measured once as the baseline (a record of
  /// level -1 without decisions: `--tuning-db` then keeps the plain schedule). Empty: none.
  std::string plainFile;
  int generated = -1; // the level of a generated space, or -1: the function's own
  double weight = 1;  // its FLOPs (a share of the trials)
  int64_t trials = 0;
  std::vector<std::string> outputs;
  std::string reference; // folder of the reference outputs
  std::set<std::string> measured;
  std::vector<const tuning::Record *> done; // ok records
  double best = 0;
  std::string bestSchedule;
  int64_t attempts = 0;
};

std::string decisionsText(const std::vector<schedule::Decision> &ds) {
  return nlohmann::json(ds).dump();
}

/// A candidate compiled in-process: its decisions as used, the plain schedule and features.
struct Candidate {
  std::vector<schedule::Decision> decisions;
  std::vector<schedule::SampleSite> sites;
  std::string schedule;
  std::vector<float> features;
};

class Tuner {
public:
  explicit Tuner(TuneOptions &opts) : opts_(opts) {}
  int run();

private:
  /// Compiles the module with `decisions` (or a draw from `seed`) for `task`; nullopt when the
  /// schedule is refused.
  std::optional<Candidate> compile(Task &task, const std::vector<schedule::Decision> *decisions,
                                   uint64_t seed);
  bool findTasks();
  bool prepareReference(Task &task);
  /// Measures a candidate in a separate process: its record. Null `c`: the baseline (the
  /// function's own schedule, Task::plainFile).
  tuning::Record measure(Task &task, const Candidate *c, int64_t serial);
  /// measure(), then the record appended to the database (a trial); nullopt after printing
  /// the error when the measurement command did not run or the database cannot be written.
  std::optional<tuning::Record> measureAndRecord(Task &task, const Candidate *c, int64_t serial);
  /// Writes a graph's callee `task` as a task of its own (Task::file) and, when its own
  /// schedule changed it (`scheduled`), its baseline (Task::plainFile); each file is kept only
  /// when it compiles alone (and the unscheduled one to the same key).
  void extractTask(Task &task, const ir::Func &scheduled);
  /// The options that compile `func` of a task's own `file` (no -D: its IR has none open).
  DriverOptions aloneOptions(const std::string &file, const std::string &func) const {
    DriverOptions o = opts_;
    o.input = file;
    o.func = func;
    o.defines = {};
    return o;
  }
  /// Whether `file` compiles alone; `key`: the function key of its unscheduled `func`.
  bool compilesAlone(const std::string &file, const std::string &func, std::string *key);
  /// The outputs a task's measurement compares: its function's, or the graph's.
  const std::vector<std::string> &outputs(const Task &task) const {
    return task.file.empty() ? outputs_ : task.outputs;
  }
  /// Set by measure() when the shell could not run the measurement at all (exit 126/127).
  bool environmentFailed_ = false;
  void train();
  double predict(const Candidate &c);
  std::vector<schedule::Decision> mutate(const Candidate &base, uint64_t &state);
  void progress(bool final = false);
  bool writeOutput();
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::string toolPath(const std::string &name) const {
    fs::path self = fs::path(opts_.self).parent_path() / name;
    return fs::exists(self) ? self.string() : name;
  }
  std::string shellQuote(const std::string &s) const {
    std::string out = "'";
    for (char c : s)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }

  TuneOptions &opts_;
  std::vector<Task> tasks_;
  std::vector<tuning::Record> records_;
  std::string target_;
  fs::path work_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  // The cost model's training set, per task (features differ in length between tasks).
  std::map<std::string, std::pair<std::vector<std::vector<float>>, std::vector<float>>> train_;
  std::map<std::string, BoosterHandle> models_;
  std::map<std::string, std::vector<Candidate>> pool_; // measured ok candidates per task
  int64_t trialsDone_ = 0, trialsOk_ = 0;
  std::string lastError_; // of the last measurement that failed
  Task *current_ = nullptr;
  const char *phase_ = "random";     ///< the search phase, for the progress line
  std::vector<std::string> outputs_; // of --func (a graph's results)
  std::string reference_;            // folder of the unscheduled --func's outputs
};

std::optional<Candidate>
Tuner::compile(Task &task, const std::vector<schedule::Decision> *decisions, uint64_t seed) {
  DriverOptions o = task.file.empty() ? opts_ : aloneOptions(task.file, task.name);
  o.seed = seed;
  o.tuningDb.clear();
  std::ostringstream sink;
  Compilation c(o, sink);
  c.sampling().seed = seed;
  int generated = task.generated;
  std::string key = task.key;
  std::vector<schedule::Decision> given =
      decisions ? *decisions : std::vector<schedule::Decision>();
  c.sampling().lookup = [&](const ir::Func &f) -> std::optional<schedule::TunedDecisions> {
    if (tuning::functionKey(f) != key)
      return std::nullopt;
    return schedule::TunedDecisions{given, generated};
  };
  if (!c.parse())
    return std::nullopt;
  std::optional<ir::Module> m = c.buildIR();
  if (!m)
    return std::nullopt;
  auto it = c.sampling().traces.find(task.name);
  if (it == c.sampling().traces.end())
    return std::nullopt;
  Candidate cand;
  cand.decisions = it->second.decisions;
  cand.sites = it->second.sites;
  cand.schedule = schedule::plainScheduleText(it->second.script, cand.decisions);
  for (const schedule::Decision &d : cand.decisions)
    for (int64_t x : d)
      cand.features.push_back(float(std::log2(double(std::max<int64_t>(x, 1)))));
  LoopStats stats;
  if (ir::Func f = m->lookup(task.name); f && f.as<ir::PrimFunc>()) {
    auto *p = f.as<ir::PrimFunc>();
    for (const ir::Buffer &b : p->allocBuffers)
      stats.addBuffer(b);
    stats.visitStmt(p->body);
  }
  for (double v : {stats.parallel, stats.vector, stats.unrolled, stats.innermost,
                   stats.localBytes + 1, stats.loops, stats.maxDepth})
    cand.features.push_back(float(std::log2(std::max(v, 1.0))));
  return cand;
}

/// FLOPs of a function: the product of each block's iteration extents, summed (a weight only).
double flopWeight(const ir::Func &f) {
  struct V : ir::IRVisitor {
    double total = 0;
    void visit(const ir::Block *op) override {
      double n = 1;
      for (const ir::IterVar &iv : op->iterVars)
        if (auto *c = iv.extent.as<ir::IntImm>())
          n *= double(c->value);
      total += n;
      ir::IRVisitor::visit(op);
    }
  } v;
  if (auto *p = f.as<ir::PrimFunc>())
    v.visitStmt(p->body);
  return std::max(v.total, 1.0);
}

bool Tuner::findTasks() {
  // Probe: compile once, noting every function the pipeline is about to schedule.
  std::map<std::string, ir::Func> seen;
  std::ostringstream sink;
  {
    DriverOptions o = opts_;
    o.tuningDb.clear();
    Compilation c(o, std::cerr);
    c.sampling().lookup = [&](const ir::Func &f) -> std::optional<schedule::TunedDecisions> {
      seen.emplace(f.name(), f);
      return std::nullopt;
    };
    if (!c.parse())
      return false;
    std::optional<ir::Module> m = c.buildIR();
    if (!m)
      return false;
    ir::Func top = m->lookup(opts_.func);
    if (!top) {
      std::cerr << "tdsl-tune: error: no function or graph named '" << opts_.func << "'\n";
      return false;
    }
    if (auto *p = top.as<ir::PrimFunc>())
      for (const ir::Buffer &b : p->outputs)
        outputs_.push_back(b->name);
    if (auto *g = top.as<ir::GraphFunc>())
      for (const ir::Buffer &b : g->results)
        outputs_.push_back(b->name);
    // A graph's tasks: the functions it calls after the graph passes (fused ones included).
    std::set<std::string> called;
    if (auto *g = top.as<ir::GraphFunc>())
      for (const ir::GraphItem &item : g->body) {
        if (auto *c = std::get_if<ir::CallBinding>(&item))
          called.insert(c->callee);
        if (auto *d = std::get_if<ir::DataflowBlock>(&item))
          for (const ir::GraphBinding &b : d->bindings)
            if (auto *c = std::get_if<ir::CallBinding>(&b))
              called.insert(c->callee);
      }
    std::set<std::string> owned;
    for (const auto &[name, trace] : c.sampling().traces)
      owned.insert(name);
    for (auto &[name, f] : seen) {
      auto *p = f.as<ir::PrimFunc>();
      if (!p || !p->body.defined())
        continue;
      if (top.as<ir::PrimFunc>() ? name != opts_.func : !called.count(name))
        continue;
      Task t;
      t.name = name;
      t.unscheduled = f;
      t.key = tuning::functionKey(f);
      t.weight = flopWeight(f);
      for (const ir::Buffer &b : p->outputs)
        t.outputs.push_back(b->name);
      if (!owned.count(name)) {
        ir::Func scheduled = m->lookup(name);
        if (top.as<ir::GraphFunc>())
          extractTask(t, scheduled);
        else if (scheduled && ir::toString(scheduled) != ir::toString(f))
          t.plainFile = opts_.input; // its own schedule applies without a record
        for (int level = 0; level < schedule::kDesignSpaceLevels; ++level) {
          t.generated = level;
          if (!schedule::designSpace(f, level)) {
            t.generated = -1; // no space at this level (a symbolic extent): none at all
            break;
          }
          current_ = &t;
          if (compile(t, nullptr, opts_.seed))
            break;
          t.generated = -1;
        }
        if (t.generated < 0) {
          std::cerr << "tdsl-tune: note: no design space for '" << name
                    << "' (a symbolic extent, or refused)\n";
          continue;
        }
      }
      tasks_.push_back(std::move(t));
    }
  }
  if (tasks_.empty()) {
    std::cerr << "tdsl-tune: error: nothing to tune in '" << opts_.func
              << "': no function with sample_* statements or with loops of constant extent\n";
    return false;
  }
  return true;
}

bool Tuner::compilesAlone(const std::string &file, const std::string &func, std::string *key) {
  DriverOptions o = aloneOptions(file, func);
  o.tuningDb.clear();
  o.noSchedule = true;
  std::ostringstream sink;
  Compilation c(o, sink);
  if (!c.parse())
    return false;
  std::optional<ir::Module> m = c.buildIR();
  if (!m || !m->lookup(func))
    return false;
  if (key)
    *key = tuning::functionKey(m->lookup(func));
  return true;
}

void Tuner::extractTask(Task &task, const ir::Func &scheduled) {
  // Random inputs (tdsl-run's) are fine for float tensors; integer ones may be indices
  // (nn.embedding), which random values would send out of bounds: measured in the graph.
  for (const ir::FuncParam &p : task.unscheduled.as<ir::PrimFunc>()->inputs)
    if (p.isTensor() && !p.buffer.dtype().isFloat())
      return;
  fs::path dir = work_ / "tasks";
  fs::create_directories(dir);
  auto write = [&](const fs::path &path, const ir::Func &f) {
    std::ofstream os(path);
    os << "// " << task.name << ", extracted by tdsl-tune from " << opts_.input << "\n"
       << ir::toString(f);
    return bool(os.flush());
  };
  fs::path file = dir / (task.name + ".tdsl");
  std::string key;
  if (!write(file, task.unscheduled) || !compilesAlone(file.string(), task.name, &key) ||
      key != task.key)
    return;
  task.file = file.string();
  if (!scheduled || ir::toString(scheduled) == ir::toString(task.unscheduled))
    return;
  fs::path plain = dir / (task.name + ".plain.tdsl");
  if (write(plain, scheduled) && compilesAlone(plain.string(), task.name, nullptr))
    task.plainFile = plain.string();
}

/// Runs `command` through /bin/sh; its exit status, or -1 when it did not exit.
int shell(const std::string &command) {
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

/// The common part of the tdsl-run command lines: file, function, -D, includes, threads. A
/// task of its own (Task::file) runs its file alone, without the -D of the tuned file.
std::string runArgs(const TuneOptions &o, const Task &task, const std::string &file,
                    const std::function<std::string(const std::string &)> &q) {
  bool alone = !task.file.empty();
  std::string cmd = q(fs::absolute(file).string()) + " --func " + q(alone ? task.name : o.func);
  if (!alone)
    for (const auto &[name, value] : o.defines.entries())
      cmd += " -D " + q(name + "=" + std::to_string(value));
  for (const std::string &dir : o.includeDirs)
    cmd += " -I " + q(fs::absolute(dir).string());
  cmd += " --stdlib " + q(fs::absolute(o.stdlibDir).string());
  if (o.threads > 0)
    cmd += " --threads " + std::to_string(o.threads);
  return cmd;
}

bool Tuner::prepareReference(Task &task) {
  bool alone = !task.file.empty();
  if (!alone && !reference_.empty()) {
    task.reference = reference_;
    return true;
  }
  auto q = [this](const std::string &s) { return shellQuote(s); };
  fs::path dir = work_ / (alone ? "reference-" + task.name : std::string("reference"));
  fs::create_directories(dir);
  std::string cmd = "timeout -k 5 " + std::to_string(int(opts_.timeout * 4)) + " " +
                    q(toolPath("tdsl-run")) + " " +
                    runArgs(opts_, task, alone ? task.file : opts_.input, q) + " --no-schedule";
  for (const std::string &out : outputs(task))
    cmd += " --output " + q(out + "=" + (dir / (out + ".npy")).string());
  cmd += " > " + q((dir / "log").string()) + " 2>&1";
  if (shell(cmd) != 0) {
    std::cerr << "tdsl-tune: error: the unscheduled '" << (alone ? task.name : opts_.func)
              << "' does not run; see " << (dir / "log").string() << "\n";
    return false;
  }
  task.reference = dir.string();
  if (!alone)
    reference_ = task.reference;
  return true;
}

/// Whether a candidate's output agrees with the unscheduled function's: the comparison of
/// tdsl-run --check (runtime/Compare.h), so that a candidate accepted here passes --check.
bool close(const runtime::Tensor &a, const runtime::Tensor &b, std::string &why) {
  runtime::Comparison c = runtime::compareOutputs(a, b);
  if (c.same())
    return true;
  why = c.index ? "output differs from the unscheduled function at " + c.mismatch : c.mismatch;
  return false;
}

tuning::Record Tuner::measure(Task &task, const Candidate *c, int64_t serial) {
  auto q = [this](const std::string &s) { return shellQuote(s); };
  bool alone = !task.file.empty();
  tuning::Record r;
  r.func = task.name;
  r.key = task.key;
  r.target = target_;
  // The baseline (no candidate): the function's own schedule, a record of level -1 without
  // decisions.
  r.generated = c ? task.generated : -1;
  if (c) {
    r.decisions = c->decisions;
    r.schedule = c->schedule;
  }
  fs::path dir = work_ / ("c" + std::to_string(serial));
  fs::create_directories(dir);
  tuning::Record cand = r;
  cand.ok = true;
  std::string db = (dir / "candidate.jsonl").string();
  {
    std::ofstream os(db);
    if (c)
      os << tuning::toJson(cand) << "\n";
    // The other tasks of a graph measured in it run with their best schedule so far.
    if (!alone)
      for (const Task &other : tasks_)
        if (&other != &task)
          if (const tuning::Record *b = tuning::best(records_, other.key, target_))
            os << tuning::toJson(*b) << "\n";
  }
  std::string json = (dir / "bench.json").string();
  // A candidate far slower than the best so far is cut off early: 10 times the best's
  // (repeat + 2) calls, plus a few seconds of JIT compilation, within --timeout.
  double limit = opts_.timeout;
  if (task.best > 0)
    limit = std::min(limit, std::max(5.0, 10 * task.best * double(opts_.repeat + 2) + 3));
  // A task of its own runs its file (its plain baseline: the file of the scheduled function).
  std::string file = !alone ? opts_.input : c ? task.file : task.plainFile;
  std::string cmd = "timeout -k 5 " + std::to_string(int(std::ceil(limit))) + " " +
                    q(toolPath("tdsl-run")) + " " + runArgs(opts_, task, file, q) +
                    " --tuning-db " + q(db) + " --bench --repeat " + std::to_string(opts_.repeat) +
                    " --json " + q(json);
  for (const std::string &out : outputs(task))
    cmd += " --output " + q(out + "=" + (dir / (out + ".npy")).string());
  std::string log = (dir / "log").string();
  if (opts_.threads > 0)
    cmd = "env OMP_NUM_THREADS=" + std::to_string(opts_.threads) + " " + cmd;
  // The runner: `{}` stands for the command as one quoted word; else it is a prefix.
  if (size_t at = opts_.runner.find("{}"); at != std::string::npos)
    cmd = opts_.runner.substr(0, at) + q(cmd) + opts_.runner.substr(at + 2);
  else if (!opts_.runner.empty())
    cmd = opts_.runner + " " + cmd;
  int status = shell(cmd + " > " + q(log) + " 2>&1");
  // 126/127: the shell could not run the command (not executable, not found), -1: not even
  // the shell ran. That is the runner's environment, not the candidate: the caller stops
  // instead of recording a failed trial that a later run would then skip.
  if (status == 126 || status == 127 || status == -1) {
    r.error = status == -1
                  ? "the shell could not be started"
                  : "exit status " + std::to_string(status) + " (" +
                        (status == 127 ? "command not found" : "not executable") + "); see " + log;
    environmentFailed_ = true;
    return r;
  }
  if (status != 0) {
    r.error =
        status == 124 || status == 137 ? "timed out" : "exit status " + std::to_string(status);
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
      if (line.find("error") != std::string::npos)
        last = line;
    if (!last.empty())
      r.error += ": " + last;
    return r;
  }
  for (const std::string &out : outputs(task)) {
    std::string error;
    std::optional<runtime::Tensor> got = runtime::readNpy((dir / (out + ".npy")).string(), error);
    std::optional<runtime::Tensor> want =
        runtime::readNpy(task.reference + "/" + out + ".npy", error);
    if (!got || !want) {
      r.error = "no output: " + error;
      return r;
    }
    if (!close(*got, *want, r.error))
      return r;
  }
  std::ifstream in(json);
  std::string line;
  if (!std::getline(in, line)) {
    r.error = "no timing";
    return r;
  }
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("median_ms")) {
    r.error = "no timing";
    return r;
  }
  // The fastest timed call: on a shared machine a call is now and then two or three times as
  // slow (another guest has the core), often enough that the median of a few calls is one of
  // those (docs/decisions.md, "Tuner").
  double ms = j["median_ms"].get<double>();
  if (j.contains("times_ms") && j["times_ms"].is_array())
    for (const nlohmann::json &t : j["times_ms"])
      if (t.is_number())
        ms = std::min(ms, t.get<double>());
  r.ok = true;
  r.seconds = ms * 1e-3;
  r.error.clear();
  fs::remove_all(dir);
  return r;
}

std::optional<tuning::Record> Tuner::measureAndRecord(Task &task, const Candidate *c,
                                                      int64_t serial) {
  tuning::Record r = measure(task, c, serial);
  if (environmentFailed_) {
    std::cerr << "\ntdsl-tune: error: the measurement command did not run: " << r.error << "\n";
    return std::nullopt;
  }
  records_.push_back(r);
  if (!tuning::appendRecord(opts_.db, r)) {
    std::cerr << "\ntdsl-tune: error: cannot write the database '" << opts_.db << "'\n";
    return std::nullopt;
  }
  ++trialsDone_;
  if (r.ok)
    ++trialsOk_;
  else
    lastError_ = r.error;
  return r;
}

void Tuner::train() {
  auto &[xs, ys] = train_[current_->name];
  if (xs.size() < 4)
    return;
  size_t width = xs[0].size();
  std::vector<float> flat;
  std::vector<float> labels;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].size() != width)
      continue;
    flat.insert(flat.end(), xs[i].begin(), xs[i].end());
    labels.push_back(ys[i]);
  }
  DMatrixHandle m;
  if (XGDMatrixCreateFromMat(flat.data(), labels.size(), width, NAN, &m) != 0)
    return;
  XGDMatrixSetFloatInfo(m, "label", labels.data(), labels.size());
  BoosterHandle &b = models_[current_->name];
  if (b)
    XGBoosterFree(b);
  XGBoosterCreate(&m, 1, &b);
  for (auto [k, v] : {std::pair<const char *, const char *>{"nthread", "1"},
                      {"max_depth", "6"},
                      {"eta", "0.2"},
                      {"seed", "0"},
                      {"verbosity", "0"},
                      {"objective", "reg:squarederror"}})
    XGBoosterSetParam(b, k, v);
  for (int it = 0; it < 50; ++it)
    XGBoosterUpdateOneIter(b, it, m);
  XGDMatrixFree(m);
}

double Tuner::predict(const Candidate &c) {
  BoosterHandle b = models_[current_->name];
  if (!b)
    return 0;
  DMatrixHandle m;
  if (XGDMatrixCreateFromMat(c.features.data(), 1, c.features.size(), NAN, &m) != 0)
    return 0;
  bst_ulong n = 0;
  const float *out = nullptr;
  double score = 0;
  if (XGBoosterPredict(b, m, 0, 0, 0, &n, &out) == 0 && n == 1)
    score = out[0];
  XGDMatrixFree(m);
  return score;
}

std::vector<schedule::Decision> Tuner::mutate(const Candidate &base, uint64_t &state) {
  std::vector<schedule::Decision> d = base.decisions;
  if (d.empty())
    return d;
  // A quarter of the time the innermost tiles of two tilings trade a factor, each tiling
  // making up for it at another level: the register tile changes shape, not size (8 × 32 ↔
  // 4 × 64). One-level moves reach the other shape only through 8 × 64 (too many accumulators
  // for the registers) or 4 × 32 (too few to cover the FMA latency), a valley the evolution
  // rarely crosses.
  if (schedule::nextRandom(state) % 4 == 0)
    if (std::optional<std::vector<schedule::Decision>> r =
            schedule::reshapeTiles(base.sites, base.decisions, state))
      return *r;
  size_t which = schedule::nextRandom(state) % d.size();
  const schedule::SampleSite &site = base.sites[which];
  // Half the time a tile size moves a factor from one level to another (MetaSchedule's
  // MutateTileSize): a small step, so that the search can refine a good tiling instead of
  // redrawing it (a fresh draw rarely empties a level, e.g. the one between the register tile
  // and the cache).
  if (site.kind == schedule::SampleSite::Kind::PerfectTile && d[which].size() > 1 &&
      schedule::nextRandom(state) % 2 == 0)
    for (int tries = 0; tries < 8; ++tries) {
      schedule::Decision nd = d[which];
      size_t from = schedule::nextRandom(state) % nd.size();
      if (nd[from] < 2)
        continue;
      std::vector<int64_t> divisors;
      for (int64_t q = 2; q <= nd[from]; ++q)
        if (nd[from] % q == 0)
          divisors.push_back(q);
      int64_t q = divisors[schedule::nextRandom(state) % divisors.size()];
      size_t to = schedule::nextRandom(state) % (nd.size() - 1);
      to += to >= from;
      nd[from] /= q;
      nd[to] *= q;
      if (schedule::fitsSite(site, nd)) {
        d[which] = nd;
        return d;
      }
    }
  for (int tries = 0; tries < 8; ++tries) {
    schedule::Decision nd = schedule::drawDecision(site, state);
    if (nd != d[which]) {
      d[which] = nd;
      break;
    }
  }
  return d;
}

void Tuner::progress(bool final) {
  std::ostringstream os;
  os << "tdsl-tune: " << trialsDone_ << "/" << opts_.trials << " trials (" << phase_ << ")";
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
  std::cerr << "\r" << os.str() << (final ? "\n" : "") << std::flush;
}

bool Tuner::writeOutput() {
  if (opts_.out.empty())
    return true;
  std::ostringstream os;
  os << "// Tuned by tdsl-tune for " << target_ << ".\n";
  for (Task &t : tasks_) {
    std::vector<tuning::Measured> m = tuning::measuredCandidates(records_, t.key, target_);
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
  std::ofstream out(opts_.out);
  out << os.str();
  if (!out) {
    std::cerr << "tdsl-tune: error: cannot write '" << opts_.out << "'\n";
    return false;
  }
  return true;
}

int Tuner::run() {
  target_ = tuning::targetKey(opts_.threads);
  if (opts_.db.empty())
    opts_.db = fs::path(opts_.input).replace_extension(".tuning.jsonl").string();
  // A file that is not a tuning database is refused and left as it is: records are appended
  // only to a database (or a new file).
  std::error_code ec;
  if (fs::exists(opts_.db, ec) && fs::equivalent(opts_.db, opts_.input, ec)) {
    std::cerr << "tdsl-tune: error: --db '" << opts_.db << "' is the input file\n";
    return 1;
  }
  if (std::string error; fs::exists(opts_.db) && !tuning::readRecords(opts_.db, records_, error)) {
    std::cerr << "tdsl-tune: error: --db: " << error << "\n";
    return 1;
  }
  records_.reserve(records_.size() + size_t(opts_.trials) * 2 + 16);
  // The work folder: the candidates' files, and a graph's callees as tasks of their own.
  if (opts_.work.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "tdsl-tune-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::cerr << "tdsl-tune: error: cannot make a work folder\n";
      return 1;
    }
    work_ = tmpl;
  } else {
    work_ = fs::absolute(opts_.work);
    fs::create_directories(work_);
  }
  struct RemoveWork {
    const TuneOptions &opts;
    const fs::path &work;
    ~RemoveWork() {
      std::error_code ec;
      if (opts.work.empty())
        fs::remove_all(work, ec);
    }
  } removeWork{opts_, work_};
  if (!findTasks())
    return 1;
  for (Task &t : tasks_)
    for (const tuning::Record &r : records_)
      if (r.key == t.key && r.target == target_) {
        bool candidate = r.generated == t.generated;
        bool baseline = r.generated < 0 && r.decisions.empty(); // the function's own schedule
        if (candidate)
          t.measured.insert(decisionsText(r.decisions));
        if ((candidate || baseline) && r.ok && (t.best == 0 || r.seconds < t.best))
          t.best = r.seconds;
      }
  if (opts_.trials > 0) {
    // Trials split by the tasks' FLOPs (at least one each).
    double total = 0;
    for (const Task &t : tasks_)
      total += t.weight;
    // One trial per task when the budget allows (largest share first when it does not), then
    // the rest by share, rounded down, and one more to the largest remainders until the budget
    // is spent: never more trials in all than --trials.
    int64_t base = std::min<int64_t>(opts_.trials, int64_t(tasks_.size()));
    std::vector<size_t> byWeight(tasks_.size());
    for (size_t i = 0; i < byWeight.size(); ++i)
      byWeight[i] = i;
    std::stable_sort(byWeight.begin(), byWeight.end(),
                     [&](size_t a, size_t b) { return tasks_[a].weight > tasks_[b].weight; });
    for (size_t k = 0; k < byWeight.size(); ++k)
      tasks_[byWeight[k]].trials = int64_t(k) < base ? 1 : 0;
    int64_t rest = opts_.trials - base, given = 0;
    std::vector<std::pair<double, size_t>> remainders;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      double share = double(rest) * tasks_[i].weight / total;
      tasks_[i].trials += int64_t(share);
      given += int64_t(share);
      remainders.emplace_back(share - double(int64_t(share)), i);
    }
    std::stable_sort(remainders.begin(), remainders.end(),
                     [](const auto &a, const auto &b) { return a.first > b.first; });
    for (size_t k = 0; given < rest && k < remainders.size(); ++k, ++given)
      ++tasks_[remainders[k].second].trials;
    int64_t serial = 0;
    // --time-limit is split as the trials are: a task stops at its share of the limit, plus
    // what the tasks before it left (tasks run one after the other, so without a split the
    // first ones would take the whole limit).
    int64_t trialsBefore = 0, allTrials = 0;
    for (const Task &t : tasks_)
      allTrials += t.trials;
    for (Task &t : tasks_) {
      trialsBefore += t.trials;
      double deadline = opts_.timeLimit * double(trialsBefore) / double(allTrials);
      auto timeLeft = [&] { return opts_.timeLimit <= 0 || elapsed() <= deadline; };
      if (t.trials == 0)
        continue; // --trials fewer than the tasks: the smallest get none
      current_ = &t;
      if (!prepareReference(t))
        continue;
      // The measurements of earlier runs seed the pool of parents and the cost model.
      std::vector<const tuning::Record *> earlier;
      for (const tuning::Record &r : records_)
        if (r.ok && r.key == t.key && r.target == target_ && r.generated == t.generated)
          earlier.push_back(&r);
      std::stable_sort(
          earlier.begin(), earlier.end(),
          [](const tuning::Record *a, const tuning::Record *b) { return a->seconds < b->seconds; });
      if (earlier.size() > 256)
        earlier.resize(256);
      for (const tuning::Record *r : earlier)
        if (std::optional<Candidate> c = compile(t, &r->decisions, opts_.seed)) {
          auto &[xs, ys] = train_[t.name];
          xs.push_back(c->features);
          ys.push_back(float(-std::log(r->seconds)));
          c->features.push_back(float(r->seconds));
          pool_[t.name].push_back(*c);
        }
      train();
      uint64_t state = schedule::siteSeed(opts_.seed, t.key, 0);
      int64_t warmup = std::max<int64_t>(4, std::min<int64_t>(16, t.trials / 4));
      int64_t n = 0;
      // The function's own schedule first (once per database): a generated schedule must
      // beat it to replace it.
      bool baseline =
          opts_.baseline && !t.plainFile.empty() &&
          std::none_of(records_.begin(), records_.end(), [&](const tuning::Record &r) {
            return r.key == t.key && r.target == target_ && r.generated < 0 && r.decisions.empty();
          });
      // (within the whole limit only: a task of one trial has almost no share of it)
      if (baseline && (opts_.timeLimit <= 0 || elapsed() <= opts_.timeLimit)) {
        std::optional<tuning::Record> r = measureAndRecord(t, nullptr, serial++);
        if (!r)
          return 1;
        ++n;
        if (r->ok && (t.best == 0 || r->seconds < t.best))
          t.best = r->seconds;
        progress();
      }
      // The last twentieth of the trials (one of 8 to 39) measure the fastest candidates again.
      int64_t reserve = t.trials >= 8 ? std::max<int64_t>(1, t.trials / 20) : 0;
      for (; n < t.trials - reserve; ++n) {
        if (!timeLeft())
          break;
        std::optional<Candidate> pick;
        // Random candidates first; then the best predicted of a population mutated from the
        // fastest measured ones, with some fresh draws. One evolutionary trial in eight
        // (--explore) explores, as MetaSchedule's epsilon-greedy: it measures the first new
        // member of the population whatever the model predicts for it, so that a region the
        // model has learnt to avoid from a few bad samples is still visited (docs/decisions.md,
        // "Tuner").
        bool evolve = int64_t(pool_[t.name].size()) >= warmup;
        bool explore =
            evolve && double(schedule::nextRandom(state) >> 11) * 0x1p-53 < opts_.explore;
        phase_ = explore ? "exploring" : evolve ? "evolutionary" : "random";
        double bestScore = 0;
        int evaluated = 0;
        int population = explore || !evolve ? 1 : 48;
        for (int attempt = 0; attempt < (evolve ? 192 : 32) && evaluated < population; ++attempt) {
          std::optional<Candidate> c;
          if (evolve && schedule::nextRandom(state) % 4 != 0) {
            std::vector<Candidate> &pool = pool_[t.name];
            size_t top = std::min<size_t>(pool.size(), 8);
            const Candidate &base = pool[schedule::nextRandom(state) % top];
            std::vector<schedule::Decision> d = mutate(base, state);
            c = compile(t, &d, opts_.seed);
          } else {
            c = compile(t, nullptr, schedule::nextRandom(state));
          }
          if (!c || t.measured.count(decisionsText(c->decisions)))
            continue;
          ++evaluated;
          double score = evolve && !explore ? predict(*c) : 0;
          if (!pick || score > bestScore) {
            pick = c;
            bestScore = score;
          }
        }
        if (!pick)
          break; // the space is exhausted (or nothing compiles)
        t.measured.insert(decisionsText(pick->decisions));
        std::optional<tuning::Record> measured = measureAndRecord(t, &*pick, serial++);
        if (!measured)
          return 1;
        const tuning::Record &r = *measured;
        if (r.ok) {
          if (t.best == 0 || r.seconds < t.best)
            t.best = r.seconds;
          auto &[xs, ys] = train_[t.name];
          xs.push_back(pick->features);
          ys.push_back(float(-std::log(r.seconds)));
          std::vector<Candidate> &pool = pool_[t.name];
          Candidate kept = *pick;
          kept.features.push_back(float(r.seconds)); // the time, for ordering the pool
          pool.push_back(kept);
          std::stable_sort(pool.begin(), pool.end(), [](const Candidate &a, const Candidate &b) {
            return a.features.back() < b.features.back();
          });
          train();
        }
        progress();
      }
      // Measured again: one measurement is often 5-10% off on a shared machine (a process
      // runs at the speed the machine has then), and the fastest of hundreds of candidates is
      // also the luckiest. The four fastest by median are measured in turn until each has
      // three measurements; best() ranks candidates by their median.
      for (; n < t.trials && timeLeft(); ++n) {
        phase_ = "measuring the best again";
        const tuning::Record *again = nullptr;
        size_t fewest = 3;
        std::vector<tuning::Measured> m = tuning::measuredCandidates(records_, t.key, target_);
        for (size_t i = 0; i < m.size() && i < 4; ++i) {
          const tuning::Record &r = *m[i].median;
          bool own = r.generated < 0 && r.decisions.empty() && !t.plainFile.empty();
          bool candidate = r.generated == t.generated && !(r.generated < 0 && r.decisions.empty());
          if ((own || candidate) && m[i].count < fewest) {
            fewest = m[i].count;
            again = &r;
          }
        }
        if (!again)
          break;
        std::optional<Candidate> c;
        if (!again->decisions.empty() || again->generated >= 0) {
          c = compile(t, &again->decisions, opts_.seed);
          if (!c)
            break;
        }
        if (!measureAndRecord(t, c ? &*c : nullptr, serial++))
          return 1;
        progress();
      }
      if (std::vector<tuning::Measured> m = tuning::measuredCandidates(records_, t.key, target_);
          !m.empty())
        t.best = m[0].seconds;
    }
    progress(true);
  }
  for (auto &[name, b] : models_)
    if (b)
      XGBoosterFree(b);
  // Trials that all failed found nothing: say why, and fail (a database of errors is no
  // result).
  if (trialsDone_ > 0 && trialsOk_ == 0) {
    std::cerr << "tdsl-tune: error: none of the " << trialsDone_
              << " measurements succeeded; the last one: " << lastError_ << "\n";
    return 1;
  }
  return writeOutput() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  po::options_description desc;
  cl::addToolOptions(desc);
  desc.add_options()("trials", cl::value(), "")("time-limit", cl::value(), "")(
      "db", cl::value(), "")("output,o", cl::value(), "")("threads", cl::value(), "")(
      "runner", cl::value(), "")("repeat", cl::value(), "")("timeout", cl::value(), "")(
      "work", cl::value(), "")("no-baseline", "")("explore", cl::value(), "")("file", cl::value(),
                                                                              "");
  cl::Parsed p;
  TuneOptions opts;
  opts.self = argv[0];
  if (std::optional<int> status =
          cl::parseToolCommandLine("tdsl-tune", argc, argv, desc, kHelp, p, opts))
    return *status;
  if (!opts.tuningDb.empty())
    return usageError("tdsl-tune takes its database with --db FILE");
  auto number = [&](const char *name, double &v, double min) -> std::string {
    auto text = p.last(name);
    if (!text)
      return "";
    size_t pos = 0;
    try {
      v = std::stod(*text, &pos);
    } catch (...) {
      pos = std::string::npos;
    }
    if (pos != text->size() || !(v >= min))
      return "invalid value '" + *text + "' for --" + name;
    return "";
  };
  double trials = double(opts.trials), threads = 0, repeat = double(opts.repeat);
  for (auto [name, v, min] : {std::tuple<const char *, double *, double>{"trials", &trials, 0},
                              {"time-limit", &opts.timeLimit, 0},
                              {"threads", &threads, 1},
                              {"repeat", &repeat, 1},
                              {"timeout", &opts.timeout, 1},
                              {"explore", &opts.explore, 0}})
    if (std::string error = number(name, *v, min); !error.empty())
      return usageError(error);
  if (opts.explore > 1)
    return usageError("invalid value '" + p.last("explore").value_or("") + "' for --explore");
  opts.trials = int64_t(trials);
  opts.threads = int(threads);
  opts.repeat = int64_t(repeat);
  opts.db = p.last("db").value_or("");
  opts.out = p.last("output").value_or("");
  opts.runner = p.last("runner").value_or("");
  opts.work = p.last("work").value_or("");
  opts.baseline = !p.has("no-baseline");
  if (!fs::exists(opts.input)) {
    std::cerr << "tdsl-tune: error: cannot read '" << opts.input << "'\n";
    return 1;
  }
  Tuner tuner(opts);
  return tuner.run();
}
