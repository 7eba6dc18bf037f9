//===- tools/tdsl-lsp/Primitives.cpp - The schedule primitives of spec §7, for the editor -----===//
//
// Implementation of tools/tdsl-lsp/Primitives.h.

#include "tools/tdsl-lsp/Primitives.h"

#include "passes/schedule/Apply.h"

#include <algorithm>

namespace tdsl::lsp {

const std::vector<PrimitiveInfo> &schedulePrimitives() {
  static const std::vector<PrimitiveInfo> table = {
#define TDSL_PRIMITIVE(NAME, SIGNATURE, RESULT, HANDLE, DOC, SNIPPET, ARGS)                        \
  {NAME, SIGNATURE, RESULT, HANDLE, DOC, SNIPPET, ARGS},
#include "tools/tdsl-lsp/Primitives.def"
  };
  return table;
}

const PrimitiveInfo *findPrimitive(const std::string &name) {
  for (const PrimitiveInfo &p : schedulePrimitives())
    if (p.name == name)
      return &p;
  return nullptr;
}

bool primitiveImplemented(const std::string &name) {
  const std::vector<std::string> &known = schedulePrimitiveNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

} // namespace tdsl::lsp
