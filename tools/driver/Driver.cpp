//===- tools/driver/Driver.cpp ----------------------------------------------------------------===//
//
// Implementation of tools/driver/Driver.h.

#include "tools/driver/Driver.h"

#include "backends/abi/Abi.h"
#include "backends/cpp/CompileCpp.h"
#include "backends/cpp/CppEmitter.h"
#include "backends/cuda/CudaEmitter.h"
#include "backends/dot/Dot.h"
#include "backends/llvm/LLVMBackend.h"
#include "backends/llvm/Target.h"
#include "frontend/ASTPrinter.h"
#include "frontend/ModuleLoader.h"
#include "frontend/Sema.h"
#include "ir/IRPrinter.h"
#include "passes/Instantiate.h"
#include "passes/graph/Graph.h"
#include "passes/lower/Pipeline.h"
#include "passes/schedule/Apply.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tdsl {

namespace {
const char *kVersion = "tdslc 0.1.0 (TDSL tensor DSL compiler; ANTLR 4.9 runtime, LLVM 19)";

const std::pair<const char *, EmitKind> kEmitKinds[] = {
    {"ast", EmitKind::AST},       {"ir", EmitKind::IR},     {"lowered", EmitKind::Lowered},
    {"cpp", EmitKind::Cpp},       {"cuda", EmitKind::Cuda}, {"llvm", EmitKind::LLVM},
    {"bc", EmitKind::Bitcode},    {"asm", EmitKind::Asm},   {"obj", EmitKind::Obj},
    {"header", EmitKind::Header}, {"dot", EmitKind::Dot}};

/// Rewrites the GCC-style single-dash spellings into long options Boost understands.
std::vector<std::string> normaliseArgs(int argc, const char *const *argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-MD" || a == "-MF" || a == "-Werror")
      a = "-" + a;
    else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '9')
      a = std::string("--opt-level=") + a[2];
    args.push_back(a);
  }
  return args;
}

bool parseInt(const std::string &s, int64_t &v) {
  if (s.empty())
    return false;
  size_t pos = 0;
  try {
    v = std::stoll(s, &pos, 0);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}

/// Every option Boost parses. A scalar option may be repeated, the last one wins (as in Clang:
/// `-O2 … -O3` is -O3), so each is a vector of strings; the driver validates the values itself.
po::options_description optionsDescription() {
  auto one = [] { return po::value<std::vector<std::string>>(); };
  po::options_description d;
  d.add_options()("help,h", "")("version", "")("emit", one(), "")("output,o", one(), "")(
      "target", one(), "")("mcpu", one(), "")("mattr", one(), "")("opt-level", one(), "")(
      "ffast-math", "")("ffp-contract", one(), "")("remarks", "")("via", one(), "")(
      "schedule", one(), "")("define,D", one(), "")("no-schedule", "")("include,I", one(), "")(
      "func", one(), "")("print-ir-after-all", "")("print-ir-after", one(), "")(
      "print-ir-before", one(), "")("list-passes", "")("bounds-check",
                                                       "")("MD", "")("MF", one(), "")("Werror", "")(
      "error-limit", one(), "")("color", one(), "")("stdlib", one(), "")("input", one(), "");
  return d;
}

const char *kHelp = R"(usage: tdslc [options] FILE.tdsl

Output:
  --emit=KIND                ast|ir|lowered|cpp|cuda|llvm|bc|asm|obj|header|dot (default obj)
  -o FILE                    output (default: stdout for text, FILE.o for obj)
  -MD                        write a Makefile dependency file (the source and its imports)
  -MF FILE                   name of the dependency file (with -MD; default: output.d)
Code generation:
  --target=cpu|cuda          target (default cpu)
  --mcpu=NAME                target CPU (default native for cpu)
  --mattr=+avx512f,...       target features
  -O0, -O1, -O2, -O3         optimisation level (default -O2)
  --ffast-math               allow float reassociation (off by default)
  --ffp-contract=on|off      fuse a * b + c into one multiply-add (default on); off: never
  --remarks                  print the optimizer's remarks ("loop not vectorized", ...)
  --via=llvm|cpp             how --emit=obj|asm is made: LLVM directly (default), or the
                             emitted C++ compiled by the Clang libraries
  --bounds-check             run-time bounds checks in emitted code
Schedules and imports:
  --schedule FILE            schedules that replace those of the source for the same function
  -D NAME=VALUE              schedule parameter or func constant (also -D FUNC.NAME=VALUE)
  --no-schedule              ignore all schedules
  -I DIR                     import search path (the standard library is always found)
  --stdlib DIR               standard library folder (default: next to tdslc, or $TDSL_STDLIB)
  --func NAME                only this function (and what it calls)
Passes:
  --print-ir-after-all       print the IR after every pass
  --print-ir-after=PASS      print the IR after PASS
  --print-ir-before=PASS     print the IR before PASS
  --list-passes              list the passes and exit
Diagnostics:
  -Werror                    treat warnings as errors
  --error-limit=N            stop after N errors (0: no limit; default 20)
  --color=auto|always|never  colour diagnostics (default auto: when stderr is a terminal)
Other:
  -h, --help                 print this help and exit
  --version                  print the version and exit

A repeated option other than -D, -I, --schedule and --print-ir-after/before: the last one wins.
Exit status: 0 success, 1 compile error, 2 bad command line.
)";

} // namespace

