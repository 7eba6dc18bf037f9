//===- backends/cuda/CudaEmitter.h - The CUDA backend -------------------------------------===//
//
// Emits a CUDA translation unit (.cu) for the PrimFuncs of a module scheduled `for cuda`:
// one `__global__` kernel per outermost loop nest bound to blockIdx.*/threadIdx.*, and per
// function the host entries of spec §10 taking DEVICE pointers — `int32_t NAME(...)`, which
// computes the launch grid from the bound loops' extents and launches the kernels in order on
// the default stream, and `int32_t NAME_dlpack(...)`, which checks kDLCUDA tensors first —
// plus `tdsl_last_error()`. Each function is lowered by the cuda pipeline
// (passes/lower/Pipeline.h: lowerPrimFuncForCuda) first. The checks of checkCudaModule must
// have passed. Semantics as the C++ backend (wrapping integers, floor division, saturating
// float→int casts, f16/bf16 rounded after each operation). docs/cuda-backend.md has the rest.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "passes/lower/Pipeline.h"

#include <string>
#include <vector>

namespace tdsl {
class DiagnosticEngine;
}

namespace tdsl::cuda {

struct CudaOptions {
  /// Only this function (its source name); empty for every one.
  std::string onlyFunc;
  /// Called after each lowering step of each function (for --print-ir-after).
  lower::StepCallback afterLowerStep;
  /// Format the text with clang::format (LLVM style, 100 columns).
  bool format = true;
};

/// The functions the backend emits: the PrimFuncs with no open generic constant (all, or the
/// one named by `onlyFunc`), in module order.
std::vector<ir::Func> emittedFunctions(const ir::Module &module, const CudaOptions &options);

/// Lowers every emitted function with the cuda pipeline (`--emit=lowered --target=cuda`).
std::vector<ir::Func> lowerModule(const ir::Module &module, const CudaOptions &options = {});

/// The checks of a cuda-target function (errors at the block, loop or buffer concerned):
/// every block runs under a loop bound to a thread tag (no work on the host); no thread tag
/// bound twice in one nest; at most 1024 threads per block (product of the threadIdx extents);
/// at most 48 KiB of static shared memory per kernel; shared and local buffers of constant
/// size; thread extents that the host can compute; in a kernel with threadIdx loops, no block
/// outside every threadIdx loop. Returns false after reporting errors.
bool checkCudaModule(const ir::Module &module, const CudaOptions &options, DiagnosticEngine &diags);

/// The .cu translation unit. Requires: a scheduled module that passed checkCudaModule.
/// Guarantees: deterministic text; compiles with nvcc -arch=sm_90 (C++17).
std::string emitCuda(const ir::Module &module, const CudaOptions &options = {});

} // namespace tdsl::cuda
