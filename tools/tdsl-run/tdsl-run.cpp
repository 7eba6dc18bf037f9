//===- tools/tdsl-run/tdsl-run.cpp - Runs a TDSL function on .npy files (spec §9) ---------===//
//
// Loads and checks a module like tdslc (schedules applied), binds the inputs (from .npy files,
// scalar literals or seeded random values), runs the function compiled in-process by the LLVM
// backend and ORC JIT (or by the C++ backend and the Clang libraries with --via=cpp, or with
// the reference interpreter with --interpret), and writes or summarises the outputs. --check
// compares with the unscheduled function run by the interpreter; --bench times the compiled
// function. Graphs are compiled with the funcs they call; --load makes extern symbols
// resolvable (by the interpreter and the JIT). Exit status: 0 success, 1 a load, check or run
// error, 2 a bad command line or a mode this build does not have (an extern run directly).
//
//===--------------------------------------------------------------------------------------===//
#include "backends/cpp/CompileCpp.h"
#include "backends/cpp/CppEmitter.h"
#include "backends/interp/Interpreter.h"
#include "backends/llvm/JIT.h"
#include "backends/llvm/LLVMBackend.h"
#include "backends/llvm/Target.h"
#include "runtime/Compare.h"
#include "runtime/Npy.h"
#include "runtime/Profile.h"
#include "tools/driver/CommandLine.h"
#include "tools/driver/Driver.h"
#include "tools/tdsl-run/BenchJson.h"
#include "tools/tdsl-run/CheckGrad.h"
#include "tools/tdsl-run/FlopCount.h"
#include "tools/tdsl-run/Profile.h"
#include "tools/tdsl-run/Values.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <stdexcept>

namespace po = boost::program_options;
using namespace tdsl;
using interp::ArgMap;
using interp::ParamInfo;
using runtime::Scalar;
using runtime::Tensor;

namespace {

const char *kHelp = R"(usage: tdsl-run FILE.tdsl --func NAME [options]