const char *emitKindName(EmitKind kind) {
  for (auto &[name, k] : kEmitKinds)
    if (k == kind)
      return name;
  return "?";
}

std::string defaultStdlibDir() {
  if (const char *env = std::getenv("TDSL_STDLIB"))
    return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "stdlib";
  return (exe.parent_path().parent_path() / "share" / "tdsl" / "stdlib")
      .lexically_normal()
      .string();
}

std::optional<int> parseCommandLine(int argc, const char *const *argv, DriverOptions &opts,
                                    std::ostream &out, std::ostream &err) {
  po::options_description all = optionsDescription();
  po::positional_options_description pos;
  pos.add("input", -1);
  po::variables_map vm;
  auto fail = [&](const std::string &msg) -> std::optional<int> {
    err << "tdslc: error: " << msg << "\n";
    err << "tdslc: see 'tdslc --help'\n";
    return 2;
  };
  try {
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(normaliseArgs(argc, argv))
                  .options(all)
                  .positional(pos)
                  .style(style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error &e) {
    return fail(e.what());
  }

  if (vm.count("help")) {
    out << kHelp;
    return 0;
  }
  if (vm.count("version")) {
    out << kVersion << "\n";
    return 0;
  }

  auto all_ = [&](const char *name) {
    return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>();
  };
  // The last occurrence of a scalar option, or nullopt.
  auto last = [&](const char *name) -> std::optional<std::string> {
    if (!vm.count(name))
      return std::nullopt;
    return vm[name].as<std::vector<std::string>>().back();
  };
  auto oneOf = [](const std::string &v, std::initializer_list<const char *> choices) {
    for (const char *c : choices)
      if (v == c)
        return true;
    return false;
  };

  // Option values first, then the input: `--emit FILE.tdsl` says what is wrong with --emit.
  if (auto e = last("emit")) {
    bool found = false;
    for (auto &[name, kind] : kEmitKinds)
      if (*e == name) {
        opts.emit = kind;
        found = true;
      }
    if (!found)
      return fail(
          "invalid value '" + *e +
          "' for --emit; expected ast, ir, lowered, cpp, cuda, llvm, bc, asm, obj or header");
  }
  if (auto o = last("output"))
    opts.output = *o;
  if (auto t = last("target")) {
    opts.target = *t;
    if (!oneOf(opts.target, {"cpu", "cuda"}))
      return fail("invalid value '" + opts.target + "' for --target; expected cpu or cuda");
  }
  if (auto m = last("mcpu"))
    opts.mcpu = *m;
  if (auto m = last("mattr"))
    opts.mattr = *m;
  if (auto o = last("opt-level")) {
    if (!oneOf(*o, {"0", "1", "2", "3"}))
      return fail("invalid optimisation level -O" + *o + "; expected -O0 to -O3");
    opts.optLevel = (*o)[0] - '0';
  }
  opts.fastMath = vm.count("ffast-math") != 0;
  if (auto f = last("ffp-contract")) {
    if (!oneOf(*f, {"on", "off"}))
      return fail("invalid value '" + *f + "' for --ffp-contract; expected on or off");
    opts.fpContract = *f == "on";
  }
  opts.remarks = vm.count("remarks") != 0;
  if (auto v = last("via")) {
    opts.via = *v;
    if (!oneOf(opts.via, {"llvm", "cpp"}))
      return fail("invalid value '" + opts.via + "' for --via; expected llvm or cpp");
  }
  opts.scheduleFiles = all_("schedule");
  for (const std::string &d : all_("define")) {
    size_t eq = d.find('=');
    int64_t v;
    if (eq == std::string::npos || eq == 0)
      return fail("-D expects NAME=VALUE, got '" + d + "'");
    if (!parseInt(d.substr(eq + 1), v))
      return fail("-D " + d.substr(0, eq) + ": value '" + d.substr(eq + 1) + "' is not an integer");
    opts.defines.emplace_back(d.substr(0, eq), v);
  }
  opts.noSchedule = vm.count("no-schedule") != 0;
  opts.includeDirs = all_("include");
  if (auto f = last("func"))
    opts.func = *f;
  opts.printIRAfterAll = vm.count("print-ir-after-all") != 0;
  opts.printIRAfter = all_("print-ir-after");
  opts.printIRBefore = all_("print-ir-before");
  opts.listPasses = vm.count("list-passes") != 0;
  opts.boundsCheck = vm.count("bounds-check") != 0;
  opts.writeDeps = vm.count("MD") != 0;
  if (auto f = last("MF")) {
    opts.depFile = *f;
    if (!opts.writeDeps)
      return fail("-MF requires -MD");
  }
  opts.warningsAsErrors = vm.count("Werror") != 0;
  if (auto n = last("error-limit")) {
    int64_t v = -1;
    if (!parseInt(*n, v) || v < 0 || v > 4294967295LL ||
        !std::isdigit(static_cast<unsigned char>((*n)[0])))
      return fail("invalid value '" + *n + "' for --error-limit; expected an integer N >= 0");
    opts.errorLimit = static_cast<unsigned>(v);
  }
  if (auto c = last("color")) {
    opts.color = *c;
    if (!oneOf(opts.color, {"auto", "always", "never"}))
      return fail("invalid value '" + opts.color + "' for --color; expected auto, always or never");
  }
  opts.stdlibDir = last("stdlib").value_or(defaultStdlibDir());

  std::vector<std::string> inputs = all_("input");
  if (inputs.empty())
    return fail("no input file");
  if (inputs.size() > 1)
    return fail("more than one input file: '" + inputs[0] + "' and '" + inputs[1] + "'");
  opts.input = inputs[0];
  return std::nullopt;
}

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

} // namespace

