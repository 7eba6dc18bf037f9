# A scripted editing session with tdsl-lsp: initialize, open kernels.tdsl (imports "nn" and
# lib/helpers.tdsl), hover, go to definition (in the file, into an imported file, into the
# standard library), document symbols, schedule completion, changes (full and incremental)
# that add and remove errors, an import with an error, close, shutdown and exit.
# Every response is compared exactly.
# usage: session.py TDSL-LSP STDLIB-DIR INPUTS-DIR
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lspclient import Client, at, expect, fail, rng, span, uri  # noqa: E402

server, stdlib, inputs = sys.argv[1:4]
path = os.path.join(inputs, "kernels.tdsl")
text = open(path).read()
doc = uri(path)
nn_path = os.path.join(stdlib, "nn.tdsl")
nn_text = open(nn_path).read()
nn = uri(nn_path)
helpers_path = os.path.join(inputs, "lib", "helpers.tdsl")
helpers_text = open(helpers_path).read()
helpers = uri(helpers_path)

c = Client(server, ["--stdlib", stdlib])
init = c.call("initialize", {
    "processId": None, "rootUri": None,
    "capabilities": {"textDocument": {"completion": {"completionItem": {"snippetSupport": True}}}}})
expect(init, {
    "capabilities": {
        "textDocumentSync": {"openClose": True, "change": 2, "save": True},
        "hoverProvider": True,
        "definitionProvider": True,
        "documentSymbolProvider": True,
        "completionProvider": {"triggerCharacters": [], "resolveProvider": False}},
    "serverInfo": {"name": "tdsl-lsp", "version": "0.1.0"}}, "initialize")
c.notify("initialized", {})


def diagnostics_after(method, params):
    c.notify(method, params)
    msg = c.recv()
    expect(msg.get("method"), "textDocument/publishDiagnostics", "notification after " + method)
    return msg["params"]


# -- open: a clean file has no diagnostics ---------------------------------------------------
expect(diagnostics_after("textDocument/didOpen", {"textDocument": {
    "uri": doc, "languageId": "tdsl", "version": 1, "text": text}}),
    {"uri": doc, "version": 1, "diagnostics": []}, "diagnostics of kernels.tdsl")


# -- hover -----------------------------------------------------------------------------------
def hover(position):
    return c.call("textDocument/hover", {"textDocument": {"uri": doc}, "position": position})


def check_hover(needle, nth, word, value, what):
    r = span(text, needle, nth, word)
    expect(hover(r["start"]), {"contents": {"kind": "markdown", "value": value}, "range": r},
           "hover on " + what)


check_hover("A: f32[M, N]", 0, "A", "```tdsl\nA: f32[M, N]\n```\ninput of func `rowsum`\n",
            "an input buffer")
check_hover("A[i, k] * s", 0, "A", "```tdsl\nA: f32[M, N]\n```\ninput of func `rowsum`\n",
            "a use of an input buffer")
check_hover("A[i, k] * s", 0, "s", "```tdsl\ns: f32\n```\nscalar input of func `rowsum`\n",
            "a scalar input")
check_hover("f32[M, N]", 0, "M", "```tdsl\nM: i64\n```\nshape variable of func `rowsum`\n",
            "a shape variable")
check_hover("R: f32[M]", 0, "M", "```tdsl\nM: i64\n```\nshape variable of func `rowsum`\n",
            "a use of a shape variable")
check_hover("R[i] += t", 0, "R", "```tdsl\nR: f32[M]\n```\noutput of func `rowsum`\n",
            "an output buffer")
check_hover("A[i, k] * s", 0, "k", "```tdsl\nk: reduce N\n```\naxis of block `R` (i64)\n",
            "a reduce axis")
check_hover("R[i] += t", 0, "t", "```tdsl\nlet t: f32 = A[i, k] * s\n```\nblock-local scalar\n",
            "a let (its dtype inferred by the checker)")
check_hover("Y[i, j] += A", 0, "Y",
            "```tdsl\nalloc Y: f32[128, 128]\n```\nintermediate buffer of func `mm_relu`\n",
            "an alloc buffer")
check_hover("block Y(", 0, "Y",
            "```tdsl\nblock Y(i: spatial 128, j: spatial 128, k: reduce 128)\n```\n"
            "block of func `mm_relu`\n", "a block name")
