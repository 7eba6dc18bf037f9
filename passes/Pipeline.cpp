//===- passes/Pipeline.cpp - The module pipeline: checked IR to what the backends emit -------===//
#include "passes/Pipeline.h"

#include "passes/grad/Grad.h"

#include "ir/IRPrinter.h"
#include "ir/Instantiate.h"
#include "ir/ShapeBounds.h"
#include "ir/Utils.h"
#include "passes/grad/Grad.h"
#include "passes/graph/Graph.h"
#include "passes/lower/LowerGraph.h"
#include "passes/lower/Pipeline.h"
#include "passes/lower/Profile.h"
#include "passes/schedule/Apply.h"
#include "passes/schedule/Primitives.h"
#include "passes/schedule/Sample.h"
#include "support/Diagnostics.h"
#include "support/Join.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace tdsl {

namespace {

/// `roots` and every function they call, directly or not.
std::set<std::string> reachableFrom(const ir::Module &m, const std::vector<std::string> &roots) {
  std::set<std::string> seen(roots.begin(), roots.end());
  std::vector<std::string> work = roots;
  while (!work.empty()) {
    ir::Func f = m.lookup(work.back());
    work.pop_back();
    if (const auto *g = f.defined() ? f.as<ir::GraphFunc>() : nullptr)
      for (const std::string &c : ir::graphCallees(*g))
        if (seen.insert(c).second)
          work.push_back(c);
  }
  return seen;
}

/// Removes the functions graph passes made that no graph calls any more (an instance fused
/// away, a fused function fused again), and moves the others before the module's graphs.
void dropUncalled(ir::Module &m, const std::vector<graph::DerivedFunc> &instances,
                  const std::vector<graph::DerivedFunc> &fused) {
  std::set<std::string> made, called;
  for (const auto *list : {&instances, &fused})
    for (const graph::DerivedFunc &d : *list)
      made.insert(d.name);
  for (const ir::Func &f : m.functions())
    if (const auto *g = f.as<ir::GraphFunc>()) {
      std::vector<std::string> c = ir::graphCallees(*g);
      called.insert(c.begin(), c.end());
    }
  std::vector<ir::Func> derived;
  for (const ir::Func &f : m.functions())
    if (made.count(f.name()) && called.count(f.name()))
      derived.push_back(f);
  graph::placeDerived(m, made, derived);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The state of one run, and its steps
// ---------------------------------------------------------------------------------------------

struct Pipeline::Run {
  Run(const PipelineOptions &opts, DiagnosticEngine &diags, const FrontendHooks *frontend,
      ir::Module module)
      : opts(opts), diags(diags), frontend(frontend), module(std::move(module)),
        printStream(opts.printStream) {}

  const PipelineOptions &opts;
  DiagnosticEngine &diags;
  const FrontendHooks *frontend;

  ir::Module module;
  /// Where --print-ir-after|before go (opts.printStream, or a buffer).
  std::ostream *printStream;
  /// The functions --func compiles (empty without --func).
  std::set<std::string> compiled;
  std::set<std::string> usedDefines;
  std::vector<graph::DerivedFunc> instances, fused;
  /// The generic form of the functions -D instantiated in place (graph.instantiate uses it).
  std::map<std::string, ir::Func> generics;
  ir::LoweredModule lowered;

  // Steps of Pipeline::schedule. Each returns false to stop (after reporting errors).
  bool sema();
  bool expandGrads();
  bool inlineGraphs();
  bool instantiateFuncs();
  bool foldConstants();
  bool packWeights();
  bool foldCalls();
  bool instantiateCallees();
  bool specialize();
  bool foldViews();
  bool eliminateDeadCalls();
  bool fuse();
  bool schedule();
  bool planMemory();
  // Steps of Pipeline::lower.
  bool bindShapes();
  bool lowerFuncs();
  bool lowerGraphs();
  bool lowerCudaFuncs();

  void scheduleFused(const std::vector<ir::ScheduleScript> &scripts);
  void scheduleDerived(std::vector<ir::ScheduleScript> &scripts);
  /// The funcs the grad step derived (spec §13: those without a script get a default one).
  std::set<std::string> derivedFuncs;
  bool takesConstants(const std::string &fn) const { return opts.func.empty() || fn == opts.func; }
  bool takesParams(const std::string &fn) const {
    return opts.func.empty() || compiled.count(fn) > 0;
  }
  lower::LowerOptions lowerOptions();
  /// Whether an object exports `name` (spec §10: the file's own items).
  bool exported(const std::string &name) const;
  /// Prints the diagnostics so far; false when there are errors among them (the step stops).
  bool flushed() {
    diags.flush();
    return !diags.hasErrors();
  }

  // --print-ir-after|before.
  bool wantsAfter(const std::string &step) const {
    return printStream &&
           (opts.printAfterAll || std::find(opts.printAfter.begin(), opts.printAfter.end(), step) !=
                                      opts.printAfter.end());
  }
  bool wantsBefore(const std::string &step) const {
    return printStream && std::find(opts.printBefore.begin(), opts.printBefore.end(), step) !=
                              opts.printBefore.end();
  }
  void print(const char *when, const std::string &step, const ir::Module &m) {
    *printStream << "// ----- IR " << when << " " << step << " -----\n";
    printOwnItems(m, *printStream);
  }
  void print(const char *when, const std::string &step, const ir::Func &f) {
    *printStream << "// ----- IR " << when << " " << step << " (" << f.name() << ") -----\n"
                 << ir::toString(f);
  }
  /// `what` (a Func or the Module) after or before `step`, where --print-ir-after|before asks.
  template <typename IR> void printAfter(const std::string &step, const IR &what) {
    if (wantsAfter(step))
      print("after", step, what);
  }
  template <typename IR> void printBefore(const std::string &step, const IR &what) {
    if (wantsBefore(step))
      print("before", step, what);
  }
};

namespace {

/// One step of the pipeline.
struct Step {
  /// What --print-ir-after|before calls it; nullptr: not printable (and not listed).
  const char *name;
  bool (Pipeline::Run::*run)();
  /// Whether it runs for these options.
  bool (*runs)(const PipelineOptions &);
  /// Module: the runner prints the module before and after the step. Own: the step prints its
  /// sub-steps itself, function by function.
  enum Print { Module, Own } print;
  /// The names of its sub-steps, listed before its own name (schedule) or instead of it (the
  /// lowerings, whose own names are not printable).
  std::vector<std::string> (*subSteps)() = nullptr;
};

bool always(const PipelineOptions &) { return true; }
bool withGraphPasses(const PipelineOptions &o) { return o.graphPasses; }
/// nn.conv2d_packed has a CPU schedule only.
bool withGraphPassesForCpu(const PipelineOptions &o) {
  return o.graphPasses && o.target == Target::CPU;
}
/// Tuning records are looked up (--tuning-db, tdsl-tune): they are per static shape.
bool withTuningRecords(const PipelineOptions &o) {
  return o.graphPasses && (o.specializeShapes || (o.sampling && o.sampling->lookup));
}
bool forCpu(const PipelineOptions &o) { return o.target == Target::CPU; }
bool forCuda(const PipelineOptions &o) { return o.target == Target::CUDA; }

std::vector<std::string> schedulePrimitiveSteps() {
  std::vector<std::string> out;
  for (const std::string &p : schedulePrimitiveNames())
    out.push_back("schedule." + p);
  return out;
}
std::vector<std::string> cpuLowerSteps() { return lower::lowerStepNames(); }
std::vector<std::string> cudaLowerSteps() { return lower::cudaLowerStepNames(); }

using R = Pipeline::Run;

/// Pipeline::schedule, one line per step.
const std::vector<Step> &scheduleSteps() {
  static const std::vector<Step> steps = {
      {"sema", &R::sema, always, Step::Module},
      {"grad", &R::expandGrads, always, Step::Module},
      {"graph.inline", &R::inlineGraphs, always, Step::Module},
      {"instantiate", &R::instantiateFuncs, always, Step::Module},
      {"graph.fold-constants", &R::foldConstants, withGraphPasses, Step::Module},
      {"graph.pack-weights", &R::packWeights, withGraphPassesForCpu, Step::Module},
      {"graph.fold-calls", &R::foldCalls, withGraphPasses, Step::Module},
      {"graph.instantiate", &R::instantiateCallees, withGraphPasses, Step::Module},
      {"graph.fold-views", &R::foldViews, withGraphPasses, Step::Module},
      {"graph.dce", &R::eliminateDeadCalls, withGraphPasses, Step::Module},
      {"graph.fuse", &R::fuse, withGraphPasses, Step::Module},
      {"graph.specialize", &R::specialize, withTuningRecords, Step::Module},
      {"schedule", &R::schedule, always, Step::Own, schedulePrimitiveSteps},
      {"graph.plan-memory", &R::planMemory, withGraphPasses, Step::Module},
  };
  return steps;
}

/// Pipeline::lower, one line per step.
const std::vector<Step> &lowerSteps() {
  static const std::vector<Step> steps = {
      {"graph.bind-shapes", &R::bindShapes, withGraphPassesForCpu, Step::Module},
      {nullptr, &R::lowerFuncs, forCpu, Step::Own, cpuLowerSteps},
      {"lower.graph", &R::lowerGraphs, forCpu, Step::Own},
      {nullptr, &R::lowerCudaFuncs, forCuda, Step::Own, cudaLowerSteps},
  };
  return steps;
}

bool runSteps(const std::vector<Step> &steps, Pipeline::Run &run) {
  for (const Step &step : steps) {
    if (!step.runs(run.opts))
      continue;
    bool printed = step.name && step.print == Step::Module;
    if (printed)
      run.printBefore(step.name, run.module);
    if (!(run.*step.run)())
      return false;
    if (printed)
      run.printAfter(step.name, run.module);
  }
  return true;
}

} // namespace

const std::vector<std::string> &passNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto *list : {&scheduleSteps(), &lowerSteps()})
      for (const Step &step : *list) {
        // A name listed by an earlier step (the cuda lowering shares the CPU one's) once.
        if (step.subSteps)
          for (const std::string &s : step.subSteps())
            if (std::find(out.begin(), out.end(), s) == out.end())
              out.push_back(s);
        if (step.name)
          out.push_back(step.name);
      }
    return out;
  }();
  return names;
}

