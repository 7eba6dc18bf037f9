// CacheRead.cpp — cache_read(block, buffer, scope): read through a cached copy.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::string cacheRead(ScheduleState &, const std::string &, const ir::Buffer &, ir::MemScope) {
  throw ScheduleError("'cache_read' is not implemented yet");
}

} // namespace tdsl::schedule