check_hover("B[vi] = A[vi]", 0, "vi", "```tdsl\nvi: spatial 64 = i\n```\naxis of block `B` (i64)\n",
            "an axis with a binding")
check_hover("= i)", 0, "i",
            "```tdsl\nfor i in 0..64 parallel\n```\nloop variable (i64)\n", "a loop variable")
check_hover("f32(S)", 0, "S", "```tdsl\nS: i64\n```\ncompile-time constant of func `copy`\n",
            "a generic constant")
check_hover("func rowsum", 0, "rowsum",
            "```tdsl\n// Row sums of a matrix, scaled by s.\n"
            "func rowsum(A: f32[M, N], s: f32) -> (R: f32[M])\n```\n", "a func's name")
check_hover("my_gemm(", 0, "my_gemm",
            "```tdsl\nextern pure func my_gemm(a: f32[M, K], b: f32[K, N]) -> (c: f32[M, N]) = "
            "\"my_gemm\"\n```\n", "an extern")
# Graphs: values typed by the checker, callees with their signatures and doc comments.
check_hover("call nn.linear", 0, "nn.linear",
            "```tdsl\n// y[i, j] = sum_k x[i, k] * w[j, k] + b[j]   (x \u00b7 w\u1d40 + b, PyTorch's "
            "nn.Linear)\nfunc linear(x: f32[B, K], w: f32[N, K], b: f32[N]) -> (y: f32[B, N])\n```\n"
            "from module `nn`\n", "an nn operator")
check_hover("call helpers.scale", 0, "helpers.scale",
            "```tdsl\n// y = 2 x\nfunc scale(x: f32[B, N]) -> (y: f32[B, N])\n```\n"
            "from module `helpers`\n", "a func of an imported file")
check_hover("h = call", 0, "h",
            "```tdsl\nh: f32[T, 128]\n```\nresult of `nn.linear` in graph `mlp`\n",
            "a graph value")
check_hover("scale(h)", 0, "h",
            "```tdsl\nh: f32[T, 128]\n```\nresult of `nn.linear` in graph `mlp`\n",
            "a use of a graph value")
check_hover("x: f32[T, 784]", 0, "x", "```tdsl\nx: f32[T, 784]\n```\ninput of graph `mlp`\n",
            "a graph input")
check_hover("graph mlp", 0, "mlp",
            "```tdsl\ngraph mlp(x: f32[T, 784], w0: f32[128, 784], b0: f32[128]) -> f32[T, 128]\n"
            "```\n", "a graph's name")
check_hover('import "nn"', 0, '"nn"', "```tdsl\nimport \"nn\"\n```\nmodule `nn` (`nn.tdsl`)\n",
            "an import")
# Schedules: the scheduled func, primitives, handles, parameters, blocks and buffers.
check_hover("split(j", 0, "split",
            "```tdsl\nsplit(loop, [f0, \u2026, fn]) -> n+1 loops\n```\nAt most one `_`; a factor "
            "that does not divide adds a `where`; refused when the factors' product is below "
            "the extent.\n", "a schedule primitive")
check_hover("j0, j1 = split", 0, "j0",
            "```tdsl\nj0: loop\n```\nresult 1 of `split` in the schedule of `mm_relu`\n",
            "a loop handle")
check_hover("reorder(j0", 0, "j0",
            "```tdsl\nj0: loop\n```\nresult 1 of `split` in the schedule of `mm_relu`\n",
            "a use of a loop handle")
check_hover("[_, F]", 0, "F",
            "```tdsl\nF = 4\n```\nschedule parameter of `mm_relu` (`-D F=\u2026` or "
            "`-D mm_relu.F=\u2026`)\n", "a schedule parameter")
check_hover("reverse_compute_at(C", 0, "C",
            "```tdsl\nblock C(i: spatial 128, j: spatial 128)\n```\nblock of func `mm_relu`\n",
            "a block named in a schedule")
check_hover("schedule mm_relu", 0, "mm_relu",
            "```tdsl\nfunc mm_relu(A: f32[128, 128], B: f32[128, 128]) -> (C: f32[128, 128])\n"
            "```\n", "the scheduled func")
# Nothing to say: a keyword, a literal, a comment.
for needle, what in [("block R", "a keyword"), ("0.0", "a literal"), ("// Row", "a comment")]:
    expect(hover(at(text, needle)), None, "hover on " + what)


# -- go to definition ------------------------------------------------------------------------
def definition(position):
    return c.call("textDocument/definition", {"textDocument": {"uri": doc}, "position": position})