// --- sema → graph.plan-memory ----------------------------------------------------------------

bool Pipeline::Run::sema() {
  // Under --func F, -D binds the constants of F only, and the schedule parameters of F and of
  // what F calls (what is compiled); the other functions are left as they are (spec §9).
  if (!opts.func.empty())
    compiled = reachableFrom(module, {opts.func});
  // Loops written `parallel` or `vectorized` in the explicit form obey the rule of the
  // primitive that would have made them (spec §6, §7): a race is refused, not compiled.
  for (const ir::Func &f : module.functions())
    schedule::checkLoopKinds(f, [&](const ir::For *loop, const schedule::ScheduleError &e) {
      Diagnostic &d =
          diags.error(SourceRange(loop->loc.valid() ? loop->loc : loop->loopVar->loc),
                      std::string("loop '") + loop->loopVar.name() + "' cannot be " +
                          (loop->forKind == ir::ForKind::Parallel ? "parallel" : "vectorized") +
                          ": " + e.what());
      if (e.noteAt.valid() && !e.note.empty())
        d.note(SourceRange(e.noteAt), e.note);
    });
  return flushed();
}

bool Pipeline::Run::expandGrads() {
  if (std::all_of(module.grads.begin(), module.grads.end(),
                  [](const ir::GradItem &g) { return g.derived; }))
    return true;
  std::set<std::string> before;
  for (const ir::Func &f : module.functions())
    before.insert(f.name());
  grad::expandGrads(module, [&](const grad::GradError &e) {
    Diagnostic &d = diags.error(SourceRange(e.at), e.message);
    if (e.noteAt.valid() && !e.note.empty())
      d.note(SourceRange(e.noteAt), e.note);
  });
  // The derived funcs are checked as the checker checks a func (spec §5 rules 6 and 7).
  for (const ir::Func &f : module.functions())
    if (!before.count(f.name())) {
      frontend->checkFunction(f, diags);
      if (f.as<ir::PrimFunc>())
        derivedFuncs.insert(f.name());
    }
  return flushed();
}

