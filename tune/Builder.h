//===- tune/Builder.h - Candidates compiled from decisions -----------------------------------===//
//
// The builder turns decisions of a task's design space into a candidate (MetaSchedule's
// Builder): the schedule applied and checked, the decisions as actually used, the sites they
// fill, the plain schedule text and the features. tdsl-tune's builder compiles in-process
// through the driver (tools/tdsl-tune/Tasks.h); tests give their own.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/Task.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tdsl::tune {

class Builder {
public:
  virtual ~Builder() = default;
  /// `task` compiled with `decisions`, or with decisions drawn from `seed` when null; nullopt
  /// when the schedule is refused.
  virtual std::optional<Candidate>
  build(const Task &task, const std::vector<schedule::Decision> *decisions, uint64_t seed) = 0;
};

} // namespace tdsl::tune
