//===- tune/Mutator.cpp - New candidates from measured ones ----------------------------------===//

#include "tune/Mutator.h"

namespace tdsl::tune {

std::vector<schedule::Decision> mutate(const Candidate &base, uint64_t &state) {
  std::vector<schedule::Decision> d = base.decisions;
  if (d.empty())
    return d;
  // A quarter of the time the innermost tiles of two tilings trade a factor, each tiling
  // making up for it at another level: the register tile changes shape, not size (8 × 32 ↔
  // 4 × 64). One-level moves reach the other shape only through 8 × 64 (too many accumulators
  // for the registers) or 4 × 32 (too few to cover the FMA latency), a valley the evolution
  // rarely crosses.
  if (schedule::nextRandom(state) % 4 == 0)
    if (std::optional<std::vector<schedule::Decision>> r =
            schedule::reshapeTiles(base.sites, base.decisions, state))
      return *r;
  size_t which = schedule::nextRandom(state) % d.size();
  const schedule::SampleSite &site = base.sites[which];
  // Half the time a tile size moves a factor from one level to another (MetaSchedule's
  // MutateTileSize): a small step, so that the search can refine a good tiling instead of
  // redrawing it (a fresh draw rarely empties a level, e.g. the one between the register tile
  // and the cache).
  if (site.kind == schedule::SampleSite::Kind::PerfectTile && d[which].size() > 1 &&
      schedule::nextRandom(state) % 2 == 0)
    for (int tries = 0; tries < 8; ++tries) {
      schedule::Decision nd = d[which];
      size_t from = schedule::nextRandom(state) % nd.size();
      if (nd[from] < 2)
        continue;
      std::vector<int64_t> divisors;
      for (int64_t q = 2; q <= nd[from]; ++q)
        if (nd[from] % q == 0)
          divisors.push_back(q);
      int64_t q = divisors[schedule::nextRandom(state) % divisors.size()];
      size_t to = schedule::nextRandom(state) % (nd.size() - 1);
      to += to >= from;
      nd[from] /= q;
      nd[to] *= q;
      if (schedule::fitsSite(site, nd)) {
        d[which] = nd;
        return d;
      }
    }
  for (int tries = 0; tries < 8; ++tries) {
    schedule::Decision nd = schedule::drawDecision(site, state);
    if (nd != d[which]) {
      d[which] = nd;
      break;
    }
  }
  return d;
}

} // namespace tdsl::tune
