# tdsl-lsp over the whole corpus: every .tdsl file under the given folders is opened, then
# hover and definition are asked at the start of every word, document symbols and completion
# once; then the buffer is cut at a few offsets (fixed seed) and asked again. Every request must
# get its response, every definition must point into a file that exists, and the server must
# never die. usage: corpus.py TDSL-LSP STDLIB-DIR FOLDER...
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client, expect, fail, pos, uri  # noqa: E402

server, stdlib, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
files = sorted(os.path.join(d, f) for folder in folders for d, _, fs in os.walk(folder)
               for f in fs if f.endswith(".tdsl"))
rand = random.Random(18)
c = Client(server, ["--stdlib", stdlib])
c.call("initialize", {"capabilities": {}})
requests = hovers = definitions = 0


def utf16_columns(line):
    """The UTF-16 column of each character of `line`."""
    cols, col = [], 0
    for ch in line:
        cols.append(col)
        col += 2 if ord(ch) > 0xFFFF else 1
    return cols


def ask(u, text, every_word):
    global requests, hovers, definitions
    lines = text.split("\n")
    spots = []
    for n, line in enumerate(lines):
        cols = utf16_columns(line)
        for m in re.finditer(r"[A-Za-z_\"][A-Za-z0-9_.]*", line):
            spots.append((n, cols[m.start()]))
    if not every_word:
        spots = rand.sample(spots, min(20, len(spots)))
    # Pipelined: every request is sent, then the responses are read.
    asked = {}
    for line, ch in spots:
        for method in ("textDocument/hover", "textDocument/definition"):
            rid = c.request(method, {"textDocument": {"uri": u}, "position": pos(line, ch)})
            asked[rid] = (method, line, ch)
    for _ in range(len(asked)):
        msg = c.recv()
        method, line, ch = asked.pop(msg.get("id"), (None, 0, 0))
        requests += 1
        if method is None or "error" in msg:
            fail("bad response at %s:%d:%d: %s" % (u, line, ch, msg))
        result = msg["result"]
        if result is None:
            continue
        if method.endswith("hover"):
            hovers += 1
        else:
            definitions += 1
            target = result["uri"]
            if target != u and not os.path.exists(target[len("file://"):]):
                fail("definition at %s:%d:%d points to %s" % (u, line, ch, target))
    for method, extra in (("textDocument/documentSymbol", {}),
                          ("textDocument/completion",
                           {"position": pos(rand.randrange(len(lines)), rand.randrange(20))})):
        result = c.call(method, dict({"textDocument": {"uri": u}}, **extra))
        requests += 1
        if isinstance(result, dict) and "error" in result:
            fail("%s on %s: %s" % (method, u, result["error"]))


for path in files:
    text = open(path, encoding="utf-8", errors="replace").read()
    u = uri(path)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": u, "version": 1, "text": text}})
    expect(c.recv()["method"], "textDocument/publishDiagnostics", "diagnostics of " + path)
    ask(u, text, True)
    for version in range(2, 5):
        cut = text[:rand.randrange(len(text) + 1)]
        c.notify("textDocument/didChange", {"textDocument": {"uri": u, "version": version},
                                            "contentChanges": [{"text": cut}]})
        expect(c.recv()["params"]["version"], version, "diagnostics of a cut " + path)
        ask(u, cut, False)
    c.notify("textDocument/didClose", {"textDocument": {"uri": u}})
    c.recv()

expect(c.call("shutdown"), None, "shutdown")
c.notify("exit", {})
expect(c.wait(), 0, "exit status")
print("corpus: %d files, %d requests, %d hovers, %d definitions" %
      (len(files), requests, hovers, definitions))