void printOwnItems(const ir::Module &m, std::ostream &os, const std::string &only) {
  // --func: that function and the module's own functions its graph calls.
  std::set<std::string> wanted;
  if (!only.empty()) {
    wanted.insert(only);
    if (auto *g = m.lookup(only).as<ir::GraphFunc>()) {
      auto add = [&](const ir::GraphBinding &b) {
        if (auto *c = std::get_if<ir::CallBinding>(&b))
          wanted.insert(c->callee);
      };
      for (const ir::GraphItem &item : g->body) {
        if (auto *df = std::get_if<ir::DataflowBlock>(&item))
          for (const ir::GraphBinding &b : df->bindings)
            add(b);
        else if (auto *c = std::get_if<ir::CallBinding>(&item))
          wanted.insert(c->callee);
      }
    }
  }
  for (const std::string &imp : m.imports)
    os << "import \"" << imp << "\";\n";
  bool first = m.imports.empty();
  for (const ir::Func &f : m.functions()) {
    if (f.name().find('.') != std::string::npos)
      continue;
    if (!only.empty() && !wanted.count(f.name()))
      continue;
    if (!first)
      os << "\n";
    first = false;
    os << ir::toString(f);
  }
}

namespace {

/// The include guard of --emit=header: TDSL_<FILE STEM>_H, upper case, C-safe.
std::string headerGuard(const std::string &file) {
  std::string guard = "TDSL_";
  for (char ch : fs::path(file).stem().string())
    guard += std::isalnum(static_cast<unsigned char>(ch))
                 ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
                 : '_';
  return guard + "_H";
}

std::string defaultObjectName(const std::string &input) {
  return fs::path(input).stem().string() + ".o";
}

bool writeDepFile(const DriverOptions &opts, const std::vector<std::string> &deps,
                  std::ostream &err) {
  std::string target = opts.output.empty() ? defaultObjectName(opts.input) : opts.output;
  std::string file = opts.depFile;
  if (file.empty())
    file = fs::path(target).replace_extension(".d").string();
  std::ofstream out(file);
  if (!out) {
    err << "tdslc: error: cannot write dependency file '" << file << "'\n";
    return false;
  }
  out << makeEscape(target) << ":";
  for (const std::string &d : deps)
    out << " \\\n  " << makeEscape(d);
  out << "\n";
  // Like -MP: a phony target per import, so deleting an imported file does not break make.
  for (size_t i = 1; i < deps.size(); ++i)
    out << "\n" << makeEscape(deps[i]) << ":\n";
  return true;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------

namespace {

/// The callees of the calls in graph `g` (dataflow regions included).
std::set<std::string> calleesOf(const ir::GraphFunc &g) {
  std::set<std::string> out;
  for (const ir::GraphItem &item : g.body) {
    if (const auto *c = std::get_if<ir::CallBinding>(&item))
      out.insert(c->callee);
    if (const auto *df = std::get_if<ir::DataflowBlock>(&item))
      for (const ir::GraphBinding &b : df->bindings)
        if (const auto *c = std::get_if<ir::CallBinding>(&b))
          out.insert(c->callee);
  }
  return out;
}

/// `root` and every function it calls, directly or not: what `--func root` compiles.
std::set<std::string> reachableFrom(const ir::Module &m, const std::string &root) {
  std::set<std::string> seen = {root};
  std::vector<std::string> work = {root};
  while (!work.empty()) {
    ir::Func f = m.lookup(work.back());
    work.pop_back();
    if (const auto *g = f.defined() ? f.as<ir::GraphFunc>() : nullptr)
      for (const std::string &c : calleesOf(*g))
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
      std::set<std::string> c = calleesOf(*g);
      called.insert(c.begin(), c.end());
    }
  // The ones kept go before the module's first graph, where a re-parse of the printed IR puts
  // them (funcs and externs first, then graphs), so that the round trip prints the same text.
  std::vector<ir::Func> derived;
  for (const ir::Func &f : m.functions())
    if (made.count(f.name()) && called.count(f.name()))
      derived.push_back(f);
  ir::Module kept;
  kept.imports = m.imports;
  bool placed = false;
  for (const ir::Func &f : m.functions()) {
    if (made.count(f.name()))
      continue;
    if (!placed && f.as<ir::GraphFunc>() && f.name().find('.') == std::string::npos) {
      for (const ir::Func &d : derived)
        kept.add(d);
      placed = true;
    }
    kept.add(f);
  }
  if (!placed)
    for (const ir::Func &d : derived)
      kept.add(d);
  m = std::move(kept);
}

} // namespace

const std::vector<std::string> &passNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out = {"sema"};
    const std::vector<std::string> &graphPasses = graph::graphPassNames();
    out.insert(out.end(), graphPasses.begin(), graphPasses.end() - 1);
    for (const std::string &p : schedulePrimitiveNames())
      out.push_back("schedule." + p);
    out.push_back("schedule");
    out.push_back(graphPasses.back());
    for (const std::string &p : lower::lowerStepNames())
      out.push_back(p);
    out.push_back("lower.graph");
    // The cuda pipeline's own steps (its others are CPU steps listed above).
    for (const std::string &p : lower::cudaLowerStepNames())
      if (std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
    return out;
  }();
  return names;
}

struct Compilation::State {
  SourceManager sm;
  DiagnosticEngine diags;
  ModuleLoader loader;
  ast::Module *main = nullptr;
  std::vector<ast::Module *> scheduleModules;