bool Pipeline::Run::inlineGraphs() {
  graph::inlineGraphs(module);
  return true;
}

bool Pipeline::Run::instantiateFuncs() {
  // A generic func of the main module whose constants -D gives becomes its instance, checked
  // again (spec §11) before its schedule applies.
  for (const ir::Func &f : std::vector<ir::Func>(module.functions())) {
    auto *p = f.as<ir::PrimFunc>();
    if (!p || p->constVars.empty() || !graph::isOwnName(f.name()) || !takesConstants(f.name()))
      continue;
    std::vector<int64_t> values;
    std::vector<std::string> missing;
    for (const ir::Var &c : p->constVars) {
      if (std::optional<int64_t> v = opts.defines.lookup(c.name(), {f.name()}, &usedDefines))
        values.push_back(*v);
      else
        missing.push_back(c.name());
    }
    if (values.empty())
      continue;
    if (!missing.empty()) {
      diags.error(SourceRange(p->loc), "generic func '" + f.name() +
                                           "' is given some constants with -D but not '" +
                                           missing.front() + "'");
      continue;
    }
    ir::Func instance = instantiate(f, values);
    frontend->checkFunction(instance, diags);
    generics.emplace(f.name(), f);
    module.replace(instance);
  }
  return flushed();
}

bool Pipeline::Run::foldConstants() {
  graph::foldConstants(module);
  return true;
}

