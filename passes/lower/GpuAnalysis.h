//===- passes/lower/GpuAnalysis.h - Index analysis shared by the GPU lowering steps -------===//
//
// What lower.cuda-compact and lower.cuda-syncs share beyond ir/Arith.h and ir/Utils.h: thread
// variables identified by their tag.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/Gpu.h"
#include "ir/IR.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"

#include <string>

namespace tdsl::lower {

/// True for the tags "threadIdx.*"; false for "blockIdx.*" (ir/Gpu.h).
using ir::isThreadIdxTag;

} // namespace tdsl::lower
