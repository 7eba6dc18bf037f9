//===- tools/tdsl-lsp/Protocol.h - LSP framing, URIs and positions ----------------------------===//
//
// The transport of the Language Server Protocol (a `Content-Length` header, a blank line, a
// JSON body), `file://` URIs, and the conversion between the compiler's positions (1-based
// lines, 1-based columns counted in bytes, as Clang counts them) and LSP's (0-based lines,
// columns in UTF-16 code units).

#pragma once

#include "support/SourceLoc.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>

namespace tdsl::lsp {

using json = nlohmann::json;

enum class ReadStatus {
  Ok,        ///< `body` holds one message.
  Eof,       ///< the input ended (possibly inside a message).
  BadHeader, ///< a header block without a usable Content-Length; `body` says what was wrong.
};

/// Reads the next message. Header lines end with "\r\n" (a bare "\n" is accepted too).
ReadStatus readMessage(std::istream &in, std::string &body);

/// Writes `body` with its Content-Length header and flushes.
void writeMessage(std::ostream &out, const std::string &body);

/// `file:///a%20b/c.tdsl` → `/a b/c.tdsl`; false for other schemes.
bool uriToPath(const std::string &uri, std::string &path);
/// An absolute path → `file:///…`, percent-encoding what RFC 3986 requires.
std::string pathToUri(const std::string &path);

/// Column conversions within one line of UTF-8 text, 0-based: a byte offset to UTF-16 code
/// units and back. A column inside a character maps to the character's start; columns past
/// the line's end are kept as they are (one unit per byte) so that end-of-line positions survive.
uint32_t bytesToUtf16(std::string_view line, uint32_t bytes);
uint32_t utf16ToBytes(std::string_view line, uint32_t units);

/// JSON-RPC error codes used by the server.
namespace errc {
constexpr int ParseError = -32700;
constexpr int InvalidRequest = -32600;
constexpr int MethodNotFound = -32601;
constexpr int InvalidParams = -32602;
constexpr int InternalError = -32603;
constexpr int ServerNotInitialized = -32002;
} // namespace errc

} // namespace tdsl::lsp
