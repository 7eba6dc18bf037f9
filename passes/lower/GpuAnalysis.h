//===- passes/lower/GpuAnalysis.h - Index analysis shared by the GPU lowering steps -------===//
//
// What lower.cuda_compact and lower.cuda_syncs share beyond ir/Arith.h and ir/Utils.h: thread
// variables identified by their tag.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"

#include <string>

namespace tdsl::lower {

/// True for the tags "threadIdx.*"; false for "blockIdx.*".
bool isThreadIdxTag(const std::string &tag);

// The names backends/cuda still uses; they are ir::equalExpr and ir::usedVars.
// TODO(pipeline): switch backends/cuda to ir/ and drop these.
inline bool sameExpr(const ir::Expr &a, const ir::Expr &b) { return ir::equalExpr(a, b); }
using ir::usedVars;

} // namespace tdsl::lower
