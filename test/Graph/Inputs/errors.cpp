//===- test/Graph/Inputs/errors.cpp -----------------------------------------------------------===//
//
// A failing call inside a compiled graph: the graph returns the callee's status,
// tdsl_last_error() keeps the callee's message, and the arena is released (the program runs
// under AddressSanitizer's leak checker). Usage: errors (prints what happened).

#include "guarded.h"

#include <cstdio>
#include <vector>

int main() {
  const int64_t n = 8192; // 32 KiB intermediates: the arena is on the heap
  std::vector<float> x(n, 1.0f), y(n, -1.0f);
  int32_t ok = guarded(x.data(), y.data(), n);
  std::printf("ok status %d y[5] %g\n", ok, static_cast<double>(y[5]));
  x[5] = -2.0f;
  int32_t bad = guarded(x.data(), y.data(), n);
  std::printf("bad status %d: %s\n", bad, tdsl_last_error());
  return 0;
}
