//===- tools/tdsl-lsp/Server.cpp - The TDSL language server -----------------------------------===//
//
// Implementation of tools/tdsl-lsp/Server.h.

#include "tools/tdsl-lsp/Server.h"

#include "tools/tdsl-lsp/Analysis.h"
#include "tools/tdsl-lsp/Primitives.h"

#include <cctype>
#include <set>
#include <stdexcept>

namespace tdsl::lsp {

namespace {

const char *kVersion = "0.1.0";

/// A request that cannot be answered: becomes a JSON-RPC error response.
struct RpcError : std::runtime_error {
  RpcError(int code, const std::string &message) : std::runtime_error(message), code(code) {}
  int code;
};

const json &field(const json &obj, const std::string &key, const std::string &path) {
  if (!obj.is_object() || !obj.contains(key))
    throw RpcError(errc::InvalidParams, "missing '" + path + "'");
  return obj.at(key);
}

const json &object(const json &obj, const std::string &key, const std::string &path) {
  const json &v = field(obj, key, path);
  if (!v.is_object())
    throw RpcError(errc::InvalidParams, "'" + path + "' must be an object");
  return v;
}

std::string string(const json &obj, const std::string &key, const std::string &path) {
  const json &v = field(obj, key, path);
  if (!v.is_string())
    throw RpcError(errc::InvalidParams, "'" + path + "' must be a string");
  return v.get<std::string>();
}

uint32_t position(const json &obj, const std::string &key, const std::string &path) {
  const json &v = field(obj, key, path);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t(1) << 30))
    throw RpcError(errc::InvalidParams, "'" + path + "' must be a non-negative integer");
  return v.get<uint32_t>();
}

/// A checked LSP Position.
json checkedPosition(const json &params, const std::string &key) {
  const json &p = object(params, key, "params." + key);
  return json{{"line", position(p, "line", "params." + key + ".line")},
              {"character", position(p, "character", "params." + key + ".character")}};
}

/// Byte offset of an LSP position in `text`, clamped to the text.
size_t offsetOf(const std::string &text, uint32_t line, uint32_t character) {
  size_t start = 0;
  for (uint32_t l = 0; l < line; ++l) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      return text.size();
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view lineText(text.data() + start,
                            (end == std::string::npos ? text.size() : end) - start);
  return start + std::min<size_t>(utf16ToBytes(lineText, character), lineText.size());
}

bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// ---------------------------------------------------------------------------------------------
// Where in a schedule the cursor is, from the text alone (it need not parse while typing)
// ---------------------------------------------------------------------------------------------

struct ScheduleContext {
  enum Where { None, Primitive, Argument } where = None;
  std::string func;
  std::vector<std::string> handles, params;
};

