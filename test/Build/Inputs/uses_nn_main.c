//===- test/Build/Inputs/uses_nn_main.c -------------------------------------------------------===//
//
// linkage.test: calls the exported entries of both objects and checks the numbers.

#include <stdint.h>
#include <stdio.h>

int32_t relu_a(const float *x, float *y, int64_t B, int64_t N);
int32_t add_a(const float *x, const float *z, float *y, int64_t B, int64_t N);
int32_t relu_b(const float *x, float *y, int64_t B, int64_t N);
int32_t nn_relu(const float *x, float *y, int64_t N);

int main(void) {
  enum { B = 3, N = 37 };
  float x[B * N], z[B * N], ya[B * N], yb[B * N], s[B * N], d[B * N];
  for (int i = 0; i < B * N; ++i) {
    x[i] = (float)(i % 9) - 4.0f;
    z[i] = 0.25f * (float)i;
  }
  if (relu_a(x, ya, B, N) || relu_b(x, yb, B, N) || add_a(x, z, s, B, N) || nn_relu(x, d, B * N)) {
    printf("error\n");
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < B * N; ++i) {
    float relu = x[i] > 0.0f ? x[i] : 0.0f;
    bad += ya[i] != relu || yb[i] != relu || s[i] != x[i] + z[i] || d[i] != 2.0f * x[i];
  }
  printf(bad ? "MISMATCH %d\n" : "ok\n", bad);
  return bad != 0;
}
