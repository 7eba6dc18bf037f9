// ReverseComputeAt.cpp — reverse_compute_at(block, loop): move a consumer under a loop of its producer.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void reverseComputeAt(ScheduleState &, const std::string &, const ir::Var &) {
  throw ScheduleError("'reverse_compute_at' is not implemented yet");
}

} // namespace tdsl::schedule
