// ComputeAt.cpp — compute_at(block, loop): move a producer under a loop of its consumer.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void computeAt(ScheduleState &, const std::string &, const ir::Var &) {
  throw ScheduleError("'compute_at' is not implemented yet");
}

} // namespace tdsl::schedule
