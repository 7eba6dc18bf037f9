//===- tune/Mutator.h - New candidates from measured ones ------------------------------------===//
//
// The evolutionary search's mutations of a candidate's decisions (MetaSchedule's mutators): a
// register tile reshaped (two tilings trade a factor), a tile factor moved between levels
// (MutateTileSize), or one decision drawn afresh.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tune/Task.h"

#include <cstdint>
#include <vector>

namespace tdsl::tune {

/// The decisions of `base` mutated once, drawing from `state`; `base`'s own when it has none.
std::vector<schedule::Decision> mutate(const Candidate &base, uint64_t &state);

} // namespace tdsl::tune
