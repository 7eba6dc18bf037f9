//===- tools/tdsl-lsp/Server.h - The TDSL language server -------------------------------------===//
//
// A JSON-RPC 2.0 message handler for the Language Server Protocol: initialize/shutdown/exit,
// open documents kept in memory (full or incremental sync), diagnostics published after each
// change, hover, go to definition, document symbols and schedule-primitive completion.
// Transport-free: the caller feeds message bodies and sends what `send` is given, so tests can
// drive it in-process; tools/tdsl-lsp/tdsl-lsp.cpp runs it over stdio.

#pragma once

#include "frontend/ModuleLoader.h"
#include "tools/tdsl-lsp/Protocol.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace tdsl::lsp {

class Analysis;
struct Occurrence;

class Server {
public:
  using Sender = std::function<void(const json &)>;

  Server(ImportOptions imports, Sender send);
  ~Server();

  /// Handles one message body (bad JSON and bad requests are answered with JSON-RPC errors).
  void handle(const std::string &body);
  /// Answers a transport error (a header without Content-Length) with a parse error.
  void transportError(const std::string &what);

  /// True once `exit` arrived; the process then ends with exitCode() (0 after `shutdown`).
  bool exited() const { return exited_; }
  int exitCode() const { return shutdown_ ? 0 : 1; }

private:
  struct Document;

  void dispatch(const json &msg);
  json request(const std::string &method, const json &params);
  void notification(const std::string &method, const json &params);

  json initialize(const json &params);
  void didOpen(const json &params);
  void didChange(const json &params);
  void didClose(const json &params);
  json hover(const json &params);
  json definition(const json &params);
  json documentSymbol(const json &params);
  json completion(const json &params);

  Document *document(const json &params);
  /// What stands at `params.position` in the parsed document of `params` (null when the document
  /// is unknown or does not parse, or nothing is there); `doc` is set to the document.
  const Occurrence *occurrence(const json &params, Document *&doc);
  void analyze(Document &doc);
  void error(const json &id, int code, const std::string &message);

  ImportOptions imports_;
  Sender send_;
  std::map<std::string, std::unique_ptr<Document>> docs_;
  bool initialized_ = false, shutdown_ = false, exited_ = false;
  bool snippets_ = false; // the client takes snippet completions
};

} // namespace tdsl::lsp
