#!/usr/bin/env python3
"""scripts/plot-bench.py — draw benchmark results as GFLOP/s against problem size, with the
machine's peak as a roofline (a compute ceiling per thread count).

Inputs (any mix, format guessed per line):
  * JSON lines of `tdsl-run --bench --json FILE` (one object per run; other lines ignored).
    The size is the first -D value (e.g. N), else the largest shape variable, else 1;
    the series is `func (via, -O)` and the thread count `threads` (null: the OpenMP default).
  * CSV with a header naming at least `size` (or `N`), `gflops` (or `GFLOP/s`) and
    `name` (or `implementation`), optionally `threads`.
  * The closing table of bench/bench_matmul (`scripts/bench.sh` output, docs/benchmarks.md):
    `  1024   1  oneDNN             |    35.6 ...`.

    scripts/plot-bench.py results.jsonl bench.txt -o bench.svg [--peak 150] [--cores 2]

The peak (GFLOP/s of one core) is --peak, else the one bench_matmul measured (the CSV's
peak_core column, the "measured f32 FMA peak" line of its output), else estimated from
/proc/cpuinfo and lscpu: the
maximum clock times the f32 FLOP per cycle of the widest FMA unit the CPU reports (AVX-512:
64, AVX2+FMA: 32, else 8: two units of 16/8/2 lanes, 2 FLOP per FMA). An estimate: pass --peak
for a measured one. Needs python3-matplotlib.
"""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys

TABLE_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(.+?)\s+\|\s+([0-9.]+)\s")
PEAK_LINE = re.compile(r"measured f32 FMA peak of one core: ([0-9.]+) GFLOP/s")
# Peaks of one core measured by bench_matmul (its CSV's peak_core column, its output's line).
MEASURED_PEAKS = []


def read_records(path):
    """[(series, threads, size, gflops)] from one file of any supported format."""
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    records = []
    lines = text.splitlines()
    header = next((l for l in lines if l.strip()), "")
    if "," in header and not header.lstrip().startswith("{"):
        rows = list(csv.DictReader(io.StringIO(text)))
        keys = {k.strip().lower(): k for k in (rows[0].keys() if rows else [])}

        def col(row, *names, default=None):
            for n in names:
                if n.lower() in keys:
                    return row[keys[n.lower()]]
            if default is not None:
                return default
            sys.exit(f"plot-bench: {path}: no column {' or '.join(names)}")

        for row in rows:
            if col(row, "peak_core", default=""):
                MEASURED_PEAKS.append(float(col(row, "peak_core")))
            records.append((col(row, "name", "implementation", "series"),
                            int(float(col(row, "threads", "thr", default="0") or 0)),
                            float(col(row, "size", "N")), float(col(row, "gflops", "GFLOP/s"))))
        return records
    for line in lines:
        s = line.strip()
        if s.startswith("{"):
            try:
                r = json.loads(s)
            except json.JSONDecodeError:
                continue
            if "gflops" not in r:
                continue
            defines, shapes = r.get("defines") or {}, r.get("shapes") or {}
            size = (next(iter(defines.values())) if defines else
                    max(shapes.values()) if shapes else 1)
            series = f"{r.get('func', '?')} ({r.get('via', '?')}, -O{r.get('opt_level', '?')})"
            records.append((series, int(r.get("threads") or 0), float(size), float(r["gflops"])))
            continue
        p = PEAK_LINE.search(line)
        if p:
            MEASURED_PEAKS.append(float(p.group(1)))
        m = TABLE_ROW.match(line)
        if m:
            records.append((m.group(3).strip(), int(m.group(2)), float(m.group(1)),
                            float(m.group(4))))
    return records


def estimate_peak():
    """(GFLOP/s of one core, cores, how it was found) from /proc/cpuinfo and lscpu."""
    flags, cores, mhz = set(), os.cpu_count() or 1, 0.0
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                elif line.startswith("cpu MHz") and not mhz:
                    mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"CPU max MHz:\s*([0-9.]+)", out)
        if m:
            mhz = float(m.group(1))
    except OSError:
        pass
    per_cycle = 64 if "avx512f" in flags else 32 if {"avx2", "fma"} <= flags else 8
    ghz = (mhz or 2000.0) / 1000.0
    return ghz * per_cycle, cores, f"estimated: {ghz:.2f} GHz × {per_cycle} f32 FLOP/cycle"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", help="JSON lines, CSV or bench_matmul output (- stdin)")
    ap.add_argument("-o", "--output", required=True, help="image file (.svg, .png, .pdf)")
    ap.add_argument("--peak", type=float, help="peak GFLOP/s of one core (default: estimated)")
    ap.add_argument("--cores", type=int, help="cores for the all-core ceiling (default: all)")
    ap.add_argument("--title", default="GFLOP/s against size")
    args = ap.parse_args()

    records = [r for p in args.inputs for r in read_records(p)]
    if not records:
        sys.exit("plot-bench: no results found in " + ", ".join(args.inputs))
    peak, cores, how = estimate_peak()
    if MEASURED_PEAKS:
        peak, how = max(MEASURED_PEAKS), "measured"
    if args.peak:
        peak, how = args.peak, "given"
    if args.cores:
        cores = args.cores

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    threads = sorted({t for _, t, _, _ in records})
    fig, axes = plt.subplots(1, len(threads), figsize=(6 * len(threads), 4.5), squeeze=False,
                             sharey=True)
    for ax, t in zip(axes[0], threads):
        series = {}
        for name, th, size, gflops in records:
            if th == t:
                series.setdefault(name, []).append((size, gflops))
        for name, points in sorted(series.items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
        ceiling = peak * (t if t > 0 else cores)
        ax.axhline(ceiling, color="black", linestyle="--", linewidth=1)
        ax.text(0.01, ceiling, f" peak {ceiling:.0f} GFLOP/s ({t if t else cores} core(s), {how})",
                transform=ax.get_yaxis_transform(), va="bottom", fontsize=8)
        sizes = sorted({s for _, th, s, _ in records if th == t})
        if len(sizes) > 1 and sizes[0] > 0:
            ax.set_xscale("log", base=2)
        ax.set_xlabel("size (N)")
        ax.set_title(f"{t} thread(s)" if t else "default threads")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("GFLOP/s")
    axes[0][0].set_ylim(bottom=0)
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"plot-bench: {len(records)} results, {len(threads)} panel(s) -> {args.output}")


if __name__ == "__main__":
    main()
