#!/usr/bin/env python3
"""scripts/check-layers.py — the include layering of the libraries (docs/architecture.md,
"Layers").

Reads every C/C++ file of the library folders and resolves its `#include`s the way the build
does: a quoted include first beside the including file, then from the repository root (every
library's include directory); an include of the ANTLR parser generated from grammar/*.g4 into
the build tree is one of grammar/; anything else (the standard library, LLVM, ANTLR's runtime,
XGBoost, …) is not ours and not checked. Then it checks:

1. the order: a folder includes only itself and the folders below it,
       support → ir → runtime → frontend → passes → backends → tune → tools,
   and of those only the ones LAYERS allows it (frontend/, passes/ and backends/ all stand on
   ir/ and never include each other; tune/ stands on passes/);
2. grammar/ (the generated parser) is included by frontend/ only;
3. no subfolder of passes/ includes a header of passes/ top level (the Pipeline);
4. no include cycle between folders, a subfolder (passes/graph, backends/cpp, tools/driver, …)
   counting as a folder of its own.

Usage: /usr/bin/python3 scripts/check-layers.py [--root DIR]
Prints one line and exits 0 when the tree follows the rules; else prints each offending include
as `file:line: #include "X": folder A/ must not include folder B/ (reason)` and exits 1.
"""
import argparse
import os
import re
import sys
from collections import defaultdict, deque

# The library folders, bottom up, each with the folders below it that it may include.
LAYERS = [
    ("support", []),
    ("ir", ["support"]),
    ("runtime", ["support", "ir"]),
    ("frontend", ["support", "ir", "runtime"]),
    ("passes", ["support", "ir", "runtime"]),
    ("backends", ["support", "ir", "runtime"]),
    ("tune", ["support", "ir", "runtime", "passes"]),
    ("tools", ["support", "ir", "runtime", "frontend", "passes", "backends", "tune"]),
]
ORDER = [name for name, _ in LAYERS]
ALLOWED = {name: set(below) for name, below in LAYERS}

# Why a folder below in the order is still out of reach.
WHY_NOT = {
    ("passes", "frontend"): "the pipeline reaches the frontend through FrontendHooks, "
                            "passes/Pipeline.h",
    ("backends", "frontend"): "the backends start from the LoweredModule; only tools/ drive "
                              "the frontend",
    ("backends", "passes"): "the backends read the LoweredModule; the IR facts they share "
                            "with the passes are in ir/",
    ("tune", "frontend"): "the tuner works on the scheduled module; tools/tdsl-tune compiles "
                          "through the driver",
    ("tune", "backends"): "the tuner builds and runs candidates through tools/tdsl-tune: "
                          "the driver and tdsl-run",
}

# Generated in the build tree (grammar/CMakeLists.txt: ANTLR, -o gen -Xexact-output-dir).
GENERATED_FOLDER = "grammar"
GENERATED_USERS = {"frontend"}

# Folders whose top level sits above their subfolders: a subfolder never includes it.
TOP_ABOVE_SUBFOLDERS = {
    "passes": "passes/ top level is the pipeline, which runs the steps of its subfolders",
}