def check_def(needle, nth, word, target_uri, target_text, target_needle, target_nth, target_word,
              what):
    expect(definition(span(text, needle, nth, word)["start"]),
           {"uri": target_uri, "range": span(target_text, target_needle, target_nth, target_word)},
           "definition of " + what)


check_def("A[i, k] * s", 0, "A", doc, text, "A: f32[M, N]", 0, "A", "an input buffer")
check_def("R: f32[M]", 0, "M", doc, text, "A: f32[M, N]", 0, "M", "a shape variable")
check_def("R[i] += t", 0, "t", doc, text, "t = A", 0, "t", "a let")
check_def("Y[i, j] += A", 0, "Y", doc, text, "alloc Y", 0, "Y", "an alloc buffer")
check_def("Y[i, j] += A", 0, "j", doc, text, "j: spatial 128, k", 0, "j", "an axis")
check_def("= i)", 0, "i", doc, text, "for i in", 0, "i", "a loop variable")
check_def("scale(h)", 0, "h", doc, text, "h = call", 0, "h", "a graph value")
check_def("n r;", 0, "r", doc, text, "r = call", 0, "r", "a returned value")
check_def("call nn.linear", 0, "linear", nn, nn_text, "func linear", 0, "linear",
          "an nn operator (into the standard library)")
check_def("call helpers.scale", 0, "scale", helpers, helpers_text, "func scale", 0, "scale",
          "a func of an imported file")
check_def("reorder(j0, k", 0, "k", doc, text, "i, j, k = loops", 0, "k", "a handle")
check_def("decompose_reduction(Y", 0, "Y", doc, text, "block Y(", 0, "Y",
          "a block named in a schedule")
check_def("[_, F]", 0, "F", doc, text, "(F = 4)", 0, "F", "a schedule parameter")
check_def("schedule mm_relu", 0, "mm_relu", doc, text, "func mm_relu", 0, "mm_relu",
          "the scheduled func")
expect(definition(span(text, 'import "lib/helpers.tdsl"', 0, '"lib')["start"]),
       {"uri": helpers, "range": rng(0, 0, 0, 1)}, "definition of an import")
expect(definition(at(text, "split(j")), None, "definition of a primitive")


# -- document symbols ------------------------------------------------------------------------
def offset_pos(offset):
    line = text.count("\n", 0, offset)
    return {"line": line, "character": offset - (text.rfind("\n", 0, offset) + 1)}


def item_range(first, last):
    """From `first` to the end of the next `last` after it."""
    b = text.index(first)
    return {"start": offset_pos(b), "end": offset_pos(text.index(last, b) + len(last))}


def sym(name, detail, kind, range_, selection, children=None):
    s = {"name": name, "detail": detail, "kind": kind, "range": range_, "selectionRange": selection}
    if children is not None:
        s["children"] = children
    return s


def block_symbol(name, nth_block_line):
    line = "block %s(" % name
    b = at(text, line, nth_block_line)
    # A block ends at the first line that is "  }" after it.
    end_line = text.split("\n").index("  }", b["line"])
    return sym(name, "block", 23, {"start": b, "end": {"line": end_line, "character": 3}},
               span(text, line, nth_block_line, name))


copy_block_start = at(text, "block B(")
copy_block = sym("B", "block", 23, {"start": copy_block_start,
                                     "end": {"line": copy_block_start["line"] + 2, "character": 5}},
                 span(text, "block B(", 0, "B"))
expected_symbols = [
    sym("rowsum", "func", 12, item_range("func rowsum", "}\n}"), span(text, "func rowsum", 0, "rowsum"),
        [block_symbol("R", 0)]),
    sym("mm_relu", "func", 12, item_range("func mm_relu", "}\n}"),
        span(text, "func mm_relu", 0, "mm_relu"), [block_symbol("Y", 0), block_symbol("C", 0)]),
    sym("schedule mm_relu", "schedule", 3, item_range("schedule mm_relu", "parallel(i);\n}"),
        span(text, "schedule mm_relu", 0, "mm_relu")),
    sym("copy", "func", 12, item_range("func copy", "}\n  }\n}"), span(text, "func copy", 0, "copy"),
        [copy_block]),
    sym("my_gemm", "extern func", 12, item_range("extern pure", '"my_gemm";'),
        span(text, "func my_gemm", 0, "my_gemm")),
    sym("mlp", "graph", 12, item_range("graph mlp", "return r;\n}"), span(text, "graph mlp", 0, "mlp")),
]
expect(c.call("textDocument/documentSymbol", {"textDocument": {"uri": doc}}), expected_symbols,
       "document symbols")

