// ReverseComputeInline.cpp — reverse_compute_inline(block): inline an element-wise consumer into its producer.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void reverseComputeInline(ScheduleState &, const std::string &) {
  throw ScheduleError("'reverse_compute_inline' is not implemented yet");
}

} // namespace tdsl::schedule