SOURCE_EXTENSIONS = (".h", ".hh", ".hpp", ".hxx", ".inc", ".def", ".ipp",
                     ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh")
DIRECTIVE = re.compile(r'[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)')
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s"]{0,16})\(')
GRAMMAR_NAME = re.compile(r"^\s*(lexer\s+|parser\s+)?grammar\s+(\w+)\s*;", re.M)


def includes(text):
    """(line, name, quoted) of each #include outside comments and string literals."""
    found = []
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            at_line_start = True
            i += 1
            continue
        if at_line_start:
            at_line_start = False
            m = DIRECTIVE.match(text, i)
            if m:
                found.append((line, m.group(1) or m.group(2), m.group(1) is not None))
                i = m.end()
                continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 2 if text.startswith("\\\n", i) else 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
            continue
        word_start = i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        m = RAW_STRING.match(text, i) if c in "uULR" and word_start else None
        if m:
            close = ")" + m.group(1) + '"'
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            line += text.count("\n", i, end)
            i = end
            continue
        if c == '"' or (c == "'" and word_start):  # (not a digit separator: 1'000)
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1
    return found


def generated_headers(root):
    """The headers ANTLR generates from grammar/*.g4: of a combined grammar G, GLexer.h, GParser.h
    and the listener and visitor headers G{,Base}{Listener,Visitor}.h; of a lexer or parser
    grammar G, G.h (and a parser grammar's listeners and visitors)."""
    names = set()
    gdir = os.path.join(root, GENERATED_FOLDER)
    if not os.path.isdir(gdir):
        return names
    for entry in sorted(os.listdir(gdir)):
        if not entry.endswith(".g4"):
            continue
        with open(os.path.join(gdir, entry), encoding="utf-8", errors="replace") as f:
            m = GRAMMAR_NAME.search(f.read())
        if not m:
            continue
        kind, g = (m.group(1) or "").strip(), m.group(2)
        if kind:
            names.add(g + ".h")
        else:
            names.update({g + "Lexer.h", g + "Parser.h"})
        if kind != "lexer":
            names.update(g + s + ".h" for s in ("Listener", "BaseListener", "Visitor",
                                                 "BaseVisitor"))
    return names


def source_files(root):
    for top in ORDER:
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                if f.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def resolve(root, path, name, quoted, generated):
    """The repository path `name` names from `path` (None: not ours)."""
    candidates = []
    if quoted:
        candidates.append(os.path.join(os.path.dirname(path), name))
    candidates.append(name)
    for c in candidates:
        rel = os.path.normpath(c).replace(os.sep, "/")
        if rel.startswith("../") or os.path.isabs(rel):
            continue
        if os.path.isfile(os.path.join(root, rel)):
            return rel
    if os.path.basename(name) in generated:
        return GENERATED_FOLDER + "/" + os.path.basename(name)
    # A header of a library folder not there (yet): still that folder's, for the rules.
    first = os.path.normpath(name).replace(os.sep, "/").split("/")[0]
    if first in ALLOWED and "/" in name:
        return os.path.normpath(name).replace(os.sep, "/")
    return None


def folder(path):
    """The folder a file counts to: a subfolder of a library folder is a folder of its own."""
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def order_text():
    return " → ".join(ORDER)


def layer_reason(a, b):
    """Why top-level folder a may not include top-level folder b (None: it may)."""
    if a == b:
        return None
    if b == GENERATED_FOLDER:
        if a in GENERATED_USERS:
            return None
        return "grammar/ is the parser ANTLR generates from grammar/*.g4 into the build tree, " \
               "frontend/'s alone"
    if b not in ALLOWED:
        return "%s/ is not a library folder" % b
    if b in ALLOWED[a]:
        return None
    if ORDER.index(b) > ORDER.index(a):
        return "%s/ is above %s/ in the order %s" % (b, a, order_text())
    return WHY_NOT.get((a, b), "%s/ may include only %s" %
                       (a, ", ".join(x + "/" for x in LAYERS[ORDER.index(a)][1]) or "itself"))


def shortest_path(graph, start, goal, nodes):
    """Folders from start to goal along graph edges inside `nodes` (BFS), or None."""
    prev = {start: None}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        if u == goal:
            path = []
            while u is not None:
                path.append(u)
                u = prev[u]
            return path[::-1]
        for v in sorted(graph[u]):
            if v in nodes and v not in prev:
                prev[v] = u
                queue.append(v)
    return None


def strongly_connected(graph):
    """Tarjan's components of more than one folder."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(root):
    """(messages, number of files, of folders, of project includes)."""
    generated = generated_headers(root)
    violations = []  # (path, line, name, quoted, message)
    edges = defaultdict(list)  # (from folder, to folder) -> [(path, line, name, quoted)]
    folders, nincludes = set(), 0
    files = list(source_files(root))
    for path in files:
        folders.add(folder(path))
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for line, name, quoted in includes(text):
            target = resolve(root, path, name, quoted, generated)
            if target is None:
                continue
            nincludes += 1
            a, b = folder(path), folder(target)
            ta, tb = path.split("/")[0], target.split("/")[0]
            why = layer_reason(ta, tb)
            if why:
                violations.append((path, line, name, quoted,
                                   "folder %s/ must not include folder %s/ (%s)" % (ta, tb, why)))
                continue
            if ta == tb and a != ta and b == tb and ta in TOP_ABOVE_SUBFOLDERS:
                violations.append((path, line, name, quoted,
                                   "folder %s/ must not include folder %s/ top level (%s)"
                                   % (a, tb, TOP_ABOVE_SUBFOLDERS[ta])))
                continue
            if a != b:
                edges[(a, b)].append((path, line, name, quoted))
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph[b]
    for comp in strongly_connected(graph):
        for (a, b), sites in sorted(edges.items()):
            if a in comp and b in comp:
                back = shortest_path(graph, b, a, comp)
                cycle = " → ".join(x + "/" for x in [a] + back)
                for path, line, name, quoted in sites:
                    violations.append((path, line, name, quoted,
                                       "folder %s/ must not include folder %s/ (include cycle: %s)"
                                       % (a, b, cycle)))
    messages = []
    for path, line, name, quoted, msg in sorted(violations):
        spelled = '"%s"' % name if quoted else "<%s>" % name
        messages.append("%s:%d: `#include %s`: %s" % (path, line, spelled, msg))
    return messages, len(files), len(folders), nincludes


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description="Checks the include layering of the libraries "
                                 "(docs/architecture.md, \"Layers\").")
    ap.add_argument("--root", default=here,
                    help="the source tree (default: the repository holding this script)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if not any(os.path.isdir(os.path.join(root, top)) for top in ORDER):
        print("check-layers: %s holds none of the folders %s" % (root, ", ".join(ORDER)),
              file=sys.stderr)
        return 2
    messages, nfiles, nfolders, nincludes = check(root)
    for m in messages:
        print(m, file=sys.stderr)
    if messages:
        files = len({m.split(":", 1)[0] for m in messages})
        print("check-layers: %d forbidden include%s in %d file%s (docs/architecture.md, "
              "\"Layers\")" % (len(messages), "" if len(messages) == 1 else "s",
                               files, "" if files == 1 else "s"), file=sys.stderr)
        return 1
    print("check-layers: %d files in %d folders, %d project includes: layers %s, no cycle"
          % (nfiles, nfolders, nincludes, order_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