ScheduleContext scheduleContext(const std::string &text, size_t offset) {
  // The word being typed is not part of the context.
  while (offset > 0 && identChar(text[offset - 1]))
    --offset;
  struct Token {
    std::string text;
    bool ident;
  };
  std::vector<Token> tokens;
  for (size_t i = 0; i < offset;) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (text.compare(i, 2, "//") == 0) {
      size_t nl = text.find('\n', i);
      i = nl == std::string::npos ? offset : nl;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t e = text.find("*/", i + 2);
      i = e == std::string::npos ? offset : e + 2;
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < offset && text[j] != '"' && text[j] != '\n')
        j += text[j] == '\\' ? 2 : 1;
      tokens.push_back({"\"\"", false});
      i = j + 1;
    } else if (identChar(c)) {
      size_t j = i;
      while (j < offset && identChar(text[j]))
        ++j;
      tokens.push_back({text.substr(i, j - i), true});
      i = j;
    } else {
      tokens.push_back({std::string(1, c), false});
      ++i;
    }
  }

  ScheduleContext ctx;
  int depth = 0;
  bool inside = false, pending = false, nameOpen = false, expectName = false;
  int paren = 0;
  std::string prevIdent;
  std::vector<Token> stmt;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token &t = tokens[i];
    if (inside) {
      if (t.text == "{") {
        ++depth;
      } else if (t.text == "}") {
        if (--depth == 0) {
          inside = false;
          continue;
        }
      } else if (t.text == ";" && depth == 1) {
        // `a, b = prim(…);` binds handles a and b.
        int level = 0;
        std::vector<std::string> names;
        for (const Token &s : stmt) {
          if (s.text == "(" || s.text == "[")
            ++level;
          else if (s.text == ")" || s.text == "]")
            --level;
          else if (level == 0 && s.text == "=") {
            for (const std::string &n : names)
              if (n != "_")
                ctx.handles.push_back(n);
            break;
          } else if (level == 0 && s.ident)
            names.push_back(s.text);
        }
        stmt.clear();
        continue;
      }
      stmt.push_back(t);
      continue;
    }
    if (pending) {
      if (t.ident && expectName) {
        ctx.func += t.text;
        expectName = false;
        nameOpen = true;
        continue;
      }
      if (t.text == "." && nameOpen) {
        ctx.func += ".";
        expectName = true;
        continue;
      }
      nameOpen = expectName = false;
      if (t.text == "(") {
        ++paren;
      } else if (t.text == ")") {
        --paren;
      } else if (t.text == "=" && paren > 0 && !prevIdent.empty()) {
        ctx.params.push_back(prevIdent);
      } else if (t.text == "{" && paren <= 0) {
        pending = false;
        inside = true;
        depth = 1;
        stmt.clear();
        ctx.handles.clear();
        continue;
      } else if (t.text == ";" || t.text == "}") {
        pending = false;
      }
      prevIdent = t.ident ? t.text : "";
    }
    if (t.text == "{") {
      ++depth;
    } else if (t.text == "}") {
      depth = std::max(0, depth - 1);
    } else if (depth == 0 && t.ident && t.text == "schedule") {
      pending = expectName = true;
      nameOpen = false;
      paren = 0;
      ctx.func.clear();
      ctx.params.clear();
      prevIdent.clear();
    }
  }
  if (!inside)
    return ScheduleContext{};
  int level = 0;
  bool assigned = false;
  for (const Token &s : stmt) {
    if (s.text == "(" || s.text == "[")
      ++level;
    else if (s.text == ")" || s.text == "]")
      --level;
    else if (level == 0 && s.text == "=")
      assigned = true;
  }
  if (level > 0)
    ctx.where = ScheduleContext::Argument;
  else if (stmt.empty() || (assigned && stmt.back().text == "="))
    ctx.where = ScheduleContext::Primitive;
  return ctx;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

struct Server::Document {
  std::string uri, path, text;
  json version;
  std::shared_ptr<Analysis> current;
  std::shared_ptr<Analysis> lastParsed; // the latest analysis whose main file parsed
};

Server::Server(ImportOptions imports, Sender send)
    : imports_(std::move(imports)), send_(std::move(send)) {}

Server::~Server() = default;

