//===- tools/tdsl-lsp/Protocol.cpp - LSP framing, URIs and positions --------------------------===//
//
// Implementation of tools/tdsl-lsp/Protocol.h.

#include "tools/tdsl-lsp/Protocol.h"

#include <cctype>
#include <istream>
#include <ostream>

namespace tdsl::lsp {

namespace {

/// The longest message body accepted; a larger one is skipped and reported.
constexpr size_t kMaxBody = size_t(256) << 20;

/// One header line without its terminator; false at end of input.
bool readLine(std::istream &in, std::string &line) {
  line.clear();
  if (!std::getline(in, line))
    return false;
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  return true;
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Decodes the UTF-8 sequence at `s[i]`, advancing `i`; invalid bytes count as one code point.
uint32_t decode(std::string_view s, size_t &i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size())
    n = 1;
  uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

} // namespace

ReadStatus readMessage(std::istream &in, std::string &body) {
  body.clear();
  std::string line;
  // Skip blank lines between messages.
  do {
    if (!readLine(in, line))
      return ReadStatus::Eof;
  } while (line.empty());
  long long length = -1;
  std::string problem;
  while (true) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      problem = "malformed header line '" + line.substr(0, 80) + "'";
    } else if (lower(trim(line.substr(0, colon))) == "content-length") {
      std::string v = trim(line.substr(colon + 1));
      length = -1;
      if (!v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == std::string::npos)
        length = std::stoll(v);
      else
        problem = "bad Content-Length '" + v.substr(0, 40) + "'";
    }
    if (!readLine(in, line))
      return ReadStatus::Eof;
    if (line.empty())
      break;
  }
  if (length < 0) {
    body = problem.empty() ? "missing Content-Length header" : problem;
    return ReadStatus::BadHeader;
  }
  if (static_cast<size_t>(length) > kMaxBody) {
    in.ignore(length);
    body = "message of " + std::to_string(length) + " bytes is too large";
    return in ? ReadStatus::BadHeader : ReadStatus::Eof;
  }
  body.resize(static_cast<size_t>(length));
  in.read(body.data(), length);
  if (in.gcount() != length)
    return ReadStatus::Eof;
  return ReadStatus::Ok;
}

void writeMessage(std::ostream &out, const std::string &body) {
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body;
  out.flush();
}

bool uriToPath(const std::string &uri, std::string &path) {
  const std::string scheme = "file://";
  if (uri.compare(0, scheme.size(), scheme) != 0)
    return false;
  std::string rest = uri.substr(scheme.size());
  // file://host/path: only the local host (empty or "localhost") is a path here.
  size_t slash = rest.find('/');
  if (slash == std::string::npos)
    return false;
  std::string host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost")
    return false;
  rest = rest.substr(slash);
  path.clear();
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      path += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      path += rest[i];
    }
  }
  return true;
}

std::string pathToUri(const std::string &path) {
  static const char *hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

/// A place in a line: its byte offset and the UTF-16 code units before it.
struct Column {
  size_t bytes = 0;
  uint32_t units = 0;
};

/// Walks `line` a character at a time while the column after the next character is `within`
/// the target; the last column that is (a character's start), or the line's end.
template <typename Within> Column walkColumns(std::string_view line, Within within) {
  Column at;
  while (at.bytes < line.size()) {
    Column next = at;
    uint32_t cp = decode(line, next.bytes);
    next.units += cp >= 0x10000 ? 2 : 1;
    if (!within(next))
      break;
    at = next;
  }
  return at;
}

} // namespace

uint32_t bytesToUtf16(std::string_view line, uint32_t bytes) {
  Column c = walkColumns(line, [&](const Column &next) { return next.bytes <= bytes; });
  return c.units + (bytes > c.bytes ? bytes - static_cast<uint32_t>(c.bytes) : 0);
}

uint32_t utf16ToBytes(std::string_view line, uint32_t units) {
  Column c = walkColumns(line, [&](const Column &next) { return next.units <= units; });
  // Past the line's end, one unit per byte; inside a surrogate pair, the character's start.
  bool pastEnd = c.bytes >= line.size();
  return static_cast<uint32_t>(c.bytes) + (pastEnd && units > c.units ? units - c.units : 0);
}

} // namespace tdsl::lsp
