# tdsl-lsp on bad input: broken framing, bad JSON, invalid requests, unknown methods, bad
# params, requests before initialize and after shutdown — each answered with the JSON-RPC
# error it calls for, never a crash; then the exit statuses of the ways a session can end.
# Also: a client without snippet support, and UTF-16 positions on a line with an astral
# character.
# usage: malformed.py TDSL-LSP STDLIB-DIR INPUTS-DIR
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client, expect, pos, rng, uri  # noqa: E402

server, stdlib, inputs = sys.argv[1:4]


def error_response(msg, id_, code, message, what):
    expect(msg, {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}, what)


c = Client(server, ["--stdlib", stdlib])
doc = uri(os.path.join(inputs, "astral.tdsl"))

# Before initialize: requests are refused, notifications dropped.
c.notify("textDocument/didOpen", {"textDocument": {"uri": doc, "version": 1, "text": ""}})
rid = c.request("textDocument/hover", {"textDocument": {"uri": doc}, "position": pos(0, 0)})
error_response(c.recv(), rid, -32002, "the server is not initialized", "a request before initialize")

# Framing and JSON errors.
c.send_body("{not json")
error_response(c.recv(), None, -32700, "parse error: the message is not valid JSON", "bad JSON")
c.send_body("42")
error_response(c.recv(), None, -32600, "invalid request: a message must be a JSON object",
               "a JSON number")
c.send_body("[]")
error_response(c.recv(), None, -32600, "invalid request: batches are not supported", "a batch")
c.raw(b"Content-Type: application/vscode-jsonrpc\r\n\r\n")
error_response(c.recv(), None, -32700, "parse error: missing Content-Length header",
               "no Content-Length")
c.raw(b"Content-Length: lots\r\n\r\n")
error_response(c.recv(), None, -32700, "parse error: bad Content-Length 'lots'", "a bad length")
c.raw(b"hello\r\n\r\n")
error_response(c.recv(), None, -32700, "parse error: malformed header line 'hello'",
               "a line that is no header")
c.send_body(json.dumps({"id": 7, "method": "initialize"}))
error_response(c.recv(), 7, -32600, "invalid request: 'jsonrpc' must be \"2.0\"", "no jsonrpc")
c.send_body(json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}))
error_response(c.recv(), None, -32600, "invalid request: 'id' must be a number or a string",
               "an object id")
c.send_body(json.dumps({"jsonrpc": "2.0", "id": "s1", "method": 3}))
error_response(c.recv(), "s1", -32600, "invalid request: 'method' must be a string",
               "a numeric method")
c.send_body(json.dumps({"jsonrpc": "2.0", "id": 8}))
error_response(c.recv(), 8, -32600, "invalid request: 'method' is missing", "no method")
# A response from the client (to nothing the server asked) is ignored.
c.send_body(json.dumps({"jsonrpc": "2.0", "id": 99, "result": None}))

# Initialize, without snippet support; a second initialize is refused.
result = c.call("initialize", {"capabilities": {}})
expect(result["serverInfo"], {"name": "tdsl-lsp", "version": "0.1.0"}, "initialize")
msg = c.call("initialize", {"capabilities": {}})
error_response(msg, msg["id"], -32600, "initialize was already called", "a second initialize")

# Unknown methods: a request gets MethodNotFound, a notification nothing.
c.notify("workspace/didChangeConfiguration", {"settings": {}})
c.notify("$/cancelRequest", {"id": 1})
msg = c.call("textDocument/formatting", {"textDocument": {"uri": doc}, "options": {}})
error_response(msg, msg["id"], -32601, "method not found: textDocument/formatting",
               "an unknown method")

# Bad params.
msg = c.call("textDocument/hover", {"textDocument": {"uri": doc}})
error_response(msg, msg["id"], -32602, "missing 'params.position'", "hover without a position")
msg = c.call("textDocument/hover", {"textDocument": {"uri": doc}, "position": pos(-1, 0)})
error_response(msg, msg["id"], -32602, "'params.position.line' must be a non-negative integer",
               "a negative line")
