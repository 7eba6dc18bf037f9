//===- tools/driver/Driver.cpp ----------------------------------------------------------------===//
//
// Implementation of tools/driver/Driver.h: tdslc's command line, then one compilation: parse,
// the module pipeline (tools/driver/Compilation.cpp, passes/Pipeline.h), and the backend that
// --emit names (tools/driver/EmitCode.cpp).

#include "tools/driver/Driver.h"

#include "backends/dot/Dot.h"
#include "backends/llvm/Target.h"
#include "frontend/ASTPrinter.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"
#include "tools/driver/CommandLine.h"
#include "tools/driver/EmitCode.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

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

/// Every option Boost parses: the tools' shared ones (CommandLine.h) and tdslc's own.
po::options_description optionsDescription() {
  po::options_description d;
  cl::addToolOptions(d);
  cl::addCompileOptions(d);
  d.add_options()("version", "")("triple", cl::value(), "")("emit", cl::value(), "")(
      "output,o", cl::value(), "")("remarks", "")("print-ir-after-all", "")(
      "print-ir-after", cl::value(), "")("print-ir-before", cl::value(), "")("list-passes", "")(
      "MD", "")("MF", cl::value(), "")("Werror", "")("error-limit", cl::value(), "")(
      "color", cl::value(), "")("input", cl::value(), "");
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
  --triple=TRIPLE            the CPU target's triple (default the host's), e.g.
                             aarch64-linux-gnu; --mcpu/--mattr then name that target's
                             CPUs and features (default its generic CPU)
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
  --seed N                   draws the sample_* decisions of schedules (default 0)
  --tuning-db FILE           decisions and schedules recorded by tdsl-tune for this machine
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

std::optional<int> parseCommandLine(int argc, const char *const *argv, DriverOptions &opts,
                                    std::ostream &out, std::ostream &err) {
  auto fail = [&](const std::string &msg) -> std::optional<int> {
    err << "tdslc: error: " << msg << "\n";
    err << "tdslc: see 'tdslc --help'\n";
    return 2;
  };
  cl::Parsed p;
  if (std::string error =
          cl::parse(argc, argv, optionsDescription(), "input", {"-MD", "-MF", "-Werror"}, p);
      !error.empty())
    return fail(error);
  if (p.has("help")) {
    out << kHelp;
    return 0;
  }
  if (p.has("version")) {
    out << kVersion << "\n";
    return 0;
  }
  auto oneOf = [](const std::string &v, std::initializer_list<const char *> choices) {
    for (const char *c : choices)
      if (v == c)
        return true;
    return false;
  };

  // Option values first, then the input: `--emit FILE.tdsl` says what is wrong with --emit.
  if (auto e = p.last("emit")) {
    auto it = std::find_if(std::begin(kEmitKinds), std::end(kEmitKinds),
                           [&](const auto &k) { return *e == k.first; });
    if (it == std::end(kEmitKinds))
      return fail(
          "invalid value '" + *e +
          "' for --emit; expected ast, ir, lowered, cpp, cuda, llvm, bc, asm, obj, header or dot");
    opts.emit = it->second;
  }
  if (auto o = p.last("output"))
    opts.output = *o;
  if (std::string error = cl::readToolOptions(p, opts); !error.empty())
    return fail(error);
  cl::readCompileOptions(p, opts);
  if (auto t = p.last("triple")) {
    if (std::string error = llvmgen::checkTriple(*t); !error.empty())
      return fail(error);
    opts.triple = *t;
    // As Clang's --target: the target's generic CPU unless --mcpu names one.
    if (!p.last("mcpu"))
      opts.mcpu = "generic";
  }
  opts.remarks = p.has("remarks");
  opts.printIRAfterAll = p.has("print-ir-after-all");
  opts.printIRAfter = p.all("print-ir-after");
  opts.printIRBefore = p.all("print-ir-before");
  opts.listPasses = p.has("list-passes");
  opts.writeDeps = p.has("MD");
  if (auto f = p.last("MF")) {
    opts.depFile = *f;
    if (!opts.writeDeps)
      return fail("-MF requires -MD");
  }
  opts.warningsAsErrors = p.has("Werror");
  if (auto n = p.last("error-limit")) {
    int64_t v = -1;
    if (!parseInteger(*n, v) || v < 0 || v > 4294967295LL ||
        !std::isdigit(static_cast<unsigned char>((*n)[0])))
      return fail("invalid value '" + *n + "' for --error-limit; expected an integer N >= 0");
    opts.errorLimit = static_cast<unsigned>(v);
  }
  if (auto c = p.last("color")) {
    opts.color = *c;
    if (!oneOf(opts.color, {"auto", "always", "never"}))
      return fail("invalid value '" + opts.color + "' for --color; expected auto, always or never");
  }
  // --list-passes needs no input.
  if (opts.listPasses && p.all("input").empty())
    return std::nullopt;
  if (std::string error = cl::readInput(p, "input", opts.input); !error.empty())
    return fail(error);
  return std::nullopt;
}

