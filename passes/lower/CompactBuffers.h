//===- passes/lower/CompactBuffers.h - Allocations shrunk to the region they use ----------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Shrinks each Allocate'd buffer to the box its body touches (TVM's
/// CompactBufferAllocation): for every dimension where the accesses inside the Allocate span
/// a constant number of elements from a lower bound `lo` (an expression of the variables
/// around the Allocate), the dimension becomes that constant and each index `x` becomes
/// `x - lo`:
///
///   for i0 {                         for i0 {
///     alloc C_l: f32[128, 128];  -->   alloc C_l: f32[32, 128];
///     C_l[i0 * 32 + i1, j] = ...         C_l[i1, j] = ...
///
/// The box is the hull over every access (guards ignored, so it may be larger than what runs,
/// never smaller). Dimensions whose span is not constant, and buffers indexed through loads,
/// keep their shape. A buffer's storage_align is kept.
///
/// Requires: no Block; buffers not yet flattened; Allocates placed (placeAllocations).
/// Guarantees: every access of a compacted buffer lies in its new shape whenever the access
/// would have been in bounds of the old one.
ir::Func compactBuffers(const ir::Func &func);

} // namespace tdsl::lower