bool Pipeline::Run::packWeights() {
  graph::packConvolutionWeights(module, graph::convolutionChannelBlock(opts.simdLanes),
                                2 * opts.simdLanes);
  return true;
}

bool Pipeline::Run::foldCalls() {
  graph::foldConstantCalls(module, frontend->evaluateCall,
                           [this](const SourceLoc &at, const std::string &message) {
                             diags.warning(SourceRange(at), message);
                           });
  return flushed();
}

bool Pipeline::Run::instantiateCallees() {
  instances = graph::instantiateCallees(module, generics);
  for (const graph::DerivedFunc &d : instances)
    frontend->checkFunction(module.lookup(d.name), diags);
  return flushed();
}

bool Pipeline::Run::foldViews() {
  graph::foldViews(module);
  return true;
}

bool Pipeline::Run::eliminateDeadCalls() {
  graph::eliminateDeadCalls(module);
  return true;
}

bool Pipeline::Run::fuse() {
  fused = graph::fuseElementwise(module, instances);
  dropUncalled(module, instances, fused);
  return true;
}

bool Pipeline::Run::specialize() {
  graph::specializeCallees(module, instances, fused);
  dropUncalled(module, instances, fused);
  return true;
}

bool Pipeline::Run::schedule() {
  std::vector<ir::ScheduleScript> scripts =
      frontend->buildSchedules([&](const std::string &fn) { return takesParams(fn); }, usedDefines);
  // A deferred script names a function the graph passes should have made: one in the module,
  // or one they made and then replaced by copies that take its script (an instance whose
  // static-shape copies graph.specialize made: `nn_max_pool2d_2_2_0` for
  // `nn_max_pool2d_2_2_0_2x8x12x12`, language.md §8).
  auto schedulesSomething = [&](const std::string &name) {
    if (module.lookup(name))
      return true;
    for (const std::vector<graph::DerivedFunc> *made : {&instances, &fused})
      for (const graph::DerivedFunc &d : *made)
        if (d.scheduleFrom == name && module.lookup(d.name))
          return true;
    return false;
  };
  for (const ir::ScheduleScript &s : scripts)
    if (s.deferred && !schedulesSomething(s.func))
      diags.error(SourceRange(s.loc), "unknown function '" + s.func + "'");
  // What --func compiles now includes the functions the graph passes made, and the functions
  // whose scripts they take: the generic function of an instance (nn.conv2d_packed, which
  // graph.pack-weights calls in place of nn.conv2d), the producer of a fused function. Without
  // them `--func GRAPH` (tdsl-run, tdsl-tune's measurements) ran such callees unscheduled.
  auto withScriptSources = [&](std::set<std::string> reached) {
    for (bool grew = true; grew;) {
      grew = false;
      for (const std::vector<graph::DerivedFunc> *made : {&instances, &fused})
        for (const graph::DerivedFunc &d : *made)
          if (!d.scheduleFrom.empty() && reached.count(d.name))
            grew = reached.insert(d.scheduleFrom).second || grew;
    }
    return reached;
  };
  if (!opts.func.empty())
    for (const std::string &fn : withScriptSources(reachableFrom(module, {opts.func})))
      compiled.insert(fn);
  // Without --func, the scripts of imported modules apply to the imported functions the file's
  // own items reach (a file that imports "nn" and calls nn.relu does not schedule the other
  // forty); scripts written in the file or a --schedule file always apply.
  std::set<std::string> ownReach;
  if (opts.func.empty()) {
    std::vector<std::string> own;
    for (const ir::Func &f : module.functions())
      if (graph::isOwnName(f.name()))
        own.push_back(f.name());
    ownReach = withScriptSources(reachableFrom(module, own));
  }
  // The schedules of functions --func does not compile are not applied: they may need constants
  // only -D for that function would give.
  scripts.erase(std::remove_if(scripts.begin(), scripts.end(),
                               [&](const ir::ScheduleScript &s) {
                                 if (!opts.func.empty())
                                   return !takesParams(s.func);
                                 return s.imported && !ownReach.count(s.func);
                               }),
                scripts.end());
  // An instance is scheduled by its generic function's script.
  graph::addInstanceScripts(scripts, instances);
  // -D also gives generic constants of the module's funcs (`-D P=1` or `-D conv.P=1`).
  for (const ir::Func &f : module.functions())
    if (auto *p = f.as<ir::PrimFunc>(); p && takesConstants(f.name()))
      for (const ir::Var &c : p->constVars)
        opts.defines.lookup(c.name(), {f.name()}, &usedDefines);
  for (const auto &[name, value] : opts.defines.entries()) {
    if (usedDefines.count(name))
      continue;
    std::string d = "-D " + name + "=" + std::to_string(value);
    size_t dot = name.rfind('.');
    if (opts.func.empty())
      diags.warning(SourceRange(),
                    d + " is not used by any schedule parameter or function constant");
    else if (dot != std::string::npos && !takesParams(name.substr(0, dot)))
      diags.warning(SourceRange(), d + " is not used: --func " + opts.func + " does not compile '" +
                                       name.substr(0, dot) + "'");
    else
      diags.warning(SourceRange(), d + " is not used by --func " + opts.func +
                                       ": no constant of '" + opts.func +
                                       "' and no schedule parameter of it or of what it calls "
                                       "is named '" +
                                       name.substr(dot == std::string::npos ? 0 : dot + 1) + "'");
  }
  if (!flushed())
    return false;
  if (opts.noSchedule)
    return true;
  printBefore("schedule", module);
  for (const ir::Func &f : module.functions())
    if (f.as<ir::PrimFunc>())
      module.unscheduled.emplace(f.name(), f);
  // The IR before a primitive is the function as the previous primitive left it.
  std::map<std::string, ir::Func> current;
  for (const ir::Func &f : module.functions())
    current.emplace(f.name(), f);
  // A function whose schedule has no sample_* statements (or that has none) gets the design
  // space a tuning record of it was measured in (spec §12: the tuner generates one for it),
  // in place of its plain schedule for this target. Decisions of sample_* schedules are
  // looked up as their scripts run.
  if (opts.sampling && opts.sampling->lookup) {
    std::string target = targetName(opts.target);
    auto applies = [&](const ir::ScheduleScript &s) {
      return s.target.empty() || s.target == target;
    };
    std::set<std::string> sampled;
    for (const ir::ScheduleScript &s : scripts)
      if (applies(s))
        for (const ir::ScheduleCall &c : s.calls)
          if (c.primitive.rfind("sample_", 0) == 0)
            sampled.insert(s.func);
    for (const ir::Func &f : module.functions()) {
      if (!f.as<ir::PrimFunc>() || sampled.count(f.name()))
        continue;
      std::optional<schedule::TunedDecisions> rec = opts.sampling->lookup(f);
      if (!rec || rec->generated < 0)
        continue;
      if (std::optional<ir::ScheduleScript> space = schedule::designSpace(f, rec->generated)) {
        std::erase_if(
            scripts, [&](const ir::ScheduleScript &s) { return s.func == f.name() && applies(s); });
        scripts.push_back(std::move(*space));
      }
    }
  }
  applySchedules(
      module, scripts, targetName(opts.target), diags,
      [&](const std::string &step, const ir::Func &f) {
        auto it = current.find(f.name());
        if (it != current.end())
          printBefore(step, it->second);
        current[f.name()] = f;
        printAfter(step, f);
      },
      opts.sampling);
  if (!flushed())
    return false;
  scheduleDerived(scripts);
  scheduleFused(scripts);
  printAfter("schedule", module);
  return true;
}