namespace {

std::string defaultObjectName(const std::string &input) {
  return fs::path(input).stem().string() + ".o";
}

/// Checks the options against each other and the pass names: the message of the first
/// problem (exit status 2), or "".
std::string checkOptions(const DriverOptions &opts) {
  // CUDA code comes from functions scheduled for the GPU; C++ and objects from CPU ones.
  if (opts.emit == EmitKind::Cuda && opts.target != Target::CUDA)
    return "--emit=cuda needs --target=cuda";
  if (opts.target == Target::CUDA &&
      (opts.emit == EmitKind::Cpp || opts.emit == EmitKind::Obj || opts.emit == EmitKind::Asm ||
       opts.emit == EmitKind::LLVM || opts.emit == EmitKind::Bitcode))
    return std::string("--emit=") + emitKindName(opts.emit) +
           " makes CPU code; with --target=cuda use --emit=cuda (or ir, lowered, header)";
  if (!opts.triple.empty() && opts.target == Target::CUDA)
    return "--triple names a CPU target; --target=cuda compiles for the GPU";
  // The database's records are this machine's timings, keyed by its CPU: not another target's.
  if (!opts.triple.empty() && !opts.tuningDb.empty())
    return "--tuning-db applies this machine's tuning records; it cannot be combined with "
           "--triple";
  // A CPU, a feature or a triple LLVM does not know is a bad command line whatever --emit is
  // (simd_lanes depends on them from the schedules on).
  if (opts.target == Target::CPU &&
      (!opts.triple.empty() || opts.mcpu != "native" || !opts.mattr.empty())) {
    llvmgen::TargetOptions target;
    target.triple = opts.triple;
    target.mcpu = opts.mcpu;
    target.mattr = opts.mattr;
    llvmgen::ResolvedTarget resolved;
    std::string error;
    if (!llvmgen::resolveTarget(target, resolved, error))
      return error;
  }
  // The CUDA pipeline has no lower.bounds-check step: refused rather than silently ignored
  // where it would lower (the front-end views ast and ir do not).
  if (opts.target == Target::CUDA && opts.boundsCheck && opts.emit != EmitKind::AST &&
      opts.emit != EmitKind::IR && opts.emit != EmitKind::Dot)
    return "--bounds-check is implemented for CPU code only, not for --target=cuda";
  auto known = [](const std::string &p) {
    return std::find(passNames().begin(), passNames().end(), p) != passNames().end();
  };
  for (const std::string &p : opts.printIRAfter)
    if (!known(p))
      return "unknown pass '" + p + "' for --print-ir-after; see --list-passes";
  for (const std::string &p : opts.printIRBefore) {
    if (!known(p))
      return "unknown pass '" + p + "' for --print-ir-before; see --list-passes";
    if (p == "sema")
      return "--print-ir-before=sema: there is no IR before sema (it builds the IR); use "
             "--emit=ast";
  }
  return "";
}

} // namespace

int runCompiler(const DriverOptions &opts, std::ostream &out, std::ostream &err,
                const std::string *sourceText) {
  if (opts.listPasses) {
    for (const std::string &p : passNames())
      out << p << "\n";
    return 0;
  }
  if (std::string error = checkOptions(opts); !error.empty()) {
    err << "tdslc: error: " << error << "\n";
    return 2;
  }

  Compilation c(opts, err);
  if (!c.parse(sourceText))
    return 1;
  std::string target = opts.output.empty() ? defaultObjectName(opts.input) : opts.output;
  if (opts.writeDeps && !c.writeDependencies(target, opts.depFile))
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
    if (opts.emit == EmitKind::IR) {
      // Relative imports name files beside the input: printed into another folder, they are
      // rewritten relative to the output so that the printed module compiles from there.
      if (!opts.output.empty() && opts.output != "-") {
        std::error_code ec;
        fs::path from = fs::absolute(opts.input, ec).parent_path();
        fs::path to = fs::absolute(opts.output, ec).parent_path();
        if (from.lexically_normal() != to.lexically_normal())
          for (std::string &import : ir->imports) {
            fs::path p(import);
            if (p.is_relative() && p.extension() == ".tdsl" && fs::exists(from / p, ec))
              import = (from / p)
                           .lexically_normal()
                           .lexically_relative(to.lexically_normal())
                           .generic_string();
          }
      }
      printOwnItems(*ir, text, opts.func);
    } else if (opts.emit == EmitKind::Dot) { // graphs' dataflow, funcs' loop nests (backends/dot)
      text << dot::printModule(*ir, {opts.func, fs::path(opts.input).filename().string()});
    } else {
      if (viaLLVM(opts) && !opts.func.empty() && ir->lookup(opts.func).as<ir::ExternFunc>()) {
        err << "tdslc: error: --emit=" << emitKindName(opts.emit) << " --func " << opts.func
            << ": an extern func is defined by its library, not compiled\n";
        return 2;
      }
      std::optional<ir::LoweredModule> lowered = c.lower(*ir);
      if (!lowered)
        return 1;
      if (std::optional<int> status = emitCode(opts, *lowered, text, err))
        return *status;
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
