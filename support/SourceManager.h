//===- support/SourceManager.h ----------------------------------------------------------------===//
//
// Owns the text of every file the compiler reads and maps locations to lines.

#pragma once

#include "support/SourceLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdsl {

class SourceManager {
public:
  /// Registers a buffer under `path` (the name diagnostics print) and returns its file id (>= 1).
  uint32_t addBuffer(std::string path, std::string text);

  /// Reads `path` from disk and registers it; std::nullopt and `error` set on failure (a
  /// missing or unreadable file, a directory).
  std::optional<uint32_t> addFile(const std::string &path, std::string &error);

  /// Records that `file` was loaded by the import at `at` (in another file): diagnostics in
  /// `file` are then preceded by "In file imported from …" lines (Clang's include stack).
  void setImportedFrom(uint32_t file, SourceLoc at);
  /// The import that loaded `file`; invalid for a file given on the command line.
  SourceLoc importedFrom(uint32_t file) const;

  const std::string &path(uint32_t file) const;
  const std::string &text(uint32_t file) const;

  /// The text of 1-based `line` of `file`, without its line terminator.
  std::string_view lineText(uint32_t file, uint32_t line) const;
  uint32_t lineCount(uint32_t file) const;

  /// Location of the last character of the file (the end of its last non-empty line).
  SourceLoc endOfFile(uint32_t file) const;

private:
  struct File {
    std::string path, text;
    std::vector<size_t> lineStarts;
    SourceLoc importedFrom;
  };
  std::vector<File> files_;
  const File &get(uint32_t file) const;
};

} // namespace tdsl