msg = c.call("textDocument/definition", {"textDocument": {"uri": 5}, "position": pos(0, 0)})
error_response(msg, msg["id"], -32602, "'params.textDocument.uri' must be a string",
               "a numeric uri")
msg = c.call("textDocument/documentSymbol", "oops")
error_response(msg, msg["id"], -32602, "'params' must be an object or an array", "string params")
# A malformed notification is dropped; the server goes on.
c.notify("textDocument/didOpen", {"textDocument": {"uri": doc}})
c.notify("textDocument/didChange", {"textDocument": {"uri": doc}, "contentChanges": 3})
expect(c.call("textDocument/hover", {"textDocument": {"uri": doc}, "position": pos(0, 0)}), None,
       "hover on a document that is not open")

# Positions are UTF-16 code units: the astral character before A counts two.
text = "func f(/* \U0001F600 */ A: f32[4]) -> (B: f32[4]) {\n  block B(i: spatial 4) {\n" \
       "    B[i] = A[i];\n  }\n}\n"
c.notify("textDocument/didOpen", {"textDocument": {"uri": doc, "version": 1, "text": text}})
expect(c.recv()["params"]["diagnostics"], [], "the astral file is clean")
a = 7 + 3 + 2 + 4  # `func f(`, `/* `, the emoji (2 units), ` */ `
expect(c.call("textDocument/hover", {"textDocument": {"uri": doc}, "position": pos(0, a)}),
       {"contents": {"kind": "markdown", "value": "```tdsl\nA: f32[4]\n```\ninput of func `f`\n"},
        "range": rng(0, a, 0, a + 1)}, "hover after an astral character")
expect(c.call("textDocument/definition", {"textDocument": {"uri": doc}, "position": pos(2, 11)}),
       {"uri": doc, "range": rng(0, a, 0, a + 1)}, "definition after an astral character")
# An incremental edit after the astral character: `A` becomes `AA` everywhere it is written.
c.notify("textDocument/didChange", {"textDocument": {"uri": doc, "version": 2}, "contentChanges": [
    {"range": rng(0, a, 0, a + 1), "text": "AA"}]})
d = c.recv()["params"]["diagnostics"]
expect([(x["message"], x["range"]) for x in d], [("use of undeclared buffer 'A'", rng(2, 11, 2, 12))],
       "an edit after an astral character")

# Without snippet support, completion inserts the bare name.
c.notify("textDocument/didChange", {"textDocument": {"uri": doc, "version": 3}, "contentChanges": [
    {"text": text + "schedule f {\n  \n}\n"}]})
c.recv()
items = c.call("textDocument/completion", {"textDocument": {"uri": doc}, "position": pos(6, 2)})
expect({k: items["items"][1][k] for k in ("label", "insertText", "insertTextFormat")},
       {"label": "split", "insertText": "split", "insertTextFormat": 1}, "a plain completion")

# After shutdown, requests are refused; exit then ends with status 0.
expect(c.call("shutdown"), None, "shutdown")
msg = c.call("textDocument/hover", {"textDocument": {"uri": doc}, "position": pos(0, 0)})
error_response(msg, msg["id"], -32600, "the server is shutting down", "a request after shutdown")
c.notify("exit", {})
expect(c.wait(), 0, "exit after shutdown")

# exit without shutdown: status 1.
c = Client(server, ["--stdlib", stdlib])
c.call("initialize", {"capabilities": {}})
c.notify("exit", {})
expect(c.wait(), 1, "exit without shutdown")

# The input ends (mid-message): status 1, no crash.
c = Client(server, ["--stdlib", stdlib])
c.call("initialize", {"capabilities": {}})
c.raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
c.proc.stdin.close()
expect(c.wait(), 1, "end of input inside a message")
print("malformed: ok")
