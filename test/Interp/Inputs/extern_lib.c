//===- test/Interp/Inputs/extern_lib.c --------------------------------------------------------===//
//
// A tiny library for extern.tdsl, with the raw entry of spec §10: inputs, outputs, then
// shape variables as int64_t; 0 on success, the message in tdsl_last_error() otherwise.

#include <stdint.h>

static const char *last_error = "";

const char *tdsl_last_error(void) { return last_error; }

int32_t tdsl_test_scale(const float *x, float s, float *y, int64_t n) {
  if (s == 0.0f) {
    last_error = "scale must not be zero";
    return 3;
  }
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] * s;
  return 0;
}

int32_t tdsl_test_sum_rows(const double *x, int16_t bias, double *y, int64_t *count, int64_t rows,
                           int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    double s = bias;
    for (int64_t j = 0; j < cols; ++j)
      s += x[i * cols + j];
    y[i] = s;
  }
  count[0] = rows * cols;
  return 0;
}
