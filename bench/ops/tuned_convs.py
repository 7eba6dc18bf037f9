#!/usr/bin/python3
"""Builds the convolutions tdsl-tune tuned in a model as kernels for `bench_ops --tuned=DIR`.

    /usr/bin/python3 bench/ops/tuned_convs.py --work WORK --schedules OUT.tdsl --out DIR \\
        [--build build]

WORK is the tuner's work folder (`tdsl-tune --work WORK`), which holds each task of the graph
as WORK/tasks/NAME.tdsl (its unscheduled function) and NAME.plain.tdsl (the function as the
standard library's schedule leaves it); OUT.tdsl is the tuner's -o file. For every task
`nn_conv2d_packed_…` the kernel is the task's function with the schedule OUT.tdsl gives it, or,
where OUT.tdsl says no tuned schedule beat the plain one ("none written"), the plain function:
what `tdslc --tuning-db` compiles into the model. Each becomes DIR/NAME.so (symbol NAME; the
function takes x, the packed weight and y, with static shapes). docs/tuning.md shows the use.
"""
import argparse
import os
import re
import subprocess
import sys


def schedules(path):
    """NAME -> the schedule item -o wrote for it, or None for "none written"."""
    out, name, lines = {}, None, []

    def close():
        if name is not None:
            text = "".join(lines).strip()
            out[name] = text + "\n" if text else None

    for line in open(path):
        m = re.match(r"// (\S+): .* ms per call", line)
        if m:
            close()
            name, lines = m.group(1), []
            if "none written" in line:
                out[name] = None
                name = None
        elif name is not None:
            lines.append(line)
    close()
    return out


def omp_library(build):
    cache = os.path.join(build, "CMakeCache.txt")
    for line in open(cache):
        if line.startswith("TDSL_BENCH_OMP_LIBRARY:"):
            return line.split("=", 1)[1].strip()
    sys.exit("tuned_convs.py: no TDSL_BENCH_OMP_LIBRARY in " + cache)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True, help="tdsl-tune's --work folder")
    ap.add_argument("--schedules", required=True, help="tdsl-tune's -o file")
    ap.add_argument("--out", required=True, help="folder of the kernels")
    ap.add_argument("--build", default="build", help="the build folder (default build)")
    args = ap.parse_args()
    tdslc = os.path.join(args.build, "bin", "tdslc")
    omp = omp_library(args.build)
    tasks = os.path.join(args.work, "tasks")
    chosen = schedules(args.schedules)
    os.makedirs(args.out, exist_ok=True)
    names = sorted(f[:-5] for f in os.listdir(tasks)
                   if f.startswith("nn_conv2d_packed_") and f.endswith(".tdsl")
                   and not f.endswith(".plain.tdsl"))
    if not names:
        sys.exit("tuned_convs.py: no nn_conv2d_packed_ task in " + tasks)
    for name in names:
        if name not in chosen:
            sys.exit("tuned_convs.py: %s has no entry in %s" % (name, args.schedules))
        obj = os.path.join(args.out, name + ".o")
        if chosen[name] is None:
            source, extra, kind = os.path.join(tasks, name + ".plain.tdsl"), [], "plain"
        else:
            sched = os.path.join(args.out, name + ".schedule.tdsl")
            with open(sched, "w") as f:
                f.write(chosen[name])
            source, extra, kind = os.path.join(tasks, name + ".tdsl"), ["--schedule", sched], "tuned"
        subprocess.run([tdslc, source, "--func", name] + extra +
                       ["--emit=obj", "-O3", "-o", obj], check=True)
        subprocess.run(["c++", "-shared", obj, "-o", os.path.join(args.out, name + ".so"), omp,
                        "-lm"], check=True)
        print("%s: %s" % (name, kind))


if __name__ == "__main__":
    main()
