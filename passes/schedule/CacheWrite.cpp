// CacheWrite.cpp — cache_write(block, buffer, scope): write through a cache copied back after.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::string cacheWrite(ScheduleState &, const std::string &, const ir::Buffer &, ir::MemScope) {
  throw ScheduleError("'cache_write' is not implemented yet");
}

} // namespace tdsl::schedule
