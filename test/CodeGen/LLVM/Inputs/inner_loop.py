"""Prints the innermost loop of an x86 assembly file that has fused multiply-adds: the loop is
the lines from a label to the last conditional branch back to it (AT&T syntax, as LLVM and
GCC print it). One line: `loop: fma=N ymm-fma=N mem-fma=N stack=N` with the FMA count, those
on ymm or zmm registers, those with a memory operand (a vector reloaded per use), and the
instructions that touch the stack (%rsp-relative spills and reloads), so that a test can say
the accumulators of a register tile stay in registers.
Usage: inner_loop.py FILE.s"""
import re
import sys

lines = [l.split("#")[0].rstrip() for l in open(sys.argv[1])]
labels = {}
for i, l in enumerate(lines):
    m = re.match(r"^(\.?L[\w.$]+):", l)
    if m:
        labels[m.group(1)] = i
best = None
for i, l in enumerate(lines):
    m = re.match(r"^\s+j\w+\s+(\.?L[\w.$]+)$", l)
    if not m or m.group(1) not in labels or labels[m.group(1)] >= i:
        continue
    body = lines[labels[m.group(1)]:i + 1]
    if not any("vfmadd" in b or "vfnmadd" in b for b in body):
        continue
    if best is None or len(body) < len(best):
        best = body
if best is None:
    print("loop: none")
    sys.exit(0)
fma = [b for b in best if re.search(r"\bvfn?madd\w*", b)]
wide = [b for b in fma if re.search(r"%[yz]mm", b)]
mem = [b for b in fma if "(" in b]
stack = [b for b in best if re.search(r"\(%rsp\)", b)]
print("loop: fma=%d ymm-fma=%d mem-fma=%d stack=%d" % (len(fma), len(wide), len(mem), len(stack)))
