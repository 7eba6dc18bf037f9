//===- tools/tdsl-tune/Tasks.cpp - tdsl-tune's tasks and builder over the driver -------------===//

#include "tools/tdsl-tune/Tasks.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "tune/Database.h"
#include "tune/FeatureExtractor.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace tdsl::tunetool {

using tune::Candidate;
using tune::Task;

DriverOptions CompilationBuilder::aloneOptions(const std::string &file,
                                               const std::string &func) const {
  DriverOptions o = opts_;
  o.input = file;
  o.func = func;
  o.defines = {};
  return o;
}

std::optional<Candidate> CompilationBuilder::build(const Task &task,
                                                   const std::vector<schedule::Decision> *decisions,
                                                   uint64_t seed) {
  DriverOptions o = task.file.empty() ? opts_ : aloneOptions(task.file, task.name);
  o.seed = seed;
  o.tuningDb.clear();
  std::ostringstream sink;
  Compilation c(o, sink);
  c.sampling().seed = seed;
  int generated = task.generated;
  const std::string &key = task.key;
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
  cand.features = tune::extractFeatures(cand.decisions, m->lookup(task.name));
  return cand;
}

namespace {

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

/// Whether `file` compiles alone; `key`: the function key of its unscheduled `func`.
bool compilesAlone(const CompilationBuilder &b, const std::string &file, const std::string &func,
                   std::string *key) {
  DriverOptions o = b.aloneOptions(file, func);
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

/// Writes a graph's callee `task` as a task of its own (Task::file) and, when its own schedule
/// changed it (`scheduled`), its baseline (Task::plainFile); each file is kept only when it
/// compiles alone (and the unscheduled one to the same key).
void extractTask(const CompilationBuilder &b, const fs::path &work, Task &task,
                 const ir::Func &scheduled) {
  // Random inputs (tdsl-run's) are fine for float tensors; integer ones may be indices
  // (nn.embedding), which random values would send out of bounds: measured in the graph.
  for (const ir::FuncParam &p : task.unscheduled.as<ir::PrimFunc>()->inputs)
    if (p.isTensor() && !p.buffer.dtype().isFloat())
      return;
  fs::path dir = work / "tasks";
  fs::create_directories(dir);
  auto write = [&](const fs::path &path, const ir::Func &f) {
    std::ofstream os(path);
    os << "// " << task.name << ", extracted by tdsl-tune from " << b.options().input << "\n"
       << ir::toString(f);
    return bool(os.flush());
  };
  fs::path file = dir / (task.name + ".tdsl");
  std::string key;
  if (!write(file, task.unscheduled) || !compilesAlone(b, file.string(), task.name, &key) ||
      key != task.key)
    return;
  task.file = file.string();
  if (!scheduled || ir::toString(scheduled) == ir::toString(task.unscheduled))
    return;
  fs::path plain = dir / (task.name + ".plain.tdsl");
  if (write(plain, scheduled) && compilesAlone(b, plain.string(), task.name, nullptr))
    task.plainFile = plain.string();
}

} // namespace

std::optional<std::vector<Task>> findTasks(CompilationBuilder &builder, const fs::path &work,
                                           std::vector<std::string> &outputs) {
  const DriverOptions &opts = builder.options();
  std::vector<Task> tasks;
  // Probe: compile once, noting every function the pipeline is about to schedule.
  std::map<std::string, ir::Func> seen;
  DriverOptions o = opts;
  o.tuningDb.clear();
  Compilation c(o, std::cerr);
  c.sampling().lookup = [&](const ir::Func &f) -> std::optional<schedule::TunedDecisions> {
    seen.emplace(f.name(), f);
    return std::nullopt;
  };
  if (!c.parse())
    return std::nullopt;
  std::optional<ir::Module> m = c.buildIR();
  if (!m)
    return std::nullopt;
  ir::Func top = m->lookup(opts.func);
  if (!top) {
    std::cerr << "tdsl-tune: error: no function or graph named '" << opts.func << "'\n";
    return std::nullopt;
  }
  if (auto *p = top.as<ir::PrimFunc>())
    for (const ir::Buffer &b : p->outputs)
      outputs.push_back(b->name);
  if (auto *g = top.as<ir::GraphFunc>())
    for (const ir::Buffer &b : g->results)
      outputs.push_back(b->name);
  // A graph's tasks: the functions it calls after the graph passes (fused ones included).
  std::set<std::string> called;
  if (auto *g = top.as<ir::GraphFunc>())
    for (const ir::GraphItem &item : g->body) {
      if (auto *call = std::get_if<ir::CallBinding>(&item))
        called.insert(call->callee);
      if (auto *d = std::get_if<ir::DataflowBlock>(&item))
        for (const ir::GraphBinding &b : d->bindings)
          if (auto *call = std::get_if<ir::CallBinding>(&b))
            called.insert(call->callee);
    }
  std::set<std::string> owned;
  for (const auto &[name, trace] : c.sampling().traces)
    owned.insert(name);
  for (auto &[name, f] : seen) {
    auto *p = f.as<ir::PrimFunc>();
    if (!p || !p->body.defined())
      continue;
    if (top.as<ir::PrimFunc>() ? name != opts.func : !called.count(name))
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
        extractTask(builder, work, t, scheduled);
      else if (scheduled && ir::toString(scheduled) != ir::toString(f))
        t.plainFile = opts.input; // its own schedule applies without a record
      // The lowest level of the generated space that compiles.
      for (int level = 0; level < schedule::kDesignSpaceLevels; ++level) {
        t.generated = level;
        if (!schedule::designSpace(f, level)) {
          t.generated = -1; // no space at this level (a symbolic extent): none at all
          break;
        }
        if (builder.build(t, nullptr, opts.seed))
          break;
        t.generated = -1;
      }
      if (t.generated < 0) {
        std::cerr << "tdsl-tune: note: no design space for '" << name
                  << "' (a symbolic extent, or refused)\n";
        continue;
      }
    }
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) {
    std::cerr << "tdsl-tune: error: nothing to tune in '" << opts.func
              << "': no function with sample_* statements or with loops of constant extent\n";
    return std::nullopt;
  }
  return tasks;
}

} // namespace tdsl::tunetool
