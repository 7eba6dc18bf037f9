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
#include "backends/abi/Abi.h"
#include "backends/cpp/CompileCpp.h"
#include "backends/cpp/CppEmitter.h"
#include "backends/interp/Interpreter.h"
#include "backends/llvm/JIT.h"
#include "backends/llvm/LLVMBackend.h"
#include "passes/lower/LowerGraph.h"
#include "runtime/Float16.h"
#include "runtime/Npy.h"
#include "tools/driver/Driver.h"
#include "tools/tdsl-run/BenchJson.h"
#include "tools/tdsl-run/FlopCount.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <random>
#include <stdexcept>

#include <dlfcn.h>

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
  --threads N              OpenMP threads for parallel loops (default: OMP_NUM_THREADS, or
                           one per core)
  --input NAME=FILE.npy    an input (or an output's initial contents) from a .npy file
  --input NAME=VALUE       a scalar input
  --output NAME=FILE.npy   write an output to a .npy file (others are summarised on stdout)
  --load LIB.so            a shared library that defines extern symbols
  -D NAME=VALUE            a generic constant of the function
  --seed N                 seed of the random values of inputs not given (default 0)
  -I DIR                   import search path (the standard library is always found)
  --stdlib DIR             standard library folder
  --bench                  time the compiled function: median time per call and GFLOP/s
  --repeat N               timed calls of --bench (default 10, after 2 warm-up calls)
  --json FILE              --bench: append the result as a JSON line to FILE (- for stdout)
  --check                  compare with the unscheduled function run by the interpreter
  --no-schedule            ignore all schedules
  --target=cpu|cuda        which schedules apply (default cpu); with --interpret, cuda runs
                           the GPU-scheduled IR in the interpreter, thread loops as loops
  -h, --help               print this help and exit

Inputs not given get seeded random values: uniform in [-1, 1) for floats, integers in
[-8, 8] ([0, 8] unsigned), random bools. Outputs not given start zero-filled.
Exit status: 0 success, 1 error, 2 bad command line.
)";

struct RunOptions {
  std::string file;
  std::string func;
  bool interpret = false, bench = false, check = false, noSchedule = false;
  std::string via = "llvm";
  int optLevel = 2;
  bool fpContract = true;
  int64_t threads = 0, repeat = 10;
  std::string target = "cpu";
  std::vector<std::pair<std::string, std::string>> inputs, outputs;
  std::vector<std::string> libraries;
  interp::ConstMap defines;
  uint64_t seed = 0;
  std::string json; // --json FILE (BenchJson.h)
  std::vector<std::string> includeDirs;
  std::string stdlibDir;
};

int usageError(const std::string &message) {
  std::cerr << "tdsl-run: error: " << message << "\ntdsl-run: see 'tdsl-run --help'\n";
  return 2;
}