# -- completion in a schedule ----------------------------------------------------------------
PRIMITIVES = ["loops", "split", "fuse", "reorder", "tile", "parallel", "vectorize", "unroll",
              "bind", "compute_at", "reverse_compute_at", "compute_inline",
              "reverse_compute_inline", "cache_read", "cache_write", "decompose_reduction",
              "rfactor", "set_scope", "storage_align", "transform_layout", "blockize", "tensorize",
              "sample_perfect_tile", "sample_categorical"]


def complete(position, what):
    result = c.call("textDocument/completion", {"textDocument": {"uri": doc}, "position": position})
    expect(result.get("isIncomplete"), False, "isIncomplete of completion " + what)
    return result["items"]


def change(new_text, version):
    global text
    text = new_text
    return diagnostics_after("textDocument/didChange", {
        "textDocument": {"uri": doc, "version": version}, "contentChanges": [{"text": new_text}]})


# At the start of a statement: every primitive of spec §7, as snippets.
items = complete(at(text, "  parallel(i);", 0, 2), "at a statement start")
expect([i["label"] for i in items], PRIMITIVES, "primitives offered at a statement start")
expect(items[1], {
    "label": "split", "kind": 3, "detail": "split(loop, [f0, \u2026, fn]) -> n+1 loops",
    "documentation": {"kind": "markdown", "value": "At most one `_`; a factor that does not divide "
                      "adds a `where`; refused when the factors' product is below the extent."},
    "insertText": "split(${1:loop}, [${2:_}, ${3:4}])", "insertTextFormat": 2}, "the split item")
expect(items[21]["documentation"]["value"],
       "Replaces the sub-tree by the micro-kernel of a declared `intrinsic NAME(DESC, IMPL);` "
       "whose description it matches (`import \"intrin\"` for the built-in CPU ones).",
       "tensorize names its intrinsic")
# After `handles =`, while the buffer does not parse (the word typed so far is ignored).
typing = text.replace("  parallel(i);\n", "  parallel(i);\n  a, b = sp\n")
d = change(typing, 2)
expect(len(d["diagnostics"]), 1, "one syntax error while typing")
items = complete(at(text, "a, b = sp", 0, 9), "after '='")
expect([i["label"] for i in items], PRIMITIVES, "primitives offered after '='")
# Inside a call's parentheses: handles (latest first), parameters, then the blocks and buffers
# of the scheduled func (from the last state of the file that parsed).
typing = text.replace("  a, b = sp\n", "  vectorize(\n")
change(typing, 3)
items = complete(at(text, "  vectorize(\n", 0, 12), "in an argument list")
expect([(i["label"], i["kind"], i["detail"]) for i in items], [
    ("j1", 6, "handle"), ("j0", 6, "handle"), ("k", 6, "handle"), ("j", 6, "handle"),
    ("i", 6, "handle"), ("F", 21, "schedule parameter"), ("C", 22, "block"), ("Y", 22, "block"),
    ("A", 5, "buffer"), ("B", 5, "buffer")], "names offered in an argument list")
# Outside schedules: nothing.
expect(complete(at(text, "  alloc Y"), "in a func body"), [], "completion outside schedules")
# While the buffer does not parse, hover and definition have nothing; the outline stays.
expect(hover(span(text, "A[i, k] * s", 0, "A")["start"]), None, "hover while not parsing")
expect(c.call("textDocument/documentSymbol", {"textDocument": {"uri": doc}}), expected_symbols,
       "document symbols while not parsing")

# -- diagnostics as you type -----------------------------------------------------------------
text = typing.replace("  vectorize(\n", "")
d = diagnostics_after("textDocument/didChange", {
    "textDocument": {"uri": doc, "version": 4},
    "contentChanges": [{"range": rng(at(text, "  parallel(i);")["line"] + 1, 0,
                                     at(text, "  parallel(i);")["line"] + 2, 0), "text": ""}]})
