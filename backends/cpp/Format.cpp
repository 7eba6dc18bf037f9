//===- backends/cpp/Format.cpp - Formatting of emitted C++ --------------------------------===//
#include "backends/cpp/Format.h"

#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>

#include <regex>
#include <sstream>

namespace tdsl::cpp {

namespace {

// clang::format puts every preprocessor line at column 0, and the comment before it too. A
// `#pragma omp` belongs to the loop under it, so pragmas are formatted as a call statement
// (indented like the code around it) and turned back afterwards.
const char *kPragmaCall = "tdsl_format_pragma_";

std::string hidePragmas(const std::string &code) {
  std::istringstream in(code);
  std::string line, out;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t");
    std::string_view rest =
        start == std::string::npos ? std::string_view() : std::string_view(line).substr(start);
    if (rest.starts_with("#pragma ") && rest.find_first_of("\"\\") == std::string_view::npos)
      out += std::string(kPragmaCall) + "(\"" + std::string(rest.substr(8)) + "\");\n";
    else
      out += line + "\n";
  }
  if (!code.empty() && code.back() != '\n')
    out.pop_back();
  return out;
}

std::string restorePragmas(const std::string &code) {
  static const std::regex call(std::string(kPragmaCall) + R"re(\(\s*"([^"]*)"\s*\);)re");
  return std::regex_replace(code, call, "#pragma $1");
}

} // namespace

std::string formatCpp(const std::string &code, const std::string &fileName) {
  clang::format::FormatStyle style =
      clang::format::getLLVMStyle(clang::format::FormatStyle::LK_Cpp);
  style.ColumnLimit = 100;
  // The emitter orders its includes itself (dlpack first, then the standard headers), and its
  // messages stay one string each (greppable).
  style.SortIncludes = clang::format::FormatStyle::SI_Never;
  style.BreakStringLiterals = false;
  std::string hidden = hidePragmas(code);
  std::vector<clang::tooling::Range> ranges{
      clang::tooling::Range(0, static_cast<unsigned>(hidden.size()))};
  clang::tooling::Replacements replacements =
      clang::format::reformat(style, hidden, ranges, fileName);
  llvm::Expected<std::string> formatted =
      clang::tooling::applyAllReplacements(hidden, replacements);
  if (!formatted) {
    llvm::consumeError(formatted.takeError());
    return code;
  }
  return restorePragmas(*formatted);
}

} // namespace tdsl::cpp
