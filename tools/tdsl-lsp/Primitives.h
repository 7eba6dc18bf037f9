//===- tools/tdsl-lsp/Primitives.h - The schedule primitives of spec §7, for the editor -------===//
//
// What hover and completion say about each schedule primitive: its argument shape, what it
// returns, what it does (the table of language.md §8), and a completion snippet; the entries
// are in tools/tdsl-lsp/Primitives.def.

#pragma once

#include <string>
#include <vector>

namespace tdsl::lsp {

struct PrimitiveInfo {
  std::string name;
  std::string signature; ///< `split(loop, [f0, …, fn])`
  std::string result;    ///< `n+1 loops`, `block`, or empty when it returns nothing
  std::string handle;    ///< what each returned handle is: `loop`, `block`, `integer` or empty
  std::string doc;       ///< what it does and when it is refused
  std::string snippet;   ///< LSP snippet syntax
  /// What each argument is, for resolving names: 'b' block, 'l' loop, 'f' buffer, '*' other.
  std::string args;
};

/// Every primitive of the specification, in its order.
const std::vector<PrimitiveInfo> &schedulePrimitives();
/// The primitive named `name`, or null.
const PrimitiveInfo *findPrimitive(const std::string &name);
/// True when the compiler applies `name` (every primitive of the specification now).
bool primitiveImplemented(const std::string &name);

} // namespace tdsl::lsp
