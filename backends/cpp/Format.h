//===- backends/cpp/Format.h - Formatting of emitted C++ ----------------------------------===//
//
// The C++ backend's output goes through clang::format (the Clang libraries, not a process):
// LLVM style with 100 columns, the house style of the repository (STYLE.md point 11).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tdsl::cpp {

/// `code` reformatted in LLVM style, 100 columns. `fileName` only selects the language (a
/// `.h` or `.cpp` name formats as C++, which also suits a C header).
///
/// Guarantees: deterministic (same input, same output); the tokens are unchanged, only
/// whitespace and line breaks move; `code` itself is returned if clang::format refuses it.
std::string formatCpp(const std::string &code, const std::string &fileName = "tdsl.cpp");

} // namespace tdsl::cpp
