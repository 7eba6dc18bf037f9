//===- passes/schedule/Sample.h - sample_* decisions and generated design spaces --------------===//
//---------------===//
//
// A schedule with `sample_perfect_tile` and `sample_categorical` statements is a design space
// (spec §7). This header holds what decides them: the seeded draw a plain compile uses, the
// decisions a tuning database or tdsl-tune supplies, the trace of what was decided, the plain
// schedule text with the decisions written in, and the design space tdsl-tune generates for a
// function that has no schedule of its own (after MetaSchedule's CPU rules).
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/Schedule.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tdsl::schedule {

/// One decision: the factors of a sample_perfect_tile, or the one value of a sample_categorical.
using Decision = std::vector<int64_t>;

/// A sample_* call reached while a script ran: what its decision may be.
struct SampleSite {
  enum class Kind { PerfectTile, Categorical };
  Kind kind = Kind::PerfectTile;
  int64_t extent = 0, n = 0, maxInnermost = 0; ///< PerfectTile (maxInnermost 0: no limit)
  std::vector<int64_t> values;                 ///< Categorical
  std::vector<double> probs;
};

/// Decisions recorded for a function (a tuning database's best record, or tdsl-tune's
/// candidate). `generated` >= 0: they belong to the design space designSpace() generates at
/// that level for a function without a schedule of its own.
struct TunedDecisions {
  std::vector<Decision> decisions;
  int generated = -1;
};

/// What the sample_* calls of one function became.
struct SampleTrace {
  std::vector<SampleSite> sites;
  std::vector<Decision> decisions;
  ir::ScheduleScript script; ///< the script that ran (the generated one, for a generated space)
  int generated = -1;
  bool fromRecord = false; ///< every decision came from `lookup` (else some were drawn)
};

/// How sample_* calls are decided.
struct SampleContext {
  uint64_t seed = 0; ///< --seed
  /// The decisions recorded for a function about to be scheduled (its unscheduled IR), or
  /// nullopt: they are drawn from `seed`. A recorded decision that does not fit its site (the
  /// schedule changed since) is drawn too.
  std::function<std::optional<TunedDecisions>(const ir::Func &)> lookup;
  /// Filled as scripts run: one trace per function with sample_* calls or a generated space.
  std::map<std::string, SampleTrace> traces;
};

/// The deterministic generator of one site: a function of the seed, the function's name and the
/// site's position in the script (splitmix64; the same on every platform).
uint64_t siteSeed(uint64_t seed, const std::string &func, size_t index);
/// A next value of a splitmix64 state.
uint64_t nextRandom(uint64_t &state);

/// Draws a decision for `site` from `state`.
Decision drawDecision(const SampleSite &site, uint64_t &state);
/// Whether `d` is a possible decision of `site`.
bool fitsSite(const SampleSite &site, const Decision &d);

/// A mutation of the tuner's search: the innermost tiles of two perfect tilings with a bounded
/// innermost factor (those a space vectorizes or unrolls: the register tile) trade a factor q
/// (one's innermost factor divided by q, the other's multiplied), each tiling making up for it
/// at one of its other levels, so that the register tile changes shape and keeps its size
/// (8 x 32 <-> 4 x 64). Nullopt when the draw finds no such move (fewer than two such tilings,
/// or no factor the other tiling can give up).
std::optional<std::vector<Decision>> reshapeTiles(const std::vector<SampleSite> &sites,
                                                  const std::vector<Decision> &decisions,
                                                  uint64_t &state);

/// The script with its decisions written in, as `schedule FUNC { … }` source text: each
/// sample_* statement is dropped and the names it bound are replaced by the decided integers.
std::string plainScheduleText(const ir::ScheduleScript &script,
                              const std::vector<Decision> &decisions);

/// The highest level designSpace knows; a lower level generates more (0 is the full space).
constexpr int kDesignSpaceLevels = 3;

/// A design space for `func` after MetaSchedule's CPU rules, at `level` (0: inline element-wise
/// producers, multi-level tiling SSRSRS with a `local` cache of the output written back under
/// the outer spatial tiles, parallel outer loop, vectorized and unrolled inner loops; 1: the
/// same without the cache; 2: tiling, parallel and vectorize only). Nullopt when the function
/// has no block or a loop of symbolic extent.
std::optional<ir::ScheduleScript> designSpace(const ir::Func &func, int level);

/// The default schedule of a func nobody scheduled (the funcs the grad step derives, spec §13),
/// as scripts to apply one after another, each dropped where it is refused: for each block
/// whose loops bind one axis each and whose stores write the element its spatial axes name,
/// the outer loop in parallel and, for a block without reduce axes whose stores are contiguous
/// along the innermost loop, that loop vectorized. Empty when there is nothing to do.
std::vector<ir::ScheduleScript> defaultScripts(const ir::Func &func);

} // namespace tdsl::schedule
