//===- bench/models/fma_peak.c - The f32 FMA peak of one core, for ctypes --------------------===//
//
// `double tdsl_fma_peak(void)`: the f32 FMA peak of one core in GFLOP/s, measured as
// bench/bench_matmul.cpp measures it (12 independent FMA chains at the widest vector width the
// CPU has, best of 5 runs of 2,000,000 rounds); 0 without FMA. bench/models/bench_models.py
// compiles this file into a shared object and calls it through ctypes, to print the peak beside
// the latencies (the machine is shared and its peak varies from run to run).
//===------------------------------------------------------------------------------------------===//

#include <immintrin.h>
#include <stdint.h>
#include <time.h>

#include "../FmaChains.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

TDSL_FMA_CHAINS(fmaFlops256, "avx2,fma", __m256, _mm256_fmadd_ps, _mm256_set1_ps)
TDSL_FMA_CHAINS(fmaFlops512, "avx512f", __m512, _mm512_fmadd_ps, _mm512_set1_ps)
#undef TDSL_FMA_CHAINS

double tdsl_fma_peak(void) {
  int avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !__builtin_cpu_supports("fma"))
    return 0;
  volatile float sink = 0;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    double start = now();
    double flop = avx512 ? fmaFlops512(2000000, &sink) : fmaFlops256(2000000, &sink);
    double gflops = flop / (now() - start) * 1e-9;
    best = gflops > best ? gflops : best;
  }
  return best;
}
