//===- tools/tdsl-tune/tdsl-tune.cpp - Searches schedules by measuring them -------------------===//
//
// `tdsl-tune FILE.tdsl --func NAME` (spec §12, docs/tuning.md): a command line over the tune
// library. The tasks and the in-process builder come from tools/tdsl-tune/Tasks.h, the
// measurements from tune::ProcessRunner (tdsl-run in a separate process, under a timeout and an
// optional runner command), the search from tune::Tuner; every measurement is a line of the
// database (tune/Database.h); -o writes the best schedules.
//
//===------------------------------------------------------------------------------------------===//

#include "tools/driver/CommandLine.h"
#include "tools/tdsl-tune/Tasks.h"
#include "tune/Tuner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
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
  --search KIND            evolutionary (the default) or random (random candidates only)
  -I DIR, --stdlib DIR     as tdslc
  -h, --help               print this help and exit
)";

struct TuneOptions : DriverOptions {
  tune::TunerOptions tuner;          // --trials, --time-limit, --seed, --explore, --no-baseline
  tune::ProcessRunnerOptions runner; // --threads, --repeat, --timeout, --runner
  std::string db, out, work;
};

int usageError(const std::string &m) { return cl::usageError("tdsl-tune", m); }

/// The work folder: --work, or a fresh one in the temporary folder, removed at the end.
struct WorkFolder {
  fs::path path;
  bool temporary = false;
  ~WorkFolder() {
    std::error_code ec;
    if (temporary)
      fs::remove_all(path, ec);
  }
};

int runTuning(const TuneOptions &opts, const std::string &self) {
  std::string target = tuning::targetKey(opts.runner.threads);
  std::string dbFile =
      opts.db.empty() ? fs::path(opts.input).replace_extension(".tuning.jsonl").string() : opts.db;
  // A file that is not a tuning database is refused and left as it is.
  std::error_code ec;
  if (fs::exists(dbFile, ec) && fs::equivalent(dbFile, opts.input, ec)) {
    std::cerr << "tdsl-tune: error: --db '" << dbFile << "' is the input file\n";
    return 1;
  }
  tuning::JsonDatabase db;
  if (std::string error; !db.open(dbFile, error)) {
    std::cerr << "tdsl-tune: error: --db: " << error << "\n";
    return 1;
  }
  WorkFolder work;
  if (opts.work.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "tdsl-tune-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::cerr << "tdsl-tune: error: cannot make a work folder\n";
      return 1;
    }
    work.path = tmpl;
    work.temporary = true;
  } else {
    work.path = fs::absolute(opts.work);
    fs::create_directories(work.path);
  }
  tunetool::CompilationBuilder builder(opts);
  tune::ProcessRunnerOptions ro = opts.runner;
  std::optional<std::vector<tune::Task>> tasks =
      tunetool::findTasks(builder, work.path, ro.outputs);
  if (!tasks)
    return 1;
  fs::path sibling = fs::path(self).parent_path() / "tdsl-run";
  ro.tdslRun = fs::exists(sibling) ? sibling.string() : "tdsl-run";
  ro.input = opts.input;
  ro.func = opts.func;
  ro.defines = opts.defines.entries();
  ro.includeDirs = opts.includeDirs;
  ro.stdlibDir = opts.stdlibDir;
  ro.target = target;
  ro.work = work.path;
  tune::ProcessRunner runner(ro);
  tune::SearchContext ctx(builder, runner, db, target);
  tune::Tuner tuner(std::move(*tasks), ctx, opts.tuner, &std::cerr);
  if (!tuner.run())
    return 1;
  if (!opts.out.empty()) {
    std::ofstream out(opts.out);
    out << tuner.bestSchedules();
    if (!out) {
      std::cerr << "tdsl-tune: error: cannot write '" << opts.out << "'\n";
      return 1;
    }
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  po::options_description desc;
  cl::addToolOptions(desc);
  desc.add_options()("trials", cl::value(), "")("time-limit", cl::value(), "")(
      "db", cl::value(), "")("output,o", cl::value(), "")("threads", cl::value(), "")(
      "runner", cl::value(), "")("repeat", cl::value(), "")("timeout", cl::value(), "")(
      "work", cl::value(), "")("no-baseline", "")("explore", cl::value(), "")(
      "search", cl::value(), "")("file", cl::value(), "");
  cl::Parsed p;
  TuneOptions opts;
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
  tune::TunerOptions &t = opts.tuner;
  tune::ProcessRunnerOptions &r = opts.runner;
  double trials = double(t.trials), threads = 0, repeat = double(r.repeat);
  for (auto [name, v, min] : {std::tuple<const char *, double *, double>{"trials", &trials, 0},
                              {"time-limit", &t.timeLimit, 0},
                              {"threads", &threads, 1},
                              {"repeat", &repeat, 1},
                              {"timeout", &r.timeout, 1},
                              {"explore", &t.search.explore, 0}})
    if (std::string error = number(name, *v, min); !error.empty())
      return usageError(error);
  if (t.search.explore > 1)
    return usageError("invalid value '" + p.last("explore").value_or("") + "' for --explore");
  if (std::string kind = p.last("search").value_or("evolutionary"); kind == "random")
    t.search.strategy = tune::SearchOptions::Strategy::Random;
  else if (kind != "evolutionary")
    return usageError("invalid value '" + kind + "' for --search (evolutionary or random)");
  t.trials = int64_t(trials);
  t.search.seed = opts.seed;
  t.search.baseline = !p.has("no-baseline");
  r.threads = int(threads);
  r.repeat = int64_t(repeat);
  r.prefix = p.last("runner").value_or("");
  opts.db = p.last("db").value_or("");
  opts.out = p.last("output").value_or("");
  opts.work = p.last("work").value_or("");
  if (!fs::exists(opts.input)) {
    std::cerr << "tdsl-tune: error: cannot read '" << opts.input << "'\n";
    return 1;
  }
  return runTuning(opts, argv[0]);
}
