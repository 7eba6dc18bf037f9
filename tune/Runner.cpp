//===- tune/Runner.cpp - Measuring candidates ------------------------------------------------===//

#include "tune/Runner.h"

#include "runtime/Compare.h"
#include "runtime/Npy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace tdsl::tune {

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

/// Runs `command` through /bin/sh; its exit status, or -1 when it did not exit.
int shell(const std::string &command) {
  int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

/// Whether a candidate's output agrees with the unscheduled function's: the comparison of
/// tdsl-run --check (runtime/Compare.h), so that a candidate accepted here passes --check.
bool close(const runtime::Tensor &a, const runtime::Tensor &b, std::string &why) {
  runtime::Comparison c = runtime::compareOutputs(a, b);
  if (c.same())
    return true;
  why = c.index ? "output differs from the unscheduled function at " + c.mismatch : c.mismatch;
  return false;
}

} // namespace

std::string ProcessRunner::commandArgs(const Task &task, const std::string &file) const {
  // A task of its own (Task::file) runs its file alone, without the -D of the tuned file.
  bool alone = !task.file.empty();
  std::string cmd = shellQuote(fs::absolute(file).string()) + " --func " +
                    shellQuote(alone ? task.name : opts_.func);
  if (!alone)
    for (const auto &[name, value] : opts_.defines)
      cmd += " -D " + shellQuote(name + "=" + std::to_string(value));
  for (const std::string &dir : opts_.includeDirs)
    cmd += " -I " + shellQuote(fs::absolute(dir).string());
  cmd += " --stdlib " + shellQuote(fs::absolute(opts_.stdlibDir).string());
  if (opts_.threads > 0)
    cmd += " --threads " + std::to_string(opts_.threads);
  return cmd;
}

bool ProcessRunner::prepare(Task &task) {
  bool alone = !task.file.empty();
  if (!alone && !reference_.empty()) {
    task.reference = reference_;
    return true;
  }
  fs::path dir = opts_.work / (alone ? "reference-" + task.name : std::string("reference"));
  fs::create_directories(dir);
  std::string cmd = "timeout -k 5 " + std::to_string(int(opts_.timeout * 4)) + " " +
                    shellQuote(opts_.tdslRun) + " " +
                    commandArgs(task, alone ? task.file : opts_.input) + " --no-schedule";
  for (const std::string &out : outputs(task))
    cmd += " --output " + shellQuote(out + "=" + (dir / (out + ".npy")).string());
  cmd += " > " + shellQuote((dir / "log").string()) + " 2>&1";
  if (shell(cmd) != 0) {
    std::cerr << "tdsl-tune: error: the unscheduled '" << (alone ? task.name : opts_.func)
              << "' does not run; see " << (dir / "log").string() << "\n";
    return false;
  }
  task.reference = dir.string();
  if (!alone)
    reference_ = task.reference;
  return true;
}

Measurement ProcessRunner::run(const Task &task, const Candidate *c,
                               const std::vector<tuning::Record> &context, int64_t serial) {
  bool alone = !task.file.empty();
  Measurement m;
  fs::path dir = opts_.work / ("c" + std::to_string(serial));
  fs::create_directories(dir);
  std::string db = (dir / "candidate.jsonl").string();
  {
    std::ofstream os(db);
    if (c) {
      tuning::Record cand;
      cand.func = task.name;
      cand.key = task.key;
      cand.target = opts_.target;
      cand.generated = task.generated;
      cand.decisions = c->decisions;
      cand.schedule = c->schedule;
      cand.ok = true;
      os << tuning::toJson(cand) << "\n";
    }
    // The other tasks of a graph measured in it run with their best schedule so far.
    if (!alone)
      for (const tuning::Record &r : context)
        os << tuning::toJson(r) << "\n";
  }
  std::string json = (dir / "bench.json").string();
  // A candidate far slower than the best so far is cut off early: 10 times the best's
  // (repeat + 2) calls, plus a few seconds of JIT compilation, within --timeout.
  double limit = opts_.timeout;
  if (task.best > 0)
    limit = std::min(limit, std::max(5.0, 10 * task.best * double(opts_.repeat + 2) + 3));
  // A task of its own runs its file (its plain baseline: the file of the scheduled function).
  std::string file = !alone ? opts_.input : c ? task.file : task.plainFile;
  std::string cmd = "timeout -k 5 " + std::to_string(int(std::ceil(limit))) + " " +
                    shellQuote(opts_.tdslRun) + " " + commandArgs(task, file) + " --tuning-db " +
                    shellQuote(db) + " --bench --repeat " + std::to_string(opts_.repeat) +
                    " --json " + shellQuote(json);
  for (const std::string &out : outputs(task))
    cmd += " --output " + shellQuote(out + "=" + (dir / (out + ".npy")).string());
  std::string log = (dir / "log").string();
  if (opts_.threads > 0)
    cmd = "env OMP_NUM_THREADS=" + std::to_string(opts_.threads) + " " + cmd;
  // The runner: `{}` stands for the command as one quoted word; else it is a prefix.
  if (size_t at = opts_.prefix.find("{}"); at != std::string::npos)
    cmd = opts_.prefix.substr(0, at) + shellQuote(cmd) + opts_.prefix.substr(at + 2);
  else if (!opts_.prefix.empty())
    cmd = opts_.prefix + " " + cmd;
  int status = shell(cmd + " > " + shellQuote(log) + " 2>&1");
  // 126/127: the shell could not run the command (not executable, not found), -1: not even
  // the shell ran. That is the runner's environment, not the candidate.
  if (status == 126 || status == 127 || status == -1) {
    m.error = status == -1
                  ? "the shell could not be started"
                  : "exit status " + std::to_string(status) + " (" +
                        (status == 127 ? "command not found" : "not executable") + "); see " + log;
    m.environmentFailed = true;
    return m;
  }
  if (status != 0) {
    m.error =
        status == 124 || status == 137 ? "timed out" : "exit status " + std::to_string(status);
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
      if (line.find("error") != std::string::npos)
        last = line;
    if (!last.empty())
      m.error += ": " + last;
    return m;
  }
  for (const std::string &out : outputs(task)) {
    std::string error;
    std::optional<runtime::Tensor> got = runtime::readNpy((dir / (out + ".npy")).string(), error);
    std::optional<runtime::Tensor> want =
        runtime::readNpy(task.reference + "/" + out + ".npy", error);
    if (!got || !want) {
      m.error = "no output: " + error;
      return m;
    }
    if (!close(*got, *want, m.error))
      return m;
  }
  std::ifstream in(json);
  std::string line;
  nlohmann::json j;
  if (std::getline(in, line))
    j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("median_ms")) {
    m.error = "no timing";
    return m;
  }
  // The fastest timed call: on a shared machine a call is now and then two or three times as
  // slow (another guest has the core), often enough that the median of a few calls is one of
  // those (docs/decisions.md, "Tuner").
  double ms = j["median_ms"].get<double>();
  if (j.contains("times_ms") && j["times_ms"].is_array())
    for (const nlohmann::json &t : j["times_ms"])
      if (t.is_number())
        ms = std::min(ms, t.get<double>());
  m.ok = true;
  m.seconds = ms * 1e-3;
  m.error.clear();
  fs::remove_all(dir);
  return m;
}

} // namespace tdsl::tune