void Pipeline::Run::scheduleDerived(std::vector<ir::ScheduleScript> &scripts) {
  // A derived func without a script of its own gets the default schedule (spec §13), block by
  // block; a step the primitives refuse is dropped (the func stays as it was before it). The
  // steps that applied become its script, which a function fused from it starts from.
  if (opts.target != Target::CPU)
    return;
  std::string target = targetName(opts.target);
  for (const std::string &name : derivedFuncs) {
    ir::Func f = module.lookup(name);
    if (!f || !f.as<ir::PrimFunc>() ||
        std::any_of(scripts.begin(), scripts.end(), [&](const ir::ScheduleScript &s) {
          return s.func == name && (s.target.empty() || s.target == target);
        }))
      continue;
    ir::ScheduleScript applied;
    applied.func = name;
    for (const ir::ScheduleScript &step : schedule::defaultScripts(f)) {
      ir::Func before = module.lookup(name);
      std::ostringstream sink;
      DiagnosticEngine quiet(diags.sourceManager(), sink);
      applySchedules(
          module, {step}, target, quiet,
          [&](const std::string &p, const ir::Func &g) { printAfter(p, g); }, opts.sampling);
      if (quiet.hasErrors())
        module.replace(before);
      else
        applied.calls.insert(applied.calls.end(), step.calls.begin(), step.calls.end());
    }
    if (!applied.calls.empty())
      scripts.push_back(std::move(applied));
  }
}

