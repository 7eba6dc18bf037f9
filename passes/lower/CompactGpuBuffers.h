//===- passes/lower/CompactGpuBuffers.h - Shared and local buffers shrunk to their tiles ---===//
#pragma once

#include "ir/IR.h"

namespace tdsl::lower {

/// Shrinks every Shared- and Local-scope buffer of a CUDA function to the tile one instance
/// of it needs, and allocates it where that instance lives (TVM's CompactBufferAllocation with
/// GPU scopes).
///
/// An instance lives at the innermost loop enclosing every access (the LCA). Loops at or above
/// it are fixed for one instance, except that for a Shared buffer threadIdx loops are never
/// fixed (all threads of a block see one copy), and for a Local buffer every threadIdx loop is
/// fixed (each thread owns its copy; loops bound to one tag are one thread index). Each index
/// `outer + inner` (affine in the fixed loop variables plus a part bounded over the others)
/// becomes `inner - lo`, with extent `hi - lo + 1` over all accesses, when the fixed part is
/// the same at every access. A buffer for which this fails keeps its full shape.
///
/// Requires: no Block (run lowerBlocks first), multi-dimensional buffers (before flatten).
/// Guarantees: the same values are computed; compacted buffers are new Buffers (same name
/// hint, scope, dtype and storage_align) with an Allocate wrapping the LCA loop's body (or the
/// function body); others are unchanged.
ir::Func compactGpuBuffers(const ir::Func &func);

} // namespace tdsl::lower
