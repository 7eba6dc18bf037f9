#!/usr/bin/env python3
"""test/layers/check_layers_test.py — tests of scripts/check-layers.py (docs/architecture.md,
"Layers"): the repository's tree follows the rules, and a fixture tree with forbidden includes
and a folder cycle is refused with one message per offending include and exit status 1.

Usage: /usr/bin/python3 test/layers/check_layers_test.py [-v]   (ctest runs it as `layers`)
"""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "check-layers.py")

# The fixture: path -> text. Comments say what each include is for.
FIXTURE = {
    "grammar/Toy.g4": "grammar Toy;\nstart : EOF ;\n",
    "support/Source.h": "#pragma once\n",
    "ir/IR.h": (
        '#pragma once\n'
        '#include "support/Source.h"\n'  # down: fine
        '#include <vector>\n'  # the standard library: not ours
        '#include "antlr4-runtime.h"\n'  # third-party, found on the system path: not ours
    ),
    "ir/Bad.h": (
        '#pragma once\n'
        '#include "frontend/Parser.h"\n'  # up: frontend/ is above ir/
        '#include "ToyParser.h"\n'  # the generated parser outside frontend/
    ),
    "frontend/Parser.h": "#pragma once\n",
    "frontend/Parser.cpp": (
        '#include "Parser.h"\n'  # beside the file: frontend/Parser.h
        '#include "ToyParser.h"\n'  # the generated parser (build tree): fine here
        '#include "ir/IR.h"\n'
        '#include <passes/Pipeline.h>\n'  # found from the root too: passes/ is not below
    ),
    "passes/Pipeline.h": (
        '#pragma once\n'
        '#include "passes/graph/Fuse.h"\n'
        '#include "passes/schedule/Split.h"\n'
    ),
    "passes/graph/Fuse.h": (
        '#pragma once\n'
        '#include "passes/schedule/Split.h"\n'  # graph → schedule ...
        '#include "ir/IR.h"\n'
    ),
    "passes/schedule/Split.h": "#pragma once\n#include \"ir/IR.h\"\n",
    "passes/schedule/Split.cpp": (
        '#include "Split.h"\n'
        '\n'
        '#include "../graph/Fuse.h"\n'  # ... and schedule → graph: a cycle
    ),
    "passes/lower/Lower.cpp": (
        '#include "passes/Pipeline.h"\n'  # a subfolder of passes/ including its top level
    ),
    "backends/cpp/Emit.cpp": (
        '#include "ir/IR.h"\n'
        '  #  include "passes/graph/Fuse.h"\n'  # a backend including passes/
        '// #include "tools/Driver.h"\n'  # a comment
        '/*\n#include "tools/Driver.h"\n*/\n'  # a block comment
        'const char *kPrelude = R"x(\n#include "tools/Driver.h"\n)x";\n'  # emitted code
        'int n = 1\'000;\n'
        '#include "runtime/Tensor.h"\n'  # below: fine
        '#include "tune/Tuner.h"\n'  # above (the file is missing: still tune/'s); line 12
    ),
    "runtime/Tensor.h": '#pragma once\n#include "ir/IR.h"\n',
    "tune/Tuner.cpp": '#include "backends/cpp/Emit.h"\n#include "passes/schedule/Split.h"\n',
    "tools/driver/Driver.cpp": (
        '#include "frontend/Parser.h"\n#include "passes/Pipeline.h"\n'
        '#include "backends/cpp/Emit.h"\n#include "tune/Tuner.h"\n'
    ),
    "test/Not.cpp": '#include "tools/driver/Driver.h"\n',  # not a library folder: not read
}

