//===- tune/FeatureExtractor.h - What the cost model sees of a candidate ---------------------===//
//
// The features of a candidate: its decisions (log2 of each value) and statistics of the
// scheduled function's loops (parallel extent, vector lanes, unrolled extent, innermost extent,
// local bytes, loop count, depth), log2. Their number depends on the space, so a cost model is
// trained per task.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "passes/schedule/Sample.h"

#include <vector>

namespace tdsl::tune {

/// The features of `decisions` applied to a function, `scheduled` (a PrimFunc, or null: the
/// loop statistics are then those of an empty function).
std::vector<float> extractFeatures(const std::vector<schedule::Decision> &decisions,
                                   const ir::Func &scheduled);

} // namespace tdsl::tune