int runError(const std::string &message) {
  std::cerr << "tdsl-run: error: " << message << "\n";
  return 1;
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

bool parseDouble(const std::string &s, double &v) {
  if (s.empty())
    return false;
  size_t pos = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size();
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
  auto many = [] { return po::value<std::vector<std::string>>(); };
  po::options_description desc;
  desc.add_options()("help,h", "")("func", many(), "")("interpret", "")("no-schedule", "")(
      "bench", "")("check", "")("input", many(), "")("output", many(), "")("load", many(), "")(
      "define,D", many(), "")("seed", many(), "")("include,I", many(), "")("stdlib", many(), "")(
      "via", many(), "")("threads", many(), "")("repeat", many(), "")("opt-level", many(), "")(
      "ffp-contract", many(), "")("target", many(), "")("file", many(), "")("json", many(), "");
  po::positional_options_description positional;
  positional.add("file", -1);
  po::variables_map vm;
  try {
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    // -O2 is --opt-level=2 (as tdslc spells it).
    std::vector<std::string> argList;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '9')
        a = std::string("--opt-level=") + a[2];
      argList.push_back(a);
    }
    po::store(
        po::command_line_parser(argList).options(desc).positional(positional).style(style).run(),
        vm);
    po::notify(vm);
  } catch (const po::error &e) {
    return usageError(e.what());
  }
  if (vm.count("help")) {
    std::cout << kHelp;
    return 0;
  }
  auto all = [&](const char *name) {
    return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>();
  };

  std::vector<std::string> files = all("file");
  if (files.empty())
    return usageError("no input file");
  if (files.size() > 1)
    return usageError("more than one input file: '" + files[0] + "' and '" + files[1] + "'");
  opts.file = files[0];
  if (all("func").empty())
    return usageError("--func NAME is required");
  opts.func = all("func").back();
  opts.interpret = vm.count("interpret") != 0;
  opts.bench = vm.count("bench") != 0;
  opts.check = vm.count("check") != 0;
  opts.noSchedule = vm.count("no-schedule") != 0;
  for (const char *option : {"input", "output"}) {
    for (const std::string &text : all(option)) {
      std::pair<std::string, std::string> assignment;
      if (!splitAssignment(text, assignment))
        return usageError(std::string("--") + option + " expects NAME=VALUE, got '" + text + "'");
      (std::string(option) == "input" ? opts.inputs : opts.outputs).push_back(assignment);
    }
  }
  opts.libraries = all("load");
  for (const std::string &text : all("define")) {
    std::pair<std::string, std::string> assignment;
    int64_t value;
    if (!splitAssignment(text, assignment))
      return usageError("-D expects NAME=VALUE, got '" + text + "'");
    if (!parseInt(assignment.second, value))
      return usageError("-D " + assignment.first + ": value '" + assignment.second +
                        "' is not an integer");
    opts.defines[assignment.first] = value;
  }
  if (!all("seed").empty()) {
    int64_t seed;
    if (!parseInt(all("seed").back(), seed) || seed < 0)
      return usageError("invalid value '" + all("seed").back() +
                        "' for --seed; expected an integer N >= 0");
    opts.seed = static_cast<uint64_t>(seed);
  }
  opts.includeDirs = all("include");
  opts.stdlibDir = all("stdlib").empty() ? defaultStdlibDir() : all("stdlib").back();
  if (!all("target").empty()) {
    opts.target = all("target").back();
    if (opts.target != "cpu" && opts.target != "cuda")
      return usageError("invalid value '" + opts.target + "' for --target; expected cpu or cuda");
  }

  if (!all("via").empty()) {
    opts.via = all("via").back();
    if (opts.via != "llvm" && opts.via != "cpp")
      return usageError("invalid value '" + opts.via + "' for --via; expected llvm or cpp");
  }
  if (!all("opt-level").empty()) {
    std::string level = all("opt-level").back();
    if (level.size() != 1 || level[0] < '0' || level[0] > '3')
      return usageError("invalid optimisation level -O" + level + "; expected -O0 to -O3");
    opts.optLevel = level[0] - '0';
  }
  if (!all("ffp-contract").empty()) {
    std::string contract = all("ffp-contract").back();
    if (contract != "on" && contract != "off")
      return usageError("invalid value '" + contract + "' for --ffp-contract; expected on or off");
    opts.fpContract = contract == "on";
  }
  for (auto [name, target] : {std::pair<const char *, int64_t *>{"threads", &opts.threads},
                              std::pair<const char *, int64_t *>{"repeat", &opts.repeat}}) {
    if (all(name).empty())
      continue;
    if (!parseInt(all(name).back(), *target) || *target < 1)
      return usageError("invalid value '" + all(name).back() + "' for --" + name +
                        "; expected an integer N >= 1");
  }
  if (opts.bench && opts.interpret)
    return usageError("--bench times compiled code: it cannot be used with --interpret");
  if (!all("json").empty() && !opts.bench)
    return usageError("--json writes the results of --bench: give --bench too");
  opts.json = all("json").empty() ? "" : all("json").back();
  return std::nullopt;
}

