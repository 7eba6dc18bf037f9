//===- passes/lower/LowerBlocks.h - Blocks to plain loops ---------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Replaces every Block of a PrimFunc by the statements it stands for (TensorIR semantics):
///
///   block Y(vi = i, vk = k) where P { init { I } B }   -->
///   if (P[vi := i]) { allocate(allocs) { if (k == 0) { I' } B' } }
///
/// where I', B' are I, B with each iter var replaced by its binding. The init runs when the
/// binding of every reduce iter var is 0 (what the reference interpreter does). A short-form
/// block (no bindings) becomes one Serial loop per iter var, outermost first, over
/// [0, extent), its iter vars becoming the loop variables. Nested blocks are lowered inside
/// out. The function's root `alloc` buffers become Allocate statements around the body.
///
/// Requires: a PrimFunc without generic constants left open.
/// Guarantees: no Block remains; PrimFunc::allocBuffers is empty; loops, loop variables and
/// buffers are kept (same identities); a `true` predicate and an absent init add nothing.
ir::Func lowerBlocks(const ir::Func &func);

} // namespace tdsl::lower
