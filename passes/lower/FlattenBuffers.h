//===- passes/lower/FlattenBuffers.h - Multi-dimensional accesses to flat indices ---------===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// The element strides of `buffer`, outermost first (empty for rank 0). Dense row-major,
/// except that a dimension with a storage_align {factor, offset} has its stride padded to the
/// smallest `k * factor + offset` not below its dense value: stride[d] = s + (offset - s) mod
/// factor, with s = stride[d + 1] * shape[d + 1] (and s = 1 for the last dimension).
std::vector<ir::Expr> bufferStrides(const ir::Buffer &buffer);

/// The number of elements `buffer` occupies: stride[0] * shape[0] (1 for rank 0).
ir::Expr bufferStorageSize(const ir::Buffer &buffer);

/// Replaces every buffer of a PrimFunc by a flat one and every access by a single index.
///
/// A flat buffer is a new Buffer of rank 1 with the same name hint, dtype, role and scope,
/// shape [bufferStorageSize(old)] and no align; the function's inputs and outputs are
/// replaced position by position, so `lowered.inputs[i]` is the flat form of
/// `source.inputs[i]` (the backends read shapes and dtypes from the source signature).
/// `A[i, j]` becomes `A[i * stride0 + j]`; a rank-0 buffer is accessed at index 0.
///
/// Requires: no Block (run lowerBlocks first); inputs and outputs are dense (no align).
/// Guarantees: every BufferLoad, BufferStore and Allocate refers to a rank-1 buffer.
ir::Func flattenBuffers(const ir::Func &func);

} // namespace tdsl::lower
