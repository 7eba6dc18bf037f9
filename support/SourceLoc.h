//===- support/SourceLoc.h --------------------------------------------------------------------===//
//
// Positions in user source files, shared by every layer of the compiler.

#pragma once

#include <cstdint>

namespace tdsl {

/// A 1-based line/column position in a file registered with the SourceManager.
/// A default-constructed location is invalid (line 0) and prints without a position.
struct SourceLoc {
  uint32_t file = 0, line = 0, col = 0;
  bool valid() const { return line != 0; }
};

/// A half-open character range [begin, end) on one line or across lines.
struct SourceRange {
  SourceLoc begin, end;
  SourceRange() = default;
  SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
  explicit SourceRange(SourceLoc b) : begin(b), end(b) {}
  bool valid() const { return begin.valid(); }
};

inline bool operator==(const SourceLoc &a, const SourceLoc &b) {
  return a.file == b.file && a.line == b.line && a.col == b.col;
}
inline bool operator<(const SourceLoc &a, const SourceLoc &b) {
  if (a.file != b.file)
    return a.file < b.file;
  if (a.line != b.line)
    return a.line < b.line;
  return a.col < b.col;
}

} // namespace tdsl
