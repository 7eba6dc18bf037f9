// DecomposeReduction.cpp — decompose_reduction(block, loop): init into its own block above loop.
// STUB: not implemented yet (being written); refuses every call.
#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::string decomposeReduction(ScheduleState &, const std::string &, const ir::Var &) {
  throw ScheduleError("'decompose_reduction' is not implemented yet");
}

} // namespace tdsl::schedule
