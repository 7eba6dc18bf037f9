# A scripted LSP client for the tests of tdsl-lsp: starts the server, writes framed JSON-RPC
# messages, reads framed answers (with a timeout: a hang fails the test) and compares them
# exactly with what the test expects.
import json
import os
import subprocess
import sys
import threading
import queue


class Client:
    def __init__(self, server, args=()):
        self.proc = subprocess.Popen([server, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.inbox = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.decode().rstrip("\r\n")
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.inbox.put(json.loads(body))

    def raw(self, data):
        """Writes bytes as they are (framing included)."""
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send_body(self, body):
        data = body.encode() if isinstance(body, str) else body
        self.raw(b"Content-Length: %d\r\n\r\n" % len(data) + data)

    def notify(self, method, params):
        self.send_body(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}))

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_body(json.dumps(msg))
        return rid

    def recv(self, timeout=60):
        try:
            msg = self.inbox.get(timeout=timeout)
        except queue.Empty:
            fail("no message from the server within %d s" % timeout)
        if msg is None:
            fail("the server closed its output")
        return msg

    def call(self, method, params=None):
        """A request and its response (the result; the whole message for an error)."""
        rid = self.request(method, params)
        msg = self.recv()
        expect(msg.get("id"), rid, "response id of " + method)
        return msg["result"] if "result" in msg else msg

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("the server did not exit")


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def expect(actual, expected, what):
    if actual != expected:
        fail("%s:\n  expected %s\n  actual   %s" % (what, json.dumps(expected, sort_keys=True),
                                                  json.dumps(actual, sort_keys=True)))


def rng(l0, c0, l1, c1):
    return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}


def pos(line, character):
    return {"line": line, "character": character}


def uri(path):
    from urllib.parse import quote
    return "file://" + quote(os.path.abspath(path))


def find(text, needle, nth=0, delta=0):
    """The 0-based (line, character) of the nth occurrence of `needle` in `text`, plus delta
    characters (the files are ASCII where positions are taken)."""
    at = -1
    for _ in range(nth + 1):
        at = text.find(needle, at + 1)
        if at < 0:
            fail("test bug: %r (occurrence %d) not in the text" % (needle, nth))
    at += delta
    line = text.count("\n", 0, at)
    return line, at - (text.rfind("\n", 0, at) + 1)


def span(text, needle, nth=0, word=None):
    """The LSP range of the nth occurrence of `needle`, or of `word` inside it."""
    delta, size = 0, len(needle)
    if word is not None:
        delta, size = needle.index(word), len(word)
    line, ch = find(text, needle, nth, delta)
    return rng(line, ch, line, ch + size)


def at(text, needle, nth=0, delta=0):
    line, ch = find(text, needle, nth, delta)
    return pos(line, ch)
