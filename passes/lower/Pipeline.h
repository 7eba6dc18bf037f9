//===- passes/lower/Pipeline.h - The lowering pipeline ------------------------------------===//
//
// Scheduled PrimFunc (blocks, multi-dimensional buffers) → loop-level PrimFunc (no blocks,
// flat buffers), what the code generators consume. The steps, in order:
//
//   lower.blocks    lowerBlocks      blocks to loops, predicates and init to ifs
//   lower.flatten   flattenBuffers   one row-major index per access (storage_align strides)
//   lower.simplify  simplify         constant folding of the index arithmetic
//
// For the cuda target (lowerPrimFuncForCuda) two steps are added; the CPU steps are the same:
//
//   lower.blocks
//   lower.cuda_compact  compactGpuBuffers  shared/local buffers shrunk to one block's/thread's tile
//   lower.flatten
//   lower.simplify
//   lower.cuda_syncs    insertSyncs        __syncthreads() where threads hand over shared data
//
// Loop kinds are kept: Parallel, Vectorized and Unrolled loops stay For loops of that kind,
// and the backends decide (the C++ backend emits `#pragma omp parallel for`, `#pragma omp
// simd` and `#pragma GCC unroll`). Guards from non-dividing splits stay `if`s for now (no
// loop partitioning).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <functional>
#include <string>
#include <vector>

namespace tdsl::lower {

/// Called after each step with the step's name and the function as it is then.
using StepCallback = std::function<void(const std::string &step, const ir::Func &func)>;

/// The step names, in order ("lower.blocks", ...).
const std::vector<std::string> &lowerStepNames();

/// Runs every step on `func`.
///
/// Requires: a PrimFunc whose generic constants are all given (constVars empty).
/// Guarantees: the result has no Block and only rank-1 buffers; its inputs and outputs are
/// the flat forms of `func`'s, position by position (see flattenBuffers).
ir::Func lowerPrimFunc(const ir::Func &func, const StepCallback &afterStep = {});

/// The cuda pipeline's step names, in order (the CPU steps and the lower.cuda_* ones).
const std::vector<std::string> &cudaLowerStepNames();

/// Runs the cuda pipeline on `func` (same requirements and guarantees as lowerPrimFunc, plus
/// compacted shared/local buffers and barriers; see passes/lower/InsertSyncs.h).
ir::Func lowerPrimFuncForCuda(const ir::Func &func, const StepCallback &afterStep = {});

} // namespace tdsl::lower
