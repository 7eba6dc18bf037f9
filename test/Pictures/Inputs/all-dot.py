#!/usr/bin/env python3
"""test/Dot/Inputs/all-dot.py TDSLC ROOT — `tdslc --emit=dot` over the corpus (examples/,
stdlib/, test/Graph, test/Schedule): every file must exit 0 (then `dot -Tsvg` must accept the
text) or 1 (a program the checker refuses), never anything else."""
import glob
import os
import subprocess
import sys

tdslc, root = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(root, "examples", "**", "*.tdsl"), recursive=True) +
               glob.glob(os.path.join(root, "stdlib", "*.tdsl")) +
               glob.glob(os.path.join(root, "test", "Graph", "*.tdsl")) +
               glob.glob(os.path.join(root, "test", "Schedule", "*.tdsl")))
drawn = bad = 0
for f in files:
    r = subprocess.run([tdslc, f, "--emit=dot"], capture_output=True, text=True)
    if r.returncode == 1:
        continue
    if r.returncode != 0:
        print(f"all-dot: {f}: tdslc exit {r.returncode}\n{r.stderr}")
        sys.exit(1)
    d = subprocess.run(["dot", "-Tsvg", "-o", os.devnull], input=r.stdout, capture_output=True,
                       text=True)
    if d.returncode != 0 or d.stderr.strip():
        print(f"all-dot: {f}: dot refused:\n{d.stderr}")
        bad += 1
    drawn += 1
print(f"all-dot: {drawn} files drawn, {bad} refused by dot")
