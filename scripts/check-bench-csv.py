#!/usr/bin/env python3
"""scripts/check-bench-csv.py FILE — checks a CSV written by `bench_matmul --csv=FILE`: the
header, one row per implementation with positive GFLOP/s, the peers without ratios and every
TDSL kernel with both. Exit 1 with the reason otherwise (ctest bench.csv)."""
import csv
import sys

HEADER = ["name", "size", "threads", "gflops", "cpu_gflops", "vs_onednn", "vs_openblas", "busy",
          "peak_core"]


def main(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != HEADER:
        sys.exit(f"{path}: header {rows[:1]} is not {HEADER}")
    body = [dict(zip(HEADER, r)) for r in rows[1:]]
    names = [r["name"] for r in body]
    for peer in ("oneDNN", "OpenBLAS"):
        if peer not in names:
            sys.exit(f"{path}: no row for {peer}")
    for r in body:
        if float(r["gflops"]) <= 0 or float(r["cpu_gflops"]) <= 0 or float(r["peak_core"]) <= 0:
            sys.exit(f"{path}: {r['name']}: GFLOP/s or peak not positive")
        peer = r["name"] in ("oneDNN", "OpenBLAS")
        if peer != (r["vs_onednn"] == "" and r["vs_openblas"] == ""):
            sys.exit(f"{path}: {r['name']}: ratios {'given' if peer else 'missing'}")
    if len(body) < 3:
        sys.exit(f"{path}: no TDSL kernel row")
    print(f"check-bench-csv: {len(body)} rows OK")


if __name__ == "__main__":
    main(sys.argv[1])
