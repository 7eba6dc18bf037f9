//===- tools/tdsl-run/BenchJson.h - Machine-readable results of tdsl-run --bench -------------===//
//
// `tdsl-run --bench --json FILE` writes one JSON object per run (FILE `-`: stdout, in place of
// the text line), for scripts/plot-bench.py and other tools:
//
//   {"tool": "tdsl-run", "file": "mm.tdsl", "func": "mm", "via": "llvm", "opt_level": 2,
//    "threads": 2, "repeat": 10, "shapes": {"M": 256, ...}, "defines": {"T": 32},
//    "median_ms": 1.25, "times_ms": [...], "flop": 33554432, "gflops": 26.8}
//
// With FILE a path, the object is appended as one line (JSON Lines), so that a sweep over sizes
// collects into one file.

#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tdsl {

struct BenchRecord {
  std::string file, func, via;
  int optLevel = 2;
  int64_t threads = 0; ///< 0: the OpenMP default (OMP_NUM_THREADS when set is recorded instead)
  std::vector<std::pair<std::string, int64_t>> shapes, defines;
  std::vector<double> seconds; ///< Each timed call, sorted.
  double medianSeconds = 0, flops = 0;
};

/// The record as one line of JSON (no trailing newline).
std::string benchJson(const BenchRecord &record);

/// Writes the line to `path` (appending) or to stdout for `-`. False with `error` set on an I/O
/// failure, or when `path` holds a line that is not a record of tdsl-run --json (the file is
/// then left untouched).
bool writeBenchJson(const BenchRecord &record, const std::string &path, std::string &error);

} // namespace tdsl
