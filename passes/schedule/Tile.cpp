//===- passes/schedule/Tile.cpp ---------------------------------------------------------------===//
//
// tile(l0, l1, [f0, f1]): split both loops, then reorder to l0o, l1o, l0i, l1i.

#include "passes/schedule/Primitives.h"

namespace tdsl::schedule {

std::vector<ir::Var> tile(ScheduleState &s, const ir::Var &l0, const ir::Var &l1, int64_t f0,
                          int64_t f1) {
  if (l0 == l1)
    throw ScheduleError("tile needs two different loops", l0->loc, "loop declared here");
  for (auto [loop, f] : {std::pair{l0, f0}, std::pair{l1, f1}})
    if (f <= 0)
      throw ScheduleError("tile factor " + std::to_string(f) + " is not positive", loop->loc,
                          "loop declared here");
  std::vector<ir::Var> a = split(s, l0, {std::nullopt, f0});
  std::vector<ir::Var> b = split(s, l1, {std::nullopt, f1});
  reorder(s, {a[0], b[0], a[1], b[1]});
  return {a[0], b[0], a[1], b[1]};
}

} // namespace tdsl::schedule
