//===- tools/driver/Compilation.cpp - One compilation: sources, checks, the pipeline ---------===//
#include "tools/driver/Driver.h"

#include "backends/cuda/CudaEmitter.h"
#include "backends/interp/Interpreter.h"
#include "backends/llvm/Target.h"
#include "frontend/ModuleLoader.h"
#include "frontend/Sema.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "tune/Database.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <unistd.h>

namespace tdsl {

struct Compilation::State {
  SourceManager sm;
  DiagnosticEngine diags;
  std::ostream &err;
  ModuleLoader loader;
  ast::Module *main = nullptr;
  std::vector<ast::Module *> scheduleModules;
  PipelineOptions pipeline;
  schedule::SampleContext sampling;
  std::vector<tuning::Record> records; // --tuning-db
  std::string target;                  // tuning::targetKey(), when there is a database
  std::set<std::string> warnedKeys;    // functions told that no record is for this target

  State(const DriverOptions &opts, std::ostream &err, DiagnosticOptions dopts)
      : diags(sm, err, dopts), err(err),
        loader(sm, diags, ImportOptions{opts.includeDirs, opts.stdlibDir}) {}
};

namespace {

/// Escapes a path for a Makefile rule.
std::string makeEscape(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

/// The pipeline's options from the driver's; the CUDA backend's checks for the cuda target.
PipelineOptions pipelineOptions(const DriverOptions &opts, std::ostream &err,
                                const SourceManager &sm, DiagnosticEngine &diags) {
  PipelineOptions p;
  p.target = opts.target;
  p.defines = opts.defines;
  p.func = opts.func;
  p.noSchedule = opts.noSchedule;
  p.graphPasses = opts.graphPasses;
  p.boundsCheck = opts.boundsCheck;
  p.profile = opts.profile;
  p.locationText = [&sm](const SourceLoc &loc) {
    std::string where = std::to_string(loc.line) + ":" + std::to_string(loc.col);
    return loc.file == 0 ? "line " + where : sm.path(loc.file) + ":" + where;
  };
  p.printAfterAll = opts.printIRAfterAll;
  p.printAfter = opts.printIRAfter;
  p.printBefore = opts.printIRBefore;
  p.printStream = &err;
  if (opts.target == Target::CUDA) {
    p.checks.beforeLowering = [&diags](const ir::Func &f) {
      return cuda::checkScheduled(f, diags);
    };
    p.checks.afterStep = [&diags](const std::string &step, const ir::Func &before,
                                  const ir::Func &after) {
      return step != "lower.cuda-compact" || cuda::checkCompacted(before, after, diags);
    };
    p.checks.afterLowering = [&diags](const ir::Func &f) { return cuda::checkLowered(f, diags); };
  }
  return p;
}

/// graph.fold-calls: the call run by the reference interpreter on the constants' data.
std::optional<std::vector<std::vector<uint8_t>>>
evaluateCall(const ir::Module &module, const ir::CallBinding &call, std::string &error,
             const std::function<std::string(const SourceLoc &)> &locationText) {
  ir::Func callee = module.lookup(call.callee);
  const auto *prim = callee.as<ir::PrimFunc>();
  if (!prim || prim->inputs.size() != call.args.size() ||
      prim->constVars.size() != call.constArgs.size()) {
    error = "not a call of a func";
    return std::nullopt;
  }
  // The callee alone: a func reads nothing but its parameters.
  ir::Module one;
  one.add(callee);
  interp::Interpreter interpreter(one);
  interpreter.setLocationText(locationText);
  interp::ArgMap args;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const std::string &name = prim->inputs[i].name();
    if (const auto *b = std::get_if<ir::Buffer>(&call.args[i])) {
      const ir::Constant *c = module.constantOf(*b);
      if (!c) {
        error = "argument '" + name + "' is not a constant";
        return std::nullopt;
      }
      runtime::Tensor t;
      t.dtype = c->buffer.dtype();
      for (const ir::Expr &d : c->buffer.shape())
        t.shape.push_back(d.as<ir::IntImm>()->value);
      t.bytes = *c->data;
      args.emplace(name, std::move(t));
      continue;
    }
    const ir::Expr &e = std::get<ir::Expr>(call.args[i]);
    if (const auto *imm = e.as<ir::IntImm>())
      args.emplace(name, runtime::Scalar::ofInt(e.dtype(), imm->value));
    else if (const auto *f = e.as<ir::FloatImm>())
      args.emplace(name, runtime::Scalar::ofFloat(e.dtype(), f->value));
  }
  Defines consts;
  for (size_t i = 0; i < call.constArgs.size(); ++i)
    consts.add(prim->constVars[i].name(), call.constArgs[i].as<ir::IntImm>()->value);
  if (!interpreter.run(callee, args, consts, error))
    return std::nullopt;
  std::vector<std::vector<uint8_t>> out;
  for (const ir::Buffer &o : prim->outputs) {
    auto it = args.find(o.name());
    if (it == args.end() || !std::holds_alternative<runtime::Tensor>(it->second)) {
      error = "output '" + o.name() + "' missing";
      return std::nullopt;
    }
    out.push_back(std::get<runtime::Tensor>(it->second).bytes);
  }
  return out;
}

} // namespace

Compilation::Compilation(const DriverOptions &opts, std::ostream &err) : opts_(opts) {
  DiagnosticOptions dopts;
  dopts.warningsAsErrors = opts.warningsAsErrors;
  dopts.errorLimit = opts.errorLimit;
  dopts.color = opts.color == "always" || (opts.color == "auto" && &err == &std::cerr && isatty(2));
  state_ = std::make_unique<State>(opts, err, dopts);
  state_->pipeline = pipelineOptions(opts, err, state_->sm, state_->diags);
  state_->sampling.seed = opts.seed;
  state_->pipeline.sampling = &state_->sampling;
  // `simd_lanes` (the schedules' built-in, graph.pack-weights' channel block): the CPU target's
  // vector width (--triple/--mcpu/--mattr), 1 on cuda; -D simd_lanes=V sets it.
  if (std::optional<int64_t> v = opts.defines.lookup(kSimdLanes)) {
    state_->pipeline.simdLanes = *v;
  } else if (opts.target == Target::CUDA) {
    state_->pipeline.simdLanes = 1;
  } else {
    llvmgen::TargetOptions target;
    target.triple = opts.triple;
    target.mcpu = opts.mcpu;
    target.mattr = opts.mattr;
    state_->pipeline.simdLanes = llvmgen::simdLanes32(target);
  }
  if (!opts.tuningDb.empty()) {
    State &st = *state_;
    st.target = tuning::targetKey();
    st.sampling.lookup = [&st,
                          &opts](const ir::Func &f) -> std::optional<schedule::TunedDecisions> {
      std::string key = tuning::functionKey(f);
      const tuning::Record *r = tuning::best(st.records, key, st.target);
      if (!r) {
        // Records of this function for another machine or thread count apply nothing: say so.
        for (const tuning::Record &other : st.records)
          if (other.key == key && other.ok && other.target != st.target &&
              st.warnedKeys.insert(key).second) {
            st.err << opts.tool << ": warning: the tuning database '" << opts.tuningDb
                   << "' has records for '" << f.name() << "' measured with "
                   << tuning::targetDifference(other.target, st.target)
                   << "; none applies, its schedule's decisions are drawn (--seed)\n";
            break;
          }
        return std::nullopt;
      }
      return schedule::TunedDecisions{r->decisions, r->generated};
    };
  }
}

schedule::SampleContext &Compilation::sampling() { return state_->sampling; }

std::function<std::string(const SourceLoc &)> Compilation::locationText() const {
  return state_->pipeline.locationText;
}

Compilation::~Compilation() = default;

DiagnosticEngine &Compilation::diags() { return state_->diags; }

bool Compilation::parse(const std::string *sourceText) {
  State &st = *state_;
  st.main = st.loader.loadMain(opts_.input, sourceText);
  if (!st.main) {
    if (!st.diags.hasErrors())
      st.diags.error(SourceRange(), "cannot compile '" + opts_.input + "'");
    st.diags.flush();
    return false;
  }
  for (const std::string &file : opts_.scheduleFiles) {
    ast::Module *s = st.loader.loadMain(file);
    if (!s)
      continue;
    s->scheduleHost = st.main;
    for (const ast::ItemPtr &item : s->items)
      if (item->kind != ast::ItemKind::Schedule && item->kind != ast::ItemKind::Import)
        st.diags.error(item->range, "a --schedule file may contain only schedules and imports");
    st.scheduleModules.push_back(s);
  }
  resolveNames(st.loader.modules(), st.diags);
  // A --schedule file that names functions the source does not declare is for functions the
  // graph passes make, specialized copies included (what tdsl-tune -o writes for a graph).
  for (const ast::Module *s : st.scheduleModules)
    for (const ast::ItemPtr &item : s->items)
      if (auto *d = item->as<ast::ScheduleDecl>(); d && d->deferred)
        st.pipeline.specializeShapes = true;
  st.diags.flush();
  return !st.diags.hasErrors();
}

const ast::Module &Compilation::mainModule() const { return *state_->main; }

const std::vector<ast::Module *> &Compilation::scheduleModules() const {
  return state_->scheduleModules;
}

std::vector<std::string> Compilation::dependencies() const { return state_->loader.dependencies(); }

bool Compilation::writeDependencies(const std::string &target, std::string file) {
  if (file.empty())
    file = std::filesystem::path(target).replace_extension(".d").string();
  std::ofstream out(file);
  if (!out) {
    state_->err << "tdslc: error: cannot write dependency file '" << file << "'\n";
    return false;
  }
  std::vector<std::string> deps = dependencies();
  out << makeEscape(target) << ":";
  for (const std::string &d : deps)
    out << " \\\n  " << makeEscape(d);
  out << "\n";
  // Like -MP: a phony target per import, so deleting an imported file does not break make.
  for (size_t i = 1; i < deps.size(); ++i)
    out << "\n" << makeEscape(deps[i]) << ":\n";
  return true;
}

std::optional<ir::Module> Compilation::buildIR() {
  State &st = *state_;
  if (std::string error;
      !opts_.tuningDb.empty() && !tuning::readRecords(opts_.tuningDb, st.records, error)) {
    st.err << opts_.tool << ": error: --tuning-db: " << error << "\n";
    return std::nullopt;
  }
  std::vector<ast::Module *> modules;
  for (ast::Module *m : st.loader.modules())
    if (std::find(st.scheduleModules.begin(), st.scheduleModules.end(), m) ==
        st.scheduleModules.end())
      modules.push_back(m);
  std::optional<ir::Module> ir = tdsl::buildIR(modules, st.diags);
  st.diags.flush();
  if (!ir || st.diags.hasErrors())
    return std::nullopt;
  FrontendHooks frontend;
  frontend.checkFunction = checkFunctionAccesses;
  frontend.evaluateCall = [&st](const ir::Module &m, const ir::CallBinding &call,
                                std::string &error) {
    return evaluateCall(m, call, error, st.pipeline.locationText);
  };
  frontend.buildSchedules = [&](const std::function<bool(const std::string &)> &takesDefines,
                                std::set<std::string> &used) {
    return buildSchedules(modules, st.scheduleModules, opts_.target, opts_.defines, used, st.diags,
                          takesDefines, st.pipeline.simdLanes);
  };
  return Pipeline(st.pipeline, st.diags).schedule(std::move(*ir), frontend);
}

std::optional<ir::LoweredModule> Compilation::lower(const ir::Module &scheduled) {
  // What an object exports (spec §10): the file's own items.
  std::set<std::string> own;
  for (const ast::ItemPtr &item : state_->main->items)
    if (!ast::declaredName(*item).empty())
      own.insert(ast::declaredName(*item));
  state_->pipeline.ownNames = std::move(own);
  return Pipeline(state_->pipeline, state_->diags).lower(scheduled);
}

} // namespace tdsl