void Pipeline::Run::scheduleFused(const std::vector<ir::ScheduleScript> &scripts) {
  // A fused function gets its producer's script; a refusal there is no error (the script was
  // written for the producer alone): the function then stays unscheduled. The consumer blocks
  // are placed after, each step a checked primitive.
  for (const graph::DerivedFunc &d : fused) {
    ir::Func f = module.lookup(d.name);
    if (!f)
      continue;
    // A script of its own (a tuned design space, which covers the consumer blocks) replaces
    // the producer's script and the placing of the consumers.
    if (std::any_of(scripts.begin(), scripts.end(),
                    [&](const ir::ScheduleScript &s) { return s.func == d.name; }))
      continue;
    std::vector<ir::ScheduleScript> own;
    for (const ir::ScheduleScript &s : scripts)
      if (s.func == d.scheduleFrom) {
        own.push_back(s);
        own.back().func = d.name;
        graph::takeConstants(own.back(), d);
      }
    if (!own.empty()) {
      std::ostringstream sink;
      DiagnosticEngine quiet(diags.sourceManager(), sink);
      applySchedules(
          module, own, targetName(opts.target), quiet,
          [&](const std::string &step, const ir::Func &g) { printAfter(step, g); }, opts.sampling);
      if (quiet.hasErrors())
        module.replace(f);
    }
    module.replace(graph::placeFusedConsumers(module.lookup(d.name), d, targetName(opts.target)));
  }
}

