// TransformLayout.cpp — transform_layout(block, buffer, map): re-lay out an intermediate buffer.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

void transformLayout(ScheduleState &, const std::string &, const ir::Buffer &, const std::vector<ir::Var> &, const std::vector<ir::Expr> &) {
  throw ScheduleError("'transform_layout' is not implemented yet");
}

} // namespace tdsl::schedule
