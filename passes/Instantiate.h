//===- passes/Instantiate.h -------------------------------------------------------------------===//
//
// A generic func with its constants given: the constants become their values
// everywhere (shapes, bounds, bodies) and the result is simplified.

#pragma once

#include "ir/IR.h"

#include <vector>

namespace tdsl {

/// The instance of PrimFunc `f` for `values` (one per constant, in declaration order). The
/// instance keeps the name and has no constants left.
ir::Func instantiate(const ir::Func &f, const std::vector<int64_t> &values);

} // namespace tdsl