  --func NAME              the function or graph to run
  --interpret              run with the reference interpreter (default: compile the func
                           or graph with the LLVM backend and run it in-process, ORC JIT)
  --via=llvm|cpp           how the JIT compiles: the LLVM backend (default), or the emitted
                           C++ compiled by the Clang libraries
  -O0, -O1, -O2, -O3       optimisation level of the JIT (default -O2)
  --ffp-contract=on|off    fuse a * b + c into one multiply-add (default on); off: never
  --ffast-math             allow float reassociation (off by default)
  --mcpu=NAME              the CPU to compile for (default native); it must run here
  --mattr=+avx2,...        target features; each must be one this machine has
  --bounds-check           check at run time every access not proven in bounds
  --schedule FILE          schedules that replace those of the source for the same function
  --threads N              OpenMP threads for parallel loops (default: OMP_NUM_THREADS, or
                           one per core)
  --input NAME=FILE.npy    an input (or an output's initial contents) from a .npy file
  --input NAME=VALUE       a scalar input
  --output NAME=FILE.npy   write an output to a .npy file (others are summarised on stdout)
  --load LIB.so            a shared library that defines extern symbols
  -D NAME=VALUE            a generic constant of the function
  --seed N                 seed of the random values of inputs not given and of the
                           sample_* decisions of schedules (default 0)
  --tuning-db FILE         decisions and schedules recorded by tdsl-tune for this machine
  -I DIR                   import search path (the standard library is always found)
  --stdlib DIR             standard library folder
  --bench                  time the compiled function: median time per call and GFLOP/s
  --repeat N               timed calls of --bench and --profile (default 10, after 2
                           warm-up calls)
  --json FILE              --bench: append the result as a JSON line to FILE (- for stdout);
                           a file that holds anything but such lines is refused
  --profile                compile with timers and print where the time goes: per call of
                           a graph (and the time outside calls), per top-level loop nest of
                           a func; median of --repeat calls
  --profile-json FILE      --profile: also write a Chrome trace (Perfetto opens it)
  --check                  compare with the unscheduled function run by the interpreter
  --check-grad             NAME of `grad NAME = F wrt (...)`: compare its gradients with
                           central differences of F in f64 (3 directions per parameter);
                           exit 1 when a relative error is above 1e-2
  --no-schedule            ignore all schedules
  --target=cpu|cuda        which schedules apply (default cpu); with --interpret, cuda runs
                           the GPU-scheduled IR in the interpreter, thread loops as loops
  -h, --help               print this help and exit

Inputs not given get seeded random values: uniform in [-1, 1) for floats, integers in
[-8, 8] ([0, 8] unsigned), random bools. Outputs not given start zero-filled.
Exit status: 0 success, 1 error, 2 bad command line.
)";

/// tdsl-run's options: the compilation's (Driver.h), then what running takes.
struct RunOptions : DriverOptions {
  bool interpret = false, bench = false, check = false, checkGrad = false;
  std::string profileJson; // --profile-json FILE (Profile.h)
  int64_t threads = 0, repeat = 10;
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::vector<std::string> libraries;
  std::string json; // --json FILE (BenchJson.h)
};

int usageError(const std::string &message) { return cl::usageError("tdsl-run", message); }

int runError(const std::string &message) {
  std::cerr << "tdsl-run: error: " << message << "\n";
  return 1;
}

/// Splits "NAME=VALUE"; false when there is no '=' or no name.
bool splitAssignment(const std::string &text, std::pair<std::string, std::string> &out) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return false;
  out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

/// Returns nullopt to go on, or the exit status.
std::optional<int> parseCommandLine(int argc, char **argv, RunOptions &opts) {
  po::options_description desc;
  cl::addToolOptions(desc);
  cl::addCompileOptions(desc);
  desc.add_options()("interpret", "")("bench", "")("check", "")("check-grad", "")(
      "input", cl::value(), "")("output", cl::value(), "")("load", cl::value(), "")(
      "threads", cl::value(), "")("repeat", cl::value(), "")("file", cl::value(), "")(
      "json", cl::value(), "")("profile", "")("profile-json", cl::value(), "");
  cl::Parsed p;
  if (std::optional<int> status =
          cl::parseToolCommandLine("tdsl-run", argc, argv, desc, kHelp, p, opts))
    return status;
  opts.tool = "tdsl-run";
  cl::readCompileOptions(p, opts);
  // The JIT runs the code here: a CPU or feature this machine lacks would crash it.
  if (opts.mcpu != "native" || !opts.mattr.empty()) {
    llvmgen::TargetOptions target;
    target.mcpu = opts.mcpu;
    target.mattr = opts.mattr;
    if (std::string error = llvmgen::hostLacks(target); !error.empty())
      return usageError(error);
  }
  opts.interpret = p.has("interpret");
  opts.bench = p.has("bench");
  opts.check = p.has("check");
  opts.checkGrad = p.has("check-grad");
  for (const char *option : {"input", "output"}) {
    for (const std::string &text : p.all(option)) {
      std::pair<std::string, std::string> assignment;
      if (!splitAssignment(text, assignment))
        return usageError(std::string("--") + option + " expects NAME=VALUE, got '" + text + "'");
      (std::string(option) == "input" ? opts.inputs : opts.outputs).push_back(assignment);
    }
  }
  opts.libraries = p.all("load");
  for (auto [name, target] : {std::pair<const char *, int64_t *>{"threads", &opts.threads},
                              std::pair<const char *, int64_t *>{"repeat", &opts.repeat}}) {
    auto text = p.last(name);
    if (text && (!parseInteger(*text, *target) || *target < 1))
      return usageError("invalid value '" + *text + "' for --" + name +
                        "; expected an integer N >= 1");
  }
  if (opts.bench && opts.interpret)
    return usageError("--bench times compiled code: it cannot be used with --interpret");
  if (p.has("json") && !opts.bench)
    return usageError("--json writes the results of --bench: give --bench too");
  opts.profile = p.has("profile");
  if (opts.profile && opts.interpret)
    return usageError("--profile times compiled code: it cannot be used with --interpret");
  if (p.has("profile-json") && !opts.profile)
    return usageError("--profile-json writes the trace of --profile: give --profile too");
  opts.profileJson = p.last("profile-json").value_or("");
  opts.json = p.last("json").value_or("");
  return std::nullopt;
}

/// The module loaded and checked, the graph passes run and its schedules applied, as tdslc
/// --emit=ir does (diagnostics on stderr); lower() gives what the JIT compiles.
struct Loaded {
  DriverOptions opts;
  std::unique_ptr<Compilation> compilation;
  ir::Module module;
};

/// Loads the module. `plain`: neither schedules nor graph passes (the reference of --check).
/// -D binds the selected function (and its callees' schedule parameters).
std::unique_ptr<Loaded> loadModule(const RunOptions &opts, bool plain = false) {
  auto loaded = std::make_unique<Loaded>();
  loaded->opts = opts;
  loaded->opts.noSchedule = plain || opts.noSchedule;
  loaded->opts.graphPasses = !plain;
  loaded->compilation = std::make_unique<Compilation>(loaded->opts, std::cerr);
  if (!loaded->compilation->parse())
    return nullptr;
  std::optional<ir::Module> module = loaded->compilation->buildIR();
  if (!module)
    return nullptr;
  loaded->module = std::move(*module);
  return loaded;
}

/// Reads an input's .npy file and checks its dtype (a <u2 file stands for bf16).
std::optional<Tensor> readInput(const ParamInfo &param, const std::string &path) {
  std::string error;
  std::optional<Tensor> t = runtime::readNpy(path, error);
  if (!t) {
    runError(error);
    return std::nullopt;
  }
  if (param.dtype == ir::DType::bf16() && t->dtype == ir::DType::u16())
    t->dtype = ir::DType::bf16();
  if (t->dtype != param.dtype) {
    runError("'" + param.name + "' has dtype " + param.dtype.name() + " but '" + path + "' holds " +
             runtime::npyDescr(t->dtype) + " (" + t->dtype.name() + ")");
    return std::nullopt;
  }
  return t;
}

const ParamInfo *findParam(const std::vector<ParamInfo> &params, const std::string &name) {
  for (const ParamInfo &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

/// The function compiled into the JIT, and what the flop count needs.
struct Compiled {
  ir::LoweredModule lowered;
  std::unique_ptr<llvmgen::Jit> jit;
  std::optional<llvmgen::JitFunction> func;
  /// Every lowered function, by name (a graph's callees, for the flop count).
  std::map<std::string, ir::Func> loweredByName;
};

/// Compiles `opts.func` (a func, or a graph with the funcs it calls) of the loaded module with
/// the LLVM backend, or the C++ backend and the Clang libraries (--via=cpp), into a JIT whose
/// symbols include those of the --load libraries. Returns nullptr after printing the error.
std::unique_ptr<Compiled> compileForJit(const RunOptions &opts, Loaded &loaded) {
  auto c = std::make_unique<Compiled>();
  std::optional<ir::LoweredModule> lowered = loaded.compilation->lower(loaded.module);
  if (!lowered)
    return nullptr;
  c->lowered = std::move(*lowered);
  bool found = false;
  for (const ir::LoweredFunc &f : c->lowered.funcs) {
    c->loweredByName[f.source.name()] = f.lowered;
    found = found || f.source.name() == opts.func;
  }
  if (!found) {
    runError("'" + opts.func + "' has open generic constants: give them with -D NAME=VALUE");
    return nullptr;
  }
  llvmgen::TargetOptions target;
  target.optLevel = opts.optLevel;
  target.fpContract = opts.fpContract;
  std::string error;
  c->jit = llvmgen::Jit::create(target, error);
  if (!c->jit) {
    runError(error);
    return nullptr;
  }
  for (const std::string &lib : opts.libraries)
    if (!c->jit->loadLibrary(lib, error)) {
      runError(error);
      return nullptr;
    }
  // --profile: the timed regions call this process's timers.
  if (opts.profile)
    for (auto [symbol, address] :
         {std::pair<const char *, void *>{"tdsl_profile_begin",
                                          reinterpret_cast<void *>(&tdsl_profile_begin)},
          std::pair<const char *, void *>{"tdsl_profile_end",
                                          reinterpret_cast<void *>(&tdsl_profile_end)}})
      if (!c->jit->defineSymbol(symbol, address, error)) {
        runError(error);
        return nullptr;
      }
  // Every extern symbol must resolve before the code is linked (the JIT's own message would
  // only say that a symbol is missing).
  for (const std::string &callee : c->lowered.calledFunctions) {
    const auto *x = c->lowered.module.lookup(callee).as<ir::ExternFunc>();
    std::string ignored;
    if (x && !c->jit->lookup(x->symbol, ignored)) {
      runError("extern function '" + x->name + "' needs the symbol '" + x->symbol +
               "', which no library given with --load defines");
      return nullptr;
    }
  }
  const std::string &name = opts.input;
  bool added;
  if (opts.via == Via::Cpp) {
    cpp::CompileOptions cc;
    cc.optLevel = opts.optLevel;
    cc.fpContract = opts.fpContract;
    cpp::CppOptions copts;
    copts.format = false;
    copts.fpContract = opts.fpContract;
    std::string object, errors;
    cpp::TemporaryConstantFiles constantFiles; // the folded constants' data, while compiling
    if (!constantFiles.write(c->lowered, copts.constantFiles, errors)) {
      runError(errors);
      return nullptr;
    }
    if (!cpp::compileCpp(cpp::emitCpp(c->lowered, copts), name + ".cpp", cc, object, errors)) {
      runError("the Clang libraries could not compile the emitted C++:\n" + errors);
      return nullptr;
    }
    added = c->jit->addObject(object, name + ".o", c->lowered, error);
  } else {
    if (std::string clash = llvmgen::externSymbolClash(c->lowered); !clash.empty()) {
      runError(clash);
      return nullptr;
    }
    added = c->jit->addModule(name, c->lowered, error);
  }
  if (added)
    c->func = llvmgen::JitFunction::find(*c->jit, c->lowered, opts.func, error);
  if (!c->func) {
    runError(error);
    return nullptr;
  }
  return c;
}

/// --bench: 2 warm-up calls, then `repeat` timed ones on copies of the arguments; prints the
/// median time per call and the GFLOP/s of FlopCount.h's count.
bool bench(const RunOptions &opts, const Compiled &c, const ArgMap &args, std::string &error) {
  ArgMap copy = args;
  for (int i = 0; i < 2; ++i)
    if (!c.func->call(copy, error))
      return false;
  std::vector<double> seconds;
  for (int64_t i = 0; i < opts.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!c.func->call(copy, error))
      return false;
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  double flops = countFlops(c.func->func().lowered, c.func->shapeValues(args), c.loweredByName);
  if (!opts.json.empty()) {
    BenchRecord r{opts.input,
                  opts.func,
                  opts.via == Via::Cpp ? "cpp" : "llvm",
                  opts.optLevel,
                  opts.threads,
                  {},
                  {},
                  seconds,
                  median,
                  flops};
    for (const auto &[var, value] : c.func->shapeValues(args))
      r.shapes.emplace_back(var.name(), value);
    std::sort(r.shapes.begin(), r.shapes.end());
    std::map<std::string, int64_t> defines; // by name, the last of each
    for (const auto &[name, value] : opts.defines.entries())
      defines[name] = value;
    r.defines.assign(defines.begin(), defines.end());
    if (!writeBenchJson(r, opts.json, error))
      return false;
    if (opts.json == "-")
      return true;
  }
  std::cout << "bench: '" << opts.func << "' (" << (opts.via == Via::Cpp ? "C++" : "LLVM") << ", -O"
            << opts.optLevel << "): " << formatNumber(median * 1e3) << " ms per call (median of "
            << n << "), " << formatNumber(flops) << " flop, "
            << formatNumber(median > 0 ? flops / median * 1e-9 : 0) << " GFLOP/s\n";
  return true;
}

int run(const RunOptions &opts) {
  std::unique_ptr<Loaded> loaded = loadModule(opts);
  if (!loaded)
    return 1;
  const ir::Module *module = &loaded->module;
  ir::Func func = module->lookup(opts.func);
  if (!func)
    return runError("no function or graph named '" + opts.func + "' in '" + opts.input + "'");
  if (!opts.interpret && func.as<ir::ExternFunc>()) {
    std::cerr << "tdsl-run: error: '" << opts.func
              << "' is an extern func: its library defines it; run a graph that calls it, or "
                 "use --interpret\n";
    return 2;
  }

  interp::Interpreter interpreter(*module);
  interpreter.setLocationText(loaded->compilation->locationText());
  std::string error;
  for (const std::string &lib : opts.libraries)
    if (!interpreter.loadLibrary(lib, error))
      return runError(error);

  std::optional<std::vector<ParamInfo>> params =
      interpreter.describe(func, ArgMap(), opts.defines, error);
  if (!params)
    return runError(error);
  // Unused -D values are reported by the compilation (a generic func given its constants is
  // already its instance here).

  // Given inputs (and initial contents of outputs).
  ArgMap args;
  for (const auto &[name, value] : opts.inputs) {
    const ParamInfo *param = findParam(*params, name);
    if (!param)
      return runError("'" + opts.func + "' has no parameter named '" + name + "'");
    if (!param->isTensor) {
      std::string bad;
      if (std::optional<Scalar> s = parseScalar(param->dtype, value, bad)) {
        args[name] = *s;
        continue;
      }
      if (!bad.empty())
        return runError("--input " + name + "=" + value + ": " + bad);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(value, ec))
        return runError("--input " + name + "=" + value + ": scalar '" + name + "' (" +
                        param->dtype.name() + ") takes a literal such as " +
                        (param->dtype.isFloat()  ? "0.5"
                         : param->dtype.isBool() ? "true"
                                                 : "3") +
                        " or a 0-d .npy file, and '" + value + "' is neither");
      std::optional<Tensor> t = readInput(*param, value);
      if (!t)
        return 1;
      if (!t->shape.empty())
        return runError("scalar '" + name + "' needs a 0-d array, but '" + value + "' holds " +
                        t->typeString());
      args[name] = t->load(0);
      continue;
    }
    std::optional<Tensor> t = readInput(*param, value);
    if (!t)
      return 1;
    args[name] = std::move(*t);
  }

  // Random values for the inputs not given, with the shapes the given ones determine.
  params = interpreter.describe(func, args, opts.defines, error);
  if (!params)
    return runError(error);
  for (size_t k = 0; k < params->size(); ++k) {
    const ParamInfo &param = (*params)[k];
    if (param.isOutput || args.count(param.name))
      continue;
    std::mt19937_64 gen = generatorFor(opts.seed, k);
    if (!param.isTensor) {
      args[param.name] = randomScalar(param.dtype, gen);
      continue;
    }
    if (!param.shape)
      return runError("cannot infer the shape of input '" + param.name +
                      "': give it with --input " + param.name + "=FILE.npy");
    Tensor t(param.dtype, *param.shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.store(i, randomScalar(param.dtype, gen));
    args[param.name] = std::move(t);
  }

  for (const auto &[name, path] : opts.outputs) {
    const ParamInfo *param = findParam(*params, name);
    if (!param || !param->isOutput)
      return runError("'" + opts.func + "' has no output named '" + name + "'");
  }

  // --check: the unscheduled function (a graph as written: not fused, no dead call removed),
  // run by the interpreter on the same inputs, is the reference.
  ArgMap reference;
  if (opts.check) {
    std::unique_ptr<Loaded> plain = loadModule(opts, /*plain=*/true);
    if (!plain)
      return 1;
    reference = args;
    interp::Interpreter refInterp(plain->module);
    refInterp.setLocationText(plain->compilation->locationText());
    for (const std::string &lib : opts.libraries)
      if (!refInterp.loadLibrary(lib, error))
        return runError(error);
    if (!refInterp.run(plain->module.lookup(opts.func), reference, opts.defines, error))
      return runError("the unscheduled function fails: " + error);
  }

  if (opts.interpret) {
    if (!interpreter.run(func, args, opts.defines, error))
      return runError(error);
  } else {
    if (opts.threads > 0)
      setenv("OMP_NUM_THREADS", std::to_string(opts.threads).c_str(), 1);
    // Outputs not given start zero-filled, as with the interpreter.
    for (const ParamInfo &param : *params)
      if (param.isOutput && !args.count(param.name)) {
        if (!param.shape)
          return runError("cannot infer the shape of output '" + param.name + "'");
        args[param.name] = Tensor(param.dtype, *param.shape);
      }
    std::unique_ptr<Compiled> compiled = compileForJit(opts, *loaded);
    if (!compiled)
      return 1;
    if (!compiled->func->call(args, error))
      return runError(error);
    if (opts.bench && !bench(opts, *compiled, args, error))
      return runError(error);
    if (opts.profile) {
      ProfileOptions po;
      po.func = opts.func;
      po.route = std::string(opts.via == Via::Cpp ? "C++" : "LLVM") + ", -O" +
                 std::to_string(opts.optLevel);
      po.repeat = opts.repeat;
      po.tracePath = opts.profileJson;
      if (!profile(po, *compiled->func, compiled->lowered, compiled->loweredByName, args, std::cout,
                   error))
        return runError(error);
    }
  }

  if (opts.check) {
    // The one comparison of outputs with their reference (runtime/Compare.h), as tdsl-tune's.
    double maxDiff = 0;
    for (const ParamInfo &param : *params) {
      if (!param.isOutput)
        continue;
      runtime::Comparison c = runtime::compareOutputs(std::get<Tensor>(args.at(param.name)),
                                                      std::get<Tensor>(reference.at(param.name)));
      if (!c.same()) {
        std::cout << "check: MISMATCH in output '" << param.name << "' at " << c.mismatch << "\n";
        return 1;
      }
      maxDiff = std::max(maxDiff, c.maxAbsDiff);
    }
    std::cout << "check: OK: '" << opts.func << "' matches the unscheduled function (max abs diff "
              << formatNumber(maxDiff) << ")\n";
  }

  if (opts.checkGrad) {
    // Against F in the module as written (no schedule, no graph pass), evaluated in f64.
    const ir::GradItem *item = module->lookupGrad(opts.func);
    if (!item)
      return runError("--check-grad takes a graph defined by a 'grad' item; '" + opts.func +
                      "' is not one");
    std::unique_ptr<Loaded> plain = loadModule(opts, /*plain=*/true);
    if (!plain)
      return 1;
    bool failed = false;
    if (!checkGrad(plain->module, *item, args, opts.defines, opts.seed, std::cout, failed, error,
                   plain->compilation->locationText()))
      return runError("--check-grad: " + error);
    if (failed)
      return 1;
  }

  for (const ParamInfo &param : *params) {
    if (!param.isOutput)
      continue;
    const Tensor &t = std::get<Tensor>(args.at(param.name));
    bool written = false;
    for (const auto &[name, path] : opts.outputs) {
      if (name != param.name)
        continue;
      if (!runtime::writeNpy(path, t, error))
        return runError(error);
      written = true;
    }
    if (!written)
      summarise(param.name, t);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  RunOptions opts;
  if (std::optional<int> status = parseCommandLine(argc, argv, opts))
    return *status;
  // --threads before anything is compiled: the target of --tuning-db's records counts threads.
  if (opts.threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(opts.threads).c_str(), 1);
  // A tensor larger than memory (shapes from -D, .npy files or large constant shapes) is an
  // error, not an abort.
  try {
    return run(opts);
  } catch (const std::bad_alloc &) {
    return runError("out of memory: the tensors of '" + opts.func + "' do not fit");
  } catch (const std::length_error &) {
    return runError("out of memory: the tensors of '" + opts.func + "' do not fit");
  }
}
