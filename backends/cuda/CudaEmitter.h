//===- backends/cuda/CudaEmitter.h - The CUDA backend -------------------------------------===//
//
// Emits a CUDA translation unit (.cu) for the PrimFuncs of a module scheduled `for cuda`:
// one `__global__` kernel per outermost loop nest bound to blockIdx.*/threadIdx.*, and per
// function the host entries of spec §10 taking DEVICE pointers — `int32_t NAME(...)`, which
// computes the launch grid from the bound loops' extents and launches the kernels in order on
// the default stream, and `int32_t NAME_dlpack(...)`, which checks kDLCUDA tensors first —
// plus `tdsl_last_error()`. The functions come lowered by the module pipeline's cuda lowering
// (passes/Pipeline.h), which runs the checks below. Semantics as the C++ backend (wrapping
// integers, floor division, saturating float→int casts, f16/bf16 rounded after each operation).
// docs/cuda-backend.md has the rest.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/LoweredModule.h"

#include <string>
#include <vector>

namespace tdsl {
class DiagnosticEngine;
}

namespace tdsl::cuda {

struct CudaOptions {
  /// Format the text with clang::format (LLVM style, 100 columns).
  bool format = true;
};

// The checks of a cuda-target function, in the order the module pipeline runs them while it
// lowers the function (errors at the block, loop or buffer concerned; each returns false after
// reporting one).

/// On the scheduled function: every block runs under a loop bound to a thread tag (no work on
/// the host); no thread tag bound twice in one nest; at most 1024 threads per block (product of
/// the threadIdx extents); thread extents that the host can compute; in a kernel with threadIdx
/// loops, no block outside every threadIdx loop.
bool checkScheduled(const ir::Func &func, DiagnosticEngine &diags);

/// After lower.cuda-compact (`blocks` is its input, `compacted` its result): every shared and
/// local buffer was compacted to one block's or thread's tile.
bool checkCompacted(const ir::Func &blocks, const ir::Func &compacted, DiagnosticEngine &diags);

/// On the lowered function: shared and local buffers of constant size inside kernels, no
/// global buffer allocated inside one, at most 48 KiB of static shared memory per kernel.
bool checkLowered(const ir::Func &lowered, DiagnosticEngine &diags);

/// The .cu translation unit of the functions of `module` (the cuda pipeline's result).
/// Guarantees: deterministic text; compiles with nvcc -arch=sm_90 (C++17).
std::string emitCuda(const ir::LoweredModule &module, const CudaOptions &options = {});

} // namespace tdsl::cuda
