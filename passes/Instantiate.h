//===- passes/Instantiate.h -------------------------------------------------------------------===//
//
// A generic func with its constants given: the constants become their values
// everywhere (shapes, bounds, bodies) and the result is simplified.

#pragma once

#include "ir/IR.h"

#include <map>
#include <vector>

namespace tdsl {

/// The instance of PrimFunc `f` for `values` (one per constant, in declaration order). The
/// instance keeps the name and has no constants left.
ir::Func instantiate(const ir::Func &f, const std::vector<int64_t> &values);

/// PrimFunc `f` (without constants) with some of its shape variables given: those become their
/// values everywhere and leave `shapeVars`; the result is simplified and keeps the name.
ir::Func specializeShapes(const ir::Func &f, const std::map<const ir::VarNode *, int64_t> &values);

} // namespace tdsl
