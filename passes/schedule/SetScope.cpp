// SetScope.cpp — set_scope(block, buffer, scope): change where an intermediate buffer lives.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void setScope(ScheduleState &, const std::string &, const ir::Buffer &, ir::MemScope) {
  throw ScheduleError("'set_scope' is not implemented yet");
}

} // namespace tdsl::schedule
