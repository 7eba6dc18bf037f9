// ASTPrinter.h — the `--emit=ast` dump: a stable, indented tree with `<line:col>` on each node.
#pragma once

#include "frontend/AST.h"

#include <iosfwd>
#include <string>

namespace tdsl {

/// Writes a readable dump of `m` (binary operators fully parenthesised, resolved callees
/// named). The output depends only on the module, never on paths or addresses.
void dumpAST(const ast::Module &m, std::ostream &os);

/// An expression in surface syntax with every binary operation parenthesised.
std::string exprToString(const ast::Expr &e);

} // namespace tdsl
