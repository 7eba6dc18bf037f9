#!/usr/bin/env python3
"""scripts/banners.py — give every C/C++ file of the tree the one banner style (LLVM's).

    //===- path/to/File.cpp - One-line summary ----------------------------------===//
    //
    // Longer description (the file's former leading comment).

Usage: scripts/banners.py [--check] [FILE...]   (default: every tracked .cpp/.h/.c/.cu)
With --check, lists the files whose first line is not such a banner and exits 1 if any.
"""
import re
import subprocess
import sys

WIDTH = 100
BANNER = re.compile(r"^//===- (\S+) (- .*?)?-*===//$")


def banner(path, summary):
    head = f"//===- {path} - {summary} " if summary else f"//===- {path} "
    tail = "===//"
    if len(head) + len(tail) + 1 > WIDTH:  # summary too long: path alone
        head = f"//===- {path} "
    return head + "-" * max(1, WIDTH - len(head) - len(tail)) + tail


def cap(text):
    """Capitalizes prose, not code: `loops(block): …` stays as written."""
    word = text.split(" ")[0]
    if any(c in word for c in "(_.`[<") or not word.isalpha():
        return text
    return text[0].upper() + text[1:]


def convert(path, text):
    lines = text.split("\n")
    if lines and BANNER.match(lines[0]):
        return text
    # The leading comment block, if any.
    i = 0
    comment = []
    while i < len(lines) and lines[i].startswith("//"):
        comment.append(lines[i][2:].lstrip(" ") if lines[i].startswith("// ") or lines[i] == "//" else lines[i][2:])
        i += 1
    rest = lines[i:]
    name = path.rsplit("/", 1)[-1]
    summary = ""
    if comment:
        first = comment[0]
        m = re.match(r"^(\S+)\s+[—-]+\s+(.*)$", first)
        if m and (m.group(1) == name or m.group(1).endswith(name)):
            comment[0] = m.group(2)
        # A first sentence short enough becomes the summary line.
        para = []
        for c in comment:
            if not c.strip():
                break
            para.append(c.strip())
        joined = " ".join(para)
        cand = joined.rstrip(".")
        if len(banner(path, cand)) == WIDTH and f"- {cand} " in banner(path, cand):
            summary = cap(cand)
            comment = comment[len(para):]
            while comment and not comment[0].strip():
                comment = comment[1:]
        elif comment[0]:
            comment[0] = cap(comment[0])
    elif path.endswith((".cpp", ".c", ".cu")):
        hdr = re.search(r'#include "([^"]+\.h)"', text)
        if hdr:
            comment = [f"Implementation of {hdr.group(1)}."]
    out = [banner(path, summary)]
    if comment:
        out.append("//")
        out += [("// " + c).rstrip() for c in comment]
    if rest and rest[0].strip() and not rest[0].startswith("#pragma") and not rest[0].startswith("#include"):
        pass
    return "\n".join(out + ([""] if rest and rest[0].strip() else []) + rest) if comment or rest else "\n".join(out)


def main():
    args = sys.argv[1:]
    check = "--check" in args
    files = [a for a in args if a != "--check"]
    if not files:
        files = subprocess.run(["git", "ls-files", "*.cpp", "*.h", "*.c", "*.cu"],
                               capture_output=True, text=True, check=True).stdout.split()
    bad = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        new = convert(f, text)
        if new != text:
            bad.append(f)
            if not check:
                with open(f, "w", encoding="utf-8") as fh:
                    fh.write(new)
    if check:
        for f in bad:
            print(f"{f}: first line is not a '//===- {f} ...===//' banner")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