expect(d, {"uri": doc, "version": 4, "diagnostics": []}, "back to a clean file (incremental)")
# An incremental edit that makes a primitive refuse: the compiler's message, and its note as
# related information.
r = span(text, "reorder(j0, k, j1)", 0, "j0, k, j1")
text = text.replace("reorder(j0, k, j1)", "reorder(j1, k, j0)")
d = diagnostics_after("textDocument/didChange", {
    "textDocument": {"uri": doc, "version": 5}, "contentChanges": [{"range": r, "text": "j1, k, j0"}]})
expect(d, {"uri": doc, "version": 5, "diagnostics": [{
    "range": span(text, "reverse_compute_at(C", 0, "reverse_compute_at"),
    "severity": 1, "source": "tdsl",
    "message": "cannot apply 'reverse_compute_at': loop 'k' is bound to reduce axis 'vk' of block "
               "'Y', so one iteration of loop 'j_0' does not finish that reduction",
    "relatedInformation": [{"location": {"uri": doc, "range": span(text, "block Y(", 0, "block")},
                            "message": "producer 'Y' is here"}]}]}, "a refused primitive")
# A checker error with a note, and a warning.
text = text.replace("reorder(j1, k, j0)", "reorder(j0, k, j1)")
bad = text.replace("Y[i, j] += A[i, k] * B[k, j];", "Y[i, k] += A[i, k] * B[k, j];")
bad = bad.replace("    B[vi] = A[vi] * f32(S);\n", "")
d = change(bad, 6)
expect(d["diagnostics"], [
    {"range": span(text, "Y[i, k] +=", 0, "k"), "severity": 1, "source": "tdsl",
     "message": "written buffer 'Y' is indexed by reduce axis 'k'; only spatial axes may index "
                "what a block writes",
     "relatedInformation": [{"location": {"uri": doc, "range": span(text, "k: reduce 128", 0, "k")},
                             "message": "'k' is declared reduce here"}]},
    {"range": span(text, "B: f32[64]", 0, "B"), "severity": 2, "source": "tdsl",
     "message": "output 'B' is never written"}], "a checker error and a warning")
# A syntax error.
bad = text.replace("alloc Y: f32[128, 128];", "alloc Y: f32[128, 128]")
d = change(bad, 7)
expect(d["diagnostics"], [
    {"range": rng(at(text, "alloc Y")["line"], 24, at(text, "alloc Y")["line"], 24),
     "severity": 1, "source": "tdsl", "message": "expected ';' after alloc"}],
    "a syntax error")

# -- an error inside an imported file is shown at the import ---------------------------------
unsaved = uri(os.path.join(inputs, "unsaved.tdsl"))
unsaved_text = '// not on disk\nimport "lib/broken.tdsl";\n'
broken_path = os.path.join(inputs, "lib", "broken.tdsl")
broken_text = open(broken_path).read()
d = diagnostics_after("textDocument/didOpen", {"textDocument": {
    "uri": unsaved, "languageId": "tdsl", "version": 1, "text": unsaved_text}})
expect(d, {"uri": unsaved, "version": 1, "diagnostics": [{
    "range": span(unsaved_text, '"lib/broken.tdsl"'), "severity": 1, "source": "tdsl",
    "message": "in imported file 'broken.tdsl': mismatched dtypes f32 and i64 in '+'; convert one "
               "side explicitly, e.g. f32(...)",
    "relatedInformation": [{"location": {"uri": uri(broken_path),
                                         "range": span(broken_text, "x[i] + i")},
                            "message": "mismatched dtypes f32 and i64 in '+'; convert one side "
                                       "explicitly, e.g. f32(...)"}]}]},
    "an error in an imported file")
# A missing import.
unsaved_text = 'import "lib/missing.tdsl";\n'
d = diagnostics_after("textDocument/didChange", {
    "textDocument": {"uri": unsaved, "version": 2}, "contentChanges": [{"text": unsaved_text}]})
expect(d["diagnostics"], [{
    "range": span(unsaved_text, '"lib/missing.tdsl"'), "severity": 1, "source": "tdsl",
    "message": "file 'lib/missing.tdsl' not found relative to the importing file or in -I folders"}],
    "a missing import")

# -- close, shutdown, exit -------------------------------------------------------------------
expect(diagnostics_after("textDocument/didClose", {"textDocument": {"uri": unsaved}}),
       {"uri": unsaved, "diagnostics": []}, "diagnostics cleared on close")
expect(c.call("shutdown"), None, "shutdown")
c.notify("exit", None)
expect(c.wait(), 0, "exit status after shutdown and exit")
print("session: ok")
