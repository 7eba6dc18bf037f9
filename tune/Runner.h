//===- tune/Runner.h - Measuring candidates --------------------------------------------------===//
//
// The runner times a candidate and checks its outputs against the unscheduled function's
// (MetaSchedule's Runner). ProcessRunner runs `tdsl-run --bench` in a separate process under a
// timeout, optionally through a command prefix (`--runner 'ssh host {}'`, `srun -n1`), and
// compares the outputs as `tdsl-run --check` does (runtime/Compare.h).
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/Database.h"
#include "tune/Task.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tdsl::tune {

/// What one measurement gave.
struct Measurement {
  bool ok = false;
  double seconds = 0; ///< the fastest timed call (ok)
  std::string error;  ///< why not ok
  /// The measurement did not run at all (the runner's command not found or not executable):
  /// the environment's fault, not the candidate's; the search stops instead of recording it.
  bool environmentFailed = false;
};

class Runner {
public:
  virtual ~Runner() = default;
  /// Makes what measuring `task` compares with (its reference outputs); false after printing
  /// why to stderr.
  virtual bool prepare(Task &task) = 0;
  /// Measures `candidate` of `task` (null: the function's own schedule, Task::plainFile), the
  /// other tasks of a graph running with `context` (their best records). `serial` numbers the
  /// measurement (its files).
  virtual Measurement run(const Task &task, const Candidate *candidate,
                          const std::vector<tuning::Record> &context, int64_t serial) = 0;
};

struct ProcessRunnerOptions {
  std::string tdslRun = "tdsl-run"; ///< the executable
  std::string input, func;          ///< the tuned file and function or graph
  std::vector<std::pair<std::string, int64_t>> defines;
  std::vector<std::string> includeDirs;
  std::string stdlibDir;
  std::vector<std::string> outputs; ///< of `func`
  int threads = 0;                  ///< OMP_NUM_THREADS of the runs (0: not set)
  int64_t repeat = 10;              ///< timed calls per measurement
  double timeout = 60;              ///< seconds
  std::string prefix;         ///< the runner command: `{}` is the quoted command, else a prefix
  std::string target;         ///< tuning::targetKey of the records written for a run
  std::filesystem::path work; ///< the candidates' files
};

class ProcessRunner : public Runner {
public:
  explicit ProcessRunner(ProcessRunnerOptions opts) : opts_(std::move(opts)) {}
  bool prepare(Task &task) override;
  Measurement run(const Task &task, const Candidate *candidate,
                  const std::vector<tuning::Record> &context, int64_t serial) override;

private:
  std::string commandArgs(const Task &task, const std::string &file) const;
  const std::vector<std::string> &outputs(const Task &task) const {
    return task.file.empty() ? opts_.outputs : task.outputs;
  }
  ProcessRunnerOptions opts_;
  std::string reference_; ///< the reference outputs of `func` (shared by its tasks)
};

/// `s` quoted for /bin/sh.
std::string shellQuote(const std::string &s);

} // namespace tdsl::tune
