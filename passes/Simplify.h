//===- passes/Simplify.h - Forwards to ir/Simplify.h --------------------------------------===//
//
// The simplifier moved to ir/Simplify.h (the arithmetic layer of ir/Arith.h builds on it).
// This header keeps `tdsl::simplify` for the files not switched yet (passes/schedule,
// passes/lower/Pipeline.cpp); new code includes ir/Simplify.h.

#pragma once

#include "ir/Simplify.h"

namespace tdsl {
using ir::simplify;
} // namespace tdsl
