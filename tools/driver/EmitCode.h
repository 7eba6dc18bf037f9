//===- tools/driver/EmitCode.h - The backend that tdslc's --emit names --------------------===//
//
// From the lowered module (passes/Pipeline.h) to --emit=lowered|cpp|cuda|header|llvm|bc|asm|obj:
// the C++ backend (and the Clang libraries for --via=cpp), the CUDA backend, or the LLVM
// backend. Internal to tools/driver.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/LoweredModule.h"
#include "tools/driver/Driver.h"

#include <optional>
#include <ostream>

namespace tdsl {

/// Whether --emit makes its output with the LLVM backend (--emit=llvm|bc, and obj|asm unless
/// --via=cpp).
bool viaLLVM(const DriverOptions &opts);

/// Writes the text (or bytes) of opts.emit for `lowered` to `text`; the exit status after an
/// error (reported on `err`), or nullopt.
std::optional<int> emitCode(const DriverOptions &opts, const ir::LoweredModule &lowered,
                            std::ostream &text, std::ostream &err);

} // namespace tdsl
