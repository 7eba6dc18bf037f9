//===- frontend/Parser.h ----------------------------------------------------------------------===//
//
// Text to AST. The only entry point into the ANTLR-generated parser; no ANTLR type
// crosses this header.

#pragma once

#include "frontend/AST.h"

#include <memory>
#include <string_view>

namespace tdsl {

class SourceManager;
class DiagnosticEngine;

/// Parses file `fileId` of `sm`. Every syntax error of the file is reported to `diags` (ANTLR's
/// messages rewritten into Clang-style ones). Returns null when the file has syntax errors;
/// otherwise the module, possibly with errors the AST builder reported (bad literals, loop
/// kinds, scopes), which `diags.hasErrors()` tells.
std::unique_ptr<ast::Module> parseModule(const SourceManager &sm, uint32_t fileId,
                                         DiagnosticEngine &diags);

/// Whether `word` is one of the grammar's keywords (§2), which no identifier may spell. The
/// answer comes from the generated lexer's vocabulary, so it cannot fall behind the grammar.
bool isKeyword(std::string_view word);

} // namespace tdsl