void Server::error(const json &id, int code, const std::string &message) {
  send_(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::transportError(const std::string &what) {
  error(nullptr, errc::ParseError, "parse error: " + what);
}

void Server::handle(const std::string &body) {
  json msg = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) {
    error(nullptr, errc::ParseError, "parse error: the message is not valid JSON");
    return;
  }
  dispatch(msg);
}

void Server::dispatch(const json &msg) {
  if (!msg.is_object()) {
    error(nullptr, errc::InvalidRequest,
          msg.is_array() ? "invalid request: batches are not supported"
                         : "invalid request: a message must be a JSON object");
    return;
  }
  bool hasId = msg.contains("id");
  json id = hasId ? msg["id"] : json(nullptr);
  if (hasId && !id.is_string() && !id.is_number_integer() && !id.is_null()) {
    error(nullptr, errc::InvalidRequest, "invalid request: 'id' must be a number or a string");
    return;
  }
  if (msg.value("jsonrpc", json()) != "2.0") {
    error(id, errc::InvalidRequest, "invalid request: 'jsonrpc' must be \"2.0\"");
    return;
  }
  if (!msg.contains("method")) {
    // A response to a request of ours (the server sends none): ignored.
    if (hasId && (msg.contains("result") || msg.contains("error")))
      return;
    error(id, errc::InvalidRequest, "invalid request: 'method' is missing");
    return;
  }
  if (!msg["method"].is_string()) {
    error(id, errc::InvalidRequest, "invalid request: 'method' must be a string");
    return;
  }
  std::string method = msg["method"];
  json params = msg.contains("params") && !msg["params"].is_null() ? msg["params"] : json::object();
  if (!params.is_object() && !params.is_array()) {
    if (hasId)
      error(id, errc::InvalidParams, "'params' must be an object or an array");
    return;
  }
  if (!hasId) {
    try {
      notification(method, params);
    } catch (const std::exception &) {
      // A notification has no response; a malformed one is dropped.
    }
    return;
  }
  try {
    json result = request(method, params);
    send_(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
  } catch (const RpcError &e) {
    error(id, e.code, e.what());
  } catch (const std::exception &e) {
    error(id, errc::InternalError, std::string("internal error: ") + e.what());
  }
}

json Server::request(const std::string &method, const json &params) {
  if (method == "initialize") {
    if (initialized_)
      throw RpcError(errc::InvalidRequest, "initialize was already called");
    return initialize(params);
  }
  if (!initialized_)
    throw RpcError(errc::ServerNotInitialized, "the server is not initialized");
  if (shutdown_)
    throw RpcError(errc::InvalidRequest, "the server is shutting down");
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  if (method == "textDocument/hover")
    return hover(params);
  if (method == "textDocument/definition")
    return definition(params);
  if (method == "textDocument/documentSymbol")
    return documentSymbol(params);
  if (method == "textDocument/completion")
    return completion(params);
  throw RpcError(errc::MethodNotFound, "method not found: " + method);
}

void Server::notification(const std::string &method, const json &params) {
  if (method == "exit") {
    exited_ = true;
    return;
  }
  if (!initialized_ || shutdown_)
    return;
  if (method == "textDocument/didOpen")
    didOpen(params);
  else if (method == "textDocument/didChange")
    didChange(params);
  else if (method == "textDocument/didClose")
    didClose(params);
  else if (method == "textDocument/didSave" || method == "workspace/didChangeWatchedFiles")
    // An import may have changed on disk: check every open document again.
    for (auto &[uri, doc] : docs_)
      analyze(*doc);
  // Others (initialized, $/cancelRequest, $/setTrace, …) need nothing.
}

json Server::initialize(const json &params) {
  if (params.is_object()) {
    const json caps = params.value("capabilities", json::object());
    if (caps.is_object()) {
      json snippet = caps.value(
          "/textDocument/completion/completionItem/snippetSupport"_json_pointer, json(false));
      snippets_ = snippet.is_boolean() && snippet.get<bool>();
    }
  }
  initialized_ = true;
  return json{{"capabilities",
               {{"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", true}}},
                {"hoverProvider", true},
                {"definitionProvider", true},
                {"documentSymbolProvider", true},
                {"completionProvider",
                 {{"triggerCharacters", json::array()}, {"resolveProvider", false}}}}},
              {"serverInfo", {{"name", "tdsl-lsp"}, {"version", kVersion}}}};
}

Server::Document *Server::document(const json &params) {
  const json &td = object(params, "textDocument", "params.textDocument");
  std::string uri = string(td, "uri", "params.textDocument.uri");
  auto it = docs_.find(uri);
  return it == docs_.end() ? nullptr : it->second.get();
}