  State(const DriverOptions &opts, std::ostream &err, DiagnosticOptions dopts)
      : diags(sm, err, dopts), loader(sm, diags, ImportOptions{opts.includeDirs, opts.stdlibDir}) {}
};

Compilation::Compilation(const DriverOptions &opts, std::ostream &err)
    : opts_(opts), printStream_(&err) {
  DiagnosticOptions dopts;
  dopts.warningsAsErrors = opts.warningsAsErrors;
  dopts.errorLimit = opts.errorLimit;
  dopts.color = opts.color == "always" || (opts.color == "auto" && &err == &std::cerr && isatty(2));
  state_ = std::make_unique<State>(opts, err, dopts);
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
  st.diags.flush();
  return !st.diags.hasErrors();
}

const ast::Module &Compilation::mainModule() const { return *state_->main; }

const std::vector<ast::Module *> &Compilation::scheduleModules() const {
  return state_->scheduleModules;
}

std::vector<std::string> Compilation::dependencies() const { return state_->loader.dependencies(); }

std::optional<ir::Module> Compilation::buildIR() {
  State &st = *state_;
  std::vector<ast::Module *> modules;
  for (ast::Module *m : st.loader.modules())
    if (std::find(st.scheduleModules.begin(), st.scheduleModules.end(), m) ==
        st.scheduleModules.end())
      modules.push_back(m);
  std::optional<ir::Module> ir = tdsl::buildIR(modules, st.diags);
  st.diags.flush();
  if (!ir || st.diags.hasErrors())
    return std::nullopt;
  printAfter("sema", *ir);

  std::set<std::string> usedDefines;
  // Under --func F, -D binds the constants of F only, and the schedule parameters of F and of
  // what F calls (what is compiled); the other functions are left as they are (spec §9).
  std::set<std::string> compiled;
  if (!opts_.func.empty())
    compiled = reachableFrom(*ir, opts_.func);
  auto takesConstants = [&](const std::string &fn) {
    return opts_.func.empty() || fn == opts_.func;
  };
  auto takesParams = [&](const std::string &fn) {
    return opts_.func.empty() || compiled.count(fn) > 0;
  };
  // A generic func of the main module whose constants -D gives becomes its instance, checked
  // again (spec §11) before its schedule applies.
  for (const ir::Func &f : std::vector<ir::Func>(ir->functions())) {
    auto *p = f.as<ir::PrimFunc>();
    if (!p || p->constVars.empty() || f.name().find('.') != std::string::npos ||
        !takesConstants(f.name()))
      continue;
    std::vector<int64_t> values;
    std::vector<std::string> missing;
    for (const ir::Var &c : p->constVars) {
      std::optional<int64_t> v;
      for (bool qualified : {false, true}) // -D FUNC.NAME wins over -D NAME
        for (const auto &[name, value] : opts_.defines)
          if (name == (qualified ? f.name() + "." + c.name() : c.name())) {
            v = value;
            usedDefines.insert(name);
          }
      if (v)
        values.push_back(*v);
      else
        missing.push_back(c.name());
    }
    if (values.empty())
      continue;
    if (!missing.empty()) {
      st.diags.error(SourceRange(p->loc), "generic func '" + f.name() +
                                              "' is given some constants with -D but not '" +
                                              missing.front() + "'");
      continue;
    }
    ir::Func instance = instantiate(f, values);
    checkFunctionAccesses(instance, st.diags);
    ir->replace(instance);
  }
  st.diags.flush();
  if (st.diags.hasErrors())
    return std::nullopt;

  // Graph passes before schedules (passes/graph/Graph.h).
  std::vector<graph::DerivedFunc> instances, fused;
  if (opts_.graphPasses) {
    graph::foldConstants(*ir);
    printAfter("graph.fold-constants", *ir);
    instances = graph::instantiateCallees(*ir);
    for (const graph::DerivedFunc &d : instances)
      checkFunctionAccesses(ir->lookup(d.name), st.diags);
    st.diags.flush();
    if (st.diags.hasErrors())
      return std::nullopt;
    printAfter("graph.instantiate", *ir);
    graph::eliminateDeadCalls(*ir);
    printAfter("graph.dce", *ir);
    fused = graph::fuseElementwise(*ir, instances);
    dropUncalled(*ir, instances, fused);
    printAfter("graph.fuse", *ir);
  }

  std::vector<ir::ScheduleScript> scripts = buildSchedules(
      modules, st.scheduleModules, opts_.target, opts_.defines, usedDefines, st.diags, takesParams);
  // The schedules of functions --func does not compile are not applied: they may need constants
  // only -D for that function would give.
  scripts.erase(std::remove_if(scripts.begin(), scripts.end(),
                               [&](const ir::ScheduleScript &s) { return !takesParams(s.func); }),
                scripts.end());
  // An instance is scheduled by its generic function's script.
  for (const graph::DerivedFunc &d : instances)
    for (size_t i = 0, n = scripts.size(); i < n; ++i)
      if (scripts[i].func == d.scheduleFrom) {
        ir::ScheduleScript copy = scripts[i];
        copy.func = d.name;
        scripts.push_back(copy);
      }
  // -D also gives generic constants of the module's funcs (`-D P=1` or `-D conv.P=1`).
  for (const ir::Func &f : ir->functions())
    if (auto *p = f.as<ir::PrimFunc>(); p && takesConstants(f.name()))
      for (const ir::Var &c : p->constVars)
        for (const auto &[name, value] : opts_.defines)
          if (name == c.name() || name == f.name() + "." + c.name())
            usedDefines.insert(name);
  for (const auto &[name, value] : opts_.defines) {
    if (usedDefines.count(name))
      continue;
    std::string d = "-D " + name + "=" + std::to_string(value);
    size_t dot = name.rfind('.');
    if (opts_.func.empty())
      st.diags.warning(SourceRange(),
                       d + " is not used by any schedule parameter or function constant");
    else if (dot != std::string::npos && !takesParams(name.substr(0, dot)))
      st.diags.warning(SourceRange(), d + " is not used: --func " + opts_.func +
                                          " does not compile '" + name.substr(0, dot) + "'");
    else
      st.diags.warning(SourceRange(), d + " is not used by --func " + opts_.func +
                                          ": no constant of '" + opts_.func +
                                          "' and no schedule parameter of it or of what it calls "
                                          "is named '" +
                                          name.substr(dot == std::string::npos ? 0 : dot + 1) +
                                          "'");
  }
  st.diags.flush();
  if (st.diags.hasErrors())
    return std::nullopt;
  if (!opts_.noSchedule) {
    printBefore("schedule", *ir);
    // The IR before a primitive is the function as the previous primitive left it.
    std::map<std::string, ir::Func> current;
    for (const ir::Func &f : ir->functions())
      current.emplace(f.name(), f);
    applySchedules(*ir, scripts, opts_.target, st.diags,
                   [&](const std::string &step, const ir::Func &f) {
                     auto it = current.find(f.name());
                     if (it != current.end())
                       printBefore(step, it->second);
                     current[f.name()] = f;
                     printAfter(step, f);
                   });
    st.diags.flush();
    if (st.diags.hasErrors())
      return std::nullopt;
    scheduleFused(*ir, fused, scripts);
    printAfter("schedule", *ir);
  }
  if (opts_.graphPasses) {
    graph::planMemory(*ir);
    printAfter("graph.plan-memory", *ir);
  }
  return ir;
}

void Compilation::scheduleFused(ir::Module &m, const std::vector<graph::DerivedFunc> &fused,
                                const std::vector<ir::ScheduleScript> &scripts) {
  // A fused function gets its producer's script; a refusal there is no error (the script was
  // written for the producer alone): the function then stays unscheduled. The consumer blocks
  // are placed after, each step a checked primitive.
  for (const graph::DerivedFunc &d : fused) {
    ir::Func f = m.lookup(d.name);
    if (!f)
      continue;
    std::vector<ir::ScheduleScript> own;
    for (const ir::ScheduleScript &s : scripts)
      if (s.func == d.scheduleFrom) {
        own.push_back(s);
        own.back().func = d.name;
      }
    if (!own.empty()) {
      std::ostringstream sink;
      DiagnosticEngine quiet(state_->sm, sink);
      applySchedules(m, own, opts_.target, quiet,
                     [&](const std::string &step, const ir::Func &g) { printAfter(step, g); });
      if (quiet.hasErrors())
        m.replace(f);
    }
    m.replace(graph::placeFusedConsumers(m.lookup(d.name), d, opts_.target));
  }
}

bool Compilation::wantsPrint(const std::string &step) const {
  if (opts_.printIRAfterAll)
    return true;
  for (const std::string &p : opts_.printIRAfter)
    if (p == step)
      return true;
  return false;
}

std::string Compilation::locationText(const SourceLoc &loc) const {
  std::string where = std::to_string(loc.line) + ":" + std::to_string(loc.col);
  if (loc.file == 0)
    return "line " + where;
  return state_->sm.path(loc.file) + ":" + where;
}

bool Compilation::wantsPrintBefore(const std::string &step) const {
  return std::find(opts_.printIRBefore.begin(), opts_.printIRBefore.end(), step) !=
         opts_.printIRBefore.end();
}

void Compilation::printBefore(const std::string &step, const ir::Module &m) {
  if (!wantsPrintBefore(step))
    return;
  *printStream_ << "// ----- IR before " << step << " -----\n";
  printOwnItems(m, *printStream_);
}

void Compilation::printBefore(const std::string &step, const ir::Func &f) {
  if (!wantsPrintBefore(step))
    return;
  *printStream_ << "// ----- IR before " << step << " (" << f.name() << ") -----\n"
                << ir::toString(f);
}

void Compilation::printAfter(const std::string &step, const ir::Module &m) {
  if (!wantsPrint(step))
    return;
  *printStream_ << "// ----- IR after " << step << " -----\n";
  printOwnItems(m, *printStream_);
}

void Compilation::printAfter(const std::string &step, const ir::Func &f) {
  if (!wantsPrint(step))
    return;
  *printStream_ << "// ----- IR after " << step << " (" << f.name() << ") -----\n"
                << ir::toString(f);
}

int runCompiler(const DriverOptions &opts, std::ostream &out, std::ostream &err,
                const std::string *sourceText) {
  if (opts.listPasses) {
    for (const std::string &p : passNames())
      out << p << "\n";
    return 0;
  }
  // CUDA code comes from functions scheduled for the GPU; C++ and objects from CPU ones.
  if (opts.emit == EmitKind::Cuda && opts.target != "cuda") {
    err << "tdslc: error: --emit=cuda needs --target=cuda\n";
    return 2;
  }
  if (opts.target == "cuda" &&
      (opts.emit == EmitKind::Cpp || opts.emit == EmitKind::Obj || opts.emit == EmitKind::Asm ||
       opts.emit == EmitKind::LLVM || opts.emit == EmitKind::Bitcode)) {
    err << "tdslc: error: --emit=" << emitKindName(opts.emit)
        << " makes CPU code; with --target=cuda use --emit=cuda (or ir, lowered, header)\n";
    return 2;
  }
  for (const std::string &p : opts.printIRAfter)
    if (std::find(passNames().begin(), passNames().end(), p) == passNames().end()) {
      err << "tdslc: error: unknown pass '" << p << "' for --print-ir-after; see --list-passes\n";
      return 2;
    }
  for (const std::string &p : opts.printIRBefore) {
    if (std::find(passNames().begin(), passNames().end(), p) == passNames().end()) {
      err << "tdslc: error: unknown pass '" << p << "' for --print-ir-before; see --list-passes\n";
      return 2;
    }
    if (p == "sema") {
      err << "tdslc: error: --print-ir-before=sema: there is no IR before sema (it builds the IR); "
             "use "
             "--emit=ast\n";
      return 2;
    }
  }

  Compilation c(opts, err);
  if (!c.parse(sourceText))
    return 1;
  if (opts.writeDeps && !writeDepFile(opts, c.dependencies(), err))
    return 1;

  std::ostringstream text;
  if (!opts.func.empty() && !c.mainModule().findCallable(opts.func)) {
    err << "tdslc: error: no func, graph or extern named '" << opts.func << "' in '" << opts.input
        << "'\n";
    return 1;
  }
  if (opts.emit == EmitKind::AST) {
    dumpAST(c.mainModule(), text, opts.func);
    for (const ast::Module *s : c.scheduleModules())
      dumpAST(*s, text);
  } else {
    std::optional<ir::Module> ir = c.buildIR();
    if (!ir)
      return 1;
    cpp::CppOptions copts;
    copts.onlyFunc = opts.func;
    copts.ownNames.emplace(); // what the object exports (spec §10): the file's own items
    for (const auto &item : c.mainModule().items)
      if (!ast::declaredName(*item).empty())
        copts.ownNames->insert(ast::declaredName(*item));
    copts.fpContract = opts.fpContract;
    copts.afterLowerStep = [&](const std::string &step, const ir::Func &f) {
      c.printAfter(step, f);
    };
    copts.lower.beforeStep = [&](const std::string &step, const ir::Func &f) {
      c.printBefore(step, f);
    };
    copts.lower.boundsCheck = opts.boundsCheck;
    copts.lower.locationText = [&](const SourceLoc &loc) { return c.locationText(loc); };
    copts.headerGuard =
        headerGuard(opts.output.empty() || opts.output == "-" ? opts.input : opts.output);
    cuda::CudaOptions cuopts;
    cuopts.onlyFunc = opts.func;
    cuopts.afterLowerStep = copts.afterLowerStep;
    bool isCuda = opts.target == "cuda";
    if (isCuda && (opts.emit == EmitKind::Lowered || opts.emit == EmitKind::Cuda)) {
      bool ok = cuda::checkCudaModule(*ir, cuda::CudaOptions{opts.func, {}, true}, c.diags());
      c.diags().flush();
      if (!ok)
        return 1;
    }
    switch (opts.emit) {
    case EmitKind::Lowered: {
      bool first = true;
      // The C++ backend's lowering (funcs, and graphs through lower.graph), or the cuda one.
      for (const ir::Func &f :
           isCuda ? cuda::lowerModule(*ir, cuopts) : cpp::lowerModule(*ir, copts)) {
        text << (first ? "" : "\n") << ir::toString(f);
        first = false;
      }
      break;
    }
    case EmitKind::Cpp:
      text << cpp::emitCpp(*ir, copts);
      break;
    case EmitKind::Cuda:
      text << cuda::emitCuda(*ir, cuopts);
      break;
    case EmitKind::Dot: // Graphviz: graphs' dataflow, funcs' loop nests (backends/dot)
      text << dot::printModule(*ir, {opts.func, fs::path(opts.input).filename().string()});
      break;
    case EmitKind::Header: // one header for the C++ and CUDA entries (spec §10)
      text << cpp::emitHeader(*ir, copts);
      break;
    case EmitKind::Obj:
    case EmitKind::Asm:
      if (opts.via == "cpp") {
        cpp::CompileOptions options;
        options.optLevel = opts.optLevel;
        options.mcpu = opts.mcpu;
        options.mattr = opts.mattr;
        options.fastMath = opts.fastMath;
        options.fpContract = opts.fpContract;
        options.remarks = opts.remarks;
        options.assembly = opts.emit == EmitKind::Asm;
        std::string code = cpp::emitCpp(*ir, copts), bytes, errors;
        if (!cpp::compileCpp(code, fs::path(opts.input).filename().string() + ".cpp", options,
                             bytes, errors)) {
          err << errors
              << "tdslc: error: the Clang libraries could not compile the C++ emitted for '"
              << opts.input << "'\n";
          return 1;
        }
        text << bytes;
        break;
      }
      [[fallthrough]];
    case EmitKind::LLVM:
    case EmitKind::Bitcode: {
      // The LLVM backend (--via=llvm, the default; --emit=llvm|bc always).
      if (opts.boundsCheck) {
        err << "tdslc: error: --bounds-check is implemented by the C++ backend only; use --emit="
            << emitKindName(opts.emit == EmitKind::Asm ? EmitKind::Asm : EmitKind::Obj)
            << " --via=cpp\n";
        return 2;
      }
      if (!opts.func.empty() && ir->lookup(opts.func).as<ir::ExternFunc>()) {
        err << "tdslc: error: --emit=" << emitKindName(opts.emit) << " --func " << opts.func
            << ": an extern func is defined by its library, not compiled\n";
        return 2;
      }
      llvmgen::TargetOptions options;
      options.optLevel = opts.optLevel;
      options.mcpu = opts.mcpu;
      options.mattr = opts.mattr;
      options.fastMath = opts.fastMath;
      options.fpContract = opts.fpContract;
      options.remarks = opts.remarks;
      options.ownNames = copts.ownNames;
      llvmgen::OutputKind kind = opts.emit == EmitKind::LLVM      ? llvmgen::OutputKind::IR
                                 : opts.emit == EmitKind::Bitcode ? llvmgen::OutputKind::Bitcode
                                 : opts.emit == EmitKind::Asm     ? llvmgen::OutputKind::Assembly
                                                                  : llvmgen::OutputKind::Object;
      // The same functions as the C++ route: funcs, then graphs (--func G: G and its callees).
      std::vector<ir::Func> sources = cpp::emittedFunctions(*ir, copts);
      std::vector<ir::Func> lowered = cpp::lowerModule(*ir, copts);
      std::vector<ir::Func> externs = llvmgen::moduleExterns(*ir);
      if (std::string clash = llvmgen::externSymbolClash(sources, lowered, externs);
          !clash.empty()) {
        err << "tdslc: error: " << clash << "\n";
        return 1;
      }
      std::string bytes, error;
      if (!llvmgen::compileFunctions(fs::path(opts.input).filename().string(), sources, lowered,
                                     options, kind, bytes, error, externs)) {
        err << "tdslc: error: " << error << "\n";
        return 2;
      }
      text << bytes;
      break;
    }
    default:
      printOwnItems(*ir, text, opts.func);
    }
  }
  // An object goes to -o FILE or <stem>.o, bitcode to -o FILE or <stem>.bc; text (assembly
  // and LLVM IR included) to -o FILE or stdout.
  std::string output = opts.output;
  if (output.empty() && opts.emit == EmitKind::Obj)
    output = defaultObjectName(opts.input);
  if (output.empty() && opts.emit == EmitKind::Bitcode)
    output = fs::path(opts.input).stem().string() + ".bc";
  if (output.empty() || output == "-") {
    out << text.str();
    return 0;
  }
  std::ofstream file(output, std::ios::binary);
  if (!file || !(file << text.str()) || !file.flush()) {
    err << "tdslc: error: cannot write '" << output << "'\n";
    return 1;
  }
  return 0;
}

} // namespace tdsl
