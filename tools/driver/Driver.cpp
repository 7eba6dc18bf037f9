#include "tools/driver/Driver.h"

#include "frontend/ASTPrinter.h"
#include "frontend/ModuleLoader.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <boost/program_options.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tdsl {

namespace {
const char *kVersion = "tdslc 0.1.0 (TDSL tensor DSL compiler; ANTLR 4.9 runtime, LLVM 19)";

const std::pair<const char *, EmitKind> kEmitKinds[] = {
    {"ast", EmitKind::AST},       {"ir", EmitKind::IR},        {"lowered", EmitKind::Lowered},
    {"cpp", EmitKind::Cpp},       {"cuda", EmitKind::Cuda},    {"llvm", EmitKind::LLVM},
    {"bc", EmitKind::Bitcode},    {"asm", EmitKind::Asm},      {"obj", EmitKind::Obj},
    {"header", EmitKind::Header}};

/// Rewrites the GCC-style single-dash spellings into long options Boost understands.
std::vector<std::string> normaliseArgs(int argc, const char *const *argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-MD" || a == "-MF" || a == "-Werror") a = "-" + a;
    else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '9')
      a = std::string("--opt-level=") + a[2];
    args.push_back(a);
  }
  return args;
}

bool parseInt(const std::string &s, int64_t &v) {
  if (s.empty()) return false;
  size_t pos = 0;
  try {
    v = std::stoll(s, &pos, 0);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}

po::options_description optionsDescription() {
  po::options_description d("Options");
  d.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("emit", po::value<std::string>()->value_name("KIND"),
       "ast|ir|lowered|cpp|cuda|llvm|bc|asm|obj|header (default obj)")
      ("output,o", po::value<std::string>()->value_name("FILE"),
       "output file (default: stdout for text, FILE.o for obj)")
      ("target", po::value<std::string>()->value_name("T"), "cpu|cuda (default cpu)")
      ("mcpu", po::value<std::string>()->value_name("NAME"), "target CPU (default native)")
      ("mattr", po::value<std::string>()->value_name("+f,..."), "target features")
      ("opt-level", po::value<int>()->value_name("N"), "optimisation level; also -O0..-O3")
      ("ffast-math", "allow float reassociation")
      ("via", po::value<std::string>()->value_name("R"), "llvm|cpp: how --emit=obj|asm is made")
      ("schedule", po::value<std::vector<std::string>>()->value_name("FILE"), "schedule file")
      ("define,D", po::value<std::vector<std::string>>()->value_name("NAME=VALUE"),
       "schedule parameter or func constant")
      ("no-schedule", "ignore all schedules")
      ("include,I", po::value<std::vector<std::string>>()->value_name("DIR"), "import search path")
      ("func", po::value<std::string>()->value_name("NAME"), "only this function")
      ("print-ir-after-all", "print the IR after every pass")
      ("print-ir-after", po::value<std::vector<std::string>>()->value_name("PASS"), "print IR after PASS")
      ("print-ir-before", po::value<std::vector<std::string>>()->value_name("PASS"), "print IR before PASS")
      ("list-passes", "list the passes and exit")
      ("bounds-check", "run-time bounds checks in emitted code")
      ("MD", "write a Makefile dependency file")
      ("MF", po::value<std::string>()->value_name("FILE"), "dependency file name (with -MD)")
      ("Werror", "treat warnings as errors")
      ("error-limit", po::value<int>()->value_name("N"), "stop after N errors (0: no limit)")
      ("color", po::value<std::string>()->value_name("WHEN"), "auto|always|never")
      ("stdlib", po::value<std::string>()->value_name("DIR"), "standard library folder");
  return d;
}

} // namespace

const char *emitKindName(EmitKind kind) {
  for (auto &[name, k] : kEmitKinds)
    if (k == kind) return name;
  return "?";
}

std::string defaultStdlibDir() {
  if (const char *env = std::getenv("TDSL_STDLIB")) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "stdlib";
  return (exe.parent_path().parent_path() / "share" / "tdsl" / "stdlib").lexically_normal().string();
}

