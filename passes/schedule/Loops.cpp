//===- passes/schedule/Loops.cpp - loops(block): the loops above a block, outermost first -----===//

#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::vector<ir::Var> getLoops(ScheduleState &s, const std::string &block) {
  const ir::Block *b = s.block(block);
  std::vector<ir::Var> out;
  for (const ir::For *f : s.loopsAbove(b))
    out.push_back(f->loopVar);
  return out;
}

} // namespace tdsl::schedule
