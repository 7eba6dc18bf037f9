// ComputeInline.cpp — compute_inline(block): inline a producer into its consumers.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void computeInline(ScheduleState &, const std::string &) {
  throw ScheduleError("'compute_inline' is not implemented yet");
}

} // namespace tdsl::schedule