std::optional<int> parseCommandLine(int argc, const char *const *argv, DriverOptions &opts,
                                    std::ostream &out, std::ostream &err) {
  po::options_description visible = optionsDescription();
  po::options_description all;
  all.add(visible).add_options()("input", po::value<std::vector<std::string>>(), "input");
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
    out << "usage: tdslc [options] FILE.tdsl\n\n" << visible
        << "\n  -O0 -O1 -O2 -O3            optimisation level (default -O2)\n"
        << "  -MD -MF FILE               write a Makefile dependency file\n"
        << "  -Werror                    treat warnings as errors\n";
    return 0;
  }
  if (vm.count("version")) {
    out << kVersion << "\n";
    return 0;
  }

  std::vector<std::string> inputs;
  if (vm.count("input")) inputs = vm["input"].as<std::vector<std::string>>();
  if (inputs.empty()) return fail("no input file");
  if (inputs.size() > 1) return fail("more than one input file: '" + inputs[0] + "' and '" + inputs[1] + "'");
  opts.input = inputs[0];

  if (vm.count("emit")) {
    std::string e = vm["emit"].as<std::string>();
    bool found = false;
    for (auto &[name, kind] : kEmitKinds)
      if (e == name) {
        opts.emit = kind;
        found = true;
      }
    if (!found) return fail("invalid value '" + e + "' for --emit; expected ast, ir, lowered, cpp, cuda, llvm, bc, asm, obj or header");
  }
  if (vm.count("output")) opts.output = vm["output"].as<std::string>();
  if (vm.count("target")) {
    opts.target = vm["target"].as<std::string>();
    if (opts.target != "cpu" && opts.target != "cuda")
      return fail("invalid value '" + opts.target + "' for --target; expected cpu or cuda");
  }
  if (vm.count("mcpu")) opts.mcpu = vm["mcpu"].as<std::string>();
  if (vm.count("mattr")) opts.mattr = vm["mattr"].as<std::string>();
  if (vm.count("opt-level")) {
    opts.optLevel = vm["opt-level"].as<int>();
    if (opts.optLevel < 0 || opts.optLevel > 3)
      return fail("invalid optimisation level -O" + std::to_string(opts.optLevel) + "; expected -O0 to -O3");
  }
  opts.fastMath = vm.count("ffast-math") != 0;
  if (vm.count("via")) {
    opts.via = vm["via"].as<std::string>();
    if (opts.via != "llvm" && opts.via != "cpp")
      return fail("invalid value '" + opts.via + "' for --via; expected llvm or cpp");
  }
  if (vm.count("schedule")) opts.scheduleFiles = vm["schedule"].as<std::vector<std::string>>();
  if (vm.count("define")) {
    for (const std::string &d : vm["define"].as<std::vector<std::string>>()) {
      size_t eq = d.find('=');
      int64_t v;
      if (eq == std::string::npos || eq == 0)
        return fail("-D expects NAME=VALUE, got '" + d + "'");
      if (!parseInt(d.substr(eq + 1), v))
        return fail("-D " + d.substr(0, eq) + ": value '" + d.substr(eq + 1) + "' is not an integer");
      opts.defines.emplace_back(d.substr(0, eq), v);
    }
  }
  opts.noSchedule = vm.count("no-schedule") != 0;
  if (vm.count("include")) opts.includeDirs = vm["include"].as<std::vector<std::string>>();
  if (vm.count("func")) opts.func = vm["func"].as<std::string>();
  opts.printIRAfterAll = vm.count("print-ir-after-all") != 0;
  if (vm.count("print-ir-after")) opts.printIRAfter = vm["print-ir-after"].as<std::vector<std::string>>();
  if (vm.count("print-ir-before")) opts.printIRBefore = vm["print-ir-before"].as<std::vector<std::string>>();
  opts.listPasses = vm.count("list-passes") != 0;
  opts.boundsCheck = vm.count("bounds-check") != 0;
  opts.writeDeps = vm.count("MD") != 0;
  if (vm.count("MF")) {
    opts.depFile = vm["MF"].as<std::string>();
    if (!opts.writeDeps) return fail("-MF requires -MD");
  }
  opts.warningsAsErrors = vm.count("Werror") != 0;
  if (vm.count("error-limit")) {
    int n = vm["error-limit"].as<int>();
    if (n < 0) return fail("invalid value '" + std::to_string(n) + "' for --error-limit; expected N >= 0");
    opts.errorLimit = static_cast<unsigned>(n);
  }
  if (vm.count("color")) {
    opts.color = vm["color"].as<std::string>();
    if (opts.color != "auto" && opts.color != "always" && opts.color != "never")
      return fail("invalid value '" + opts.color + "' for --color; expected auto, always or never");
  }
  opts.stdlibDir = vm.count("stdlib") ? vm["stdlib"].as<std::string>() : defaultStdlibDir();
  return std::nullopt;
}

