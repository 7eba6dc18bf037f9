//===- passes/lower/Profile.h - Timed regions for --profile (spec §9) ---------------------===//
//
// `tdsl-run --profile` times the parts of one function: each top-level loop nest of a func,
// each call of a lowered graph. These passes wrap those parts in ProfileRegion statements
// (ir/IR.h), numbered from 0 in execution order; the backends emit calls of the runner's
// timers around them (runtime/Profile.h). Code compiled without --profile has no region.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Wraps each top-level statement of scheduled PrimFunc `func` (below its root block, its
/// root allocations and lets) in a ProfileRegion labelled with the name of the outermost block
/// under it ("loop" when it has none).
///
/// Requires: a PrimFunc before lowerBlocks. Guarantees: the same computation; every region at
/// loop depth 0.
ir::Func profileLoopNests(const ir::Func &func);

/// Wraps each FuncCall at the top level of lowered graph `lowered` (with the zero fill before
/// it, when it has one) in a ProfileRegion labelled with the callee's name. What lies between
/// the calls (result copies, views) stays outside every region.
///
/// Requires: the result of lowerGraph. Guarantees: the same computation; one region per call.
ir::Func profileCalls(const ir::Func &lowered);

} // namespace tdsl::lower