bool Pipeline::Run::planMemory() {
  graph::planMemory(module);
  return true;
}

// --- lower → lower.graph -----------------------------------------------------------------------

lower::LowerOptions Pipeline::Run::lowerOptions() {
  lower::LowerOptions o;
  o.boundsCheck = opts.boundsCheck;
  o.locationText = opts.locationText;
  o.afterStep = [this](const std::string &step, const ir::Func &f) { printAfter(step, f); };
  o.beforeStep = [this](const std::string &step, const ir::Func &f) { printBefore(step, f); };
  return o;
}

bool Pipeline::Run::exported(const std::string &name) const {
  return opts.ownNames ? opts.ownNames->count(name) != 0 : graph::isOwnName(name);
}

bool Pipeline::Run::bindShapes() {
  graph::bindStaticShapes(
      module, [this](const std::string &name) { return exported(name) || name == opts.func; });
  return true;
}

bool Pipeline::Run::lowerFuncs() {
  // The functions the CPU backends emit: the file's own PrimFuncs and graphs without open
  // constants (--func NAME: that one), then, transitively, what the emitted graphs call.
  auto closed = [](const ir::Func &f) {
    if (const auto *p = f.as<ir::PrimFunc>())
      return p->constVars.empty();
    if (const auto *g = f.as<ir::GraphFunc>())
      return g->constVars.empty();
    return false; // externs are defined by their library
  };
  std::vector<std::string> roots;
  for (const ir::Func &f : module.functions())
    if (closed(f) && exported(f.name()) && (opts.func.empty() || f.name() == opts.func))
      roots.push_back(f.name());
  std::set<std::string> wanted = reachableFrom(module, roots);
  std::vector<ir::Func> graphs;
  lower::LowerOptions options = lowerOptions();
  for (const ir::Func &f : module.functions()) {
    if (!wanted.count(f.name()) || !closed(f))
      continue;
    if (f.as<ir::GraphFunc>())
      graphs.push_back(f);
    else {
      // The shape checks of the function as written (its schedule keeps what it computes).
      auto it = module.unscheduled.find(f.name());
      ir::ShapeBounds bounds =
          ir::analyzeShapeBounds(it != module.unscheduled.end() ? it->second : f);
      options.shapeChecks = bounds.checks;
      options.extentChecks = bounds.extents;
      bool timed = opts.profile && f.name() == opts.func;
      lowered.funcs.push_back(
          {f, f, lower::lowerPrimFunc(timed ? lower::profileLoopNests(f) : f, options),
           exported(f.name())});
    }
  }
  for (const ir::Func &g : graphs)
    lowered.funcs.push_back({g, lower::graphSignature(g), ir::Func(), exported(g.name())});
  return true;
}

bool Pipeline::Run::lowerGraphs() {
  // Graph constants: one flat buffer each, shared by the lowered graphs; those they read are
  // handed to the backends (which embed them).
  std::map<const ir::BufferNode *, ir::Buffer> flat = lower::flatConstants(module);
  std::set<const ir::BufferNode *> used;
  for (ir::LoweredFunc &f : lowered.funcs)
    if (f.isGraph()) {
      printBefore("lower.graph", f.source);
      f.lowered = lower::lowerGraph(f.source, module, flat);
      if (opts.profile && f.source.name() == opts.func)
        f.lowered = lower::profileCalls(f.lowered);
      for (const ir::Buffer &c : lower::constantsUsed(*f.source.as<ir::GraphFunc>()))
        used.insert(c.get());
      printAfter("lower.graph", f.lowered);
    }
  for (const ir::Constant &c : module.constants)
    if (used.count(c.buffer.get()))
      lowered.constants.push_back({c, flat.at(c.buffer.get())});
  return true;
}