namespace {

/// Escapes a path for a Makefile rule.
std::string makeEscape(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

std::string defaultObjectName(const std::string &input) {
  return fs::path(input).stem().string() + ".o";
}

bool writeDepFile(const DriverOptions &opts, const std::vector<std::string> &deps, std::ostream &err) {
  std::string target = opts.output.empty() ? defaultObjectName(opts.input) : opts.output;
  std::string file = opts.depFile;
  if (file.empty()) file = fs::path(target).replace_extension(".d").string();
  std::ofstream out(file);
  if (!out) {
    err << "tdslc: error: cannot write dependency file '" << file << "'\n";
    return false;
  }
  out << makeEscape(target) << ":";
  for (const std::string &d : deps) out << " \\\n  " << makeEscape(d);
  out << "\n";
  // Like -MP: a phony target per import, so deleting an imported file does not break make.
  for (size_t i = 1; i < deps.size(); ++i) out << "\n" << makeEscape(deps[i]) << ":\n";
  return true;
}

} // namespace

int runCompiler(const DriverOptions &opts, std::ostream &out, std::ostream &err,
                const std::string *sourceText) {
  // Stages this build does not have yet are refused up front, before any work.
  if (opts.emit != EmitKind::AST) {
    err << "tdslc: error: --emit=" << emitKindName(opts.emit)
        << " is not available yet: this build of tdslc stops after the frontend (use --emit=ast)\n";
    return 2;
  }
  if (opts.listPasses || opts.printIRAfterAll || !opts.printIRAfter.empty() || !opts.printIRBefore.empty()) {
    err << "tdslc: error: pass printing is not available yet: this build has no IR passes\n";
    return 2;
  }

  SourceManager sm;
  DiagnosticOptions dopts;
  dopts.warningsAsErrors = opts.warningsAsErrors;
  dopts.errorLimit = opts.errorLimit;
  dopts.color = opts.color == "always" || (opts.color == "auto" && &err == &std::cerr && isatty(2));
  DiagnosticEngine diags(sm, err, dopts);

  ImportOptions iopts;
  iopts.includeDirs = opts.includeDirs;
  iopts.stdlibDir = opts.stdlibDir;
  ModuleLoader loader(sm, diags, iopts);
  ast::Module *main = loader.loadMain(opts.input, sourceText);
  if (!main) {
    if (!diags.hasErrors()) diags.error(SourceRange(), "cannot compile '" + opts.input + "'");
    diags.flush();
    return 1;
  }
  std::vector<ast::Module *> scheduleModules;
  for (const std::string &file : opts.scheduleFiles) {
    ast::Module *s = loader.loadMain(file);
    if (!s) continue;
    s->scheduleHost = main;
    for (const ast::ItemPtr &item : s->items)
      if (item->kind != ast::ItemKind::Schedule && item->kind != ast::ItemKind::Import)
        diags.error(item->range, "a --schedule file may contain only schedules and imports");
    scheduleModules.push_back(s);
  }
  resolveNames(loader.modules(), diags);
  diags.flush();
  if (diags.hasErrors()) return 1;

  if (opts.writeDeps && !writeDepFile(opts, loader.dependencies(), err)) return 1;

  std::ostringstream text;
  dumpAST(*main, text);
  for (const ast::Module *s : scheduleModules) dumpAST(*s, text);
  if (opts.output.empty() || opts.output == "-") {
    out << text.str();
    return 0;
  }
  std::ofstream file(opts.output, std::ios::binary);
  if (!file || !(file << text.str())) {
    err << "tdslc: error: cannot write '" << opts.output << "'\n";
    return 1;
  }
  return 0;
}

} // namespace tdsl