void Server::analyze(Document &doc) {
  doc.current = std::make_shared<Analysis>(doc.uri, doc.path, doc.text, imports_);
  if (doc.current->parsed())
    doc.lastParsed = doc.current;
  json out{{"uri", doc.uri}, {"diagnostics", doc.current->diagnostics()}};
  if (doc.version.is_number_integer())
    out["version"] = doc.version;
  send_(json{{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"}, {"params", out}});
}

void Server::didOpen(const json &params) {
  const json &td = object(params, "textDocument", "params.textDocument");
  auto doc = std::make_unique<Document>();
  doc->uri = string(td, "uri", "params.textDocument.uri");
  doc->text = string(td, "text", "params.textDocument.text");
  doc->version = td.value("version", json());
  if (!uriToPath(doc->uri, doc->path))
    doc->path = doc->uri; // untitled: imports are relative to the working directory
  Document &d = *doc;
  docs_[d.uri] = std::move(doc);
  analyze(d);
}

void Server::didChange(const json &params) {
  Document *doc = document(params);
  if (!doc)
    return;
  const json &changes = field(params, "contentChanges", "params.contentChanges");
  if (!changes.is_array())
    return;
  for (const json &c : changes) {
    std::string text = string(c, "text", "params.contentChanges[].text");
    if (!c.contains("range")) {
      doc->text = text;
      continue;
    }
    json start = checkedPosition(object(c, "range", "range"), "start");
    json end = checkedPosition(object(c, "range", "range"), "end");
    size_t b = offsetOf(doc->text, start["line"], start["character"]);
    size_t e = offsetOf(doc->text, end["line"], end["character"]);
    if (e < b)
      std::swap(b, e);
    doc->text.replace(b, e - b, text);
  }
  doc->version = object(params, "textDocument", "params.textDocument").value("version", json());
  analyze(*doc);
}

void Server::didClose(const json &params) {
  Document *doc = document(params);
  if (!doc)
    return;
  std::string uri = doc->uri;
  docs_.erase(uri);
  send_(json{{"jsonrpc", "2.0"},
             {"method", "textDocument/publishDiagnostics"},
             {"params", {{"uri", uri}, {"diagnostics", json::array()}}}});
}

const Occurrence *Server::occurrence(const json &params, Document *&doc) {
  json pos = checkedPosition(params, "position");
  doc = document(params);
  if (!doc || !doc->current->parsed())
    return nullptr;
  return doc->current->occurrenceAt(doc->current->fromLsp(pos));
}

json Server::hover(const json &params) {
  Document *doc = nullptr;
  const Occurrence *o = occurrence(params, doc);
  if (!o || o->hover.empty())
    return nullptr;
  return json{{"contents", {{"kind", "markdown"}, {"value", o->hover}}},
              {"range", doc->current->toLsp(o->range.begin.file, o->range)}};
}

json Server::definition(const json &params) {
  Document *doc = nullptr;
  const Occurrence *o = occurrence(params, doc);
  if (!o || o->defFile == 0)
    return nullptr;
  return doc->current->location(o->defFile, o->defRange);
}

json Server::documentSymbol(const json &params) {
  Document *doc = document(params);
  if (!doc)
    return nullptr;
  // While the buffer does not parse, the outline of its last parsed state stays.
  const Analysis *a = doc->current->parsed() ? doc->current.get() : doc->lastParsed.get();
  return a ? a->documentSymbols() : json::array();
}

json Server::completion(const json &params) {
  json pos = checkedPosition(params, "position");
  Document *doc = document(params);
  json items = json::array();
  json out{{"isIncomplete", false}, {"items", items}};
  if (!doc)
    return out;
  ScheduleContext ctx =
      scheduleContext(doc->text, offsetOf(doc->text, pos["line"], pos["character"]));
  auto markdown = [](const std::string &s) { return json{{"kind", "markdown"}, {"value", s}}; };
  if (ctx.where == ScheduleContext::Primitive) {
    for (const PrimitiveInfo &p : schedulePrimitives()) {
      std::string doc = p.doc;
      if (!primitiveImplemented(p.name))
        doc += "\n\nNot implemented yet.";
      json item{{"label", p.name},
                {"kind", 3},
                {"detail", p.signature + (p.result.empty() ? "" : " -> " + p.result)},
                {"documentation", markdown(doc)},
                {"insertText", snippets_ ? p.snippet : p.name},
                {"insertTextFormat", snippets_ ? 2 : 1}};
      items.push_back(item);
    }
  } else if (ctx.where == ScheduleContext::Argument) {
    std::set<std::string> seen;
    auto add = [&](const std::string &label, int kind, const std::string &detail,
                   const std::string &documentation) {
      if (!seen.insert(label).second)
        return;
      json item{{"label", label}, {"kind", kind}, {"detail", detail}};
      if (!documentation.empty())
        item["documentation"] = markdown(documentation);
      items.push_back(item);
    };
    for (auto it = ctx.handles.rbegin(); it != ctx.handles.rend(); ++it)
      add(*it, 6, "handle", "");
    for (const std::string &p : ctx.params)
      add(p, 21, "schedule parameter", "");
    const Analysis *a = doc->current->parsed() ? doc->current.get() : doc->lastParsed.get();
    if (a)
      if (std::optional<FuncNames> names = a->funcNames(ctx.func)) {
        for (const auto &[name, hover] : names->blocks)
          add(name, 22, "block", hover);
        for (const auto &[name, hover] : names->buffers)
          add(name, 5, "buffer", hover);
      }
  }
  out["items"] = items;
  return out;
}

} // namespace tdsl::lsp
