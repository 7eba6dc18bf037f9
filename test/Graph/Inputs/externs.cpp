//===- test/Graph/Inputs/externs.cpp ----------------------------------------------------------===//
//
// Extern functions for the Graph numerical tests, built as a shared library
// (loaded by `tdsl-run --load`, linked into the compiled programs). Raw entries of spec §10:
// inputs, outputs, shape variables; status 0 on success.

#include <cblas.h>

#include <cstdint>
#include <cstdio>

// The message of tdsl_last_error(), shared with the code tdslc emits (the same inline variable,
// one per program), and the weak accessor every emitted translation unit also defines.
namespace tdsl_generated {
inline thread_local char last_error[512];
} // namespace tdsl_generated

extern "C" __attribute__((weak)) const char *tdsl_last_error(void) {
  return tdsl_generated::last_error;
}

// c = a · b through OpenBLAS: the course's "remap to library calls".
extern "C" int32_t tdsl_test_sgemm(const float *a, const float *b, float *c, int64_t M, int64_t K,
                                   int64_t N) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0f, a, static_cast<int>(K), b, static_cast<int>(N), 0.0f, c,
              static_cast<int>(N));
  return 0;
}

// Fails with status 7 when some element of x is negative.
extern "C" int32_t tdsl_test_check_nonnegative(const float *x, int64_t N) {
  for (int64_t i = 0; i < N; ++i)
    if (x[i] < 0) {
      std::snprintf(tdsl_generated::last_error, sizeof tdsl_generated::last_error,
                    "check_nonnegative: x[%lld] = %g is negative", static_cast<long long>(i),
                    static_cast<double>(x[i]));
      return 7;
    }
  return 0;
}
