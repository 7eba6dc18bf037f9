// Blockize.cpp — blockize(loop): make the subtree under loop one block.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::string blockize(ScheduleState &, const ir::Var &) {
  throw ScheduleError("'blockize' is not implemented yet");
}

} // namespace tdsl::schedule