bool Pipeline::Run::lowerCudaFuncs() {
  // The PrimFuncs without open constants that the module's own items (or --func) reach.
  std::vector<std::string> roots;
  if (opts.func.empty()) {
    for (const ir::Func &f : module.functions())
      if (graph::isOwnName(f.name()))
        roots.push_back(f.name());
  } else {
    roots.push_back(opts.func);
  }
  std::set<std::string> reached = reachableFrom(module, roots);
  // Printed only when every function passed the checks.
  std::ostream *out = printStream;
  std::ostringstream printed;
  printStream = out ? &printed : nullptr;
  lower::LowerOptions options = lowerOptions();
  options.check = opts.checks.afterStep;
  const TargetChecks &checks = opts.checks;
  for (const ir::Func &f : module.functions()) {
    const auto *p = f.as<ir::PrimFunc>();
    if (!p || !p->constVars.empty() || !reached.count(f.name()) ||
        (!opts.func.empty() && f.name() != opts.func))
      continue;
    if (checks.beforeLowering && !checks.beforeLowering(f))
      continue;
    ir::Func low = lower::lowerPrimFuncForCuda(f, options);
    if (!low.defined() || (checks.afterLowering && !checks.afterLowering(low)))
      continue;
    lowered.funcs.push_back({f, f, low});
  }
  printStream = out;
  if (!flushed())
    return false;
  if (out)
    *out << printed.str();
  return true;
}

// ---------------------------------------------------------------------------------------------
// Pipeline
// ---------------------------------------------------------------------------------------------

Pipeline::Pipeline(const PipelineOptions &options, DiagnosticEngine &diags)
    : options_(options), diags_(diags) {}

Pipeline::~Pipeline() = default;

std::optional<ir::Module> Pipeline::schedule(ir::Module checked, const FrontendHooks &frontend) {
  Run run(options_, diags_, &frontend, std::move(checked));
  if (!runSteps(scheduleSteps(), run))
    return std::nullopt;
  return std::move(run.module);
}

std::optional<ir::LoweredModule> Pipeline::lower(const ir::Module &scheduled) {
  Run run(options_, diags_, nullptr, scheduled);
  if (!runSteps(lowerSteps(), run))
    return std::nullopt;
  ir::LoweredModule &out = run.lowered;
  out.module = scheduled;
  for (const ir::Func &f : scheduled.functions())
    if (f.as<ir::ExternFunc>())
      out.externs.push_back(f);
  out.calledFunctions = lower::calledFunctions(out.lowered());
  return std::move(out);
}

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

void printOwnItems(const ir::Module &m, std::ostream &os, const std::string &only) {
  // --func: that function and the module's own functions its graph calls.
  std::set<std::string> wanted;
  if (!only.empty()) {
    wanted.insert(only);
    if (auto *g = m.lookup(only).as<ir::GraphFunc>())
      for (const std::string &c : ir::graphCallees(*g))
        wanted.insert(c);
  }
  for (const std::string &imp : m.imports)
    os << "import \"" << imp << "\";\n";
  bool first = m.imports.empty();
  for (const ir::Constant &c : m.constants)
    if (graph::isOwnName(c.name)) {
      os << ir::toString(c);
      first = false;
    }
  for (const ir::Func &f : m.functions()) {
    if (!graph::isOwnName(f.name()))
      continue;
    if (!only.empty() && !wanted.count(f.name()))
      continue;
    if (!first)
      os << "\n";
    first = false;
    // A grad item not derived yet (--print-ir-after=sema) prints as written.
    if (const ir::GradItem *g = m.lookupGrad(f.name()); g && !g->derived) {
      os << "grad " << g->name << " = " << g->func << " wrt ("
         << join(g->wrt, ", ", [](const std::string &w) { return w; }) << ");\n";
      continue;
    }
    os << ir::toString(f);
  }
  bool firstIntrinsic = true;
  for (const ir::TensorIntrin &t : m.intrinsics) {
    if (!graph::isOwnName(t.name) ||
        (!only.empty() && !wanted.count(t.desc) && !wanted.count(t.impl)))
      continue;
    if (!first && firstIntrinsic)
      os << "\n";
    first = firstIntrinsic = false;
    os << "intrinsic " << t.name << "(" << t.desc << ", " << t.impl << ");\n";
  }
}

} // namespace tdsl
