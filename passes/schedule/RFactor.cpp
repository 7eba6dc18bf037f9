// RFactor.cpp — rfactor(loop, axis): factor a reduction into a partial-result block.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::string rfactor(ScheduleState &, const ir::Var &, int64_t) {
  throw ScheduleError("'rfactor' is not implemented yet");
}

} // namespace tdsl::schedule
