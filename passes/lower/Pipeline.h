//===- passes/lower/Pipeline.h - The lowering pipeline ------------------------------------===//
//
// Scheduled PrimFunc (blocks, multi-dimensional buffers) → loop-level PrimFunc (no blocks,
// flat buffers, vector code), what the code generators consume. The steps, in order (the
// contract and the lowered forms of each are in its header and in docs/lowering.md):
//
//   lower.blocks        lowerBlocks         blocks to loops, predicates and init to ifs
//   lower.bounds-check  insertBoundsChecks  AssertStmt around accesses (--bounds-check only)
//   lower.place-allocs  placeAllocations    each Allocate around the smallest statement that
//                                           covers the buffer's uses (per loop iteration when
//                                           iterations touch disjoint parts)
//   lower.compact       compactBuffers      an Allocate shrunk to the region its body touches
//   lower.flatten       flattenBuffers      one row-major index per access (storage_align)
//   lower.simplify      simplify            constant folding of the index arithmetic
//   lower.partition     partitionLoops      guarded loops split into a guard-free main part
//                                           and guarded head/tail parts
//   lower.vectorize     vectorizeLoops      vectorized loops to Ramp/Broadcast vector code
//   lower.unroll        unrollLoops         small unrolled loops copied out
//
// Loop kinds are kept where a step leaves a loop: a Parallel loop stays a For of that kind (the
// C++ backend emits `#pragma omp parallel for`), a Vectorized loop that could not be
// vectorized stays a scalar loop marked Vectorized (`#pragma omp simd`), an Unrolled loop
// above the unroll limit stays a loop marked Unrolled (`#pragma GCC unroll`).
//
// For the cuda target (lowerPrimFuncForCuda) the steps are (the GPU
// keeps the basic CPU steps, no CPU vectorization, placement or partitioning):
//
//   lower.blocks
//   lower.cuda-compact  compactGpuBuffers  shared/local buffers shrunk to one block's/thread's tile
//   lower.flatten
//   lower.simplify
//   lower.cuda-syncs    insertSyncs        __syncthreads() where threads hand over shared data
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/ShapeBounds.h"

#include <functional>
#include <string>
#include <vector>

namespace tdsl::lower {

/// Called before or after each step with the step's name and the function as it is then.
using StepCallback = std::function<void(const std::string &step, const ir::Func &func)>;

struct LowerOptions {
  /// Check every access not proven in bounds at run time (lower.bounds-check; off: only the
  /// accesses whose index depends on data).
  bool boundsCheck = false;
  /// What the function's accesses need of its symbolic shapes (ir/ShapeBounds.h), checked
  /// once at the entry by lower.bounds-check on every route.
  std::vector<ir::ShapeBound> shapeChecks;
  /// The function's buffers of symbolic size, whose sizes must fit in 64 bits (checked first).
  std::vector<ir::ExtentCheck> extentChecks;
  /// Spells a source location for bounds-check messages ("file.tdsl:3:7"); when unset, the
  /// messages say "line L, column C".
  std::function<std::string(const SourceLoc &)> locationText;
  /// Called after / before each step.
  StepCallback afterStep, beforeStep;
  /// Target checks after each step (`before` is the step's input): false stops the lowering,
  /// which then returns an undefined Func (the check reported why).
  std::function<bool(const std::string &step, const ir::Func &before, const ir::Func &after)> check;
};

/// The step names, in order ("lower.blocks", ...).
const std::vector<std::string> &lowerStepNames();

/// Runs every step on `func`.
///
/// Requires: a PrimFunc whose generic constants are all given (constVars empty).
/// Guarantees: the result has no Block and only rank-1 buffers; its inputs and outputs are
/// the flat forms of `func`'s, position by position (see flattenBuffers). Undefined when
/// `options.check` stopped it.
ir::Func lowerPrimFunc(const ir::Func &func, const LowerOptions &options = {});

/// The cuda pipeline's step names, in order (the CPU steps and the lower.cuda_* ones).
const std::vector<std::string> &cudaLowerStepNames();

/// Runs the cuda pipeline on `func` (same requirements and guarantees as lowerPrimFunc, plus
/// compacted shared/local buffers and barriers; see passes/lower/InsertSyncs.h).
ir::Func lowerPrimFuncForCuda(const ir::Func &func, const LowerOptions &options = {});

} // namespace tdsl::lower
