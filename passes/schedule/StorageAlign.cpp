// StorageAlign.cpp — storage_align(block, buffer, axis, factor, offset): pad a dimension's stride.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void storageAlign(ScheduleState &, const std::string &, const ir::Buffer &, int64_t, int64_t, int64_t) {
  throw ScheduleError("'storage_align' is not implemented yet");
}

} // namespace tdsl::schedule
