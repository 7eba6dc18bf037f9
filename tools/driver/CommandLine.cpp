//===- tools/driver/CommandLine.cpp - What every tool's command line shares ------------------===//
#include "tools/driver/CommandLine.h"

#include <iostream>

namespace po = boost::program_options;

namespace tdsl {

namespace cl {

std::vector<std::string> Parsed::all(const char *name) const {
  return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>();
}

std::optional<std::string> Parsed::last(const char *name) const {
  if (!vm.count(name))
    return std::nullopt;
  return vm[name].as<std::vector<std::string>>().back();
}

po::typed_value<std::vector<std::string>> *value() { return po::value<std::vector<std::string>>(); }

void addToolOptions(po::options_description &options) {
  options.add_options()("help,h", "")("define,D", value(), "")("include,I", value(), "")(
      "stdlib", value(), "")("target", value(), "")("via", value(), "")("opt-level", value(), "")(
      "func", value(), "")("no-schedule", "")("ffp-contract", value(),
                                              "")("seed", value(), "")("tuning-db", value(), "");
}

std::string parse(int argc, const char *const *argv, const po::options_description &options,
                  const char *positional, std::initializer_list<const char *> gccStyle,
                  Parsed &out) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    for (const char *g : gccStyle)
      if (a == g)
        a = "-" + a;
    if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '9')
      a = std::string("--opt-level=") + a[2];
    args.push_back(a);
  }
  po::positional_options_description pos;
  pos.add(positional, -1);
  try {
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(options).positional(pos).style(style).run(),
              out.vm);
    po::notify(out.vm);
  } catch (const po::error &e) {
    return e.what();
  }
  return "";
}

std::string readToolOptions(const Parsed &parsed, ToolOptions &opts) {
  if (auto t = parsed.last("target")) {
    std::optional<Target> target = parseTarget(*t);
    if (!target)
      return "invalid value '" + *t + "' for --target; expected cpu or cuda";
    opts.target = *target;
  }
  if (auto o = parsed.last("opt-level")) {
    if (o->size() != 1 || (*o)[0] < '0' || (*o)[0] > '3')
      return "invalid optimisation level -O" + *o + "; expected -O0 to -O3";
    opts.optLevel = (*o)[0] - '0';
  }
  if (auto v = parsed.last("via")) {
    if (*v != "llvm" && *v != "cpp")
      return "invalid value '" + *v + "' for --via; expected llvm or cpp";
    opts.via = *v == "cpp" ? Via::Cpp : Via::LLVM;
  }
  if (auto f = parsed.last("ffp-contract")) {
    if (*f != "on" && *f != "off")
      return "invalid value '" + *f + "' for --ffp-contract; expected on or off";
    opts.fpContract = *f == "on";
  }
  for (const std::string &d : parsed.all("define"))
    if (std::string error = opts.defines.parse(d); !error.empty())
      return error;
  if (auto text = parsed.last("seed")) {
    size_t pos = 0;
    unsigned long long seed = 0;
    bool ok = !text->empty() && (*text)[0] >= '0' && (*text)[0] <= '9';
    try {
      seed = ok ? std::stoull(*text, &pos) : 0;
    } catch (...) {
      ok = false;
    }
    if (!ok || pos != text->size())
      return "invalid value '" + *text + "' for --seed; expected an integer N >= 0";
    opts.seed = seed;
  }
  if (auto db = parsed.last("tuning-db"))
    opts.tuningDb = *db;
  opts.noSchedule = parsed.has("no-schedule");
  opts.includeDirs = parsed.all("include");
  if (auto f = parsed.last("func"))
    opts.func = *f;
  opts.stdlibDir = parsed.last("stdlib").value_or(defaultStdlibDir());
  return "";
}

void addCompileOptions(po::options_description &options) {
  options.add_options()("mcpu", value(), "")("mattr", value(), "")("ffast-math", "")(
      "schedule", value(), "")("bounds-check", "");
}

void readCompileOptions(const Parsed &parsed, ToolOptions &opts) {
  opts.mcpu = parsed.last("mcpu").value_or(opts.mcpu);
  opts.mattr = parsed.last("mattr").value_or(opts.mattr);
  opts.fastMath = parsed.has("ffast-math");
  opts.scheduleFiles = parsed.all("schedule");
  opts.boundsCheck = parsed.has("bounds-check");
}

std::string readInput(const Parsed &parsed, const char *positional, std::string &input) {
  std::vector<std::string> inputs = parsed.all(positional);
  if (inputs.empty())
    return "no input file";
  if (inputs.size() > 1)
    return "more than one input file: '" + inputs[0] + "' and '" + inputs[1] + "'";
  input = inputs[0];
  return "";
}

int usageError(const char *tool, const std::string &message) {
  std::cerr << tool << ": error: " << message << "\n" << tool << ": see '" << tool << " --help'\n";
  return 2;
}

std::optional<int> parseToolCommandLine(const char *tool, int argc, const char *const *argv,
                                        const po::options_description &options, const char *help,
                                        Parsed &out, ToolOptions &opts) {
  if (std::string error = parse(argc, argv, options, "file", {}, out); !error.empty())
    return usageError(tool, error);
  if (out.has("help")) {
    std::cout << help;
    return 0;
  }
  if (std::string error = readInput(out, "file", opts.input); !error.empty())
    return usageError(tool, error);
  if (std::string error = readToolOptions(out, opts); !error.empty())
    return usageError(tool, error);
  if (opts.func.empty())
    return usageError(tool, "--func NAME is required");
  return std::nullopt;
}

} // namespace cl
} // namespace tdsl
