//===- passes/lower/InsertSyncs.h - __syncthreads() where threads of a block hand over data -===//
#pragma once

#include "ir/Gpu.h"
#include "ir/IR.h"

namespace tdsl::lower {

/// The barrier statement (ir/Gpu.h).
using ir::isSyncThreads;
using ir::syncThreadsVar;

/// Inserts a barrier inside each kernel (an outermost loop bound to a thread tag) wherever
/// threads of a block may access a Shared buffer that other threads accessed before: a read
/// after a write (the cooperative fetch of a tile, then its use), a write after a read (the
/// next overwrite of the tile, also across iterations of a loop around both), and a write
/// after a write. Barriers go only between statements every thread of the block executes
/// (outside threadIdx loops, where a condition is the same for all threads of a block, so
/// barriers may go inside its branches); the units between barriers are threadIdx loop nests
/// and other statements. No barrier is put where both sides access the same element with the
/// same index in the same thread (indices equal once loops bound to one tag are identified,
/// using no loop of their own) — each thread then reads what it wrote itself.
///
/// Requires: flat buffers (after lower.flatten). Guarantees: only barrier statements are added.
ir::Func insertSyncs(const ir::Func &func);

} // namespace tdsl::lower
