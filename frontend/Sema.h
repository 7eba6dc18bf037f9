// Sema.h — the semantic checker: checks the AST (spec §4, §5 rules 1–7, §6, §8) and builds
// the IR the rest of the compiler shares.
#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"

#include <optional>
#include <vector>

namespace tdsl {

class DiagnosticEngine;

/// Checks `modules` (the main module first, then its imports) and builds the IR of the main
/// module. Functions of imported modules are added under their qualified name (`nn.linear`)
/// so that graph calls find them; `Module::imports` lists the main module's import paths.
/// Every error of the phase is reported; the result is std::nullopt when there were errors.
std::optional<ir::Module> buildIR(const std::vector<ast::Module *> &modules,
                                  DiagnosticEngine &diags);

} // namespace tdsl