/// Loads and checks the module, runs the graph passes and applies its schedules, as tdslc
/// --emit=ir does (diagnostics on stderr). `plain`: neither schedules nor graph passes (the
/// reference of --check).
std::optional<ir::Module> loadModule(const RunOptions &opts, bool plain = false) {
  DriverOptions dopts;
  dopts.noSchedule = plain || opts.noSchedule;
  dopts.graphPasses = !plain;
  dopts.func = opts.func; // -D binds the selected function (and its callees' schedule parameters)
  dopts.input = opts.file;
  dopts.target = opts.target;
  dopts.includeDirs = opts.includeDirs;
  dopts.stdlibDir = opts.stdlibDir;
  for (const auto &[name, value] : opts.defines)
    dopts.defines.emplace_back(name, value);
  Compilation compilation(dopts, std::cerr);
  if (!compilation.parse())
    return std::nullopt;
  return compilation.buildIR();
}

/// A scalar of `dtype` from a command-line literal; nullopt if `text` is not one.
std::optional<Scalar> parseScalar(ir::DType dtype, const std::string &text) {
  if (dtype.isBool()) {
    if (text == "true" || text == "1")
      return Scalar::ofBool(true);
    if (text == "false" || text == "0")
      return Scalar::ofBool(false);
    return std::nullopt;
  }
  if (dtype.isFloat()) {
    double v;
    if (!parseDouble(text, v))
      return std::nullopt;
    return Scalar::ofFloat(dtype, v);
  }
  int64_t v;
  if (!parseInt(text, v))
    return std::nullopt;
  return Scalar::ofInt(dtype, v);
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

/// A random value of `dtype`: uniform in [-1, 1) for floats, [-8, 8] for signed integers,
/// [0, 8] for unsigned ones, a fair coin for bool.
Scalar randomScalar(ir::DType dtype, std::mt19937_64 &gen) {
  uint64_t bits = gen();
  if (dtype.isBool())
    return Scalar::ofBool(bits & 1);
  if (dtype.isFloat())
    return Scalar::ofFloat(dtype, static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);
  if (dtype.isUInt())
    return Scalar::ofInt(dtype, static_cast<int64_t>(bits % 9));
  return Scalar::ofInt(dtype, static_cast<int64_t>(bits % 17) - 8);
}

/// Random values for parameter number `index`: a stream of its own, so that giving one input
/// from a file leaves the values of the others unchanged.
std::mt19937_64 generatorFor(uint64_t seed, size_t index) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index)};
  return std::mt19937_64(seq);
}

std::string formatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// `NAME: TYPE min=… max=… mean=… checksum=0x…` (FNV-1a of the bytes).
void summarise(const std::string &name, const Tensor &t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double v = t.load(i).toDouble();
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
    sum += v;
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : t.bytes)
    hash = (hash ^ b) * 0x100000001b3ull;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(hash));
  std::cout << name << ": " << t.typeString();
  if (n > 0)
    std::cout << " min=" << formatNumber(lo) << " max=" << formatNumber(hi)
              << " mean=" << formatNumber(sum / static_cast<double>(n));
  std::cout << " checksum=" << hex << "\n";
}

