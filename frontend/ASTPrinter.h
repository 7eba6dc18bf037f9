//===- frontend/ASTPrinter.h ------------------------------------------------------------------===//
//
// The `--emit=ast` dump: a stable, indented tree with `<line:col>` on each node.

#pragma once

#include "frontend/AST.h"

#include <iosfwd>
#include <string>

namespace tdsl {

/// Writes a readable dump of `m` (binary operators fully parenthesised, resolved callees
/// named). The output depends only on the module, never on paths or addresses.
/// With `only` set, the dump holds the imports, the func, graph or extern of that name and
/// the schedules that name it (`--func`).
void dumpAST(const ast::Module &m, std::ostream &os, const std::string &only = "");

/// An expression in surface syntax with every binary operation parenthesised.
std::string exprToString(const ast::Expr &e);

} // namespace tdsl
