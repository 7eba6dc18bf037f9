//===- bench/FmaChains.h - Independent FMA chains that measure one core's f32 peak -----------===//
//
// TDSL_FMA_CHAINS(NAME, TARGET, V, FMA, SET) defines `static double NAME(int64_t iters,
// volatile float *sink)`: 12 independent accumulators (enough to cover the FMA latency on two
// ports), `iters` rounds of FMA at the vector type V, compiled for TARGET; it returns the f32
// FLOP done. C and C++ (bench/bench_matmul.cpp, bench/models/fma_peak.c) share it, so that both
// measure the same peak. Needs <immintrin.h> and <stdint.h>; #undef it after use.
//===------------------------------------------------------------------------------------------===//

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
