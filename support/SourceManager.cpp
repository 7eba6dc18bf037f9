//===- support/SourceManager.cpp --------------------------------------------------------------===//
//
// Implementation of support/SourceManager.h.

#include "support/SourceManager.h"

#include <cassert>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tdsl {

uint32_t SourceManager::addBuffer(std::string path, std::string text) {
  File f;
  f.path = std::move(path);
  f.text = std::move(text);
  f.lineStarts.push_back(0);
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n')
      f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size());
}

std::optional<uint32_t> SourceManager::addFile(const std::string &path, std::string &error) {
  // A directory opens as a stream on Linux and reads as nothing (or throws): refuse it first.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "is a directory";
    return std::nullopt;
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = errno != 0 ? std::strerror(errno) : "cannot open file";
    if (!error.empty())
      error[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(error[0])));
    return std::nullopt;
  }
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    error = "cannot read file";
    return std::nullopt;
  }
  return addBuffer(path, std::move(text));
}

void SourceManager::setImportedFrom(uint32_t file, SourceLoc at) {
  assert(file >= 1 && file <= files_.size() && "invalid file id");
  files_[file - 1].importedFrom = at;
}

SourceLoc SourceManager::importedFrom(uint32_t file) const {
  if (file == 0 || file > files_.size())
    return {};
  return files_[file - 1].importedFrom;
}

const SourceManager::File &SourceManager::get(uint32_t file) const {
  assert(file >= 1 && file <= files_.size() && "invalid file id");
  return files_[file - 1];
}

const std::string &SourceManager::path(uint32_t file) const { return get(file).path; }
const std::string &SourceManager::text(uint32_t file) const { return get(file).text; }

uint32_t SourceManager::lineCount(uint32_t file) const {
  return static_cast<uint32_t>(get(file).lineStarts.size());
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  const File &f = get(file);
  if (line == 0 || line > f.lineStarts.size())
    return {};
  size_t begin = f.lineStarts[line - 1];
  size_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.text.size();
  if (end > begin && f.text[end - 1] == '\r')
    --end;
  return std::string_view(f.text).substr(begin, end - begin);
}

SourceLoc SourceManager::endOfFile(uint32_t file) const {
  uint32_t line = lineCount(file);
  while (line > 1 && lineText(file, line).empty())
    --line;
  uint32_t col = static_cast<uint32_t>(lineText(file, line).size()) + 1;
  return SourceLoc{file, line, col};
}

} // namespace tdsl
