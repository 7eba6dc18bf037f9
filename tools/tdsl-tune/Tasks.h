//===- tools/tdsl-tune/Tasks.h - tdsl-tune's tasks and builder over the driver ---------------===//
//
// What tdsl-tune adds to the tune library: the tasks of a function or graph, found by compiling
// it once through the driver (a graph's callees after fusion, each written to the work folder as
// a file of its own where it compiles alone), the design space of each (its own sample_* sites,
// or the lowest level of passes/schedule/Sample.h's generated space that applies), and the
// builder that compiles candidates in-process.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tools/driver/Driver.h"
#include "tune/Builder.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tdsl::tunetool {

class CompilationBuilder : public tune::Builder {
public:
  explicit CompilationBuilder(const DriverOptions &opts) : opts_(opts) {}
  std::optional<tune::Candidate> build(const tune::Task &task,
                                       const std::vector<schedule::Decision> *decisions,
                                       uint64_t seed) override;
  /// The options that compile `func` of a task's own `file` (no -D: its IR has none open).
  DriverOptions aloneOptions(const std::string &file, const std::string &func) const;
  const DriverOptions &options() const { return opts_; }

private:
  DriverOptions opts_;
};

/// The tasks of `builder.options().func`, with `outputs` set to its outputs' names; nullopt
/// after printing an error.
std::optional<std::vector<tune::Task>> findTasks(CompilationBuilder &builder,
                                                 const std::filesystem::path &work,
                                                 std::vector<std::string> &outputs);

} // namespace tdsl::tunetool