EXPECTED = [
    'backends/cpp/Emit.cpp:2: `#include "passes/graph/Fuse.h"`: folder backends/ must not include '
    'folder passes/ (the backends read the LoweredModule; the IR facts they share with the passes '
    'are in ir/)',
    'backends/cpp/Emit.cpp:12: `#include "tune/Tuner.h"`: folder backends/ must not include '
    'folder tune/ (tune/ is above backends/ in the order support → ir → runtime → frontend → '
    'passes → backends → tune → tools)',
    'frontend/Parser.cpp:4: `#include <passes/Pipeline.h>`: folder frontend/ must not include '
    'folder passes/ (passes/ is above frontend/ in the order support → ir → runtime → frontend → '
    'passes → backends → tune → tools)',
    'ir/Bad.h:2: `#include "frontend/Parser.h"`: folder ir/ must not include folder frontend/ '
    '(frontend/ is above ir/ in the order support → ir → runtime → frontend → passes → backends '
    '→ tune → tools)',
    'ir/Bad.h:3: `#include "ToyParser.h"`: folder ir/ must not include folder grammar/ '
    "(grammar/ is the parser ANTLR generates from grammar/*.g4 into the build tree, frontend/'s "
    'alone)',
    'passes/graph/Fuse.h:2: `#include "passes/schedule/Split.h"`: folder passes/graph/ must not '
    'include folder passes/schedule/ (include cycle: passes/graph/ → passes/schedule/ → '
    'passes/graph/)',
    'passes/lower/Lower.cpp:1: `#include "passes/Pipeline.h"`: folder passes/lower/ must not '
    'include folder passes/ top level (passes/ top level is the pipeline, which runs the steps of '
    'its subfolders)',
    'passes/schedule/Split.cpp:3: `#include "../graph/Fuse.h"`: folder passes/schedule/ must not '
    'include folder passes/graph/ (include cycle: passes/schedule/ → passes/graph/ → '
    'passes/schedule/)',
    'tune/Tuner.cpp:1: `#include "backends/cpp/Emit.h"`: folder tune/ must not include folder '
    'backends/ (the tuner builds and runs candidates through tools/tdsl-tune: the driver and '
    'tdsl-run)',
]


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


class CheckLayers(unittest.TestCase):
    def test_repository(self):
        """(a) The tree follows the rules (the default root is the script's repository)."""
        rc, out, err = run()
        self.assertEqual(rc, 0, "check-layers refused the tree:\n" + err)
        self.assertRegex(out, r"^check-layers: \d+ files in \d+ folders, \d+ project includes: "
                         r"layers support → ir → runtime → frontend → passes → backends → tune → "
                         r"tools, no cycle\n$")
        self.assertEqual(err, "")

    def test_fixture(self):
        """(b) Forbidden includes and a cycle: one message per include, exit status 1."""
        with tempfile.TemporaryDirectory() as root:
            write(root, FIXTURE)
            rc, out, err = run("--root", root)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(out, "")
        lines = err.splitlines()
        self.assertEqual(lines[:-1], EXPECTED)
        self.assertEqual(lines[-1], 'check-layers: 9 forbidden includes in 7 files '
                                    '(docs/architecture.md, "Layers")')

    def test_fixture_fixed(self):
        """The same fixture without the offending includes passes."""
        fixed = dict(FIXTURE)
        del fixed["ir/Bad.h"]
        fixed["passes/schedule/Split.cpp"] = '#include "Split.h"\n'
        fixed["passes/lower/Lower.cpp"] = '#include "passes/graph/Fuse.h"\n'
        fixed["backends/cpp/Emit.cpp"] = '#include "ir/IR.h"\n#include "runtime/Tensor.h"\n'
        fixed["frontend/Parser.cpp"] = FIXTURE["frontend/Parser.cpp"].split("#include <")[0]
        fixed["tune/Tuner.cpp"] = '#include "passes/schedule/Split.h"\n'
        with tempfile.TemporaryDirectory() as root:
            write(root, fixed)
            rc, out, err = run("--root", root)
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(out.startswith("check-layers: 13 files in 11 folders, 19 project includes"),
                        out)

    def test_not_a_tree(self):
        with tempfile.TemporaryDirectory() as root:
            rc, out, err = run("--root", root)
        self.assertEqual(rc, 2)
        self.assertIn("holds none of the folders", err)


if __name__ == "__main__":
    unittest.main()
