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

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Different starting values: identical chains would be merged into one.
#define TDSL_FMA_CHAINS(NAME, TARGET, V, FMA, SET)                                                 \
  __attribute__((target(TARGET))) static double NAME(int64_t iters, volatile float *sink) {        \
    V a = SET(1.0f), b = SET(0.999999f);                                                           \
    V c0 = SET(0.0f), c1 = SET(1.0f), c2 = SET(2.0f), c3 = SET(3.0f), c4 = SET(4.0f);              \
    V c5 = SET(5.0f), c6 = SET(6.0f), c7 = SET(7.0f), c8 = SET(8.0f), c9 = SET(9.0f);              \
    V c10 = SET(10.0f), c11 = SET(11.0f);                                                          \
    for (int64_t i = 0; i < iters; ++i) {                                                          \
      c0 = FMA(c0, b, a), c1 = FMA(c1, b, a), c2 = FMA(c2, b, a), c3 = FMA(c3, b, a);              \
      c4 = FMA(c4, b, a), c5 = FMA(c5, b, a), c6 = FMA(c6, b, a), c7 = FMA(c7, b, a);              \
      c8 = FMA(c8, b, a), c9 = FMA(c9, b, a), c10 = FMA(c10, b, a), c11 = FMA(c11, b, a);          \
    }                                                                                              \
    V all[12] = {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11};                                \
    float out = 0;                                                                                 \
    for (int i = 0; i < 12; ++i)                                                                   \
      out += ((const float *)&all[i])[0];                                                          \
    *sink = out;                                                                                   \
    return (double)iters * 12 * 2 * (double)(sizeof(V) / sizeof(float));                           \
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
