//===- ir/Instantiate.h -----------------------------------------------------------------------===//
//
// A generic func with its constants given: the constants become their values
// everywhere (shapes, bounds, bodies) and the result is simplified.

#pragma once

#include "ir/IR.h"

#include <map>
#include <vector>

namespace tdsl::ir {

/// The instance of PrimFunc `f` for `values` (one per constant, in declaration order). The
/// instance keeps the name and has no constants left.
Func instantiate(const Func &f, const std::vector<int64_t> &values);

/// PrimFunc `f` (without constants) with some of its shape variables given: those become their
/// values everywhere and leave `shapeVars`; the result is simplified and keeps the name.
Func specializeShapes(const Func &f, const std::map<const VarNode *, int64_t> &values);

} // namespace tdsl::ir