const ParamInfo *findParam(const std::vector<ParamInfo> &params, const std::string &name) {
  for (const ParamInfo &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

/// The function compiled into the JIT: its packed entry (LLVMBackend.h) and what the
/// arguments need. For a graph, `source` is its signature (lower::graphSignature).
struct Compiled {
  std::unique_ptr<llvmgen::Jit> jit;
  int32_t (*entry)(void **) = nullptr;
  const char *(*lastError)() = nullptr;
  /// tdsl_last_error() of each --load library that defines one: a failing extern writes its
  /// message to its own copy of the buffer (thread-local storage the JIT does not share).
  std::vector<const char *(*)()> libraryErrors;
  ir::Func source, lowered;
  /// Every lowered function, by name (a graph's callees, for the flop count).
  std::map<std::string, ir::Func> loweredByName;
};

/// The externs that the lowered functions call (FuncCall callees that are ExternFuncs of
/// `module`), each once, in order of first call.
std::vector<const ir::ExternFunc *> calledExterns(const ir::Module &module,
                                                  const std::vector<ir::Func> &lowered) {
  std::vector<const ir::ExternFunc *> out;
  for (const std::string &name : lower::calledFunctions(lowered))
    if (const auto *x = module.lookup(name).as<ir::ExternFunc>())
      out.push_back(x);
  return out;
}

/// Compiles `func` (a func, or a graph with the funcs it calls) of the (scheduled) module with
/// the LLVM backend, or the C++ backend and the Clang libraries (--via=cpp), into a JIT whose
/// symbols include those of the --load libraries. Returns nullopt after printing the error.
std::optional<Compiled> compileForJit(const RunOptions &opts, const ir::Module &module) {
  Compiled c;
  cpp::CppOptions copts;
  copts.onlyFunc = opts.func;
  copts.format = false;
  copts.fpContract = opts.fpContract;
  std::vector<ir::Func> sources = cpp::emittedFunctions(module, copts);
  auto self = std::find_if(sources.begin(), sources.end(),
                           [&](const ir::Func &f) { return f.name() == opts.func; });
  if (self == sources.end()) {
    runError("'" + opts.func + "' has open generic constants: give them with -D NAME=VALUE");
    return std::nullopt;
  }
  size_t index = static_cast<size_t>(self - sources.begin());
  std::vector<ir::Func> lowered = cpp::lowerModule(module, copts);
  c.source =
      sources[index].as<ir::GraphFunc>() ? lower::graphSignature(sources[index]) : sources[index];
  c.lowered = lowered[index];
  for (size_t i = 0; i < sources.size(); ++i)
    c.loweredByName[sources[i].name()] = lowered[i];
  llvmgen::TargetOptions target;
  target.optLevel = opts.optLevel;
  target.fpContract = opts.fpContract;
  std::string error;
  c.jit = llvmgen::Jit::create(target, error);
  if (!c.jit) {
    runError(error);
    return std::nullopt;
  }
  for (const std::string &lib : opts.libraries) {
    if (!c.jit->loadLibrary(lib, error)) {
      runError(error);
      return std::nullopt;
    }
    // Already opened by the interpreter: this only takes another reference.
    std::string file = lib.find('/') == std::string::npos ? "./" + lib : lib;
    if (void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
      if (void *fn = dlsym(handle, "tdsl_last_error"))
        c.libraryErrors.push_back(reinterpret_cast<const char *(*)()>(fn));
  }
  // Every extern symbol must resolve before the code is linked (the JIT's own message would
  // only say that a symbol is missing).
  for (const ir::ExternFunc *x : calledExterns(module, lowered)) {
    std::string ignored;
    if (!c.jit->lookup(x->symbol, ignored)) {
      runError("extern function '" + x->name + "' needs the symbol '" + x->symbol +
               "', which no library given with --load defines");
      return std::nullopt;
    }
  }
  std::string name = opts.file;
  bool added;
  if (opts.via == "cpp") {
    cpp::CompileOptions cc;
    cc.optLevel = opts.optLevel;
    cc.fpContract = opts.fpContract;
    std::string object, errors;
    if (!cpp::compileCpp(cpp::emitCpp(module, copts), name + ".cpp", cc, object, errors)) {
      runError("the Clang libraries could not compile the emitted C++:\n" + errors);
      return std::nullopt;
    }
    added = c.jit->addObject(object, name + ".o", sources, lowered, error);
  } else {
    std::vector<ir::Func> externs = llvmgen::moduleExterns(module);
    if (std::string clash = llvmgen::externSymbolClash(sources, lowered, externs); !clash.empty()) {
      runError(clash);
      return std::nullopt;
    }
    added = c.jit->addFunctions(name, sources, lowered, error, externs);
  }
  if (!added) {
    runError(error);
    return std::nullopt;
  }
  std::string cName = tdsl::abi::cFunctionNames(sources)[index];
  void *entry = c.jit->lookup(llvmgen::packedEntryName(cName), error);
  void *lastError = entry ? c.jit->lookup("tdsl_last_error", error) : nullptr;
  if (!entry || !lastError) {
    runError(error);
    return std::nullopt;
  }
  c.entry = reinterpret_cast<int32_t (*)(void **)>(entry);
  c.lastError = reinterpret_cast<const char *(*)()>(lastError);
  return c;
}

/// A scalar in its ABI type, in the low bytes of a slot (little endian).
uint64_t scalarBits(const Scalar &s) {
  ir::DType t = s.dtype;
  uint64_t bits = 0;
  if (t.isBool() || t.isInteger())
    return static_cast<uint64_t>(s.i);
  switch (t.code()) {
  case ir::DType::Code::F16:
    return runtime::f16FromDouble(s.f);
  case ir::DType::Code::BF16:
    return runtime::bf16FromDouble(s.f);
  case ir::DType::Code::F32: {
    float f = static_cast<float>(s.f);
    std::memcpy(&bits, &f, sizeof f);
    return bits;
  }
  default:
    std::memcpy(&bits, &s.f, sizeof s.f);
    return bits;
  }
}

/// The values of the shape variables, from the dimensions of the tensors in `args`.
std::unordered_map<ir::Var, int64_t> shapeValues(const Compiled &c, const ArgMap &args) {
  const auto *source = c.source.as<ir::PrimFunc>();
  std::unordered_map<ir::Var, int64_t> values;
  auto bind = [&](const ir::Buffer &b) {
    auto it = args.find(b.name());
    if (it == args.end() || !std::holds_alternative<Tensor>(it->second))
      return;
    const Tensor &t = std::get<Tensor>(it->second);
    for (size_t d = 0; d < b.rank() && d < t.shape.size(); ++d)
      if (const auto *ref = b.shape()[d].as<ir::VarRef>())
        values.emplace(ref->var, t.shape[d]);
  };
  for (const ir::FuncParam &p : source->inputs)
    if (p.isTensor())
      bind(p.buffer);
  for (const ir::Buffer &b : source->outputs)
    bind(b);
  return values;
}

/// Calls the compiled function on `args` (inputs, and every output with its initial
/// contents); the outputs are updated in place.
bool callCompiled(const Compiled &c, ArgMap &args, std::string &error) {
  const auto *source = c.source.as<ir::PrimFunc>();
  const auto *lowered = c.lowered.as<ir::PrimFunc>();
  std::vector<void *> slots;
  std::vector<uint64_t> scalars;
  scalars.reserve(source->inputs.size() + lowered->shapeVars.size());
  for (const ir::FuncParam &p : source->inputs) {
    interp::Value &v = args.at(p.name());
    if (p.isTensor()) {
      slots.push_back(std::get<Tensor>(v).bytes.data());
      continue;
    }
    scalars.push_back(scalarBits(std::get<Scalar>(v)));
    slots.push_back(&scalars.back());
  }
  for (const ir::Buffer &b : source->outputs)
    slots.push_back(std::get<Tensor>(args.at(b.name())).bytes.data());
  std::unordered_map<ir::Var, int64_t> shapes = shapeValues(c, args);
  for (const ir::Var &v : lowered->shapeVars) {
    auto it = shapes.find(v);
    if (it == shapes.end()) {
      error = "shape variable " + v.name() + " is not bound by any argument";
      return false;
    }
    scalars.push_back(static_cast<uint64_t>(it->second));
    slots.push_back(&scalars.back());
  }
  // The raw entry does not clear the message buffer (only _dlpack does): clear it here (it is
  // the compiled code's own writable buffer), so that a failure's message is the one its
  // callee wrote. A library's message is read only when that buffer stays empty.
  const_cast<char *>(c.lastError())[0] = '\0';
  if (int32_t status = c.entry(slots.data())) {
    std::string message = c.lastError();
    for (auto libraryError : c.libraryErrors)
      if (message.empty())
        message = libraryError();
    error = "'" + source->name + "' returned " + std::to_string(status) + ": " +
            (message.empty() ? "(no message in tdsl_last_error())" : message);
    return false;
  }
  return true;
}

/// --bench: 2 warm-up calls, then `repeat` timed ones on copies of the arguments; prints the
/// median time per call and the GFLOP/s of FlopCount.h's count.
bool bench(const RunOptions &opts, const Compiled &c, const ArgMap &args, std::string &error) {
  ArgMap copy = args;
  for (int i = 0; i < 2; ++i)
    if (!callCompiled(c, copy, error))
      return false;
  std::vector<double> seconds;
  for (int64_t i = 0; i < opts.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!callCompiled(c, copy, error))
      return false;
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  double flops = countFlops(c.lowered, shapeValues(c, args), c.loweredByName);
  if (!opts.json.empty()) {
    BenchRecord r{opts.file, opts.func, opts.via, opts.optLevel, opts.threads,
                  {},        {},        seconds,  median,        flops};
    for (const auto &[var, value] : shapeValues(c, args))
      r.shapes.emplace_back(var.name(), value);
    std::sort(r.shapes.begin(), r.shapes.end());
    r.defines.assign(opts.defines.begin(), opts.defines.end());
    if (!writeBenchJson(r, opts.json, error))
      return false;
    if (opts.json == "-")
      return true;
  }
  std::cout << "bench: '" << opts.func << "' (" << (opts.via == "cpp" ? "C++" : "LLVM") << ", -O"
            << opts.optLevel << "): " << formatNumber(median * 1e3) << " ms per call (median of "
            << n << "), " << formatNumber(flops) << " flop, "
            << formatNumber(median > 0 ? flops / median * 1e-9 : 0) << " GFLOP/s\n";
  return true;
}

int run(const RunOptions &opts) {
  std::optional<ir::Module> module = loadModule(opts);
  if (!module)
    return 1;
  ir::Func func = module->lookup(opts.func);
  if (!func)
    return runError("no function or graph named '" + opts.func + "' in '" + opts.file + "'");
  if (!opts.interpret && func.as<ir::ExternFunc>()) {
    std::cerr << "tdsl-run: error: '" << opts.func
              << "' is an extern func: its library defines it; run a graph that calls it, or "
                 "use --interpret\n";
    return 2;
  }

  interp::Interpreter interpreter(*module);
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
      if (std::optional<Scalar> s = parseScalar(param->dtype, value)) {
        args[name] = *s;
        continue;
      }
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
    std::optional<ir::Module> plain = loadModule(opts, /*plain=*/true);
    if (!plain)
      return 1;
    reference = args;
    interp::Interpreter refInterp(*plain);
    for (const std::string &lib : opts.libraries)
      if (!refInterp.loadLibrary(lib, error))
        return runError(error);
    if (!refInterp.run(plain->lookup(opts.func), reference, opts.defines, error))
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
    std::optional<Compiled> compiled = compileForJit(opts, *module);
    if (!compiled)
      return 1;
    if (!callCompiled(*compiled, args, error))
      return runError(error);
    if (opts.bench && !bench(opts, *compiled, args, error))
      return runError(error);
  }

  if (opts.check) {
    // Floats may differ by reassociation (rfactor, reordered reductions); the rest is exact.
    double maxDiff = 0;
    for (const ParamInfo &param : *params) {
      if (!param.isOutput)
        continue;
      const Tensor &got = std::get<Tensor>(args.at(param.name));
      const Tensor &want = std::get<Tensor>(reference.at(param.name));
      for (int64_t i = 0; i < got.numElements(); ++i) {
        Scalar g = got.load(i), w = want.load(i);
        bool same;
        if (param.dtype.isFloat()) {
          double d = std::fabs(g.f - w.f);
          same = (std::isnan(g.f) && std::isnan(w.f)) || g.f == w.f ||
                 d <= 1e-5 + 1e-4 * std::fabs(w.f);
          if (!std::isnan(d))
            maxDiff = std::max(maxDiff, d);
        } else {
          same = g.i == w.i;
        }
        if (!same) {
          std::cout << "check: MISMATCH in output '" << param.name << "' at element " << i << ": "
                    << formatNumber(g.toDouble()) << " scheduled, " << formatNumber(w.toDouble())
                    << " unscheduled\n";
          return 1;
        }
      }
    }
    std::cout << "check: OK: '" << opts.func << "' matches the unscheduled function (max abs diff "
              << formatNumber(maxDiff) << ")\n";
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
