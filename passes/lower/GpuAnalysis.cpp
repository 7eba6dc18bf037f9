//===- passes/lower/GpuAnalysis.cpp - Index analysis shared by the GPU lowering steps -----===//
#include "passes/lower/GpuAnalysis.h"

namespace tdsl::lower {

bool isThreadIdxTag(const std::string &tag) { return tag.rfind("threadIdx.", 0) == 0; }

} // namespace tdsl::lower
